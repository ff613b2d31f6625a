#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "floe/catalog/catalog_config.h"
#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/connectors/iceberg/iceberg_sink_internal.h"
#include "floe/connectors/iceberg/table_maintenance.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/partition_positions.h"
#include "floe/iceberg/table_lease.h"
#include "floe/runtime/operator.h"
#include "floe/runtime/source_positions.h"

namespace floe::iceberg {
struct CommitOptions;
struct SnapshotChanges;
}  // namespace floe::iceberg

namespace floe::connectors {

struct IcebergCommitterOptions {
  catalog::CatalogConfig catalog;
  iceberg::TableIdentifier table;
  std::string sink_id;
  std::string job_id;
  std::string pipeline;  // floe.pipeline of the commits ("" = none written)
  // Without a commit of its own id, continue the newest commit of `pipeline` under another id
  // (false when the 'sink-id' option set the id).
  bool continue_pipeline = true;
  // Source positions per checkpoint (may be null: then no floe.source-offsets are known and
  // empty checkpoints are never committed).
  std::shared_ptr<runtime::SourcePositionBoard> positions;
  // In-job maintenance after commits ('flink-maintenance.*' options); the job's checkpoint and
  // savepoint dirs, whose staged files orphan removal keeps.
  internal::MaintenanceConfig maintenance;
  std::string checkpoint_dir;
  std::string savepoint_dir;
  io::FileIO checkpoint_file_io;
  // 'sink.commit.unavailable-timeout': how long a commit retries while the catalog is
  // unavailable (connection lost, 5xx, outcome unknown) before the task fails.
  std::chrono::milliseconds unavailable_timeout{std::chrono::minutes(2)};
  // The sink's lease on the table (shared with its writers; may be null): the committer claims
  // its staged files by name from its barrier until their commit, and everything written since
  // a commit or a compaction started until it ends (manifests, compacted files).
  std::shared_ptr<iceberg::TableLease> lease;
  // The catalog to use (null: the operator opens its own from `catalog`). A routed sink's task
  // shares one among its tables' operators, which all run on its thread: one connection per
  // task, not per table.
  std::shared_ptr<iceberg::Catalog> shared_catalog;
  // Instances of a scaled-out job share the table (docs/architecture.md, "Scale-out across
  // machines"): the sources record their PartitionClaims as positions, the writers split files
  // by claim, and each commit checks and sets every partition's position in the table
  // (iceberg::CommitPartitions) in place of this sink's checkpoint marker. The files of a
  // partition the table fences, or of a claim the sources no longer held at the barrier, are
  // deleted; a fenced claim is reported on the board (SourcePositionBoard::ReportFenced).
  bool partition_positions = false;
  // With partition_positions, a keyed job's (docs/architecture.md, "Keyed jobs"): each commit
  // also names, per partition, the keyed task's state file of the checkpoint it commits
  // (iceberg::PartitionCommit::state), so the partition's next holder restores what this
  // reading produced; the checkpoints the table names stay pinned against retention. The
  // pending checkpoints up to a completed one commit as one snapshot with its state; an upsert
  // table's cannot (equality deletes retire only older snapshots' rows), so there an earlier
  // pending checkpoint fails the task and the instance reads its partitions again.
  std::shared_ptr<const ScaleOut> scale_out;
  bool upsert = false;  // the table is written in upsert mode (equality deletes)
  // Test hook: runs at the end of OnCheckpointComplete(id).
  std::function<void(runtime::CheckpointId)> on_checkpoint_handled;
};

// IcebergCommitterOperator is the single committer of the exactly-once Iceberg sink
// (docs/architecture.md, "The exactly-once commit protocol", steps 2-5; docs/exactly-once.md).
//   ProcessBatch      collects the writers' file descriptions, per checkpoint id.
//   OnBarrier(N)      pending[N] = the files collected up to N + the source positions of N;
//                     the state blob holds every pending checkpoint not yet committed.
//   OnCheckpointComplete(N)
//                     commits every pending checkpoint <= N in ascending order, ONE snapshot
//                     each (an equality delete only retires rows of lower sequence numbers),
//                     with floe.sink-id / floe.job-id / floe.checkpoint-id / floe.source-offsets
//                     in the summary. A commit whose checkpoint the table already holds for this
//                     sink id (checked on the freshly loaded table before every attempt) is
//                     skipped, so a commit repeated after a crash is a no-op.
//   Restore           loads pending, drops what the table already holds, and commits the rest
//                     at once: the restored checkpoint completed, so everything it staged is due.
// A checkpoint without files is committed (as an empty "append" snapshot) only when its source
// positions differ from the last committed ones, so offsets advance but idle checkpoints leave
// no trace.
// After the commits of OnCheckpointComplete(N) (and after reporting N committed) the table's
// maintenance runs when due (TableMaintainer), on this thread: it never races this sink's commits.
// With a position board it is a registered committer: after OnCheckpointComplete(N) it reports
// N committed (SourcePositionBoard), so Kafka sources publish N's group offsets only then.
// Thread: the subtask's own. Parallelism must be 1.
class IcebergCommitterOperator final : public runtime::Operator {
 public:
  explicit IcebergCommitterOperator(IcebergCommitterOptions options)
      : options_(std::move(options)) {}

  Status Open(const runtime::OperatorContext& ctx) override;
  Status Restore(runtime::StateReader& state) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                   runtime::Collector& out) override;
  Status OnCheckpointComplete(runtime::CheckpointId id) override;
  Status OnEndOfInput(runtime::Collector& out) override;
  // Remembers the job's watermark: the one at a checkpoint's barrier goes into its snapshot's
  // summary (floe.watermark, epoch milliseconds), so any reader sees how far in event time the
  // table is complete.
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;
  Status Close() override;

  // For tests and logs.
  struct Stats {
    int64_t committed = 0;        // snapshots committed
    int64_t skipped_present = 0;  // checkpoints the table already held
    int64_t skipped_empty = 0;    // checkpoints without files or position changes
    int64_t dropped_on_restore = 0;
  };
  const Stats& stats() const { return stats_; }
  // Checkpoint ids still pending (not yet committed), ascending.
  std::vector<uint64_t> pending_ids() const;
  const internal::MaintenanceStats& maintenance_stats() const;

 private:
  using Pending = internal::PendingCommit;
  Status CommitUpTo(uint64_t id);
  Status CommitOne(uint64_t id, const Pending& pending);
  // CommitOne with partition_positions.
  Status CommitClaims(uint64_t id, const Pending& pending);
  // What a CommitClaims of checkpoint `id` holds (defined in the .cc).
  struct ClaimCommit;
  Result<ClaimCommit> PlanClaimCommit(uint64_t id, const Pending& pending) const;
  // A keyed scaled-out job (IcebergCommitterOptions::scale_out names a keyed task).
  bool keyed() const { return options_.scale_out && !options_.scale_out->keyed_task.empty(); }
  // This job's checkpoints whose keyed state `metadata` names for this sink's partitions.
  std::set<runtime::CheckpointId> NamedCheckpoints(const iceberg::TableMetadata& metadata) const;
  // InvalidArgument when `metadata` holds another partition count for a topic of `counts` (the
  // key -> partition map a keyed job's state follows changed).
  Status CheckPartitionCounts(const iceberg::TableMetadata& metadata,
                              const std::map<std::string, int32_t>& counts) const;
  // The checkpoints named after the last settled commit (keyed only).
  std::set<runtime::CheckpointId> named_;
  // Counts `retries` swaps of checkpoint `id`'s commit (commitConflicts) and logs them.
  void ReportRetries(uint64_t id, int retries, const char* what);
  // CommitSnapshot, repeated with backoff while the catalog is unavailable (up to
  // options_.unavailable_timeout). Each attempt reloads the table, whose markers tell
  // (`commit_options.validate`) whether an attempt with an unknown outcome landed.
  // `*validations` (counted by the validate callback) is reset before each attempt.
  Result<iceberg::Snapshot> CommitThroughOutages(uint64_t id,
                                                 const iceberg::SnapshotChanges& changes,
                                                 const iceberg::CommitOptions& commit_options,
                                                 int* validations);
  Status LoadTableMarker();
  void RecordCommit(const iceberg::Snapshot& snapshot, const Pending& pending,
                    std::chrono::steady_clock::time_point started);
  // The files staged in pending_ and collected_ (absolute local paths).
  std::set<std::string> StagedFiles() const;
  // Claims the staged files on the lease, and what is written from `since_ms` on.
  Status ClaimOnLease(std::optional<int64_t> since_ms);
  // Runs due maintenance; an error only when it found committed data gone (the job must stop).
  Status RunMaintenance(uint64_t id);
  // Every file of checkpoint `id` exists with the size its writer recorded (one size request
  // per file): a commit must never reference a file that is not there.
  Status CheckStagedFilesPresent(uint64_t id, const Pending& pending) const;
  bool maintenance_claimed_ = false;
  std::string task_;

  IcebergCommitterOptions options_;
  std::shared_ptr<iceberg::Catalog> catalog_;
  std::optional<runtime::CheckpointId> restored_from_;
  // Received from writers, by the checkpoint id they were staged for; moved into pending_ on
  // the committer's own barrier.
  std::map<uint64_t, Pending> collected_;
  std::map<uint64_t, Pending> pending_;
  // The table's marker for this sink id: its checkpoint id and positions (nullopt: none yet).
  uint64_t table_checkpoint_ = 0;
  // The newest marker of this sink id this committer has seen (loaded or written): a newer one
  // by another job means a second job writes the same sink id right now.
  int64_t seen_marker_snapshot_ = 0;
  std::optional<std::map<std::string, std::string>> committed_positions_;
  // partition_positions: where this instance last committed each partition, in which
  // generation of its claim; and the claims (by split) the table fenced.
  struct CommittedClaim {
    uint64_t generation = 0;
    int64_t next = 0;
  };
  std::map<iceberg::SourcePartition, CommittedClaim> committed_claims_;
  std::set<std::string> fenced_splits_;
  Stats stats_;
  std::unique_ptr<internal::TableMaintainer> maintainer_;
  // Committed since the last maintenance check.
  int64_t commits_since_check_ = 0, data_files_since_check_ = 0, data_bytes_since_check_ = 0;
  int64_t eq_deletes_since_check_ = 0;
  bool end_of_input_ = false;
  // Iceberg's committer metrics (IcebergFilesCommitter scope), labelled with the table.
  struct Metrics {
    runtime::Metric* commits = nullptr;
    runtime::Metric* last_commit_duration_ms = nullptr;
    runtime::Metric* last_commit_timestamp = nullptr;
    runtime::Metric* last_committed_watermark = nullptr;
    runtime::Metric* data_files = nullptr;
    runtime::Metric* data_records = nullptr;
    runtime::Metric* data_bytes = nullptr;
    runtime::Metric* delete_files = nullptr;
    runtime::Metric* delete_records = nullptr;
    runtime::Metric* delete_bytes = nullptr;
    runtime::Metric* total_data_files = nullptr;
    runtime::Metric* total_delete_files = nullptr;
    // floe's: commits retried because another writer committed first (reloaded, re-applied).
    runtime::Metric* commit_conflicts = nullptr;
  } metrics_;
  int64_t watermark_ = INT64_MIN;             // micros; INT64_MIN: none yet
  std::map<uint64_t, int64_t> watermark_at_;  // by checkpoint: watermark_ at its barrier (not
                                              // checkpointed: a restored commit carries none)
};

}  // namespace floe::connectors
