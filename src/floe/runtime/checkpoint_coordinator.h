#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/runtime/checkpoint_config.h"
#include "floe/runtime/checkpoint_storage.h"
#include "floe/runtime/clock.h"
#include "floe/runtime/ids.h"
#include "floe/runtime/metrics.h"

namespace floe::runtime {

// A checkpoint the coordinator decided to start: tell every source to inject barrier `id`.
struct CheckpointTrigger {
  CheckpointId id;
  bool is_savepoint = false;
  CheckpointLocation location;  // dir empty when there is no storage
};

// A checkpoint whose acks are all in and whose `_metadata` is written: tell every task
// "checkpoint `id` complete" (with `final`: then finish) -- unless it is a savepoint (see
// LocalJob: only a stop-with-savepoint's savepoint is delivered to the tasks).
struct CompletedCheckpointInfo {
  CheckpointId id;
  bool is_savepoint = false;
  bool final = false;  // every ack carried end_of_input
  std::string dir;
  // Set by LocalJob on the savepoint of a stop-with-savepoint: its completion is delivered to
  // the tasks (they commit its side effects) right after on_checkpoint_complete returns.
  bool stop = false;
  // From trigger to `_metadata` written, on the coordinator's clock.
  int64_t duration_millis = 0;
  // The task states' bytes (Flink's checkpointed size).
  uint64_t size_bytes = 0;
  // The longest alignment, synchronous and asynchronous part of any task (Flink's checkpoint
  // statistics take the same maxima).
  int64_t alignment_micros = 0;
  int64_t sync_micros = 0;
  int64_t async_micros = 0;
  // The task whose synchronous part was the longest: the one the stream waited for.
  std::string sync_task;
  // Set when the checkpoint completed but older ones could not be cleaned up.
  std::string warning;
};

// CheckpointCoordinator is the JobManager's checkpoint logic without threads or I/O of its own
// (except writing `_metadata` through the storage): the owner calls it on ticks and on acks,
// and carries out what it returns. Timing comes from a Clock, so every rule is testable with a
// FakeClock:
//   * periodic trigger when interval has passed since the last trigger, fewer than
//     max-concurrent checkpoints are pending, and -- with min-pause > 0 -- none is pending and
//     min-pause has passed since the last one ended (Flink: min-pause implies one at a time);
//   * a checkpoint completes when every expected task acked it; older pending checkpoints are
//     then subsumed (aborted, not counted as failures);
//   * a pending checkpoint older than timeout is aborted; timeouts, declines and failures to
//     write `_metadata` count as consecutive failures (a completion resets the count; savepoints
//     don't count); more than tolerable-failed-checkpoints fails the job (non-OK status);
//   * ids increase from floor + 1; savepoints share the sequence.
// Not thread-safe: the owner serializes calls.
class CheckpointCoordinator {
 public:
  struct Options {
    CheckpointConfig config;
    std::vector<std::string> tasks;        // every TaskName that must ack
    CheckpointId floor;                    // first id is floor + 1
    const Clock* clock = nullptr;          // default: SteadyClock
    CheckpointStorage* storage = nullptr;  // null: checkpoints live only in acks (tests, no dir)
    Metric* failed_checkpoints = nullptr;  // if set, counts every failure (timeouts, declines)
  };
  static Result<std::unique_ptr<CheckpointCoordinator>> Make(Options options);

  // Starts a periodic checkpoint if the timing rules allow it now.
  Result<std::optional<CheckpointTrigger>> MaybeTriggerPeriodic();
  // Starts a checkpoint (or savepoint) now regardless of interval, min-pause and max-concurrent:
  // savepoints on request, the final checkpoint at end of input.
  Result<CheckpointTrigger> TriggerNow(bool is_savepoint);
  // Records a task's state handle for checkpoint `id`. Returns the completed checkpoint when
  // this was the last ack. Acks for unknown (aborted, subsumed) checkpoints are ignored.
  Result<std::optional<CompletedCheckpointInfo>> Acknowledge(CheckpointId id, TaskStateHandle state,
                                                             bool end_of_input,
                                                             TaskCheckpointTimes times = {});
  // A task could not snapshot `id` (or its state could not be written): abort it.
  Status Decline(CheckpointId id, const Status& reason);
  // Aborts every pending checkpoint without counting failures -- a worker died and the job is
  // restarting from the last completed checkpoint (Flink does not count those either).
  Status AbortAllPending(const std::string& reason);
  // Aborts pending checkpoints past their timeout.
  Status CheckTimeouts();
  // When the owner should call MaybeTriggerPeriodic / CheckTimeouts next (clock millis), if
  // anything is scheduled.
  std::optional<int64_t> NextWakeupMillis() const;
  // Applies externalized-checkpoint-retention when the job is cancelled.
  Status OnJobCancelled();

  // Location of a pending checkpoint (where tasks write their state).
  std::optional<CheckpointLocation> LocationOf(CheckpointId id) const;
  size_t num_pending() const { return pending_.size(); }
  CheckpointId last_completed() const { return last_completed_; }
  // The highest checkpoint or savepoint id every task acknowledged, whose `_metadata` was then
  // written or attempted (a failed write may still have left it on disk). Nothing above it
  // completed; a failed run's operators may drop what they staged above it (Operator::Abandon).
  CheckpointId last_fully_acknowledged() const { return last_fully_acknowledged_; }
  CheckpointId last_triggered() const { return CheckpointId(next_id_.value - 1); }
  int consecutive_failures() const { return consecutive_failures_; }
  const CheckpointConfig& config() const { return options_.config; }

 private:
  struct Pending {
    CheckpointLocation location;
    int64_t trigger_millis = 0;
    std::map<std::string, TaskStateHandle> acks;
    bool all_end_of_input = true;
    uint64_t size_bytes = 0;
    TaskCheckpointTimes times;  // maxima over the acks
    std::string sync_task;      // the ack with the longest synchronous part
  };
  explicit CheckpointCoordinator(Options options);
  Result<CheckpointTrigger> Start(bool is_savepoint);
  // Removes `id` from pending, discards its files, and counts a failure. Non-OK when the job
  // must fail.
  Status Abort(CheckpointId id, const std::string& why, bool count_failure);
  size_t PeriodicPending() const;

  Options options_;
  std::set<std::string> expected_;
  std::map<CheckpointId, Pending> pending_;
  CheckpointId next_id_;
  CheckpointId last_completed_;
  CheckpointId last_fully_acknowledged_;
  int64_t next_periodic_millis_ = 0;
  std::optional<int64_t> last_end_millis_;
  int consecutive_failures_ = 0;
};

}  // namespace floe::runtime
