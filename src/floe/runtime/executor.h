#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/runtime/checkpoint.h"
#include "floe/runtime/job_graph.h"
#include "floe/runtime/metrics.h"
#include "floe/runtime/operator.h"

namespace floe::runtime {

struct ExecutorOptions {
  CheckpointingMode mode = CheckpointingMode::kExactlyOnce;
  // Elements (batches or control events) each channel holds before its producer blocks.
  size_t channel_capacity = 16;
  // > 0: channel_capacity counts slots of this many rows instead (InputGate's slot_rows).
  size_t channel_slot_rows = 0;
  // Flink's operator chaining (pipeline.operator-chaining.enabled): a subtask whose only input
  // is a FORWARD edge runs on its producer's thread, which hands it every element by a call
  // instead of a channel. It keeps its task name, state, acks and metrics; a chained task's
  // work counts in its producer's time (back pressure, a slow barrier's log line).
  bool operator_chaining = false;
  // How long a source task waits after Poll returned kIdle (commands still wake it at once).
  std::chrono::milliseconds idle_backoff{10};
  // true: after end of input every task stays up for a final checkpoint and finishes once a
  // checkpoint whose acks all carry end_of_input completes -- so sinks commit the tail.
  // false: tasks finish at end of input (nothing after the last completed checkpoint commits).
  bool final_checkpoint = true;
  // State to start from (each task whose name has a blob gets Restore()).
  std::optional<CompletedCheckpoint> restore;
  // Make fails when `restore` holds state of a task this graph does not have (a vertex was
  // renamed or its parallelism changed: state is not redistributed yet), unless this is set
  // (Flink's --allowNonRestoredState); that state is then dropped.
  bool allow_non_restored_state = false;
  // Where incremental keyed-state snapshots keep their shared files and a restore of one reads
  // them (LocalJob: the checkpoint storage's); null: none. Not owned.
  SharedStateStore* shared_state = nullptr;
  // Keyed state backends write incremental checkpoints (execution.checkpointing.incremental).
  bool incremental = false;
  // Reads the snapshot a beginning claim names (ClaimChange::state) for a keyed task to restore
  // the claim's key group from. Unset: a claim naming state fails the task.
  std::function<Result<std::string>(const std::string& location)> read_claim_state;

  // Where subtasks keep their metrics (task and operator scope); null: a private registry.
  std::shared_ptr<MetricRegistry> metrics;

  // Callbacks, run on task threads: thread-safe, quick, and must not call Wait().
  // A subtask snapshotted checkpoint N.
  std::function<void(TaskAck)> on_ack;
  // Every task has processed end of input (once per run): time for the final checkpoint.
  std::function<void()> on_end_of_input;
  // A task found an output channel full and is about to block (backpressure probe).
  std::function<void(const std::string& task)> on_output_blocked;
};

enum class JobState { kCreated, kRunning, kFinished, kCancelled, kFailed };
std::string_view JobStateName(JobState state);

// LocalExecutor runs a JobGraph in this process: one thread per subtask (per chain of subtasks,
// with operator_chaining), a bounded channel per producer/consumer subtask pair, partitioners on
// the edges. It is the worker side of the
// checkpoint protocol; whoever owns it plays the coordinator (LocalJob in-process, or the
// `floe worker` process relaying the coordinator's commands):
//   TriggerCheckpoint(N)          -> sources snapshot their position and inject barrier N
//   options.on_ack(TaskAck)       <- each subtask, once it snapshotted N
//   NotifyCheckpointComplete(N)   -> OnCheckpointComplete(N) on every operator, in its thread
//   options.on_end_of_input()     <- all input consumed; owner triggers the final checkpoint
// Lifecycle: Make -> Start -> ... -> Wait (or Cancel -> Wait). The first task error fails the
// job: every other task is cancelled and Wait returns that error. Public methods are
// thread-safe. The destructor cancels and joins a running job.
class LocalExecutor {
 public:
  // Validates the graph and instantiates every operator (factories run on this thread).
  static Result<std::unique_ptr<LocalExecutor>> Make(const JobGraph& graph,
                                                     ExecutorOptions options);
  ~LocalExecutor();
  LocalExecutor(const LocalExecutor&) = delete;
  LocalExecutor& operator=(const LocalExecutor&) = delete;

  Status Start();
  // REQUIRES: ids strictly increase across calls. Unavailable once the job stopped running.
  Status TriggerCheckpoint(CheckpointId id, bool is_savepoint = false);
  // `final`: every ack of `id` had end_of_input; tasks finish after committing.
  Status NotifyCheckpointComplete(CheckpointId id, bool final = false);
  // Cancels every task; Wait then returns OK with state() == kCancelled (unless a task had
  // already failed).
  void Cancel();
  // Blocks until every task thread ended. OK when the job finished or was cancelled.
  Status Wait();
  // Operator::Abandon(last_completed) on every operator that was opened, on this thread; once.
  // REQUIRES: Wait() returned, the job did not finish, and no checkpoint or savepoint above
  // `last_completed` completed (the owner knows: it completes them).
  void Abandon(CheckpointId last_completed);

  JobState state() const;
  // Every subtask's TaskName (the keys of acks and of CompletedCheckpoint::task_states).
  const std::vector<std::string>& task_names() const;

  struct Impl;

 private:
  explicit LocalExecutor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace floe::runtime
