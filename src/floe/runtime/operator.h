#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/runtime/ids.h"
#include "floe/runtime/metrics.h"
#include "floe/runtime/state.h"
#include "floe/runtime/stream_element.h"

namespace floe::runtime {

class KeyedStateBackend;

// EXACTLY_ONCE: aligned barriers (a task snapshots N only after every input delivered N, and
// holds back the inputs that already did). AT_LEAST_ONCE: no holding back; the snapshot is taken
// when the last barrier N arrives, so it may include records of N+1 (replayed after restore).
enum class CheckpointingMode { kExactlyOnce, kAtLeastOnce };

// The key groups [start, end) a subtask owns. Keys hash to one of max_parallelism key groups;
// key groups map to subtasks in contiguous ranges (Flink's scheme), so keyed state can later be
// redistributed on rescale without rehashing (keyed_state.h snapshots per key group).
struct KeyGroupRange {
  uint32_t start = 0;
  uint32_t end = 0;
  bool operator==(const KeyGroupRange&) const = default;
};

// Identity of one subtask, given to operator factories.
struct TaskInfo {
  std::string vertex;  // the vertex's stable name
  SubtaskIndex subtask;
  uint32_t parallelism = 1;
  uint32_t max_parallelism = 128;
  KeyGroupRange key_groups;
  std::string name() const { return TaskName(vertex, subtask); }
};

// What an operator may know about where it runs. Valid from Open to Close.
struct OperatorContext {
  TaskInfo task;
  CheckpointingMode mode = CheckpointingMode::kExactlyOnce;
  // The checkpoint this run restores from (Restore follows Open when this task has state in it).
  std::optional<CheckpointId> restored_from;
  // Number of logical inputs (edges into the vertex); 0 for sources.
  int num_inputs = 0;
  // Set when the job is being cancelled. Sources that block inside Poll should watch it.
  const std::atomic<bool>* cancel_flag = nullptr;
  // This subtask's operator metrics.
  MetricGroup* metrics = MetricGroup::Unreported();
  // The subtask's keyed state and timers, owned by the runtime (Flink's keyed state backend):
  // set for vertices the plan made keyed (JobGraph::SetKeyedState), null otherwise. The
  // runtime snapshots it at every barrier right after OnBarrier, writes it out asynchronously,
  // restores it (redistributing key groups on a rescale) before Restore, and destroys it after
  // Close. Operators register their states in Open.
  KeyedStateBackend* keyed_state = nullptr;
  bool IsCancelled() const { return cancel_flag != nullptr && cancel_flag->load(); }
};

// Collector sends an operator's output downstream, partitioned per the outgoing edges. It may
// block (backpressure). A non-OK status means the job is failing or cancelled: return it.
class Collector {
 public:
  virtual ~Collector() = default;
  virtual Status Emit(RecordBatch batch) = 0;
  // Sends rows down the edges of side output `port` (>= 1; JobGraph::Connect's `output`) only:
  // rows that leave the main stream, such as a source's dead letters. Not counted as the
  // task's records out.
  virtual Status EmitSide(int port, RecordBatch batch) {
    (void)batch;
    return Status::Internal("this collector has no side output " + std::to_string(port));
  }
  virtual Status EmitWatermark(Watermark watermark) = 0;
  // Marks this task's output idle (true) or active again (false): an idle output is left out of
  // the watermark downstream tasks combine. Sources call it; operators need not (a task whose
  // inputs are all idle marks its output idle by itself).
  virtual Status EmitWatermarkStatus(bool idle) {
    (void)idle;
    return Status::OK();
  }
  // Sends a claim change (stream_element.h) to every downstream subtask, in order with the rows.
  virtual Status EmitClaimChange(const ClaimChange& change) {
    (void)change;
    return Status::OK();
  }
};

// Operator is the contract every non-source task implements (after Arroyo's; see
// docs/architecture.md, "Data path", and the runtime README, "Operator contract").
// Lifecycle, all on one thread (the subtask's own, or its producer's when chained: executor.h):
//   Open -> [Restore] -> { ProcessBatch | OnWatermark | OnClaimChange | ContinueWork |
//                          PrepareBarrier -> OnBarrier | OnCheckpointComplete }*
//        -> [OnEndOfInput -> (PrepareBarrier -> OnBarrier -> OnCheckpointComplete)*] -> Close
// * ProcessBatch: `input` is the index of the edge the batch came through (the order in which
//   edges were connected to this vertex).
// * OnClaimChange: a partition changed hands (stream_element.h, ClaimChange); in order with
//   the batches of its channel.
// * OnWatermark: called when the minimum watermark over all input channels advances. The default
//   forwards it; operators that hold records back (windows) emit their own.
// * PrepareBarrier(N): right before OnBarrier(N), emit what belongs before barrier N (a
//   sink's files of the epoch), as Flink's prepareSnapshotPreBarrier. Its time is not part of
//   the checkpoint's synchronous part, as in Flink: it is data work the task would do at the
//   epoch's end anyway; the executor logs it when slow.
// * OnBarrier(N): snapshot all state into `state` and stage side effects (close files, prepare a
//   transaction); batches emitted here travel before barrier N. In EXACTLY_ONCE mode this runs
//   once every input channel delivered N, and no record after N has been seen yet.
// * OnCheckpointComplete(N): checkpoint N is durable everywhere; commit what was staged up to N
//   (idempotently: after a restore the same commit may be offered again, and N may subsume
//   earlier checkpoints whose notification was lost, and earlier savepoints: a savepoint's
//   completion is not delivered, except a stop-with-savepoint's, see LocalJob).
// * ContinueWork: the operator's unfinished work (event-time timers still due after a large
//   watermark step or a restore), one bounded slice per call; true while work remains. The
//   runner calls it between input elements, so barriers and commands are served while the work
//   lasts, and it finishes the work before OnEndOfInput. Input elements keep arriving between
//   slices: results must not depend on where the slices fall.
// * OnEndOfInput: every input ended. Flush buffered output; a final checkpoint follows, so a sink
//   stages the tail in OnBarrier and commits it in OnCheckpointComplete like any other data.
// * Restore: called after Open with the blob this subtask wrote at the restored checkpoint.
// * Close: release resources. Called once after a successful Open however the task ends
//   (finished, failed, cancelled); it must not commit anything.
// * Abandon(last_completed): the run ended without finishing (a task failed, or it was
//   cancelled). Called after Close, on every operator that was opened, once every task thread
//   has ended -- so on the thread that waited for the job, not the subtask's. No checkpoint or
//   savepoint above `last_completed` completed in this run and none ever will: remove what was
//   staged for them only (files handed over at their barriers), never anything a completed one
//   may hold. Best effort; must not commit. Not called when the process dies (SIGKILL).
// Any non-OK status fails the job.
class Operator {
 public:
  virtual ~Operator() = default;
  virtual Status Open(const OperatorContext& ctx) {
    (void)ctx;
    return Status::OK();
  }
  virtual Status Restore(StateReader& state) {
    (void)state;
    return Status::OK();
  }
  // Restore at another parallelism than the snapshot's (a rescale): `states` holds the blob of
  // every old subtask of this vertex, by old subtask index (empty for a subtask that had none);
  // keyed state was redistributed by the runtime already. An operator whose own state cannot
  // be split or merged keeps the default, which refuses the rescale naming the vertex.
  virtual Status RestoreRescaled(const std::vector<std::string>& states);
  virtual Status ProcessBatch(const RecordBatch& batch, int input, Collector& out) = 0;
  virtual Status OnWatermark(Watermark watermark, Collector& out) {
    return out.EmitWatermark(watermark);
  }
  virtual Result<bool> ContinueWork(Collector& out) {
    (void)out;
    return false;
  }
  // A claim change from upstream. In a keyed task the runtime has moved the key group already
  // (restored or dropped it); the operator learns which split the group's output rows carry.
  // The default forwards it.
  virtual Status OnClaimChange(const ClaimChange& change, Collector& out) {
    return out.EmitClaimChange(change);
  }
  virtual Status PrepareBarrier(CheckpointId id, Collector& out) {
    (void)id, (void)out;
    return Status::OK();
  }
  virtual Status OnBarrier(CheckpointId id, StateWriter& state, Collector& out) {
    (void)id, (void)state, (void)out;
    return Status::OK();
  }
  virtual Status OnCheckpointComplete(CheckpointId id) {
    (void)id;
    return Status::OK();
  }
  virtual Status OnEndOfInput(Collector& out) {
    (void)out;
    return Status::OK();
  }
  virtual Status Close() { return Status::OK(); }
  virtual void Abandon(CheckpointId last_completed) { (void)last_completed; }
};

// Result of one SourceOperator::Poll, DuckDB-style flow control.
enum class SourceStatus {
  kMore,  // call Poll again right away
  kIdle,  // nothing available now; the task backs off briefly (still serving checkpoints)
  kEnd,   // bounded input exhausted; Poll is not called again
};

// SourceOperator produces the job's input. Same thread and lifecycle rules as Operator:
//   Open -> [Restore] -> { Poll | SnapshotPosition | OnCheckpointComplete }* -> Close
// Checkpoint N is taken between two Polls: SnapshotPosition(N) records the position after the
// last emitted batch, then the task injects barrier N into every output. After kEnd the task
// keeps serving checkpoints (its position is final) until the job's final checkpoint completes.
// Poll should not block for long: a trigger waits for the Poll in progress.
class SourceOperator {
 public:
  virtual ~SourceOperator() = default;
  virtual Status Open(const OperatorContext& ctx) {
    (void)ctx;
    return Status::OK();
  }
  virtual Status Restore(StateReader& state) {
    (void)state;
    return Status::OK();
  }
  // As Operator::RestoreRescaled: every old subtask's position blob; the default refuses.
  virtual Status RestoreRescaled(const std::vector<std::string>& states);
  virtual Result<SourceStatus> Poll(Collector& out) = 0;
  virtual Status SnapshotPosition(CheckpointId id, StateWriter& state) {
    (void)id, (void)state;
    return Status::OK();
  }
  virtual Status OnCheckpointComplete(CheckpointId id) {
    (void)id;
    return Status::OK();
  }
  virtual Status Close() { return Status::OK(); }
};

}  // namespace floe::runtime
