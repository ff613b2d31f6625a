#include "floe/runtime/source_positions.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace floe::runtime {

void SourcePositionBoard::Record(CheckpointId id, const std::string& task,
                                 std::string position_json) {
  MutexLock lock(mu_);
  positions_[id][task] = std::move(position_json);
}

std::map<std::string, std::string> SourcePositionBoard::PositionsAt(CheckpointId id) const {
  MutexLock lock(mu_);
  auto it = positions_.find(id);
  return it == positions_.end() ? std::map<std::string, std::string>{} : it->second;
}

void SourcePositionBoard::ForgetUpTo(CheckpointId id) {
  MutexLock lock(mu_);
  positions_.erase(positions_.begin(), positions_.upper_bound(id));
}

void SourcePositionBoard::SetStartOverrides(std::map<std::string, std::string> positions) {
  MutexLock lock(mu_);
  overrides_ = std::move(positions);
}

std::optional<std::string> SourcePositionBoard::StartOverride(const std::string& task) const {
  MutexLock lock(mu_);
  auto it = overrides_.find(task);
  if (it == overrides_.end()) return std::nullopt;
  return it->second;
}

void SourcePositionBoard::RegisterCommitter(const std::string& name) {
  MutexLock lock(mu_);
  committers_[name].closed = false;
}

void SourcePositionBoard::ReportCommitted(const std::string& name, CheckpointId id) {
  {
    MutexLock lock(mu_);
    Committer& c = committers_[name];
    c.committed = std::max(c.committed, id.value);
  }
  committed_cv_.notify_all();
}

void SourcePositionBoard::ReportClosed(const std::string& name) {
  {
    MutexLock lock(mu_);
    auto it = committers_.find(name);
    if (it == committers_.end()) return;
    it->second.closed = true;
  }
  committed_cv_.notify_all();
}

std::optional<uint64_t> SourcePositionBoard::CommittedByAll() const {
  MutexLock lock(mu_);
  if (committers_.empty()) return std::nullopt;
  uint64_t all = UINT64_MAX;
  for (const auto& [name, c] : committers_) all = std::min(all, c.committed);
  return all;
}

bool SourcePositionBoard::WaitCommittedByAll(CheckpointId id, std::chrono::milliseconds timeout,
                                             const std::atomic<bool>* cancel) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(mu_);
  while (true) {
    bool reached = true;
    for (const auto& [name, c] : committers_) {
      if (c.committed >= id.value) continue;
      if (c.closed) return false;
      reached = false;
    }
    if (reached) return true;
    if (cancel != nullptr && cancel->load()) return false;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    // Short slices: the cancel flag has no notification of its own.
    ++waiting_;
    committed_cv_.wait_for(lock.native(), std::chrono::milliseconds(50));
    --waiting_;
  }
}

int SourcePositionBoard::waiting() const {
  MutexLock lock(mu_);
  return waiting_;
}

void SourcePositionBoard::ReportFenced(std::string split) {
  MutexLock lock(mu_);
  fenced_.insert(std::move(split));
}

std::set<std::string> SourcePositionBoard::TakeFenced() {
  MutexLock lock(mu_);
  return std::exchange(fenced_, {});
}

}  // namespace floe::runtime
