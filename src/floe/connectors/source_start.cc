#include "floe/connectors/source_start.h"

#include "floe/common/log.h"

namespace floe::connectors {

SourceStart::SourceStart(std::string kind, std::string startup_mode, uint32_t current_version,
                         uint32_t oldest_version,
                         std::shared_ptr<runtime::SourcePositionBoard> board)
    : kind_(std::move(kind)),
      startup_mode_(std::move(startup_mode)),
      current_version_(current_version),
      oldest_version_(oldest_version),
      board_(std::move(board)) {}

Result<uint32_t> SourceStart::BeginRestore(runtime::StateReader& state) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, state.GetU32());
  if (version < oldest_version_ || version > current_version_) {
    return Status::Corruption(kind_ + " state: unknown version " + std::to_string(version));
  }
  restored_ = true;
  return version;
}

SourceStart::Start SourceStart::Resolve() const {
  Start start;
  if (board_ != nullptr) {
    const std::string vertex = task_.substr(0, task_.rfind('/'));  // TaskName: "<vertex>/<i>"
    for (uint32_t i = 0;; ++i) {
      std::optional<std::string> o =
          board_->StartOverride(runtime::TaskName(vertex, runtime::SubtaskIndex(i)));
      if (!o) break;
      start.table_positions.push_back(std::move(*o));
    }
    std::optional<std::string> own = board_->StartOverride(task_);
    if (own || !start.table_positions.empty()) {
      start.origin = StartOrigin::kTable;
      start.table_position = own.value_or("");
      return start;
    }
  }
  start.origin = restored_ ? StartOrigin::kCheckpoint : StartOrigin::kStartupMode;
  return start;
}

void SourceStart::LogStart(const Start& start, const std::string& position_json) const {
  const std::string origin = start.origin == StartOrigin::kTable        ? "the table's positions"
                             : start.origin == StartOrigin::kCheckpoint ? "the restored checkpoint"
                                                                        : startup_mode_;
  LogInfo("%s '%s': starts at %s (from %s)", kind_.c_str(), task_.c_str(), position_json.c_str(),
          origin.c_str());
}

void SourceStart::Record(runtime::CheckpointId id, const std::string& position_json) const {
  if (board_ != nullptr) board_->Record(id, task_, position_json);
}

}  // namespace floe::connectors
