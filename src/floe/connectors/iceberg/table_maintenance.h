#pragma once

// In-job table maintenance of the Iceberg sink (docs/connectors.md, "Table maintenance"): after
// its commits the committer compacts, expires snapshots and removes orphan files, by triggers
// in the spirit of Iceberg's Flink TableMaintenance, with its 'flink-maintenance.*' option
// names. Internal to the connector.

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/connectors/iceberg/iceberg_sink_internal.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/rewrite.h"

namespace floe::connectors::internal {

inline constexpr std::string_view kMaintenancePrefix = "flink-maintenance.";

// When a task runs: after `commit_count` commits since its last run, or `interval` since then
// (with at least one commit meanwhile: an idle table needs nothing); 0 disables a trigger.
struct MaintenanceSchedule {
  bool enabled = true;
  int64_t commit_count = 0;
  std::chrono::seconds interval{0};
};

struct MaintenanceConfig {
  MaintenanceSchedule rewrite{true, 10, std::chrono::seconds(600)};
  int64_t rewrite_data_file_count = 1000;        // data files added since the last run
  int64_t rewrite_data_file_size = 100LL << 30;  // bytes added since the last run
  // Equality delete files added since the last run (upsert tables; 0 = off): compacting soon
  // keeps the read cost of an upsert table near an append table's.
  int64_t rewrite_eq_delete_file_count = 0;
  iceberg::CompactOptions compact;  // file_prefix is set per run
  MaintenanceSchedule expire{true, 10, std::chrono::seconds(600)};
  std::optional<int64_t> expire_max_age_ms;   // unset: history.expire.max-snapshot-age-ms
  std::optional<int64_t> expire_retain_last;  // unset: history.expire.min-snapshots-to-keep
  MaintenanceSchedule orphans{true, 0, std::chrono::seconds(3600)};
  std::chrono::seconds orphan_min_age{3 * 24 * 3600};
};

// Reads and validates the 'flink-maintenance.*' options of `table` (every error names the
// option, the rule and the value; unknown keys get a did-you-mean). `checkpointing` bounds the
// orphan min age: at least 10 checkpoint intervals and 60 s, so files written for a checkpoint
// that is not committed yet are never taken for orphans.
Result<MaintenanceConfig> ParseMaintenanceOptions(const TableDescriptor& table,
                                                  const runtime::CheckpointConfig& checkpointing);

// Every option key ParseMaintenanceOptions knows (for option lists and suggestions).
const std::vector<std::string>& MaintenanceOptionKeys();

// What maintenance did over a committer's life (for tests, logs and the bench).
struct MaintenanceStats {
  int64_t rewrites = 0, expirations = 0, orphan_runs = 0, failures = 0;
  int64_t data_files_rewritten = 0, delete_files_removed = 0, snapshots_expired = 0;
  int64_t orphans_removed = 0;
  int64_t total_ms = 0, max_ms = 0;  // time spent in maintenance after commits
};

// Runs the due tasks after a committer's commits. Every commit happens on the committer's
// thread, right after its data commits: maintenance and data commits of one job are sequenced,
// so they never conflict with each other. The slow parts run on one background thread, one at a
// time: writing a compaction's files (PrepareRewrite; its commit waits for the committer's next
// call, and keeps the starting sequence number so the deletes committed meanwhile still apply)
// and an orphan scan. Expiry runs inline (metadata and deletes only). A failure is logged and
// counted, never returned: maintenance must not stop the data path; except a committed file
// found missing (data_lost), which the data path must not hide.
class TableMaintainer {
 public:
  using CatalogFactory = std::function<Result<std::unique_ptr<iceberg::Catalog>>()>;
  // `catalog`: the committer's (its thread only); `open_catalog` makes one for the background
  // thread. `staged_files`: the committer's staged files (absolute local paths; never orphans),
  // and so are the files held by the checkpoints and savepoints `checkpoints` names.
  // `job_tag` names the files a compaction writes (<tag>-rw-<attempt>-<checkpoint>-<n>.parquet)
  // so that a run killed before its commit leaves files the restart removes
  // (RemoveFailedAttemptFiles).
  TableMaintainer(MaintenanceConfig config, iceberg::Catalog* catalog, CatalogFactory open_catalog,
                  iceberg::TableIdentifier id, std::string job_tag,
                  std::function<std::set<std::string>()> staged_files,
                  FailedAttemptScope checkpoints);
  ~TableMaintainer();
  TableMaintainer(const TableMaintainer&) = delete;
  TableMaintainer& operator=(const TableMaintainer&) = delete;

  // Called after commits for checkpoints up to `checkpoint`: `commits` snapshots adding
  // `data_files` data files of `data_bytes` bytes and `eq_delete_files` equality delete files.
  // `final`: the input ended, no commit follows; due work runs to completion now.
  void AfterCommits(uint64_t checkpoint, int64_t commits, int64_t data_files, int64_t data_bytes,
                    int64_t eq_delete_files, bool final);
  // Waits for background work; a compaction prepared but not committed is abandoned (its files
  // removed). Idempotent; the destructor calls it.
  void Stop();

  const MaintenanceStats& stats() const { return stats_; }
  // Whether a compaction or an orphan scan is still running in the background.
  bool busy() const { return Busy(); }
  // Not OK once a compaction found a file the table references missing: the table lost data,
  // and a job that ran on would hide it behind one warning. The committer fails the job.
  const Status& data_lost() const { return data_lost_; }
  // One info line with the stats (when anything ran): what users and the bench read.
  void LogSummary() const;

 private:
  struct Due {
    int64_t commits = 0;
    std::chrono::steady_clock::time_point last_run;
  };
  bool IsDue(const MaintenanceSchedule& s, const Due& due) const;
  bool Busy() const { return rewrite_job_.valid() || orphan_job_.valid(); }
  iceberg::CompactOptions CompactOptionsFor(uint64_t checkpoint) const;
  // Collects finished background work (waiting for it with `wait`); commits a prepared rewrite.
  void Harvest(bool wait);
  void CommitPrepared(Result<std::optional<iceberg::PreparedRewrite>> prepared);
  void Expire();
  void FinishOrphans(Result<iceberg::OrphanResult> r);
  // Every file the current snapshot references is there, whole (one footer read each).
  Status CheckCurrentFiles() const;

  MaintenanceConfig config_;
  iceberg::Catalog* catalog_;
  CatalogFactory open_catalog_;
  iceberg::TableIdentifier id_;
  std::string job_tag_;
  std::string attempt_;  // 8 hex digits per maintainer instance
  std::function<std::set<std::string>()> staged_files_;
  FailedAttemptScope checkpoints_;
  Due rewrite_due_, expire_due_, orphans_due_;
  int64_t data_files_since_rewrite_ = 0, data_bytes_since_rewrite_ = 0;
  int64_t eq_deletes_since_rewrite_ = 0;
  double size_ratio_ = 1.0;  // of the last compaction's files: the next one rolls near the target
  std::future<Result<std::optional<iceberg::PreparedRewrite>>> rewrite_job_;
  std::future<Result<iceberg::OrphanResult>> orphan_job_;
  MaintenanceStats stats_;
  Status data_lost_;
};

}  // namespace floe::connectors::internal
