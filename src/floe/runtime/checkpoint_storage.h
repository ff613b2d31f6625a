#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/io/file_io.h"
#include "floe/runtime/checkpoint.h"
#include "floe/runtime/ids.h"

namespace floe::runtime {

// Where one checkpoint's files go: `<checkpoint dir>/chk-<N>/` or, for a savepoint,
// `<savepoint dir>/savepoint-<job id prefix>-<random>/`.
struct CheckpointLocation {
  CheckpointId id;
  bool is_savepoint = false;
  std::string dir;
};

// One subtask's state file in a checkpoint, as recorded in `_metadata`.
struct TaskStateHandle {
  std::string task;  // TaskName
  std::string file;  // name inside the checkpoint directory
  uint64_t size = 0;
  uint32_t crc32 = 0;
  bool operator==(const TaskStateHandle&) const = default;
};

// CheckpointStorage is the filesystem layout of checkpoints and savepoints (see README.md):
// each checkpoint is a directory holding one state file per subtask and a `_metadata` file that
// is written atomically and last. A directory without `_metadata` is not a checkpoint (an
// aborted or in-progress one) and is never restored from. Completed checkpoints beyond
// `num_retained` are deleted oldest first (`_metadata` first, so a half-deleted checkpoint is
// no longer one); the latest is never deleted; savepoints are never deleted.
//
// WriteTaskState and LoadPath are static so a worker process can write its subtasks' files and
// a restarting job can read a savepoint without an instance. Files are read and written with
// the FileIO given (local paths, or s3:// with its settings). Instances are thread-safe (the
// methods touch only the filesystem).
class CheckpointStorage {
 public:
  struct Options {
    std::string checkpoint_dir;  // required
    std::string savepoint_dir;   // default: <checkpoint_dir>/savepoints
    int num_retained = 1;
    std::string job_id;  // recorded in _metadata; names savepoints
    io::FileIO file_io;  // what the directories are reached with
  };
  // Creates the checkpoint directory if needed.
  static Result<std::unique_ptr<CheckpointStorage>> Make(Options options);

  // Creates the checkpoint's directory. For a savepoint it picks a fresh random name.
  Result<CheckpointLocation> InitCheckpoint(CheckpointId id, bool is_savepoint) const;
  // Writes one subtask's blob (durably, never overwriting) into the checkpoint's directory.
  static Result<TaskStateHandle> WriteTaskState(const io::FileIO& file_io,
                                                const CheckpointLocation& location,
                                                const std::string& task, std::string_view blob);
  // Writes `_metadata`, the commit point of the checkpoint. AlreadyExists if the checkpoint was
  // finalized before.
  Status Finalize(const CheckpointLocation& location, const std::vector<TaskStateHandle>& states,
                  int64_t timestamp_millis) const;
  // Deletes completed checkpoints beyond `state.checkpoints.num-retained` and leftovers of aborted
  // ones older than the latest completed. Never deletes savepoints. Its failure leaves every
  // completed checkpoint completed.
  Status ApplyRetention() const;
  // Removes an unfinished checkpoint's directory (aborted, timed out). Refuses (Internal) to
  // remove one that has `_metadata`.
  Status Discard(const CheckpointLocation& location) const;

  // Ids of completed checkpoints (those with `_metadata`), ascending.
  Result<std::vector<CheckpointId>> ListCompleted() const;
  Result<std::optional<CheckpointId>> LatestCompleted() const;
  // The highest N of any chk-<N> directory, complete or not, and of any savepoint this job
  // triggered (0 if none): new checkpoint ids must start above it so they never collide with
  // leftovers of an earlier run, nor with a savepoint someone may restore later.
  Result<CheckpointId> HighestIdOnDisk() const;
  // The highest savepoint id InitCheckpoint recorded in `<checkpoint dir>/_savepoint_ids`
  // (0 if none), wherever the savepoints went since.
  Result<CheckpointId> HighestSavepointId() const;
  // Loads a completed checkpoint, verifying every state file's size and CRC. NotFound if chk-N
  // has no `_metadata`; Corruption if anything does not match.
  Result<CompletedCheckpoint> Load(CheckpointId id) const;
  // Loads a checkpoint or savepoint from its directory (or its `_metadata` file's path).
  static Result<CompletedCheckpoint> LoadPath(const io::FileIO& file_io, const std::string& path);

  // DELETE_ON_CANCELLATION: removes every chk-* directory. Savepoints stay.
  Status DiscardAllCheckpoints() const;
  // Removes chk-* directories without `_metadata` whose id is below `below`.
  Status RemoveIncomplete(CheckpointId below) const;

  std::string CheckpointDir(CheckpointId id) const;
  const Options& options() const { return options_; }

  static constexpr const char* kMetadataFile = "_metadata";
  static constexpr const char* kSavepointFloorFile = "_savepoint_ids";

 private:
  explicit CheckpointStorage(Options options) : options_(std::move(options)) {}
  // chk-<N> directory ids present, ascending.
  Result<std::vector<CheckpointId>> ListCheckpointDirs() const;

  Options options_;
};

// `_metadata` codec (format documented in README.md).
std::string EncodeCheckpointMetadata(const CompletedCheckpoint& header,
                                     const std::vector<TaskStateHandle>& states);
struct CheckpointMetadata {
  CompletedCheckpoint header;  // task_states left empty
  std::vector<TaskStateHandle> states;
};
Result<CheckpointMetadata> DecodeCheckpointMetadata(std::string_view data);

}  // namespace floe::runtime
