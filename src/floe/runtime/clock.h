#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace floe::runtime {

// Clock is the time source of the checkpoint coordinator, so its timing rules (interval,
// min-pause, timeout) can be tested without sleeping. Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic milliseconds (the origin is arbitrary).
  virtual int64_t NowMillis() const = 0;
};

// std::chrono::steady_clock.
class SteadyClock final : public Clock {
 public:
  int64_t NowMillis() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  // A process-wide instance.
  static const Clock* Get() {
    static const SteadyClock kClock;
    return &kClock;
  }
};

// std::chrono::system_clock: wall-clock milliseconds since the epoch. For times that are
// checkpointed and compared after a restore, possibly in another process (state TTL,
// processing-time timers), where a steady clock's arbitrary origin would not do.
class SystemClock final : public Clock {
 public:
  int64_t NowMillis() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  static const Clock* Get() {
    static const SystemClock kClock;
    return &kClock;
  }
};

// A clock that moves only when told to (tests).
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_millis = 0) : now_(start_millis) {}
  int64_t NowMillis() const override { return now_.load(); }
  void Advance(std::chrono::milliseconds d) { now_.fetch_add(d.count()); }
  void Set(int64_t millis) { now_.store(millis); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace floe::runtime
