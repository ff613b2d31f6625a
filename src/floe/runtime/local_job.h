#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "floe/common/status.h"
#include "floe/runtime/checkpoint_config.h"
#include "floe/runtime/checkpoint_coordinator.h"
#include "floe/runtime/clock.h"
#include "floe/runtime/executor.h"
#include "floe/runtime/job_graph.h"
#include "floe/runtime/metrics.h"

namespace floe::runtime {

struct LocalJobOptions {
  std::string job_id;              // default: random 32 hex digits
  CheckpointConfig checkpointing;  // dir empty: checkpoints still drive commits, nothing on disk
  size_t channel_capacity = 16;
  size_t channel_slot_rows = 0;    // ExecutorOptions::channel_slot_rows
  bool operator_chaining = false;  // ExecutorOptions::operator_chaining
  std::chrono::milliseconds idle_backoff{10};
  const Clock* clock = nullptr;  // default: SteadyClock
  // "latest" (the newest completed checkpoint in checkpointing.dir) or a checkpoint/savepoint
  // directory. NotFound if "latest" finds none.
  std::optional<std::string> restore_from;
  // Checkpoint ids start above max(this, the restored id, any chk-<N> on disk).
  CheckpointId min_checkpoint_id;
  // Run a timer thread for periodic checkpoints and timeouts. Tests turn it off and trigger by
  // hand.
  bool timer_thread = true;
  // Where tasks and operators keep their metrics, plus the job's failed-checkpoint count
  // (null: a private registry).
  std::shared_ptr<MetricRegistry> metrics;
  // Called (on a state-writer thread) after each checkpoint completed and tasks were notified.
  std::function<void(const CompletedCheckpointInfo&)> on_checkpoint_complete;
  // A keyed job scaled out by Kafka partition: checkpoints its table may name, which retention
  // keeps (CheckpointPins). Null: none.
  std::shared_ptr<const CheckpointPins> checkpoint_pins;
};

// LocalJob runs a job entirely in this process: a LocalExecutor (the worker side) wired to a
// CheckpointCoordinator and CheckpointStorage (the coordinator side). Acks are written to
// storage by state-writer threads (the asynchronous part: keyed state serialized, files written)
// while the tasks run on; the last ack finalizes `_metadata` and notifies every
// task (not for an intermediate savepoint, see TriggerCheckpoint); end of input triggers the final
// checkpoint. It is `floe run` without worker processes, and the reference the multi-process layer
// must behave like. Lifecycle: Make -> Start -> [TriggerCheckpoint | Cancel]* -> Wait. Thread-safe.
class LocalJob {
 public:
  static Result<std::unique_ptr<LocalJob>> Make(const JobGraph& graph, LocalJobOptions options);
  ~LocalJob();

  Status Start();
  // Triggers a checkpoint (or savepoint) now; returns its id. Completion is reported through
  // options.on_checkpoint_complete. A checkpoint's completion is delivered to every operator
  // (OnCheckpointComplete: commit); a savepoint's is not: what it staged is committed by the
  // next completed checkpoint, since failover restores from checkpoints only (Flink 1.15+).
  Result<CheckpointId> TriggerCheckpoint(bool is_savepoint = false);
  // Triggers the savepoint of a stop-with-savepoint (Flink's): from now on no checkpoint is
  // triggered (periodic, final, or TriggerCheckpoint: Unavailable) unless the savepoint fails.
  // Its completion IS delivered to the operators, after options.on_checkpoint_complete returned
  // with info.stop set, as final: every task commits it and finishes, and the job ends
  // kFinished by itself (do not Cancel: it would race the commits). The job's committed output
  // ends exactly at the savepoint; a run resumed from it continues from there. Conflict while
  // another stop is in progress.
  Result<CheckpointId> TriggerStopWithSavepoint();
  void Cancel();
  // Blocks until the job finished, was cancelled or failed; returns the first error (a task's,
  // or the coordinator's when failed checkpoints exceeded the tolerable number).
  Status Wait();

  JobState state() const;
  // The checkpoint this run restored from (invalid id if none).
  CheckpointId restored_from() const;
  CheckpointId last_completed() const;
  // Checkpoint ids of this run start above it: the highest of min_checkpoint_id, the ids in the
  // checkpoint directory and the restored checkpoint's.
  CheckpointId checkpoint_floor() const;
  const std::string& job_id() const;

  struct Impl;

 private:
  explicit LocalJob(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace floe::runtime
