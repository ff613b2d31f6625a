#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/status.h"
#include "floe/runtime/copy_on_write.h"
#include "floe/runtime/operator.h"
#include "floe/runtime/state.h"

namespace floe::runtime {

// Event time advances with the operator's input watermark; processing time with a Clock.
enum class TimeDomain : uint8_t { kEventTime = 0, kProcessingTime = 1 };

// One timer. Timestamps are microseconds in both domains (the unit of Watermark and of floe's
// timestamp columns); processing time is the backend clock's wall-clock milliseconds x 1000.
struct Timer {
  TimeDomain domain = TimeDomain::kEventTime;
  int64_t timestamp = 0;
  uint32_t key_group = 0;
  std::string key;
  std::string ns;
  bool operator==(const Timer&) const = default;
};

// TimerService holds the timers of one keyed subtask on the heap, one ordered set per key group
// and domain (so a snapshot can be cut per key group and a rescale can move key-group ranges),
// plus an index of each group's earliest timer so the next due timer is found in O(log n).
// A timer is identified by (domain, timestamp, key, namespace): registering it again is a no-op.
// Due timers pop in (timestamp, key group, key, namespace) order. Used by the keyed state
// backends, which set the current key before firing; operators reach it through them.
// Not thread-safe (the subtask's thread only).
class TimerService {
 public:
  explicit TimerService(KeyGroupRange range);

  // True when added, false when the same timer was already registered.
  // REQUIRES: range().start <= key_group < range().end.
  bool Register(TimeDomain domain, int64_t timestamp, uint32_t key_group, std::string_view key,
                std::string_view ns);
  // True when a timer was removed.
  bool Delete(TimeDomain domain, int64_t timestamp, uint32_t key_group, std::string_view key,
              std::string_view ns);
  // The earliest timestamp of `domain`, if any timer is registered.
  std::optional<int64_t> NextTimestamp(TimeDomain domain) const;
  // Removes and returns the earliest timer with timestamp <= `upto`.
  std::optional<Timer> PopDue(TimeDomain domain, int64_t upto);

  size_t size(TimeDomain domain) const { return queues_[Index(domain)].size; }
  size_t size() const { return queues_[0].size + queues_[1].size; }
  const KeyGroupRange& range() const { return range_; }

  // The timers of one key group, both domains: u32 count + {i64 timestamp, bytes key,
  // bytes ns} per domain, event time first.
  void SnapshotKeyGroup(uint32_t key_group, StateWriter& out) const;

 private:
  struct Entry;
  using Group = std::set<Entry>;

 public:
  // The timers as of Share(), unaffected by later changes (each key group's set is shared
  // copy-on-write): what an asynchronous snapshot writes from, on any thread.
  class View {
   public:
    void SnapshotKeyGroup(uint32_t key_group, StateWriter& out) const;
    bool KeyGroupEmpty(uint32_t key_group) const;

   private:
    friend class TimerService;
    KeyGroupRange range_;
    std::vector<std::shared_ptr<const Group>> groups_[2];  // by domain, key group - start
  };
  View Share() const;
  // Adds what SnapshotKeyGroup wrote. REQUIRES: key_group in range().
  Status RestoreKeyGroup(uint32_t key_group, StateReader& in);
  // Removes every timer of the group, both domains. REQUIRES: key_group in range().
  void DropKeyGroup(uint32_t key_group);
  bool KeyGroupEmpty(uint32_t key_group) const;

 private:
  struct Entry {
    int64_t timestamp;
    std::string key;
    std::string ns;
    bool operator<(const Entry& o) const;
  };
  struct Queue {
    std::vector<CopyOnWrite<Group>> groups;        // index: key group - range.start
    std::set<std::pair<int64_t, uint32_t>> heads;  // (earliest timestamp, key group)
    size_t size = 0;
  };
  static size_t Index(TimeDomain d) { return static_cast<size_t>(d); }
  // Keep `heads` right around a change of group `g`.
  void Unhead(Queue& q, uint32_t g) const;
  void Rehead(Queue& q, uint32_t g) const;

  KeyGroupRange range_;
  Queue queues_[2];
};

}  // namespace floe::runtime
