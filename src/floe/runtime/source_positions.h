#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "floe/runtime/ids.h"

namespace floe::runtime {

// SourcePositionBoard carries source positions to the sinks that commit them, inside one
// worker process. A source subtask records its position (a JSON text the source defines, e.g.
// {"next_seq":1235} or {"file":"/in/a.jsonl","offset":4096,"line":57}) in SnapshotPosition(N);
// the barrier it then emits reaches a committer only after every source recorded N, so a
// committer's OnBarrier(N) sees all positions of N. The committer stores them with pending[N]
// and writes them into the snapshot summary (floe.source-offsets).
// Start overrides: when a restore finds the table AHEAD of the restored checkpoint, the
// positions the table holds replace the restored ones: sources ask StartOverride(task) after
// Restore and, if set, start there.
// Thread-safe. Shared by the operators of one job run (shared_ptr captured by factories).
class SourcePositionBoard {
 public:
  void Record(CheckpointId id, const std::string& task, std::string position_json);
  // Every task's position recorded for checkpoint `id` (task name -> position JSON).
  std::map<std::string, std::string> PositionsAt(CheckpointId id) const;
  // Drops positions of checkpoints <= id (they were committed or subsumed).
  void ForgetUpTo(CheckpointId id);

  void SetStartOverrides(std::map<std::string, std::string> positions);
  std::optional<std::string> StartOverride(const std::string& task) const;

 private:
  mutable std::mutex mu_;
  std::map<CheckpointId, std::map<std::string, std::string>> positions_;
  std::map<std::string, std::string> overrides_;
};

}  // namespace floe::runtime
