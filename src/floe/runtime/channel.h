#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "floe/common/mutex.h"
#include "floe/common/status.h"
#include "floe/runtime/stream_element.h"

namespace floe::runtime {

// A control request delivered to a task out of band, ahead of queued data (its mailbox).
struct TaskCommand {
  enum class Kind {
    kTriggerCheckpoint,   // sources only: snapshot position, inject Barrier{id, flag}
    kCheckpointComplete,  // every task: OnCheckpointComplete(id); flag = final, then finish
  };
  Kind kind = Kind::kCheckpointComplete;
  CheckpointId id;
  bool flag = false;
};

// InputGate is the input side of one task: `num_channels` bounded FIFO channels (one per
// upstream producer subtask and edge), each holding at most `capacity` elements, plus an
// unbounded mailbox of TaskCommands. With `slot_rows` > 0 the capacity counts slots instead: a
// record batch of `slot_rows` rows or more fills one, a smaller one its share of rows (at least
// 1/16), a watermark 1/16, anything else one; a channel also holds at most 16 x capacity
// elements. So many small pieces (a watermark assigner cuts a batch at every rise of its
// watermark) queue without their producer handing the core over per few pieces, while memory
// stays bounded by capacity full batches. Producers block in Push while their channel is full --
// that is the engine's backpressure, so memory stays bounded by capacity x channels. The single
// consumer (the task thread) pops from any channel it has not blocked (barrier alignment blocks
// channels), round robin, with commands first.
//
// Thread safety: Push from any number of producer threads, Pop from one consumer thread,
// PostCommand and Cancel from anywhere. Cancel wakes every waiter; afterwards Push and Pop fail
// with Unavailable("... cancelled"). A graceful end of a channel is in band (EndOfInput).
class InputGate {
 public:
  InputGate(size_t num_channels, size_t capacity, size_t slot_rows = 0);
  InputGate(const InputGate&) = delete;
  InputGate& operator=(const InputGate&) = delete;

  // Appends `element` to `channel`, waiting while it is full. `on_full`, if set, is called once
  // (without the gate's lock) before waiting -- a backpressure probe for metrics and tests.
  // `defer_wakeup`: after a record batch or a watermark the waiting consumer is woken only once
  // the channel is half full, or when it is full, or at the producer's next WakeConsumer (which
  // it must call before it waits itself), so a producer emitting many elements per input does
  // not hand the core over per element; other elements wake it at once.
  // REQUIRES: channel < num_channels().
  Status Push(size_t channel, StreamElement element, const std::function<void()>& on_full = {},
              bool defer_wakeup = false);
  // Wakes the consumer for elements pushed with defer_wakeup since.
  void WakeConsumer();
  // Non-blocking Push: returns false (and leaves `element` untouched) when the channel is full.
  Result<bool> TryPush(size_t channel, StreamElement& element);

  void PostCommand(TaskCommand command);

  struct Next {
    enum class Kind { kElement, kCommand, kTimeout };
    Kind kind = Kind::kTimeout;
    size_t channel = 0;
    StreamElement element;
    TaskCommand command;
  };
  // Waits until a command is posted or a channel whose `blocked[i]` is false has an element
  // (`blocked` empty = none blocked), or `timeout` passes (kTimeout).
  Result<Next> Pop(const std::vector<bool>& blocked,
                   std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  void Cancel();
  // The consumer finished for good (stop-with-savepoint: tasks end while their producers may
  // still be sending records past the savepoint, which nothing will commit): queued elements
  // are dropped and later Pushes succeed without queueing, so no producer blocks on this gate.
  void Close();
  bool cancelled() const;
  size_t num_channels() const { return num_channels_; }
  size_t capacity() const { return capacity_; }
  // The consumer is waiting in Pop without a timeout now (for tests).
  bool consumer_waiting() const;
  // Elements queued in `channel` now (for tests and metrics).
  size_t queued(size_t channel) const;

 private:
  bool HasReadyLocked(const std::vector<bool>& blocked) const FLOE_REQUIRES(mu_);
  // What `element` takes of a channel, in 1/kSlot of a slot (one, counting elements).
  size_t LoadOf(const StreamElement& element) const;
  bool FullLocked(size_t channel) const FLOE_REQUIRES(mu_);
  // Half full or more: a deferred wake-up is due.
  bool HalfFullLocked(size_t channel) const FLOE_REQUIRES(mu_);
  // At most half full: a producer blocked on the channel may go on.
  bool HalfFreeLocked(size_t channel) const FLOE_REQUIRES(mu_);
  static constexpr size_t kSlot = 1024;
  // The least an element takes: 1/16 of a slot, so a channel holds at most 16 x capacity.
  static constexpr size_t kElementsPerSlot = 16;

  const size_t capacity_;
  const size_t slot_rows_;     // 0: capacity_ counts elements
  const size_t num_channels_;  // channels_.size(), readable without the lock
  mutable Mutex mu_;
  std::condition_variable not_full_;
  std::condition_variable ready_;
  std::vector<std::deque<StreamElement>> channels_ FLOE_GUARDED_BY(mu_);
  std::vector<size_t> loads_ FLOE_GUARDED_BY(mu_);  // per channel, the sum of LoadOf
  std::deque<TaskCommand> mailbox_ FLOE_GUARDED_BY(mu_);
  size_t next_channel_ FLOE_GUARDED_BY(mu_) = 0;  // round-robin start
  bool cancelled_ FLOE_GUARDED_BY(mu_) = false;
  bool closed_ FLOE_GUARDED_BY(mu_) = false;
  bool wakeup_pending_ FLOE_GUARDED_BY(mu_) = false;  // Push deferred the consumer's wake-up
  bool waiting_ FLOE_GUARDED_BY(mu_) = false;         // in Pop, waiting without a timeout
};

}  // namespace floe::runtime
