#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/runtime/ids.h"
#include "floe/runtime/source_positions.h"
#include "floe/runtime/state.h"

namespace floe::connectors {

// Where a source subtask starts reading. One rule for every source (docs/exactly-once.md):
//   1. kTable       the board's start overrides for the task's source vertex: a committing sink
//                   found its table ahead of the restored checkpoint and holds later positions
//                   (for this task, or -- written with another parallelism -- for the vertex's
//                   old subtasks only, which a source that rescales redistributes);
//   2. kCheckpoint  the position restored from the checkpoint (or savepoint);
//   3. kStartupMode the source's configured start ('scan.startup.mode', the first file, seq 1).
enum class StartOrigin { kTable, kCheckpoint, kStartupMode };

// SourceStart keeps what every source shares about its position: the rule above, the state
// blob's format version (first in the blob; blobs of versions [oldest, current] are read), the
// log line that says where reading starts, and recording each checkpoint's position on the
// job's board for the committers. A source owns one; single-threaded like the source.
class SourceStart {
 public:
  // `kind` names the source in messages ("kafka source"), `startup_mode` its configured start
  // ("'scan.startup.mode'"); `board` may be null (no overrides, nothing recorded).
  SourceStart(std::string kind, std::string startup_mode, uint32_t current_version,
              uint32_t oldest_version, std::shared_ptr<runtime::SourcePositionBoard> board);

  // The subtask's task name (the board's key). Call in Open.
  void SetTask(std::string task) { task_ = std::move(task); }
  const std::string& task() const { return task_; }

  // Reads the version at the head of a restored blob; Corruption "<kind> state: unknown version
  // N" outside [oldest, current]. The source then counts as restored.
  Result<uint32_t> BeginRestore(runtime::StateReader& state);
  bool restored() const { return restored_; }

  struct Start {
    StartOrigin origin = StartOrigin::kStartupMode;
    std::string table_position;  // the task's own override's JSON ("" when it has none)
    // origin == kTable: the overrides of the vertex's tasks "<vertex>/0", "<vertex>/1", ... in
    // subtask order, up to the first index without one (all of them for a well-formed table).
    std::vector<std::string> table_positions;
  };
  Start Resolve() const;
  // "floe: <kind> '<task>': starts at <position> (from <origin>)", the origin being "the
  // table's positions", "the restored checkpoint" or the startup mode's name.
  void LogStart(const Start& start, const std::string& position_json) const;

  // Writes the current version: first thing in SnapshotPosition.
  void BeginSnapshot(runtime::StateWriter& state) const { state.PutU32(current_version_); }
  // Records checkpoint `id`'s position on the board.
  void Record(runtime::CheckpointId id, const std::string& position_json) const;

 private:
  std::string kind_;
  std::string startup_mode_;
  uint32_t current_version_;
  uint32_t oldest_version_;
  std::shared_ptr<runtime::SourcePositionBoard> board_;
  std::string task_;
  bool restored_ = false;
};

}  // namespace floe::connectors
