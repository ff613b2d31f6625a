#include "floe/runtime/channel.h"

#include <algorithm>

namespace floe::runtime {
namespace {
Status CancelledStatus() { return Status::Unavailable("task cancelled"); }
}  // namespace

InputGate::InputGate(size_t num_channels, size_t capacity, size_t slot_rows)
    : capacity_(capacity == 0 ? 1 : capacity),
      slot_rows_(slot_rows),
      num_channels_(num_channels),
      channels_(num_channels),
      loads_(num_channels, 0) {}

size_t InputGate::LoadOf(const StreamElement& element) const {
  if (slot_rows_ == 0) return kSlot;
  if (const auto* batch = std::get_if<RecordBatch>(&element)) {
    const size_t least = kSlot / kElementsPerSlot;
    return std::clamp<size_t>(batch->num_rows() * kSlot / slot_rows_, least, kSlot);
  }
  return std::holds_alternative<Watermark>(element) ? kSlot / kElementsPerSlot : kSlot;
}

// Counting elements (every load kSlot), the element bounds below follow from the loads.
bool InputGate::FullLocked(size_t channel) const {
  return loads_[channel] >= capacity_ * kSlot ||
         channels_[channel].size() >= kElementsPerSlot * capacity_;
}

bool InputGate::HalfFullLocked(size_t channel) const {
  return loads_[channel] >= (capacity_ * kSlot + 1) / 2 ||
         channels_[channel].size() >= kElementsPerSlot * capacity_ / 2;
}

bool InputGate::HalfFreeLocked(size_t channel) const {
  return loads_[channel] <= capacity_ / 2 * kSlot &&
         channels_[channel].size() <= kElementsPerSlot * capacity_ / 2;
}

Status InputGate::Push(size_t channel, StreamElement element, const std::function<void()>& on_full,
                       bool defer_wakeup) {
  MutexLock lock(mu_);
  auto& q = channels_[channel];
  if (!cancelled_ && FullLocked(channel)) {
    ready_.notify_one();  // a deferred wake-up is due now: the consumer must make room
    wakeup_pending_ = false;
    if (on_full) {
      lock.Unlock();
      on_full();
      lock.Lock();
    }
  }
  while (!cancelled_ && !closed_ && FullLocked(channel)) not_full_.wait(lock.native());
  if (cancelled_) return CancelledStatus();
  if (closed_) return Status::OK();  // the consumer finished: dropped
  // Only records and watermarks wait: a barrier, a claim change or the end of input wakes the
  // consumer at once (with what is queued before it).
  const bool data =
      std::holds_alternative<RecordBatch>(element) || std::holds_alternative<Watermark>(element);
  loads_[channel] += LoadOf(element);
  q.push_back(std::move(element));
  if (defer_wakeup && data && !HalfFullLocked(channel)) {
    wakeup_pending_ = true;
  } else {
    wakeup_pending_ = false;
    ready_.notify_one();
  }
  return Status::OK();
}

void InputGate::WakeConsumer() {
  MutexLock lock(mu_);
  if (!wakeup_pending_) return;
  wakeup_pending_ = false;
  ready_.notify_one();
}

Result<bool> InputGate::TryPush(size_t channel, StreamElement& element) {
  MutexLock lock(mu_);
  if (cancelled_) return CancelledStatus();
  if (closed_) return true;  // the consumer finished: dropped
  if (FullLocked(channel)) return false;
  loads_[channel] += LoadOf(element);
  channels_[channel].push_back(std::move(element));
  ready_.notify_one();
  return true;
}

void InputGate::PostCommand(TaskCommand command) {
  MutexLock lock(mu_);
  mailbox_.push_back(command);
  ready_.notify_one();
}

bool InputGate::HasReadyLocked(const std::vector<bool>& blocked) const {
  if (!mailbox_.empty()) return true;
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (!channels_[i].empty() && (blocked.empty() || !blocked[i])) return true;
  }
  return false;
}

Result<InputGate::Next> InputGate::Pop(const std::vector<bool>& blocked,
                                       std::optional<std::chrono::milliseconds> timeout) {
  MutexLock lock(mu_);
  if (timeout) {
    const auto deadline = std::chrono::steady_clock::now() + *timeout;
    while (!cancelled_ && !HasReadyLocked(blocked)) {
      if (ready_.wait_until(lock.native(), deadline) == std::cv_status::timeout && !cancelled_ &&
          !HasReadyLocked(blocked)) {
        return Next{};
      }
    }
  } else {
    while (!cancelled_ && !HasReadyLocked(blocked)) {
      waiting_ = true;
      ready_.wait(lock.native());
      waiting_ = false;
    }
  }
  if (cancelled_) return CancelledStatus();
  Next next;
  if (!mailbox_.empty()) {
    next.kind = Next::Kind::kCommand;
    next.command = mailbox_.front();
    mailbox_.pop_front();
    return next;
  }
  const size_t n = channels_.size();
  for (size_t k = 0; k < n; ++k) {
    size_t i = (next_channel_ + k) % n;
    if (channels_[i].empty() || (!blocked.empty() && blocked[i])) continue;
    next.kind = Next::Kind::kElement;
    next.channel = i;
    next.element = std::move(channels_[i].front());
    channels_[i].pop_front();
    loads_[i] -= LoadOf(next.element);
    next_channel_ = (i + 1) % n;
    // A producer waits only on a full channel; it is woken once half of it is free, so a
    // producer and its consumer on one core take turns per half channel, not per element.
    if (HalfFreeLocked(i)) not_full_.notify_all();
    return next;
  }
  return Status::Internal("input gate woke without a ready channel");
}

void InputGate::Cancel() {
  MutexLock lock(mu_);
  cancelled_ = true;
  not_full_.notify_all();
  ready_.notify_all();
}

void InputGate::Close() {
  MutexLock lock(mu_);
  closed_ = true;
  for (auto& q : channels_) q.clear();
  std::fill(loads_.begin(), loads_.end(), 0);
  not_full_.notify_all();
}

bool InputGate::consumer_waiting() const {
  MutexLock lock(mu_);
  return waiting_;
}

bool InputGate::cancelled() const {
  MutexLock lock(mu_);
  return cancelled_;
}

size_t InputGate::queued(size_t channel) const {
  MutexLock lock(mu_);
  return channels_[channel].size();
}

}  // namespace floe::runtime
