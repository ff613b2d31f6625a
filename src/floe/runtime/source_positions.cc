#include "floe/runtime/source_positions.h"

namespace floe::runtime {

void SourcePositionBoard::Record(CheckpointId id, const std::string& task,
                                 std::string position_json) {
  std::lock_guard<std::mutex> lock(mu_);
  positions_[id][task] = std::move(position_json);
}

std::map<std::string, std::string> SourcePositionBoard::PositionsAt(CheckpointId id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = positions_.find(id);
  return it == positions_.end() ? std::map<std::string, std::string>{} : it->second;
}

void SourcePositionBoard::ForgetUpTo(CheckpointId id) {
  std::lock_guard<std::mutex> lock(mu_);
  positions_.erase(positions_.begin(), positions_.upper_bound(id));
}

void SourcePositionBoard::SetStartOverrides(std::map<std::string, std::string> positions) {
  std::lock_guard<std::mutex> lock(mu_);
  overrides_ = std::move(positions);
}

std::optional<std::string> SourcePositionBoard::StartOverride(const std::string& task) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = overrides_.find(task);
  if (it == overrides_.end()) return std::nullopt;
  return it->second;
}

}  // namespace floe::runtime
