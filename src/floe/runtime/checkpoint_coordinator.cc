#include "floe/runtime/checkpoint_coordinator.h"

#include <algorithm>
#include <chrono>

namespace floe::runtime {

CheckpointCoordinator::CheckpointCoordinator(Options options)
    : options_(std::move(options)),
      expected_(options_.tasks.begin(), options_.tasks.end()),
      next_id_(options_.floor.Next()) {
  next_periodic_millis_ = options_.clock->NowMillis() + options_.config.interval.count();
}

Result<std::unique_ptr<CheckpointCoordinator>> CheckpointCoordinator::Make(Options options) {
  FLOE_RETURN_NOT_OK(options.config.Validate());
  if (options.tasks.empty()) return Status::InvalidArgument("checkpoint coordinator: no tasks");
  if (options.clock == nullptr) options.clock = SteadyClock::Get();
  std::set<std::string> unique(options.tasks.begin(), options.tasks.end());
  if (unique.size() != options.tasks.size()) {
    return Status::InvalidArgument("checkpoint coordinator: duplicate task names");
  }
  return std::unique_ptr<CheckpointCoordinator>(new CheckpointCoordinator(std::move(options)));
}

size_t CheckpointCoordinator::PeriodicPending() const {
  size_t n = 0;
  for (const auto& [id, p] : pending_) n += p.location.is_savepoint ? 0 : 1;
  return n;
}

Result<CheckpointTrigger> CheckpointCoordinator::Start(bool is_savepoint) {
  CheckpointId id = next_id_;
  next_id_ = id.Next();
  CheckpointLocation loc{id, is_savepoint, ""};
  if (options_.storage != nullptr) {
    FLOE_ASSIGN_OR_RAISE(loc, options_.storage->InitCheckpoint(id, is_savepoint));
  }
  Pending p;
  p.location = loc;
  p.trigger_millis = options_.clock->NowMillis();
  pending_.emplace(id, std::move(p));
  return CheckpointTrigger{id, is_savepoint, loc};
}

Result<std::optional<CheckpointTrigger>> CheckpointCoordinator::MaybeTriggerPeriodic() {
  const CheckpointConfig& c = options_.config;
  if (!c.periodic()) return std::optional<CheckpointTrigger>();
  const int64_t now = options_.clock->NowMillis();
  if (now < next_periodic_millis_) return std::optional<CheckpointTrigger>();
  const size_t periodic = PeriodicPending();
  if (periodic >= static_cast<size_t>(c.max_concurrent)) return std::optional<CheckpointTrigger>();
  if (c.min_pause.count() > 0) {
    if (periodic > 0) return std::optional<CheckpointTrigger>();
    if (last_end_millis_ && now < *last_end_millis_ + c.min_pause.count()) {
      return std::optional<CheckpointTrigger>();
    }
  }
  next_periodic_millis_ = now + c.interval.count();
  FLOE_ASSIGN_OR_RAISE(CheckpointTrigger t, Start(false));
  return std::optional<CheckpointTrigger>(std::move(t));
}

Result<CheckpointTrigger> CheckpointCoordinator::TriggerNow(bool is_savepoint) {
  return Start(is_savepoint);
}

Result<std::optional<CompletedCheckpointInfo>> CheckpointCoordinator::Acknowledge(
    CheckpointId id, TaskStateHandle state, bool end_of_input, TaskCheckpointTimes times) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return std::optional<CompletedCheckpointInfo>();
  if (expected_.count(state.task) == 0) {
    return Status::InvalidArgument("checkpoint " + id.ToString() + ": ack from unknown task '" +
                                   state.task + "'");
  }
  Pending& p = it->second;
  p.all_end_of_input = p.all_end_of_input && end_of_input;
  if (p.acks.count(state.task) == 0) p.size_bytes += state.size;
  p.times.alignment_micros = std::max(p.times.alignment_micros, times.alignment_micros);
  if (p.sync_task.empty() || times.sync_micros > p.times.sync_micros) {
    p.times.sync_micros = times.sync_micros;
    p.sync_task = state.task;
  }
  p.times.async_micros = std::max(p.times.async_micros, times.async_micros);
  std::string task = state.task;
  p.acks.emplace(std::move(task), std::move(state));
  if (p.acks.size() < expected_.size()) return std::optional<CompletedCheckpointInfo>();
  last_fully_acknowledged_ = std::max(last_fully_acknowledged_, id);

  if (options_.storage != nullptr) {
    std::vector<TaskStateHandle> handles;
    handles.reserve(p.acks.size());
    for (auto& [name, h] : p.acks) handles.push_back(h);
    int64_t wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
    Status st = options_.storage->Finalize(p.location, handles, wall);
    if (!st.ok()) {
      FLOE_RETURN_NOT_OK(Abort(id, "cannot write its _metadata: " + st.ToString(), true));
      return std::optional<CompletedCheckpointInfo>();
    }
  }
  CompletedCheckpointInfo info;
  info.id = id;
  info.is_savepoint = p.location.is_savepoint;
  info.final = p.all_end_of_input;
  info.dir = p.location.dir;
  if (options_.storage != nullptr && !info.is_savepoint) {
    // `_metadata` is written: the checkpoint is complete whatever happens to older ones.
    if (Status clean = options_.storage->ApplyRetention(); !clean.ok()) {
      info.warning =
          "checkpoint " + id.ToString() +
          " completed, but older checkpoints could not be cleaned up: " + clean.ToString();
    }
  }
  last_end_millis_ = options_.clock->NowMillis();
  info.duration_millis = *last_end_millis_ - p.trigger_millis;
  info.size_bytes = p.size_bytes;
  info.alignment_micros = p.times.alignment_micros;
  info.sync_micros = p.times.sync_micros;
  info.sync_task = p.sync_task;
  info.async_micros = p.times.async_micros;
  pending_.erase(it);
  if (!info.is_savepoint) {
    last_completed_ = id;
    consecutive_failures_ = 0;
    // Subsume older pending checkpoints: their content is covered by this one.
    std::vector<CheckpointId> older;
    for (const auto& [pid, pp] : pending_) {
      if (pid < id && !pp.location.is_savepoint) older.push_back(pid);
    }
    for (CheckpointId pid : older) {
      FLOE_RETURN_NOT_OK(Abort(pid, "subsumed by checkpoint " + id.ToString(), false));
    }
  }
  return std::optional<CompletedCheckpointInfo>(std::move(info));
}

Status CheckpointCoordinator::Abort(CheckpointId id, const std::string& why, bool count_failure) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return Status::OK();
  const bool savepoint = it->second.location.is_savepoint;
  CheckpointLocation loc = it->second.location;
  pending_.erase(it);
  last_end_millis_ = options_.clock->NowMillis();
  if (options_.storage != nullptr && !loc.dir.empty()) {
    (void)options_.storage->Discard(loc);  // best effort: leftovers are ignored and cleaned later
  }
  std::string what =
      std::string(savepoint ? "savepoint " : "checkpoint ") + id.ToString() + " failed: " + why;
  if (savepoint) {
    // A failed savepoint is reported to whoever asked for it; it does not fail the job.
    return Status::OK();
  }
  if (!count_failure) return Status::OK();
  ++consecutive_failures_;
  if (options_.failed_checkpoints != nullptr) options_.failed_checkpoints->Add(1);
  if (consecutive_failures_ > options_.config.tolerable_failed) {
    return Status::Unavailable(what + "; " + std::to_string(consecutive_failures_) +
                               " consecutive failed checkpoints exceed "
                               "execution.checkpointing.tolerable-failed-checkpoints=" +
                               std::to_string(options_.config.tolerable_failed));
  }
  return Status::OK();
}

Status CheckpointCoordinator::Decline(CheckpointId id, const Status& reason) {
  return Abort(id, "declined: " + reason.ToString(), true);
}

Status CheckpointCoordinator::CheckTimeouts() {
  const int64_t now = options_.clock->NowMillis();
  const int64_t timeout = options_.config.timeout.count();
  std::vector<CheckpointId> expired;
  for (const auto& [id, p] : pending_) {
    if (now - p.trigger_millis >= timeout) expired.push_back(id);
  }
  for (CheckpointId id : expired) {
    const Pending& p = pending_.at(id);
    std::string why = "expired after " + std::to_string(now - p.trigger_millis) +
                      " ms (execution.checkpointing.timeout=" + std::to_string(timeout) +
                      " ms) with " + std::to_string(p.acks.size()) + " of " +
                      std::to_string(expected_.size()) + " tasks acknowledged";
    FLOE_RETURN_NOT_OK(Abort(id, why, true));
  }
  return Status::OK();
}

std::optional<int64_t> CheckpointCoordinator::NextWakeupMillis() const {
  std::optional<int64_t> next;
  auto consider = [&](int64_t t) {
    if (!next || t < *next) next = t;
  };
  const CheckpointConfig& c = options_.config;
  for (const auto& [id, p] : pending_) consider(p.trigger_millis + c.timeout.count());
  if (c.periodic()) {
    const size_t periodic = PeriodicPending();
    const bool blocked = periodic >= static_cast<size_t>(c.max_concurrent) ||
                         (c.min_pause.count() > 0 && periodic > 0);
    if (!blocked) {
      int64_t t = next_periodic_millis_;
      if (c.min_pause.count() > 0 && last_end_millis_) {
        t = std::max(t, *last_end_millis_ + c.min_pause.count());
      }
      consider(t);
    }
  }
  return next;
}

Status CheckpointCoordinator::AbortAllPending(const std::string& reason) {
  std::vector<CheckpointId> ids;
  for (const auto& [id, p] : pending_) ids.push_back(id);
  for (CheckpointId id : ids) FLOE_RETURN_NOT_OK(Abort(id, reason, false));
  return Status::OK();
}

Status CheckpointCoordinator::OnJobCancelled() {
  FLOE_RETURN_NOT_OK(AbortAllPending("job cancelled"));
  if (options_.storage != nullptr &&
      options_.config.retention == CheckpointRetention::kDeleteOnCancellation) {
    return options_.storage->DiscardAllCheckpoints();
  }
  return Status::OK();
}

std::optional<CheckpointLocation> CheckpointCoordinator::LocationOf(CheckpointId id) const {
  auto it = pending_.find(id);
  if (it == pending_.end()) return std::nullopt;
  return it->second.location;
}

}  // namespace floe::runtime
