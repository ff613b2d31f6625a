#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/maintenance_progress.h"

namespace floe::iceberg {

// Table properties ExpireSnapshots reads (Iceberg's names and defaults).
inline constexpr char kMaxSnapshotAgeMs[] = "history.expire.max-snapshot-age-ms";
inline constexpr int64_t kMaxSnapshotAgeMsDefault = 5LL * 24 * 60 * 60 * 1000;  // 5 days
inline constexpr char kMinSnapshotsToKeep[] = "history.expire.min-snapshots-to-keep";
inline constexpr int64_t kMinSnapshotsToKeepDefault = 1;
// Branches and tags (not main) older than this are removed; default: kept forever.
inline constexpr char kMaxRefAgeMs[] = "history.expire.max-ref-age-ms";

// What ExpireSnapshots removes. Unset values come from the table's properties.
struct ExpireOptions {
  // Snapshots with timestamp-ms below this may expire; default now − max-snapshot-age-ms.
  std::optional<int64_t> older_than_ms;
  // The newest N of each branch's ancestry are kept whatever their age; default
  // min-snapshots-to-keep. Values below 1 count as 1.
  std::optional<int64_t> retain_last;
  // Commit retries on Conflict (reload, recompute, commit again); default
  // commit.retry.num-retries (4). The wait between attempts is short and fixed (10 ms × k).
  std::optional<int> num_retries;
  // Files removed so far, after the commit, of those only expired snapshots referenced
  // (optional).
  MaintenanceProgressFn progress;
};

struct ExpireResult {
  std::vector<int64_t> expired_snapshot_ids;  // oldest first
  std::vector<std::string> refs_removed;      // older than history.expire.max-ref-age-ms
  int64_t snapshots_kept = 0;
  int64_t manifest_lists_deleted = 0;
  int64_t manifests_deleted = 0;
  int64_t data_files_deleted = 0;
  int64_t delete_files_deleted = 0;
  int64_t statistics_files_deleted = 0;  // table and partition statistics of expired snapshots
  int64_t bytes_deleted = 0;             // sizes on disk of the files removed
  int64_t files_not_deleted = 0;         // removal failed (other than already missing)
  // Referenced by expired snapshots but outside the table's location: never deleted
  // (table_paths.h), each named in a warning.
  int64_t files_outside_skipped = 0;
  int commit_attempts = 0;
};

// Expires old snapshots of table `id` (Iceberg's ExpireSnapshots; docs/exactly-once.md,
// "Snapshot expiry keeps the commit markers").
//
// First, branches and tags other than main whose snapshot is older than their max-ref-age-ms
// (unset: the table property history.expire.max-ref-age-ms, default never) are removed.
// Kept: the current snapshot; every snapshot a remaining branch or tag points at;
// the newest `retain_last` ancestors of every branch (more when the branch's own
// min-snapshots-to-keep says so), and those younger than its own max-snapshot-age-ms when it
// sets one; every snapshot at or after the cutoff;
// and floe's restore markers: for each distinct floe.sink-id in the main ancestry, the newest
// snapshot carrying it together with every main ancestor between it and the current snapshot,
// so restore's parent walk (FindSinkCommit) reaches each marker. Every other snapshot expires.
//
// The new metadata (expired snapshots, their snapshot-log entries and statistics dropped) is
// committed through Catalog::CommitTable; on Conflict the table is reloaded and the selection
// recomputed (bounded retries). Only after the commit succeeded are files removed: manifest lists
// of expired snapshots, manifests no retained snapshot lists, and data / delete files that appear
// in those manifests (or as DELETED entries of retained manifests) and that no retained
// snapshot's manifests list as ADDED or EXISTING, and the statistics files registered for
// expired snapshots that no retained one registers. A retained snapshot's files are never
// touched, nor is any path outside the table's location (counted in files_outside_skipped and
// named in a warning: a commit may have pointed a snapshot at another table's files). Nothing to
// expire means no commit.
//
// Errors: Conflict when the retries are exhausted, catalog and I/O errors (before the commit:
// nothing changed; a failing file removal after it is counted, not an error).
Result<ExpireResult> ExpireSnapshots(Catalog& catalog, const TableIdentifier& id,
                                     const ExpireOptions& options = {});

}  // namespace floe::iceberg
