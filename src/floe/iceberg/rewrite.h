#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/maintenance_progress.h"
#include "floe/iceberg/manifest.h"

namespace floe::iceberg {

// Options of RewriteDataFiles, with the option names of Iceberg's rewrite_data_files. Unset
// sizes come from the table's write.target-file-size-bytes (512 MiB).
struct CompactOptions {
  std::optional<int64_t> target_file_size_bytes;
  std::optional<int64_t> min_file_size_bytes;  // default 75% of the target
  std::optional<int64_t> max_file_size_bytes;  // default 180% of the target
  // The size tiers' fan-in f (at least 2): a tier's files are merged once it holds f of them.
  // Iceberg's default is 5; floe's 8 keeps a streaming table's rewrites at most 3 per row on
  // average over 2,000 checkpoints (bench/compaction_amplification.sh), where 5 exceeds 3.
  int64_t min_input_files = 8;
  // A file with at least this many delete files applying to it is rewritten (Iceberg's
  // delete-file-threshold; default: never by count).
  int64_t delete_file_threshold = INT64_MAX;
  // A file is rewritten when the delete rows applying to it reach this share of its rows
  // (delete-ratio-threshold). An estimate: every row of an applying equality delete file counts.
  double delete_ratio_threshold = 0.3;
  // The most bytes of data files one run reads; further groups wait for the next run.
  int64_t max_bytes = INT64_MAX;
  // Every data file is a candidate whatever its size (rewrite-all).
  bool rewrite_all = false;
  // New files are <data dir>/<partition>/<file_prefix>-<nnnnn>.parquet; default
  // "compact-<uuid>".
  std::string file_prefix;
  // Commit retries on Conflict; default commit.retry.num-retries (4).
  std::optional<int> num_retries;
  // FileWriterConfig::initial_size_ratio: RewriteResult::size_ratio of the previous run.
  double size_ratio = 1.0;
  // Files and bytes of the chosen files read so far, rows written (optional).
  MaintenanceProgressFn progress;
};

// What a rewrite did. *_before / *_after describe the table's current snapshot before the run
// and after its commit (unchanged when nothing was rewritten).
struct RewriteResult {
  std::optional<int64_t> snapshot_id;  // the "replace" snapshot; none = nothing to do
  int64_t groups_rewritten = 0;        // partitions (file groups) rewritten
  int64_t data_files_rewritten = 0;
  int64_t data_files_added = 0;
  int64_t delete_files_removed = 0;
  int64_t rows_read = 0;     // rows of the rewritten files before deletes
  int64_t rows_written = 0;  // rows left after applying deletes
  int64_t bytes_rewritten = 0;
  int64_t bytes_added = 0;
  int64_t data_files_before = 0, data_files_after = 0;
  int64_t delete_files_before = 0, delete_files_after = 0;
  int64_t data_bytes_before = 0, data_bytes_after = 0;
  int64_t manifests_before = 0, manifests_after = 0;
  int commit_attempts = 0;
  double size_ratio = 1.0;  // real / estimated size of the files written (for the next run)
};

// A compaction planned and written but not committed yet: RewriteDataFiles is PrepareRewrite
// then CommitRewrite. A job prepares on a background thread (reading and writing files is the
// slow part) and commits on its committer's thread, sequenced with its data commits.
struct PreparedRewrite {
  io::FileIO file_io;                // what the new files were written with (the catalog's)
  std::vector<DataFile> added;       // the new data files
  std::vector<std::string> removed;  // paths (URIs) of the data and delete files replaced
  int64_t data_sequence_number = 0;  // of the snapshot the plan read
  int64_t starting_snapshot_id = 0;
  RewriteResult result;  // what the plan and the writing did so far
};

// Plans and writes a compaction (see RewriteDataFiles); nullopt when there is nothing to do
// (then `result`, if given, holds the table's counts).
Result<std::optional<PreparedRewrite>> PrepareRewrite(Catalog& catalog, const TableIdentifier& id,
                                                      const CompactOptions& options,
                                                      RewriteResult* result = nullptr);

// Commits a prepared compaction (one "replace" snapshot, retried on conflicts as described at
// RewriteDataFiles). When it fails for sure the new files are removed; when the outcome is
// unknown they are kept.
Result<RewriteResult> CommitRewrite(Catalog& catalog, const TableIdentifier& id,
                                    const PreparedRewrite& prepared,
                                    std::optional<int> num_retries = std::nullopt);

// Removes a prepared compaction's new files (it will not be committed).
void AbandonRewrite(const PreparedRewrite& prepared);

// Compacts the data files of table `id` (Iceberg's rewrite_data_files, small files by size tiers).
//
// Plan, on the current snapshot, per partition (spec and tuple): files over the max size or with
// too many deletes (threshold or ratio), or every file with rewrite_all, are rewritten; when
// there are any, files under the min size of their size tier or below go along. The other files
// under the min size are planned by size tiers (f = min_input_files): tier k holds the files of
// [f^k, f^(k+1)) rows; while a tier holds at least f files, they merge into one, which lands in
// a higher tier (and may fill it in turn). A row is so rewritten only when it moves up a tier:
// at most ceil(log_f(N)) times for N equal appends, instead of at every run while its file is
// under the min size. Files in [min, max] without too many deletes stay. Rewriting reads each
// chosen file with the deletes that apply to it (so the new files hold only live rows) and
// writes one stream per partition, rolled at the target size.
//
// Commit, one "replace" snapshot (CommitReplace): the new files carry the data sequence number
// of the snapshot the plan read (Iceberg's use-starting-sequence-number), so equality deletes
// committed meanwhile still apply to them; delete files that applied only to rewritten files
// are removed; every manifest is rewritten grouped by partition. Conflict with a concurrent
// commit retries on the reloaded table unless a rewritten file is gone or a position delete
// added since the plan targets a rewritten file: then it fails (Conflict, new files removed).
// Nothing to rewrite: no commit.
Result<RewriteResult> RewriteDataFiles(Catalog& catalog, const TableIdentifier& id,
                                       const CompactOptions& options = {});

// Rewrites the current snapshot's manifests into few, grouped by partition: per content kind
// and spec, entries sorted by partition and packed into manifests of about
// commit.manifest.target-size-bytes (8 MiB). One "replace" snapshot without file changes;
// nothing to do (at most one manifest per content kind and spec) means no commit.
Result<RewriteResult> RewriteManifests(Catalog& catalog, const TableIdentifier& id,
                                       std::optional<int> num_retries = std::nullopt);

// Options of RemoveOrphanFiles.
struct OrphanOptions {
  // Only files last modified before this are removed; default now - 3 days (Iceberg's), since
  // files of writes in progress are not referenced yet.
  std::optional<int64_t> older_than_ms;
  bool dry_run = false;
  // Files the caller knows are still needed (e.g. a job's staged, not yet committed files),
  // as absolute local paths.
  std::function<bool(const std::string& path)> in_use;
  // Orphans deleted so far, of those found (optional; also with dry_run).
  MaintenanceProgressFn progress;
};

struct OrphanResult {
  std::vector<std::string> orphans;  // absolute local paths, sorted
  int64_t orphan_bytes = 0;
  int64_t files_scanned = 0;
  int64_t kept_too_new = 0;  // unreferenced, but newer than older-than
  int64_t kept_leased = 0;   // unreferenced, but work in progress a live lease covers
  int64_t deleted = 0;       // 0 with dry_run
  int64_t not_deleted = 0;
};

// Removes files under the table's location that nothing references: not the current metadata
// file, its metadata log, version-hint.text, any snapshot's manifest list, manifests, data or
// delete files (every snapshot, so every branch and tag), nor a registered table or partition
// statistics file, nor options.in_use, nor what a live lease of a writer covers
// (table_lease.h); and only those older than older_than_ms. Errors collecting references or
// reading a live lease remove nothing.
Result<OrphanResult> RemoveOrphanFiles(Catalog& catalog, const TableIdentifier& id,
                                       const OrphanOptions& options = {});

}  // namespace floe::iceberg
