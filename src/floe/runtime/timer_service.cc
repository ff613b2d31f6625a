#include "floe/runtime/timer_service.h"

#include <iterator>
#include <tuple>

namespace floe::runtime {

bool TimerService::Entry::operator<(const Entry& o) const {
  return std::tie(timestamp, key, ns) < std::tie(o.timestamp, o.key, o.ns);
}

TimerService::TimerService(KeyGroupRange range) : range_(range) {
  for (Queue& q : queues_) q.groups.resize(range.end - range.start);
}

void TimerService::Unhead(Queue& q, uint32_t g) const {
  const Group& set = q.groups[g - range_.start].get();
  if (!set.empty()) q.heads.erase({set.begin()->timestamp, g});
}

void TimerService::Rehead(Queue& q, uint32_t g) const {
  const Group& set = q.groups[g - range_.start].get();
  if (!set.empty()) q.heads.insert({set.begin()->timestamp, g});
}

bool TimerService::Register(TimeDomain domain, int64_t timestamp, uint32_t key_group,
                            std::string_view key, std::string_view ns) {
  Queue& q = queues_[Index(domain)];
  Group& set = q.groups[key_group - range_.start].mut();
  auto [it, added] = set.insert(Entry{timestamp, std::string(key), std::string(ns)});
  if (!added) return false;
  ++q.size;
  if (it == set.begin()) {  // the group's new earliest timer
    if (set.size() > 1) q.heads.erase({std::next(it)->timestamp, key_group});
    q.heads.insert({timestamp, key_group});
  }
  return true;
}

bool TimerService::Delete(TimeDomain domain, int64_t timestamp, uint32_t key_group,
                          std::string_view key, std::string_view ns) {
  if (key_group < range_.start || key_group >= range_.end) return false;
  Queue& q = queues_[Index(domain)];
  const Entry wanted{timestamp, std::string(key), std::string(ns)};
  if (q.groups[key_group - range_.start].get().count(wanted) == 0) return false;
  Group& set = q.groups[key_group - range_.start].mut();
  auto it = set.find(wanted);
  --q.size;
  if (it != set.begin()) {
    set.erase(it);
    return true;
  }
  Unhead(q, key_group);
  set.erase(it);
  Rehead(q, key_group);
  return true;
}

std::optional<int64_t> TimerService::NextTimestamp(TimeDomain domain) const {
  const Queue& q = queues_[Index(domain)];
  if (q.heads.empty()) return std::nullopt;
  return q.heads.begin()->first;
}

std::optional<Timer> TimerService::PopDue(TimeDomain domain, int64_t upto) {
  Queue& q = queues_[Index(domain)];
  if (q.heads.empty() || q.heads.begin()->first > upto) return std::nullopt;
  uint32_t g = q.heads.begin()->second;
  q.heads.erase(q.heads.begin());
  Group& set = q.groups[g - range_.start].mut();
  auto node = set.extract(set.begin());
  Rehead(q, g);
  --q.size;
  Entry& e = node.value();
  return Timer{domain, e.timestamp, g, std::move(e.key), std::move(e.ns)};
}

namespace {

template <typename Set>
void PutTimers(const Set& set, StateWriter& out) {
  out.PutU32(static_cast<uint32_t>(set.size()));
  for (const auto& e : set) {
    out.PutI64(e.timestamp);
    out.PutBytes(e.key);
    out.PutBytes(e.ns);
  }
}

}  // namespace

void TimerService::DropKeyGroup(uint32_t key_group) {
  for (Queue& q : queues_) {
    Unhead(q, key_group);
    CopyOnWrite<Group>& group = q.groups[key_group - range_.start];
    q.size -= group.get().size();
    group = CopyOnWrite<Group>();  // a snapshot view keeps the old set
  }
}

bool TimerService::KeyGroupEmpty(uint32_t key_group) const {
  for (const Queue& q : queues_) {
    if (!q.groups[key_group - range_.start].get().empty()) return false;
  }
  return true;
}

void TimerService::SnapshotKeyGroup(uint32_t key_group, StateWriter& out) const {
  for (const Queue& q : queues_) PutTimers(q.groups[key_group - range_.start].get(), out);
}

TimerService::View TimerService::Share() const {
  View v;
  v.range_ = range_;
  for (size_t d = 0; d < 2; ++d) {
    v.groups_[d].reserve(queues_[d].groups.size());
    for (const CopyOnWrite<Group>& g : queues_[d].groups) v.groups_[d].push_back(g.share());
  }
  return v;
}

bool TimerService::View::KeyGroupEmpty(uint32_t key_group) const {
  for (const auto& groups : groups_) {
    if (!groups[key_group - range_.start]->empty()) return false;
  }
  return true;
}

void TimerService::View::SnapshotKeyGroup(uint32_t key_group, StateWriter& out) const {
  for (const auto& groups : groups_) PutTimers(*groups[key_group - range_.start], out);
}

Status TimerService::RestoreKeyGroup(uint32_t key_group, StateReader& in) {
  for (TimeDomain domain : {TimeDomain::kEventTime, TimeDomain::kProcessingTime}) {
    FLOE_ASSIGN_OR_RAISE(uint32_t n, in.GetU32());
    for (uint32_t i = 0; i < n; ++i) {
      FLOE_ASSIGN_OR_RAISE(int64_t timestamp, in.GetI64());
      FLOE_ASSIGN_OR_RAISE(std::string key, in.GetBytes());
      FLOE_ASSIGN_OR_RAISE(std::string ns, in.GetBytes());
      Register(domain, timestamp, key_group, key, ns);
    }
  }
  return Status::OK();
}

}  // namespace floe::runtime
