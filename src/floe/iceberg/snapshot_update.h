#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::iceberg {

// The files one snapshot adds. Data files have content kData; delete files are position or
// equality deletes (equality deletes name their equality_ids). Every file's spec_id must be a
// partition spec of the table and its partition tuple must match that spec.
struct SnapshotChanges {
  std::vector<DataFile> added_data_files;
  std::vector<DataFile> added_delete_files;
  // Extra summary entries (e.g. floe.checkpoint-id). The standard keys ("operation" and the
  // added-* / total-* metrics) are computed and win over entries of the same name.
  std::map<std::string, std::string> summary_properties;
  // Table properties set in the same commit (atomically with the snapshot): unlike a summary,
  // snapshot expiry never removes them. A value replaces the table's.
  std::map<std::string, std::string> table_properties;
  // The schema the files were written with, when it may hold columns (new field ids) or widened
  // types the table lacks: the commit adopts it (AdoptWrittenSchema) in the same metadata swap,
  // and the snapshot names the adopted schema.
  std::optional<Schema> written_schema;
};

// How CommitSnapshot retries. Unset values come from the table's properties, with Iceberg's
// names and defaults: commit.retry.num-retries (4), commit.retry.min-wait-ms (100),
// commit.retry.max-wait-ms (60000), commit.retry.total-timeout-ms (1800000). The wait before
// retry k is min(min_wait * 2^(k-1), max_wait) plus up to 10% jitter.
struct CommitOptions {
  std::optional<int> num_retries;
  std::optional<std::chrono::milliseconds> min_wait;
  std::optional<std::chrono::milliseconds> max_wait;
  std::optional<std::chrono::milliseconds> total_timeout;
  // Called with the freshly loaded table before every attempt; a non-OK status aborts the
  // commit and is returned as is (the exactly-once committer uses it to find out whether the
  // table already holds its checkpoint). Nothing is left behind then.
  std::function<Status(const TableMetadata&)> validate;
};

// Commits ONE snapshot adding `changes` to table `id` on its main branch.
//
// Operation (as Java's RowDelta names it): "append" when only data files are added (or
// nothing), "delete" when only delete files are, "overwrite" when both are.
//
// Optimistic concurrency (spec "Commit Conflict Resolution and Retry"): load the table, apply,
// CommitTable; on Conflict reload, re-apply on the new current snapshot and retry after a
// backoff. Adding files has no preconditions, so a conflict is always retried. The new
// manifests (one per content kind and partition spec) are written once: their ADDED entries
// leave sequence numbers null and inherit them from the manifest list, which is the only file
// rewritten per attempt, carrying that attempt's sequence number.
//
// The snapshot: a random positive 63-bit id (kept across attempts), parent = the current
// snapshot, sequence number = last-sequence-number + 1, the current schema id, manifest list
// <table>/metadata/snap-<id>-<attempt>-<uuid>.avro listing the new manifests and the parent's,
// new manifests at <table>/metadata/<uuid>-m<k>.avro. The summary holds the operation, the
// added-* metrics and changed-partition-count of this snapshot, the total-* metrics carried
// over from the parent's summary as Java computes them (a total the parent lacks is omitted;
// a table without snapshots starts from 0), manifests-created/-kept/-replaced, and the
// caller's properties.
//
// Manifest merging keeps the commit cost flat however long the history (table properties
// commit.manifest-merge.enabled (true), commit.manifest.min-count-to-merge (100),
// commit.manifest.target-size-bytes (8 MiB)): per content kind and spec, manifests are packed
// in list order into bins of up to the target size; a bin of several manifests is rewritten
// into one (files of earlier snapshots become EXISTING entries with explicit snapshot ids and
// sequence numbers), except the bin holding the newest manifest while it has fewer than
// min-count manifests.
//
// Files written by attempts that did not commit are removed, as is everything when the commit
// fails for sure. When CommitTable fails with anything but Conflict the outcome is unknown and
// nothing is removed.
// Returns the committed snapshot. Errors: Conflict when the retries are exhausted, the
// validate callback's status, InvalidArgument for malformed changes, catalog and I/O errors.
// Thread-safe as far as `catalog` is (give each thread its own catalog object).
Result<Snapshot> CommitSnapshot(Catalog& catalog, const TableIdentifier& id,
                                const SnapshotChanges& changes, const CommitOptions& options = {});

}  // namespace floe::iceberg
