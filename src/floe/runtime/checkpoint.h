#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "floe/runtime/ids.h"
#include "floe/runtime/state.h"

namespace floe::runtime {

class KeyedStateSnapshot;

// A subtask's answer to barrier N: its snapshot blob. Sent by the task thread that snapshotted.
struct TaskAck {
  CheckpointId checkpoint;
  std::string task;  // TaskName
  std::string state;
  // The task had seen end of input on every input when it snapshotted. A checkpoint all of whose
  // acks say so is the job's final checkpoint: once it completes, the tasks finish.
  bool end_of_input = false;
  // How long the task held back inputs that had delivered the barrier until the last one did
  // (Flink's checkpointAlignmentTime); 0 for sources.
  int64_t alignment_micros = 0;
  // The keyed state view taken at the barrier (keyed vertices only), written out by the
  // asynchronous part of the checkpoint together with `state`.
  std::shared_ptr<KeyedStateSnapshot> keyed;
  // The synchronous part: how long the stream stopped for the snapshot (OnBarrier and the
  // keyed state view), Flink's sync duration: neither PrepareBarrier nor waiting for room
  // downstream counts.
  int64_t sync_micros = 0;
};

// How long one task spent on one checkpoint, in microseconds (Flink's checkpoint statistics).
struct TaskCheckpointTimes {
  int64_t alignment_micros = 0;  // inputs held back for barrier alignment
  int64_t sync_micros = 0;       // the stream stopped: OnBarrier and the keyed state view
  int64_t async_micros = 0;      // writing the state out while records flow
};

// A checkpoint (or savepoint) that completed: its id and every subtask's blob. What a job
// restores from.
struct CompletedCheckpoint {
  CheckpointId id;
  bool is_savepoint = false;
  std::string job_id;
  std::string dir;  // where it was loaded from (empty when it never touched storage)
  int64_t timestamp_millis = 0;
  std::map<std::string, std::string> task_states;  // TaskName -> blob
  // Incremental checkpoints: the shared files each task's state needs (only tasks that list
  // some), and the `shared/` directory they are in (set by a load when any task lists some).
  // A restore hands them to the task's keyed state backend, which downloads them from there
  // (a CheckpointSharedStateStore over `shared_dir`). Restoring another job's checkpoint, that
  // is not the restoring job's own `shared/`: its checkpoints must upload the files again
  // rather than list names its own `shared/` lacks (a load of such a checkpoint fails naming them).
  std::map<std::string, std::vector<SharedStateFile>> task_shared;  // TaskName -> files
  std::string shared_dir;
};

}  // namespace floe::runtime
