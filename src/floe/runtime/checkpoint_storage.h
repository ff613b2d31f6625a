#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/mutex.h"
#include "floe/common/status.h"
#include "floe/io/file_io.h"
#include "floe/runtime/checkpoint.h"
#include "floe/runtime/ids.h"
#include "floe/runtime/state.h"

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
  // Incremental checkpoints: the files in `shared/` this task's state needs (format version 2).
  std::vector<SharedStateFile> shared = {};  // `= {}`: handles that omit it are no warning
  bool operator==(const TaskStateHandle&) const = default;
};

// CheckpointSharedStateStore keeps the shared files of incremental checkpoints in one directory,
// `<checkpoint dir>/shared/` (local or s3://, through the FileIO given). Upload writes a file
// durably and exclusively (local: a temp file copied in chunks, fsynced, then link(2)ed to its
// name; S3: a conditional create of the whole object, read into memory because FileIO has no
// streaming upload); an upload whose name exists is settled as done when the existing file has
// the same size and CRC-32, else AlreadyExists. Download copies in chunks and verifies size and
// CRC-32. Names are plain file names (CheckName).
//
// Which files may be deleted (DeleteUnreferenced, run by CheckpointStorage's retention) is
// decided together with what the store saw; see the comment above DeleteUnreferenced in
// checkpoint_storage.cc for why the rule never deletes a file a retained or in-flight
// checkpoint needs. It relies on this contract with the keyed state backends:
//   * a checkpoint lists every shared file of the state at its barrier (KeyedStateSnapshot::
//     WriteTo), and a file that is no longer part of the state never becomes part of it again
//     unless it is uploaded again (an Upload call, even for a name that exists);
//   * every upload of the job goes through the store of the process that also runs the
//     retention (today: the worker running the job; the process coordinator reaps a killed
//     worker before it starts the next one).
// Thread-safe: asynchronous snapshot threads upload while the coordinator thread runs retention.
class CheckpointSharedStateStore : public SharedStateStore {
 public:
  CheckpointSharedStateStore(io::FileIO file_io, std::string dir)
      : file_io_(std::move(file_io)), dir_(std::move(dir)) {}

  Result<SharedStateFile> Upload(const std::string& local_path, const std::string& name) override;
  Status Download(const SharedStateFile& file, const std::string& local_path) const override;

  // InvalidArgument unless `name` is a plain file name: 1 to 200 bytes, no '/', '\\' or NUL, not
  // starting with '.' (temp files of uploads start with ".tmp-"; "." and ".." are never names).
  static Status CheckName(std::string_view name);

  // CheckpointStorage calls this when it starts (periodic) checkpoint `id`, before its barriers
  // go out: uploads from then on may belong to it.
  void NoteCheckpointStarted(CheckpointId id) FLOE_EXCLUDES(mu_);
  // Deletes the files in the directory that `referenced` does not name, except those that may
  // belong to a checkpoint in flight: with `latest` (the newest completed checkpoint), every file
  // this store began uploading after `latest` was started; always, the temp files of uploads
  // still running. Without `latest` (everything was discarded: REQUIRES no checkpoint in flight)
  // only those temp files stay.
  Status DeleteUnreferenced(const std::set<std::string>& referenced,
                            std::optional<CheckpointId> latest) FLOE_EXCLUDES(mu_);

  const std::string& dir() const { return dir_; }
  std::string PathOf(const std::string& name) const;

 private:
  // Copies the local file to `dest` in chunks (local destination), filling `file` as it goes.
  Status CopyToLocal(const std::string& local_path, const std::string& dest, SharedStateFile* file)
      FLOE_EXCLUDES(mu_);
  Status PutObject(const std::string& local_path, const std::string& dest, SharedStateFile* file);
  // An upload found `dest` taken: done if it holds the same bytes, else AlreadyExists.
  Status SettleExisting(const std::string& dest, const SharedStateFile& file) const;
  bool MayBelongToACheckpointInFlight(const std::string& name, std::optional<CheckpointId> latest)
      FLOE_REQUIRES(mu_);

  const io::FileIO file_io_;
  const std::string dir_;
  mutable Mutex mu_;
  uint64_t next_upload_ FLOE_GUARDED_BY(mu_) = 0;  // orders uploads and checkpoint starts
  // name -> order of the latest Upload call for it
  std::map<std::string, uint64_t> uploads_ FLOE_GUARDED_BY(mu_);
  // checkpoint id -> next_upload_ when it was started (this process's checkpoints only)
  std::map<CheckpointId, uint64_t> started_ FLOE_GUARDED_BY(mu_);
  std::set<std::string> temps_ FLOE_GUARDED_BY(mu_);  // temp file names of running uploads
};

// Checkpoints a keyed job scaled out by Kafka partition must keep whatever their age
// (docs/architecture.md, "Keyed jobs"): the table names, per partition, the keyed task's state
// file of the checkpoint its last commit came from (ClaimStatePointer), and a commit in flight
// may name its own. The Iceberg committer keeps the set; retention and a cancellation's cleanup
// skip what it holds. Until the committer first read the table, every checkpoint counts as
// pinned. Thread-safe.
class CheckpointPins {
 public:
  // Checkpoint `id`'s barrier reached the committer: its commit may name it.
  void Pin(CheckpointId id) FLOE_EXCLUDES(mu_);
  // The commits up to `through` are settled; `named`: this job's checkpoints the table names.
  void Settle(CheckpointId through, std::set<CheckpointId> named) FLOE_EXCLUDES(mu_);
  bool Pinned(CheckpointId id) const FLOE_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  bool known_ FLOE_GUARDED_BY(mu_) = false;
  std::set<CheckpointId> named_ FLOE_GUARDED_BY(mu_);
  std::set<CheckpointId> in_flight_ FLOE_GUARDED_BY(mu_);
};

// What a scaled-out keyed job's table names as a partition's state: one keyed task's state file
// in a completed checkpoint, "<checkpoint dir>/chk-<N>#<task name>" (`checkpoint_dir`: the
// job's, as CheckpointStorage::Options::checkpoint_dir).
std::string ClaimStatePointer(std::string_view checkpoint_dir, CheckpointId id,
                              std::string_view task);
// The checkpoint directory a pointer names; InvalidArgument for anything else.
Result<std::string> ClaimStateCheckpoint(std::string_view pointer);
// The checkpoint of the job whose directory is `checkpoint_dir` a pointer names; nullopt for
// another job's (another instance's) or anything else.
std::optional<CheckpointId> ClaimStateCheckpointOf(std::string_view pointer,
                                                   std::string_view checkpoint_dir);
// The keyed state (canonical layout) a pointer names, for ExecutorOptions::read_claim_state.
// A checkpoint or task that is not there is NotFound naming the pointer; an incremental
// checkpoint's state InvalidArgument (its files hold every key group).
Result<std::string> ReadClaimState(const io::FileIO& file_io, std::string_view pointer);

// CheckpointStorage is the filesystem layout of checkpoints and savepoints (see README.md):
// each checkpoint is a directory holding one state file per subtask and a `_metadata` file that
// is written atomically and last. A directory without `_metadata` is not a checkpoint (an
// aborted or in-progress one) and is never restored from. Completed checkpoints beyond
// `num_retained` are deleted oldest first (`_metadata` first, so a half-deleted checkpoint is
// no longer one); the latest is never deleted; savepoints are never deleted. Incremental
// checkpoints keep files shared between checkpoints in `<checkpoint dir>/shared/`
// (shared_state()); retention deletes one only when no retained checkpoint lists it.
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
    // Checkpoints retention and DiscardAllCheckpoints keep whatever their age (null: none).
    std::shared_ptr<const CheckpointPins> pins;
  };
  // Creates the checkpoint directory if needed.
  static Result<std::unique_ptr<CheckpointStorage>> Make(Options options);

  // Creates the checkpoint's directory. For a savepoint it picks a fresh random name.
  Result<CheckpointLocation> InitCheckpoint(CheckpointId id, bool is_savepoint) const;
  // Writes one subtask's blob (durably, never overwriting) into the checkpoint's directory.
  // `shared`: the shared files the blob refers to (incremental checkpoints only).
  static Result<TaskStateHandle> WriteTaskState(const io::FileIO& file_io,
                                                const CheckpointLocation& location,
                                                const std::string& task, std::string_view blob,
                                                std::vector<SharedStateFile> shared = {});
  // Writes `_metadata`, the commit point of the checkpoint. AlreadyExists if the checkpoint was
  // finalized before; InvalidArgument for a savepoint listing shared files (savepoints are
  // self-contained) or a shared file name CheckName refuses.
  Status Finalize(const CheckpointLocation& location, const std::vector<TaskStateHandle>& states,
                  int64_t timestamp_millis) const;
  // Deletes completed checkpoints beyond `state.checkpoints.num-retained` and leftovers of aborted
  // ones older than the latest completed, then the shared files no retained checkpoint lists
  // and no checkpoint in flight may need (CheckpointSharedStateStore::DeleteUnreferenced).
  // Never deletes savepoints. Its failure leaves every completed checkpoint completed.
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
  // Loads a completed checkpoint, verifying every state file's size and CRC, and that every
  // shared file it lists exists with its size (their CRC is checked by Download). NotFound if
  // chk-N has no `_metadata`; Corruption if anything does not match or is missing.
  Result<CompletedCheckpoint> Load(CheckpointId id) const;
  // Loads a checkpoint or savepoint from its directory (or its `_metadata` file's path).
  static Result<CompletedCheckpoint> LoadPath(const io::FileIO& file_io, const std::string& path);

  // DELETE_ON_CANCELLATION: removes every chk-* directory and every shared file (but those of
  // uploads still running). Savepoints stay. REQUIRES: no checkpoint in flight (the coordinator
  // aborted them all).
  Status DiscardAllCheckpoints() const;
  // Removes chk-* directories without `_metadata` whose id is below `below`.
  Status RemoveIncomplete(CheckpointId below) const;

  std::string CheckpointDir(CheckpointId id) const;
  const Options& options() const { return options_; }
  // Where incremental snapshots upload their shared files: `<checkpoint dir>/shared/`. Owned by
  // the storage; valid while it lives.
  CheckpointSharedStateStore* shared_state() const { return shared_.get(); }

  static constexpr const char* kMetadataFile = "_metadata";
  static constexpr const char* kSavepointFloorFile = "_savepoint_ids";
  static constexpr const char* kSharedDir = "shared";

 private:
  explicit CheckpointStorage(Options options);
  // chk-<N> directory ids present, ascending.
  Result<std::vector<CheckpointId>> ListCheckpointDirs() const;
  // Names of the shared files the given completed checkpoints list.
  Result<std::set<std::string>> SharedFilesListedBy(const std::vector<CheckpointId>& ids) const;

  bool Pinned(CheckpointId id) const;

  Options options_;
  std::unique_ptr<CheckpointSharedStateStore> shared_;
};

// `_metadata` codec (format documented in README.md): version 2 when a task lists shared files,
// else version 1 (what floe wrote before incremental checkpoints, so those still read it).
std::string EncodeCheckpointMetadata(const CompletedCheckpoint& header,
                                     const std::vector<TaskStateHandle>& states);
struct CheckpointMetadata {
  CompletedCheckpoint header;  // task_states left empty
  std::vector<TaskStateHandle> states;
};
Result<CheckpointMetadata> DecodeCheckpointMetadata(std::string_view data);

}  // namespace floe::runtime
