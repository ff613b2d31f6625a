#include "floe/runtime/keyed_state.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "floe/common/log.h"
#include "floe/runtime/partitioner.h"
#include "floe/runtime/rocksdb_keyed_state.h"
#include "floe/runtime/test_util.h"
#include "floe/runtime/testing/dir_shared_state_store.h"

namespace floe::runtime {
namespace {

using std::chrono::milliseconds;

// The hash the HASH partitioner routes an int64 key column by; the key's bytes are its decimal
// text (the backend does not care what they are).
uint64_t HashOf(int64_t key) { return HashKeyRow(testing::Int64Batch({key}), {0}, 0); }

// The backend every KeyedState test runs against (the test's parameter).
std::string g_backend = "hashmap";

class KeyedState : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { g_backend = GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Backends, KeyedState, ::testing::Values("hashmap", "rocksdb"),
                         [](const auto& info) { return info.param; });

KeyedStateOptions Options(KeyGroupRange range, milliseconds ttl, uint32_t max_parallelism,
                          std::string backend) {
  KeyedStateOptions o;
  o.backend = std::move(backend);
  o.key_groups = range;
  o.max_parallelism = max_parallelism;
  o.ttl = ttl;
  return o;
}

struct Fixture {
  explicit Fixture(KeyGroupRange range = {0, 128}, milliseconds ttl = milliseconds(0),
                   uint32_t max_parallelism = 128, std::string backend_name = g_backend)
      : Fixture(Options(range, ttl, max_parallelism, std::move(backend_name))) {}
  explicit Fixture(KeyedStateOptions o) : clock(1'000'000) {
    o.clock = &clock;
    auto made = KeyedStateBackend::Make(o);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    backend = std::move(made).value();
  }
  void Key(int64_t k) { ASSERT_TRUE(backend->SetCurrentKey(std::to_string(k), HashOf(k)).ok()); }

  FakeClock clock;
  std::unique_ptr<KeyedStateBackend> backend;
};

std::string GetValue(const ValueState& s) {
  std::string out;
  Result<bool> found = s.Get(&out);
  EXPECT_TRUE(found.ok()) << found.status().ToString();
  return found.ok() && *found ? out : "<none>";
}

std::vector<std::string> GetList(const ListState& s) {
  std::vector<std::string> out;
  EXPECT_TRUE(s.Get(&out).ok());
  return out;
}

// Sums decimal integers: the reduce function of the tests.
Status Sum(std::string_view a, std::string_view b, std::string* out) {
  *out = std::to_string(std::stoll(std::string(a)) + std::stoll(std::string(b)));
  return Status::OK();
}

// Average as "sum,count" accumulators.
AggregateFunction Average() {
  AggregateFunction f;
  f.create = [](std::string* acc) {
    *acc = "0,0";
    return Status::OK();
  };
  auto parse = [](std::string_view acc, int64_t* sum, int64_t* count) {
    size_t comma = acc.find(',');
    *sum = std::stoll(std::string(acc.substr(0, comma)));
    *count = std::stoll(std::string(acc.substr(comma + 1)));
  };
  f.add = [parse](std::string_view input, std::string* acc) {
    int64_t sum, count;
    parse(*acc, &sum, &count);
    *acc = std::to_string(sum + std::stoll(std::string(input))) + "," + std::to_string(count + 1);
    return Status::OK();
  };
  f.result = [parse](std::string_view acc, std::string* out) {
    int64_t sum, count;
    parse(acc, &sum, &count);
    *out = std::to_string(sum / count);
    return Status::OK();
  };
  f.merge = [parse](std::string_view other, std::string* acc) {
    int64_t s1, c1, s2, c2;
    parse(*acc, &s1, &c1);
    parse(other, &s2, &c2);
    *acc = std::to_string(s1 + s2) + "," + std::to_string(c1 + c2);
    return Status::OK();
  };
  return f;
}

std::string SnapshotOf(KeyedStateBackend& backend) {
  StateWriter w;
  w.PutU32(99);  // the operator's own fields around the section must survive
  EXPECT_TRUE(backend.Snapshot(w).ok());
  w.PutString("tail");
  return w.Finish();
}

Status RestoreFrom(KeyedStateBackend& backend, const std::string& blob) {
  StateReader r(blob);
  FLOE_ASSIGN_OR_RAISE(uint32_t head, r.GetU32());
  if (head != 99) return Status::Corruption("head");
  FLOE_RETURN_NOT_OK(backend.Restore(r));
  FLOE_ASSIGN_OR_RAISE(std::string tail, r.GetString());
  if (tail != "tail") return Status::Corruption("tail");
  return r.ExpectEnd();
}

TEST_P(KeyedState, ValueStateIsScopedByKeyAndNamespace) {
  Fixture f;
  ValueState v = *f.backend->GetValueState("v");
  f.Key(1);
  ASSERT_TRUE(v.Update("one").ok());
  f.backend->SetCurrentNamespace("w1");
  EXPECT_EQ(GetValue(v), "<none>");
  ASSERT_TRUE(v.Update("one@w1").ok());
  f.Key(2);  // keeps namespace w1
  EXPECT_EQ(f.backend->current_namespace(), "w1");
  EXPECT_EQ(GetValue(v), "<none>");
  ASSERT_TRUE(v.Update("two@w1").ok());
  f.backend->SetCurrentNamespace("");
  f.Key(1);
  EXPECT_EQ(GetValue(v), "one");
  ASSERT_TRUE(v.Update("one'").ok());
  EXPECT_EQ(GetValue(v), "one'");
  f.backend->SetCurrentNamespace("w1");
  EXPECT_EQ(GetValue(v), "one@w1");
  ASSERT_TRUE(v.Clear().ok());
  EXPECT_EQ(GetValue(v), "<none>");
  f.Key(2);
  EXPECT_EQ(GetValue(v), "two@w1");
  EXPECT_EQ(f.backend->num_entries(), 2u);  // (1, "") and (2, w1)
}

TEST_P(KeyedState, KeyBytesAreOpaqueAndPrefixFree) {
  // ("ab", "c") and ("a", "bc") must be different scopes.
  Fixture f;
  ValueState v = *f.backend->GetValueState("v");
  ASSERT_TRUE(f.backend->SetCurrentKey("ab", HashOf(7)).ok());
  f.backend->SetCurrentNamespace("c");
  ASSERT_TRUE(v.Update("x").ok());
  ASSERT_TRUE(f.backend->SetCurrentKey("a", HashOf(7)).ok());
  f.backend->SetCurrentNamespace("bc");
  EXPECT_EQ(GetValue(v), "<none>");
  ASSERT_TRUE(f.backend->SetCurrentKey(std::string("\0\1", 2), HashOf(7)).ok());
  ASSERT_TRUE(v.Update("binary").ok());
  EXPECT_EQ(GetValue(v), "binary");
}

TEST_P(KeyedState, StatesAreIndependentAndKindsAreChecked) {
  Fixture f;
  ValueState a = *f.backend->GetValueState("a");
  ValueState b = *f.backend->GetValueState("b");
  ListState l = *f.backend->GetListState("l");
  // Same name again: same state; another kind: refused.
  EXPECT_EQ(f.backend->GetValueState("a")->id(), a.id());
  Result<ListState> wrong = f.backend->GetListState("a");
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(wrong.status().IsInvalidArgument()) << wrong.status().ToString();
  EXPECT_NE(wrong.status().message().find("'a' is value"), std::string::npos);
  // No current key yet.
  Status no_key = a.Update("x");
  EXPECT_TRUE(no_key.IsInvalidArgument());
  EXPECT_NE(no_key.message().find("before SetCurrentKey"), std::string::npos);

  f.Key(1);
  ASSERT_TRUE(a.Update("A").ok());
  EXPECT_EQ(GetValue(b), "<none>");
  // A list operation on a value state is refused.
  EXPECT_TRUE(f.backend->Add(a.id(), "x").IsInvalidArgument());
  EXPECT_TRUE(f.backend->Put(l.id(), "x").IsInvalidArgument());
  // Reducing/aggregating without their functions are refused.
  EXPECT_FALSE(f.backend->GetReducingState("r", nullptr).ok());
  EXPECT_FALSE(f.backend->GetAggregatingState("g", AggregateFunction{}).ok());
}

TEST_P(KeyedState, ListStateAppendsReplacesAndClears) {
  Fixture f;
  ListState l = *f.backend->GetListState("l");
  f.Key(1);
  EXPECT_TRUE(GetList(l).empty());
  ASSERT_TRUE(l.Add("a").ok());
  ASSERT_TRUE(l.Add("b").ok());
  ASSERT_TRUE(l.Add("a").ok());
  EXPECT_EQ(GetList(l), (std::vector<std::string>{"a", "b", "a"}));
  f.Key(2);
  EXPECT_TRUE(GetList(l).empty());
  f.Key(1);
  ASSERT_TRUE(l.Update({"x", "y"}).ok());
  EXPECT_EQ(GetList(l), (std::vector<std::string>{"x", "y"}));
  ASSERT_TRUE(l.Update({}).ok());  // an empty list is no list
  EXPECT_TRUE(GetList(l).empty());
  EXPECT_EQ(f.backend->num_entries(), 0u);
  ASSERT_TRUE(l.Add("z").ok());
  ASSERT_TRUE(l.Clear().ok());
  EXPECT_TRUE(GetList(l).empty());
}

TEST_P(KeyedState, MapStatePutsGetsRemovesAndIteratesInKeyOrder) {
  Fixture f;
  MapState m = *f.backend->GetMapState("m");
  f.Key(1);
  std::string out;
  EXPECT_FALSE(*m.Get("k", &out));
  ASSERT_TRUE(m.Put("b", "2").ok());
  ASSERT_TRUE(m.Put("a", "1").ok());
  ASSERT_TRUE(m.Put("c", "3").ok());
  ASSERT_TRUE(m.Put("b", "22").ok());  // overwrite
  EXPECT_TRUE(*m.Get("b", &out));
  EXPECT_EQ(out, "22");
  ASSERT_TRUE(m.Remove("c").ok());
  ASSERT_TRUE(m.Remove("missing").ok());
  std::vector<std::pair<std::string, std::string>> entries;
  ASSERT_TRUE(m.Entries(&entries).ok());
  EXPECT_EQ(entries, (std::vector<std::pair<std::string, std::string>>{{"a", "1"}, {"b", "22"}}));
  f.backend->SetCurrentNamespace("other");
  ASSERT_TRUE(m.Entries(&entries).ok());
  EXPECT_TRUE(entries.empty());
  f.backend->SetCurrentNamespace("");
  ASSERT_TRUE(m.Remove("a").ok());
  ASSERT_TRUE(m.Remove("b").ok());
  EXPECT_EQ(f.backend->num_entries(), 0u);  // an empty map is no map
  ASSERT_TRUE(m.Put("a", "1").ok());
  ASSERT_TRUE(m.Clear().ok());
  EXPECT_FALSE(*m.Get("a", &out));
}

TEST_P(KeyedState, ReducingStateReducesPerScope) {
  Fixture f;
  ReducingState r = *f.backend->GetReducingState("sum", Sum);
  f.Key(1);
  std::string out;
  EXPECT_FALSE(*r.Get(&out));
  ASSERT_TRUE(r.Add("5").ok());
  ASSERT_TRUE(r.Add("7").ok());
  EXPECT_TRUE(*r.Get(&out));
  EXPECT_EQ(out, "12");
  f.Key(2);
  ASSERT_TRUE(r.Add("1").ok());
  EXPECT_TRUE(*r.Get(&out));
  EXPECT_EQ(out, "1");
  ASSERT_TRUE(r.Clear().ok());
  EXPECT_FALSE(*r.Get(&out));
}

TEST_P(KeyedState, AggregatingStateKeepsAccumulatorsAndReturnsResults) {
  Fixture f;
  AggregatingState g = *f.backend->GetAggregatingState("avg", Average());
  f.Key(1);
  std::string out;
  EXPECT_FALSE(*g.Get(&out));
  ASSERT_TRUE(g.Add("10").ok());
  ASSERT_TRUE(g.Add("20").ok());
  ASSERT_TRUE(g.Add("60").ok());
  EXPECT_TRUE(*g.Get(&out));
  EXPECT_EQ(out, "30");
  // A failing user function fails the call and leaves the state as it was.
  AggregateFunction failing = Average();
  failing.add = [](std::string_view, std::string*) { return Status::InvalidArgument("boom"); };
  AggregatingState h = *f.backend->GetAggregatingState("failing", failing);
  EXPECT_EQ(h.Add("1").message(), "boom");
  EXPECT_FALSE(*h.Get(&out));
}

TEST_P(KeyedState, MergeNamespacesFoldsSessionWindows) {
  Fixture f;
  ListState l = *f.backend->GetListState("l");
  ReducingState r = *f.backend->GetReducingState("sum", Sum);
  AggregatingState g = *f.backend->GetAggregatingState("avg", Average());
  ValueState v = *f.backend->GetValueState("v");
  f.Key(1);
  for (const char* ns : {"s1", "s2", "s3"}) {
    f.backend->SetCurrentNamespace(ns);
    std::string n = std::string(ns).substr(1);  // 1, 2, 3
    ASSERT_TRUE(l.Add(n).ok());
    ASSERT_TRUE(r.Add(n).ok());
    ASSERT_TRUE(g.Add(n).ok());
  }
  f.Key(2);  // another key's s2 is not touched
  f.backend->SetCurrentNamespace("s2");
  ASSERT_TRUE(r.Add("100").ok());

  f.Key(1);
  f.backend->SetCurrentNamespace("s1");
  ASSERT_TRUE(f.backend->MergeNamespaces(l.id(), "s1", {"s2", "s3"}).ok());
  ASSERT_TRUE(f.backend->MergeNamespaces(r.id(), "s1", {"s2", "s3"}).ok());
  ASSERT_TRUE(f.backend->MergeNamespaces(g.id(), "s9", {"s1", "s2", "s3"}).ok());
  EXPECT_TRUE(f.backend->MergeNamespaces(v.id(), "s1", {"s2"}).IsInvalidArgument());
  EXPECT_EQ(f.backend->current_namespace(), "s1");
  std::string out;
  EXPECT_EQ(GetList(l), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_TRUE(*r.Get(&out));
  EXPECT_EQ(out, "6");
  EXPECT_FALSE(*g.Get(&out));  // moved to s9
  f.backend->SetCurrentNamespace("s9");
  EXPECT_TRUE(*g.Get(&out));
  EXPECT_EQ(out, "2");
  f.backend->SetCurrentNamespace("s2");
  EXPECT_TRUE(GetList(l).empty());
  EXPECT_FALSE(*r.Get(&out));
  f.Key(2);
  EXPECT_TRUE(*r.Get(&out));
  EXPECT_EQ(out, "100");
}

TEST_P(KeyedState, KeyGroupIsThePartitionersAndForeignKeysAreRefused) {
  // Parallelism 4 over 128 key groups: the subtask HashPartitionRows picks for a row is the one
  // whose backend accepts that row's key.
  const uint32_t p = 4, max_p = 128;
  RecordBatch batch = testing::Int64Batch({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  auto routed = HashPartitionRows(batch, {0}, max_p, p);
  for (uint32_t s = 0; s < p; ++s) {
    Fixture f(KeyGroupRangeForSubtask(s, max_p, p));
    for (uint32_t target = 0; target < p; ++target) {
      for (uint32_t row : routed[target]) {
        uint64_t hash = HashKeyRow(batch, {0}, row);
        Status st = f.backend->SetCurrentKey(std::to_string(row), hash);
        if (target == s) {
          EXPECT_TRUE(st.ok()) << st.ToString();
          EXPECT_EQ(f.backend->current_key_group(), KeyGroupForHash(hash, max_p));
        } else {
          EXPECT_TRUE(st.IsInvalidArgument());
          EXPECT_NE(st.message().find("outside this subtask's range"), std::string::npos);
        }
      }
    }
  }
}

TEST_P(KeyedState, EventTimersFireInTimestampOrderOnceWhenTheWatermarkPasses) {
  Fixture f;
  for (int64_t k : {1, 2, 3}) {
    f.Key(k);
    f.backend->SetCurrentNamespace("w" + std::to_string(k));
    ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 300 - k * 100).ok());  // 200..0
    ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 1000).ok());
    ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 1000).ok());  // duplicate
  }
  f.Key(3);
  f.backend->SetCurrentNamespace("w3");
  ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 500).ok());
  ASSERT_TRUE(f.backend->DeleteTimer(TimeDomain::kEventTime, 500).ok());
  EXPECT_EQ(f.backend->NextTimer(TimeDomain::kEventTime), 0);
  EXPECT_EQ(f.backend->NextTimer(TimeDomain::kProcessingTime), std::nullopt);

  std::vector<std::string> fired;
  auto record = [&](const Timer& t) {
    // The scope is the timer's.
    EXPECT_EQ(f.backend->current_key(), t.key);
    EXPECT_EQ(f.backend->current_namespace(), t.ns);
    fired.push_back(std::to_string(t.timestamp) + ":" + t.key + "/" + t.ns);
    return Status::OK();
  };
  ASSERT_TRUE(f.backend->AdvanceWatermark(Watermark(150), record).ok());
  EXPECT_EQ(fired, (std::vector<std::string>{"0:3/w3", "100:2/w2"}));
  fired.clear();
  // A timestamp equal to the watermark fires; a lower watermark fires nothing new.
  ASSERT_TRUE(f.backend->AdvanceWatermark(Watermark(100), record).ok());
  EXPECT_TRUE(fired.empty());
  EXPECT_EQ(f.backend->current_watermark(), Watermark(150));
  ASSERT_TRUE(f.backend->AdvanceWatermark(Watermark(1000), record).ok());
  ASSERT_EQ(fired.size(), 4u);
  EXPECT_EQ(fired[0], "200:1/w1");
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(fired[i].substr(0, 5), "1000:");  // once per scope
  fired.clear();
  ASSERT_TRUE(f.backend->AdvanceWatermark(Watermark(INT64_MAX), record).ok());
  EXPECT_TRUE(fired.empty());
}

TEST_P(KeyedState, TimerHandlerMayUseStateAndRegisterTimers) {
  Fixture f;
  ReducingState count = *f.backend->GetReducingState("count", Sum);
  f.Key(1);
  ASSERT_TRUE(count.Add("1").ok());
  ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 10).ok());
  std::vector<int64_t> fired;
  auto handler = [&](const Timer& t) -> Status {
    fired.push_back(t.timestamp);
    std::string out;
    FLOE_ASSIGN_OR_RAISE(bool found, count.Get(&out));
    if (!found || out != "1") return Status::Internal("state not in the timer's scope");
    if (t.timestamp == 10) {
      // Due already (fires in this call) and a later one (does not).
      FLOE_RETURN_NOT_OK(f.backend->RegisterTimer(TimeDomain::kEventTime, 20));
      FLOE_RETURN_NOT_OK(f.backend->RegisterTimer(TimeDomain::kEventTime, 99));
    }
    return Status::OK();
  };
  f.Key(2);  // the handler must see key 1's state anyway
  ASSERT_TRUE(f.backend->AdvanceWatermark(Watermark(50), handler).ok());
  EXPECT_EQ(fired, (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(f.backend->NextTimer(TimeDomain::kEventTime), 99);
  // A handler error stops firing and is returned.
  Status st = f.backend->AdvanceWatermark(
      Watermark(100), [](const Timer&) { return Status::Internal("handler failed"); });
  EXPECT_EQ(st.message(), "handler failed");
}

TEST_P(KeyedState, TimersRegisteredBeforeTheLastFiredOneStillFire) {
  // rocksdb seeks a key group's timers from the last one it fired; a timer registered before
  // that one (same timestamp, smaller namespace) must still fire, and after a restore too.
  Fixture f;
  f.Key(1);
  f.backend->SetCurrentNamespace("m");
  ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 10).ok());
  ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 30).ok());
  std::vector<std::string> fired;
  auto handler = [&](const Timer& t) -> Status {
    fired.push_back(std::to_string(t.timestamp) + t.ns);
    if (t.ns == "m" && t.timestamp == 10) {
      f.backend->SetCurrentNamespace("a");
      FLOE_RETURN_NOT_OK(f.backend->RegisterTimer(TimeDomain::kEventTime, 10));
      FLOE_RETURN_NOT_OK(f.backend->RegisterTimer(TimeDomain::kEventTime, 20));
    }
    return Status::OK();
  };
  ASSERT_TRUE(f.backend->AdvanceWatermark(Watermark(25), handler).ok());
  EXPECT_EQ(fired, (std::vector<std::string>{"10m", "10a", "20a"}));
  f.Key(1);
  f.backend->SetCurrentNamespace("a");
  ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 5).ok());
  EXPECT_EQ(f.backend->NextTimer(TimeDomain::kEventTime), 5);
  fired.clear();
  ASSERT_TRUE(f.backend->AdvanceWatermark(Watermark(100), handler).ok());
  EXPECT_EQ(fired, (std::vector<std::string>{"5a", "30m"}));
}

TEST_P(KeyedState, TimerHandlerMayDeleteTheNextDueTimer) {
  // rocksdb fires a key group's due timers from one iterator; a timer the handler deletes must
  // not fire from it (and one it registers must fire in order).
  Fixture f;
  f.Key(1);
  for (const char* ns : {"a", "b", "c"}) {
    f.backend->SetCurrentNamespace(ns);
    ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 10).ok());
  }
  std::vector<std::string> fired;
  auto handler = [&](const Timer& t) -> Status {
    fired.push_back(t.ns);
    if (t.ns == "a") {
      f.backend->SetCurrentNamespace("b");
      FLOE_RETURN_NOT_OK(f.backend->DeleteTimer(TimeDomain::kEventTime, 10));
      f.backend->SetCurrentNamespace("bb");
      FLOE_RETURN_NOT_OK(f.backend->RegisterTimer(TimeDomain::kEventTime, 10));
    }
    return Status::OK();
  };
  ASSERT_TRUE(f.backend->AdvanceWatermark(Watermark(10), handler).ok());
  EXPECT_EQ(fired, (std::vector<std::string>{"a", "bb", "c"}));
  EXPECT_EQ(f.backend->NextTimer(TimeDomain::kEventTime), std::nullopt);
}

TEST_P(KeyedState, ProcessingTimersFollowTheClock) {
  Fixture f;  // clock at 1,000,000 ms
  EXPECT_EQ(f.backend->CurrentProcessingTime(), 1'000'000'000);
  f.Key(1);
  const int64_t now = f.backend->CurrentProcessingTime();
  ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kProcessingTime, now + 2'000'000).ok());
  ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kProcessingTime, now + 1'000'000).ok());
  ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 0).ok());  // other domain
  std::vector<int64_t> fired;
  auto handler = [&](const Timer& t) {
    EXPECT_EQ(t.domain, TimeDomain::kProcessingTime);
    fired.push_back(t.timestamp - now);
    return Status::OK();
  };
  ASSERT_TRUE(f.backend->AdvanceProcessingTime(handler).ok());
  EXPECT_TRUE(fired.empty());
  EXPECT_EQ(f.backend->NextTimer(TimeDomain::kProcessingTime), now + 1'000'000);
  f.clock.Advance(milliseconds(1000));
  ASSERT_TRUE(f.backend->AdvanceProcessingTime(handler).ok());
  EXPECT_EQ(fired, (std::vector<int64_t>{1'000'000}));
  f.clock.Advance(milliseconds(5000));
  ASSERT_TRUE(f.backend->AdvanceProcessingTime(handler).ok());
  EXPECT_EQ(fired, (std::vector<int64_t>{1'000'000, 2'000'000}));
  EXPECT_EQ(f.backend->NextTimer(TimeDomain::kEventTime), 0);
}

TEST(TimerService, DeduplicatesAndOrdersAcrossKeyGroups) {
  TimerService timers(KeyGroupRange{10, 20});
  EXPECT_TRUE(timers.Register(TimeDomain::kEventTime, 5, 15, "b", ""));
  EXPECT_TRUE(timers.Register(TimeDomain::kEventTime, 5, 11, "z", ""));
  EXPECT_TRUE(timers.Register(TimeDomain::kEventTime, 5, 15, "a", ""));
  EXPECT_TRUE(timers.Register(TimeDomain::kEventTime, 3, 19, "c", "n"));
  EXPECT_FALSE(timers.Register(TimeDomain::kEventTime, 5, 15, "a", ""));
  EXPECT_TRUE(timers.Register(TimeDomain::kEventTime, 5, 15, "a", "other-ns"));
  EXPECT_TRUE(timers.Register(TimeDomain::kProcessingTime, 5, 15, "a", ""));
  EXPECT_EQ(timers.size(TimeDomain::kEventTime), 5u);
  EXPECT_EQ(timers.size(), 6u);
  EXPECT_TRUE(timers.Delete(TimeDomain::kEventTime, 5, 15, "a", "other-ns"));
  EXPECT_FALSE(timers.Delete(TimeDomain::kEventTime, 5, 15, "a", "other-ns"));
  std::vector<std::string> order;
  while (auto t = timers.PopDue(TimeDomain::kEventTime, 5)) {
    order.push_back(std::to_string(t->timestamp) + "/" + std::to_string(t->key_group) + "/" +
                    t->key);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"3/19/c", "5/11/z", "5/15/a", "5/15/b"}));
  EXPECT_EQ(timers.size(), 1u);
  EXPECT_FALSE(timers.PopDue(TimeDomain::kProcessingTime, 4));
  EXPECT_TRUE(timers.PopDue(TimeDomain::kProcessingTime, 5));

  // Deleting a group's earliest timer moves the next one up.
  EXPECT_TRUE(timers.Register(TimeDomain::kEventTime, 9, 12, "k", ""));
  EXPECT_TRUE(timers.Register(TimeDomain::kEventTime, 7, 12, "k", ""));
  EXPECT_TRUE(timers.Register(TimeDomain::kEventTime, 8, 13, "k", ""));
  EXPECT_EQ(timers.NextTimestamp(TimeDomain::kEventTime), 7);
  EXPECT_TRUE(timers.Delete(TimeDomain::kEventTime, 7, 12, "k", ""));
  EXPECT_EQ(timers.NextTimestamp(TimeDomain::kEventTime), 8);
  EXPECT_TRUE(timers.Delete(TimeDomain::kEventTime, 8, 13, "k", ""));
  EXPECT_EQ(timers.NextTimestamp(TimeDomain::kEventTime), 9);
  EXPECT_FALSE(timers.Delete(TimeDomain::kEventTime, 9, 99, "k", ""));  // not this range
  EXPECT_EQ(timers.PopDue(TimeDomain::kEventTime, 100)->timestamp, 9);
  EXPECT_EQ(timers.NextTimestamp(TimeDomain::kEventTime), std::nullopt);
  EXPECT_EQ(timers.size(), 0u);
}

TEST_P(KeyedState, SnapshotRestoreRoundTripsStateAndTimers) {
  Fixture a;
  ValueState v = *a.backend->GetValueState("v");
  ListState l = *a.backend->GetListState("l");
  MapState m = *a.backend->GetMapState("m");
  ReducingState r = *a.backend->GetReducingState("sum", Sum);
  AggregatingState g = *a.backend->GetAggregatingState("avg", Average());
  for (int64_t k = 0; k < 50; ++k) {
    a.Key(k);
    a.backend->SetCurrentNamespace(k % 2 ? "odd" : "");
    ASSERT_TRUE(v.Update("v" + std::to_string(k)).ok());
    ASSERT_TRUE(l.Add("x").ok());
    ASSERT_TRUE(l.Add(std::to_string(k)).ok());
    ASSERT_TRUE(m.Put("k" + std::to_string(k), std::string("\0bin", 4)).ok());
    ASSERT_TRUE(r.Add(std::to_string(k)).ok());
    ASSERT_TRUE(r.Add("1000").ok());
    ASSERT_TRUE(g.Add(std::to_string(2 * k)).ok());
    ASSERT_TRUE(a.backend->RegisterTimer(TimeDomain::kEventTime, 100 + k).ok());
    ASSERT_TRUE(a.backend->RegisterTimer(TimeDomain::kProcessingTime, 5'000'000'000 + k).ok());
  }
  const std::string blob = SnapshotOf(*a.backend);
  // Deterministic enough to be read twice the same way.
  EXPECT_EQ(blob.substr(0, 8), SnapshotOf(*a.backend).substr(0, 8));

  // Registration before the restore (as in Open) and after it (lazily) both work.
  Fixture b;
  ValueState v2 = *b.backend->GetValueState("v");
  ReducingState r2 = *b.backend->GetReducingState("sum", Sum);
  Status st = RestoreFrom(*b.backend, blob);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ListState l2 = *b.backend->GetListState("l");
  MapState m2 = *b.backend->GetMapState("m");
  AggregatingState g2 = *b.backend->GetAggregatingState("avg", Average());
  EXPECT_EQ(b.backend->num_entries(), a.backend->num_entries());
  for (int64_t k = 0; k < 50; ++k) {
    b.Key(k);
    b.backend->SetCurrentNamespace(k % 2 ? "odd" : "");
    EXPECT_EQ(GetValue(v2), "v" + std::to_string(k));
    EXPECT_EQ(GetList(l2), (std::vector<std::string>{"x", std::to_string(k)}));
    std::string out;
    EXPECT_TRUE(*m2.Get("k" + std::to_string(k), &out));
    EXPECT_EQ(out, std::string("\0bin", 4));
    EXPECT_TRUE(*r2.Get(&out));
    EXPECT_EQ(out, std::to_string(k + 1000));
    EXPECT_TRUE(*g2.Get(&out));
    EXPECT_EQ(out, std::to_string(2 * k));
    ASSERT_TRUE(g2.Add(std::to_string(2 * k + 2)).ok());  // the accumulator came back, not a result
    EXPECT_TRUE(*g2.Get(&out));
    EXPECT_EQ(out, std::to_string(2 * k + 1));
  }
  std::vector<std::string> fired;
  ASSERT_TRUE(b.backend
                  ->AdvanceWatermark(Watermark(1000),
                                     [&](const Timer& t) {
                                       fired.push_back(t.key + "@" + std::to_string(t.timestamp));
                                       return Status::OK();
                                     })
                  .ok());
  ASSERT_EQ(fired.size(), 50u);
  for (int64_t k = 0; k < 50; ++k) {
    EXPECT_EQ(fired[static_cast<size_t>(k)], std::to_string(k) + "@" + std::to_string(100 + k));
  }
  EXPECT_EQ(b.backend->NextTimer(TimeDomain::kProcessingTime), 5'000'000'000);

  // The same key groups restored twice are refused.
  EXPECT_EQ(RestoreFrom(*b.backend, blob).code(), StatusCode::kCorruption);
  // A state restored as one kind cannot be registered as another.
  Fixture c;
  ASSERT_TRUE(RestoreFrom(*c.backend, blob).ok());
  EXPECT_TRUE(c.backend->GetMapState("v").status().IsInvalidArgument());
  // ...nor registered before the restore as another.
  Fixture d;
  ASSERT_TRUE(d.backend->GetListState("v").ok());
  EXPECT_TRUE(RestoreFrom(*d.backend, blob).IsInvalidArgument());
}

TEST_P(KeyedState, UnregisteredRestoredStateSurvivesTheNextSnapshot) {
  Fixture a;
  ValueState v = *a.backend->GetValueState("v");
  a.Key(1);
  ASSERT_TRUE(v.Update("kept").ok());
  Fixture b;
  ASSERT_TRUE(RestoreFrom(*b.backend, SnapshotOf(*a.backend)).ok());
  const std::string again = SnapshotOf(*b.backend);  // "v" never registered in b
  Fixture c;
  ASSERT_TRUE(RestoreFrom(*c.backend, again).ok());
  ValueState v3 = *c.backend->GetValueState("v");
  c.Key(1);
  EXPECT_EQ(GetValue(v3), "kept");
}

TEST_P(KeyedState, RescaledSubtasksTakeTheirKeyGroupsFromEveryOldSnapshot) {
  const uint32_t max_p = 128;
  // Two old subtasks, each with 200 keys of its own range.
  std::vector<std::string> blobs;
  std::map<int64_t, std::string> written;
  for (uint32_t s = 0; s < 2; ++s) {
    Fixture old(KeyGroupRangeForSubtask(s, max_p, 2));
    ValueState v = *old.backend->GetValueState("v");
    for (int64_t k = 0; k < 400; ++k) {
      if (!old.backend->SetCurrentKey(std::to_string(k), HashOf(k)).ok()) continue;
      ASSERT_TRUE(v.Update("v" + std::to_string(k)).ok());
      ASSERT_TRUE(old.backend->RegisterTimer(TimeDomain::kEventTime, 1000 + k).ok());
      written[k] = "v" + std::to_string(k);
    }
    blobs.push_back(SnapshotOf(*old.backend));
  }
  ASSERT_EQ(written.size(), 400u);
  // Rescaled to 3: every new subtask restores from both, and finds exactly its keys.
  size_t found = 0;
  size_t timers = 0;
  for (uint32_t s = 0; s < 3; ++s) {
    Fixture next(KeyGroupRangeForSubtask(s, max_p, 3));
    for (const std::string& blob : blobs) ASSERT_TRUE(RestoreFrom(*next.backend, blob).ok());
    ValueState v = *next.backend->GetValueState("v");
    for (const auto& [k, value] : written) {
      if (!next.backend->SetCurrentKey(std::to_string(k), HashOf(k)).ok()) continue;
      EXPECT_EQ(GetValue(v), value);
      ++found;
    }
    ASSERT_TRUE(next.backend
                    ->AdvanceWatermark(Watermark(INT64_MAX),
                                       [&](const Timer&) {
                                         ++timers;
                                         return Status::OK();
                                       })
                    .ok());
    // The same snapshot twice would double its key groups.
    if (s == 0) {
      EXPECT_EQ(RestoreFrom(*next.backend, blobs[0]).code(), StatusCode::kCorruption);
    }
  }
  EXPECT_EQ(found, 400u);
  EXPECT_EQ(timers, 400u);

  Fixture other_max(KeyGroupRange{0, 64}, milliseconds(0), 256);
  Status st = RestoreFrom(*other_max.backend, blobs[0]);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("pipeline.max-parallelism"), std::string::npos) << st.message();
}

// Scale-out by Kafka partition (docs/architecture.md, "Keyed jobs"): a key group is a
// partition, given rather than hashed, and a live backend takes one over from another
// instance's snapshot or drops it, while its other groups and open snapshot views stay as
// they were.
TEST_P(KeyedState, KeyGroupsMoveOneAtATimeBetweenLiveBackends) {
  const KeyGroupRange all{0, 16};
  auto key = [](KeyedStateBackend& b, int group, int k) {
    ASSERT_TRUE(b.SetCurrentKeyInGroup("k" + std::to_string(k), static_cast<uint32_t>(group)).ok());
  };
  Fixture a(all, milliseconds(0), 16);
  ValueState va = *a.backend->GetValueState("v");
  ListState la = *a.backend->GetListState("l");
  for (int k = 0; k < 40; ++k) {
    key(*a.backend, k % 4, k);
    ASSERT_TRUE(va.Update("a" + std::to_string(k)).ok());
    ASSERT_TRUE(la.Add("x" + std::to_string(k)).ok());
    ASSERT_TRUE(a.backend->RegisterTimer(TimeDomain::kEventTime, 100 + k).ok());
  }
  EXPECT_EQ(a.backend->current_key_group(), 3u);
  StateWriter w;
  ASSERT_TRUE(a.backend->Snapshot(w).ok());
  const std::string from_a = w.Finish();

  Fixture b(all, milliseconds(0), 16);
  ValueState vb = *b.backend->GetValueState("v");
  ListState lb = *b.backend->GetListState("l");
  for (int k = 0; k < 40; ++k) {  // b's own groups 1 and 2: 1 is replaced, 2 dropped
    key(*b.backend, 1 + k % 2, 1000 + k);
    ASSERT_TRUE(vb.Update("b" + std::to_string(k)).ok());
    ASSERT_TRUE(b.backend->RegisterTimer(TimeDomain::kEventTime, 5000 + k).ok());
  }
  std::unique_ptr<KeyedStateSnapshot> before = std::move(b.backend->TakeSnapshot()).value();

  for (int round = 0; round < 2; ++round) {  // twice: a group is replaced, never doubled
    StateReader r(from_a);
    Status st = b.backend->RestoreKeyGroup(r, 1);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  ASSERT_TRUE(b.backend->DropKeyGroup(2).ok());
  for (int k = 0; k < 40; ++k) {
    key(*b.backend, k % 4, k);
    EXPECT_EQ(GetValue(vb), k % 4 == 1 ? "a" + std::to_string(k) : "<none>") << k;
    EXPECT_EQ(GetList(lb), k % 4 == 1 ? std::vector<std::string>{"x" + std::to_string(k)}
                                      : std::vector<std::string>{});
    key(*b.backend, 1 + k % 2, 1000 + k);
    EXPECT_EQ(GetValue(vb), "<none>") << k;
  }
  std::vector<std::string> fired;
  ASSERT_TRUE(b.backend
                  ->AdvanceWatermark(Watermark(INT64_MAX),
                                     [&](const Timer& t) {
                                       EXPECT_EQ(t.key_group, 1u);
                                       fired.push_back(t.key);
                                       return Status::OK();
                                     })
                  .ok());
  EXPECT_EQ(fired.size(), 10u);  // a's group-1 timers only: b's were in the groups replaced

  // The view taken before still holds b's groups 1 and 2 as they were.
  StateWriter old;
  ASSERT_TRUE(before->WriteTo(old).ok());
  Fixture c(all, milliseconds(0), 16);
  const std::string old_blob = old.Finish();
  StateReader r(old_blob);
  ASSERT_TRUE(c.backend->Restore(r).ok());
  ValueState vc = *c.backend->GetValueState("v");
  for (int k = 0; k < 40; ++k) {
    key(*c.backend, 1 + k % 2, 1000 + k);
    EXPECT_EQ(GetValue(vc), "b" + std::to_string(k));
  }

  EXPECT_TRUE(b.backend->SetCurrentKeyInGroup("k", 16).IsInvalidArgument());
  EXPECT_TRUE(b.backend->DropKeyGroup(16).IsInvalidArgument());
  StateReader again(from_a);
  EXPECT_TRUE(b.backend->RestoreKeyGroup(again, 16).IsInvalidArgument());
}

TEST_P(KeyedState, CorruptSnapshotIsCorruption) {
  Fixture a;
  ValueState v = *a.backend->GetValueState("v");
  a.Key(1);
  ASSERT_TRUE(v.Update("x").ok());
  ASSERT_TRUE(a.backend->RegisterTimer(TimeDomain::kEventTime, 1).ok());
  std::string blob = SnapshotOf(*a.backend);
  for (size_t cut : {size_t{4}, size_t{8}, blob.size() / 2, blob.size() - 12}) {
    Fixture b;
    Status st = RestoreFrom(*b.backend, blob.substr(0, cut));
    EXPECT_TRUE(st.IsCorruption()) << cut << ": " << st.ToString();
  }
  std::string bad_version = blob;
  bad_version[4] = 7;  // after the test's own u32 head
  Fixture b;
  Status st = RestoreFrom(*b.backend, bad_version);
  EXPECT_TRUE(st.IsCorruption());
  EXPECT_NE(st.message().find("format version 7"), std::string::npos);
}

TEST_P(KeyedState, TtlExpiresStateAfterLastWriteAndNeverReturnsIt) {
  Fixture f(KeyGroupRange{0, 128}, milliseconds(1000));
  ValueState v = *f.backend->GetValueState("v", /*ttl=*/true);
  ValueState window = *f.backend->GetValueState("window");  // window state: no TTL
  ListState l = *f.backend->GetListState("l", true);
  MapState m = *f.backend->GetMapState("m", true);
  ReducingState r = *f.backend->GetReducingState("sum", Sum, true);
  f.Key(1);
  ASSERT_TRUE(v.Update("a").ok());
  ASSERT_TRUE(window.Update("w").ok());
  ASSERT_TRUE(l.Add("old").ok());
  ASSERT_TRUE(m.Put("old", "1").ok());
  ASSERT_TRUE(m.Put("touched", "1").ok());
  ASSERT_TRUE(r.Add("5").ok());
  f.clock.Advance(milliseconds(600));
  // Reads do not extend the TTL, writes do (per element / entry).
  EXPECT_EQ(GetValue(v), "a");
  ASSERT_TRUE(l.Add("new").ok());
  ASSERT_TRUE(m.Put("touched", "2").ok());
  ASSERT_TRUE(r.Add("1").ok());
  f.clock.Advance(milliseconds(400));  // 1000 ms after the first writes: expired
  EXPECT_EQ(GetValue(v), "<none>");
  EXPECT_EQ(GetValue(window), "w");
  EXPECT_EQ(GetList(l), (std::vector<std::string>{"new"}));
  std::string out;
  EXPECT_FALSE(*m.Get("old", &out));
  EXPECT_TRUE(*m.Get("touched", &out));
  EXPECT_EQ(out, "2");
  EXPECT_TRUE(*r.Get(&out));
  EXPECT_EQ(out, "6");
  // Adding to an expired reducing value starts afresh.
  f.clock.Advance(milliseconds(1000));
  ASSERT_TRUE(r.Add("3").ok());
  EXPECT_TRUE(*r.Get(&out));
  EXPECT_EQ(out, "3");
  EXPECT_TRUE(GetList(l).empty());
}

TEST_P(KeyedState, TtlLeavesExpiredStateOutOfSnapshotsAndKeepsWriteTimesAcrossRestore) {
  Fixture a(KeyGroupRange{0, 128}, milliseconds(1000));
  ValueState v = *a.backend->GetValueState("v", true);
  ValueState window = *a.backend->GetValueState("window");
  for (int64_t k = 0; k < 10; ++k) {
    a.Key(k);
    ASSERT_TRUE(v.Update("early").ok());
    ASSERT_TRUE(window.Update("w").ok());
  }
  a.clock.Advance(milliseconds(500));
  a.Key(100);
  ASSERT_TRUE(v.Update("late").ok());
  a.clock.Advance(milliseconds(600));  // the ten early ones expired, never read
  EXPECT_EQ(a.backend->num_entries(), 21u);
  const std::string blob = SnapshotOf(*a.backend);
  // Left out of the snapshot only (Flink's cleanupFullSnapshot): the heap cleans memory when a
  // value is read, rocksdb when it compacts.
  EXPECT_EQ(a.backend->num_entries(), 21u);
  if (GetParam() == "rocksdb") {
    ASSERT_TRUE(CompactRocksDbKeyedState(*a.backend).ok());
    EXPECT_EQ(a.backend->num_entries(), 11u);
  }

  Fixture b(KeyGroupRange{0, 128}, milliseconds(1000));
  b.clock.Set(a.clock.NowMillis());
  ValueState v2 = *b.backend->GetValueState("v", true);
  ASSERT_TRUE(RestoreFrom(*b.backend, blob).ok());
  EXPECT_EQ(b.backend->num_entries(), 11u);
  b.Key(100);
  EXPECT_EQ(GetValue(v2), "late");
  b.clock.Advance(milliseconds(400));  // 1000 ms after its write, counted before the restore
  EXPECT_EQ(GetValue(v2), "<none>");
}

// Every kind of state (TTL-stamped or not) in two namespaces, and timers of both domains, for
// keys 0..39.
void FillEveryKind(Fixture& f) {
  ValueState v = *f.backend->GetValueState("v", /*ttl=*/true);
  ListState l = *f.backend->GetListState("l");
  MapState m = *f.backend->GetMapState("m", true);
  ReducingState r = *f.backend->GetReducingState("sum", Sum);
  AggregatingState g = *f.backend->GetAggregatingState("avg", Average(), true);
  for (int64_t k = 0; k < 40; ++k) {
    f.Key(k);
    for (const char* ns : {"", "w"}) {
      f.backend->SetCurrentNamespace(ns);
      const std::string n = std::to_string(k) + ns;
      ASSERT_TRUE(v.Update("v" + n).ok());
      ASSERT_TRUE(l.Update({"a" + n, std::string("\0b", 2)}).ok());
      ASSERT_TRUE(m.Put("k" + n, "m" + n).ok());
      ASSERT_TRUE(m.Put(std::string("\0", 1), "zero").ok());
      ASSERT_TRUE(r.Add(std::to_string(k)).ok());
      ASSERT_TRUE(g.Add(std::to_string(2 * k)).ok());
      ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 100 - k).ok());
      ASSERT_TRUE(f.backend->RegisterTimer(TimeDomain::kProcessingTime, 7'000'000'000 + k).ok());
    }
  }
}

// Everything FillEveryKind wrote, read back through the API, then every timer in firing order.
std::vector<std::string> DumpEveryKind(Fixture& f) {
  ValueState v = *f.backend->GetValueState("v", true);
  ListState l = *f.backend->GetListState("l");
  MapState m = *f.backend->GetMapState("m", true);
  ReducingState r = *f.backend->GetReducingState("sum", Sum);
  AggregatingState g = *f.backend->GetAggregatingState("avg", Average(), true);
  std::vector<std::string> out;
  for (int64_t k = 0; k < 40; ++k) {
    f.Key(k);
    for (const char* ns : {"", "w"}) {
      f.backend->SetCurrentNamespace(ns);
      out.push_back(GetValue(v));
      for (const std::string& e : GetList(l)) out.push_back(e);
      std::vector<std::pair<std::string, std::string>> entries;
      EXPECT_TRUE(m.Entries(&entries).ok());
      for (const auto& [uk, value] : entries) out.push_back(uk + "=" + value);
      std::string sum, avg;
      EXPECT_TRUE(*r.Get(&sum));
      EXPECT_TRUE(*g.Get(&avg));
      out.push_back(sum + "/" + avg);
    }
  }
  auto record = [&](const Timer& t) {
    out.push_back(std::to_string(t.timestamp) + ":" + t.key + "/" + t.ns);
    return Status::OK();
  };
  EXPECT_TRUE(f.backend->AdvanceWatermark(Watermark(INT64_MAX), record).ok());
  f.clock.Set(INT64_MAX / 2000);
  EXPECT_TRUE(f.backend->AdvanceProcessingTime(record).ok());
  return out;
}

TEST(KeyedStateBackends, CanonicalSnapshotsRestoreOnTheOtherBackend) {
  // A savepoint (the canonical layout) taken on one backend restores on the other, both ways.
  for (auto [from, to] : {std::pair{"hashmap", "rocksdb"}, std::pair{"rocksdb", "hashmap"}}) {
    SCOPED_TRACE(std::string(from) + " -> " + to);
    Fixture a(KeyGroupRange{0, 128}, milliseconds(60'000), 128, from);
    FillEveryKind(a);
    const std::string blob = SnapshotOf(*a.backend);
    Fixture b(KeyGroupRange{0, 128}, milliseconds(60'000), 128, to);
    ASSERT_TRUE(RestoreFrom(*b.backend, blob).ok());
    EXPECT_EQ(b.backend->num_entries(), a.backend->num_entries());
    const std::vector<std::string> expected = DumpEveryKind(a);
    EXPECT_EQ(expected.size(), 80u * 6 + 160);  // 6 per scope, 2 timers per scope
    EXPECT_EQ(DumpEveryKind(b), expected);
  }
}

using testing::DirSharedStateStore;

KeyedStateOptions Incremental(KeyGroupRange range, SharedStateStore* store) {
  KeyedStateOptions o = Options(range, milliseconds(0), 128, "rocksdb");
  o.incremental = true;
  o.shared_state = store;
  return o;
}

// An incremental checkpoint of `backend`: its blob, the shared files it lists into *files.
std::string CheckpointOf(KeyedStateBackend& backend, std::vector<SharedStateFile>* files) {
  auto view = backend.TakeSnapshot();
  EXPECT_TRUE(view.ok()) << view.status().ToString();
  StateWriter w;
  w.PutU32(99);
  files->clear();
  Status st = (*view)->WriteTo(w, files);
  EXPECT_TRUE(st.ok()) << st.ToString();
  w.PutString("tail");
  return w.Finish();
}

// Keys 0..n-1.
std::vector<int64_t> KeysUpTo(int64_t n) {
  std::vector<int64_t> keys(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) keys[static_cast<size_t>(k)] = k;
  return keys;
}

// Writes "<k>:<version>" padded to ~200 bytes as the value of every key in `keys`.
void WriteKeys(Fixture& f, const std::vector<int64_t>& keys, int version) {
  ValueState v = *f.backend->GetValueState("v");
  for (int64_t k : keys) {
    f.Key(k);
    ASSERT_TRUE(
        v.Update(std::to_string(k) + ":" + std::to_string(version) + std::string(190, 'x')).ok());
  }
}

// The version of every key 0..n-1 in `f` (-1 when absent).
std::vector<int> Versions(Fixture& f, int64_t n) {
  ValueState v = *f.backend->GetValueState("v");
  std::vector<int> out;
  for (int64_t k = 0; k < n; ++k) {
    if (!f.backend->SetCurrentKey(std::to_string(k), HashOf(k)).ok()) continue;
    std::string value = GetValue(v);
    out.push_back(value == "<none>" ? -1 : std::stoi(value.substr(value.find(':') + 1)));
  }
  return out;
}

// Timers under churn fire alike on both backends: 30,000 keys with timers spread over time (so
// consecutive due timers fall in different key groups, and a group holds more timers than
// RocksDB's per-group cache), some deleted, and a handler that registers and deletes timers
// while the watermark advances in steps. The heap backend's order is the reference.
TEST(RocksDbKeyedState, TimersUnderChurnFireAsOnTheHeap) {
  constexpr int64_t kKeys = 30000;  // about 270 timers per key group, over the cache of 128
  auto run = [&](const std::string& backend_name) {
    Fixture f({0, 128}, milliseconds(0), 128, backend_name);
    uint64_t seed = 42;
    auto next = [&seed](uint64_t n) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      return (seed >> 33) % n;
    };
    for (int64_t k = 0; k < kKeys; ++k) {
      f.Key(k);
      f.backend->SetCurrentNamespace("a");
      EXPECT_TRUE(
          f.backend->RegisterTimer(TimeDomain::kEventTime, static_cast<int64_t>(next(100'000)))
              .ok());
      if (k % 7 == 0) {
        f.backend->SetCurrentNamespace("b");
        EXPECT_TRUE(f.backend->RegisterTimer(TimeDomain::kEventTime, 50'000).ok());
      }
    }
    for (int64_t k = 0; k < kKeys; k += 11) {
      f.Key(k);
      f.backend->SetCurrentNamespace("b");
      EXPECT_TRUE(f.backend->DeleteTimer(TimeDomain::kEventTime, 50'000).ok());
    }
    std::vector<std::string> fired;
    auto handler = [&](const Timer& t) -> Status {
      fired.push_back(std::to_string(t.timestamp) + ":" + t.key + "/" + t.ns);
      const int64_t k = std::stoll(t.key);
      if (k % 5 == 0 && t.ns == "a") {  // a later timer of this key, sometimes due at once
        f.backend->SetCurrentNamespace("c");
        FLOE_RETURN_NOT_OK(f.backend->RegisterTimer(
            TimeDomain::kEventTime, t.timestamp + static_cast<int64_t>(next(3000))));
      }
      if (k % 13 == 0) {  // another key's timer goes away
        f.Key((k + 1) % kKeys);
        f.backend->SetCurrentNamespace("a");
        FLOE_RETURN_NOT_OK(f.backend->DeleteTimer(TimeDomain::kEventTime, 99'999));
      }
      return Status::OK();
    };
    for (int64_t w = 0; w <= 110'000; w += 7'919) {
      EXPECT_TRUE(f.backend->AdvanceWatermark(Watermark(w), handler).ok());
    }
    EXPECT_TRUE(f.backend->AdvanceWatermark(Watermark(INT64_MAX), handler).ok());
    EXPECT_EQ(f.backend->NextTimer(TimeDomain::kEventTime), std::nullopt);
    return fired;
  };
  const std::vector<std::string> heap = run("hashmap");
  const std::vector<std::string> rocks = run("rocksdb");
  EXPECT_GT(heap.size(), static_cast<size_t>(kKeys));
  ASSERT_EQ(rocks.size(), heap.size());
  for (size_t i = 0; i < heap.size(); ++i) {
    ASSERT_EQ(rocks[i], heap[i]) << "timer " << i;
  }
}

TEST(RocksDbKeyedState, IncrementalCheckpointsUploadOnlyNewFilesAndRestore) {
  ::floe::testing::TempDir shared;
  DirSharedStateStore store(shared.path());
  Fixture a(Incremental({0, 128}, &store));
  const std::vector<int64_t> all = KeysUpTo(20'000);
  WriteKeys(a, all, 1);
  std::vector<SharedStateFile> first, second;
  CheckpointOf(*a.backend, &first);
  const uint64_t full = store.uploaded_bytes;
  ASSERT_GT(full, 300'000u);  // compressed
  // 1% of the keys change: the next checkpoint uploads only the new SST file(s).
  std::vector<int64_t> changed;
  for (int64_t k = 0; k < 20'000; k += 100) changed.push_back(k);
  WriteKeys(a, changed, 2);
  const std::string blob = CheckpointOf(*a.backend, &second);
  const uint64_t delta = store.uploaded_bytes - full;
  RecordProperty("full_bytes", std::to_string(full));  // in --gtest_output=xml
  RecordProperty("delta_bytes", std::to_string(delta));
  EXPECT_LT(delta * 20, full) << "delta " << delta << " of " << full;  // under 5%
  for (const SharedStateFile& f : first) {
    EXPECT_NE(std::find(second.begin(), second.end(), f), second.end()) << f.name << " not reused";
  }
  // The checkpoint restores in a fresh backend (another process, say) with the new values.
  Fixture b(Incremental({0, 128}, &store));
  Status st = RestoreFrom(*b.backend, blob);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<int> expected(20'000, 1);
  for (int64_t k : changed) expected[static_cast<size_t>(k)] = 2;
  EXPECT_EQ(Versions(b, 20'000), expected);
  // Restored with the same key groups, it adopts the downloaded database (as Flink does): its
  // next checkpoint lists the restored files again and uploads only what changed since.
  std::vector<int64_t> third_change;
  for (int64_t k = 50; k < 20'000; k += 100) third_change.push_back(k);
  WriteKeys(b, third_change, 3);
  const uint64_t before = store.uploaded_bytes;
  std::vector<SharedStateFile> third;
  const std::string blob3 = CheckpointOf(*b.backend, &third);
  EXPECT_LT((store.uploaded_bytes - before) * 20, full);
  for (const SharedStateFile& f : second) {
    EXPECT_NE(std::find(third.begin(), third.end(), f), third.end()) << f.name << " not reused";
  }
  Fixture c(Incremental({0, 128}, &store));
  ASSERT_TRUE(RestoreFrom(*c.backend, blob3).ok());
  for (int64_t k : third_change) expected[static_cast<size_t>(k)] = 3;
  EXPECT_EQ(Versions(c, 20'000), expected);
}

// Writes `view` on another thread (as the executor's asynchronous part does), then restores the
// result into a fresh backend and returns the versions of keys 0..n-1 there.
std::vector<int> WrittenElsewhereAndRestored(std::unique_ptr<KeyedStateSnapshot> view,
                                             SharedStateStore* store, bool incremental, int64_t n,
                                             const std::function<void()>& meanwhile) {
  StateWriter w;
  w.PutU32(99);
  std::vector<SharedStateFile> files;
  Status written;
  std::thread writer([&] { written = view->WriteTo(w, incremental ? &files : nullptr); });
  meanwhile();
  writer.join();
  EXPECT_TRUE(written.ok()) << written.ToString();
  EXPECT_EQ(files.empty(), !incremental);
  w.PutString("tail");
  Fixture b(Incremental({0, 128}, store));
  EXPECT_TRUE(RestoreFrom(*b.backend, w.Finish()).ok());
  EXPECT_EQ(b.backend->NextTimer(TimeDomain::kEventTime), 10);
  return Versions(b, n);
}

TEST(RocksDbKeyedState, SnapshotSeesTheStateAtTakeSnapshotWhileTheBackendKeepsWriting) {
  ::floe::testing::TempDir shared;
  DirSharedStateStore store(shared.path());
  Fixture a(Incremental({0, 128}, &store));
  const std::vector<int64_t> keys = KeysUpTo(2000);
  WriteKeys(a, keys, 1);
  ASSERT_TRUE(a.backend->RegisterTimer(TimeDomain::kEventTime, 10).ok());
  std::vector<int> at_barrier(2000, 1);
  at_barrier.push_back(-1);  // key 2000 is written only later
  // The backend goes on while the snapshot is written on another thread: every key changes, one
  // is deleted, one is new, the timer fires.
  ValueState v = *a.backend->GetValueState("v");
  auto keep_writing = [&] {
    WriteKeys(a, keys, 2);
    WriteKeys(a, {2000}, 2);
    a.Key(1);
    ASSERT_TRUE(v.Clear().ok());
    ASSERT_TRUE(
        a.backend->AdvanceWatermark(Watermark(100), [](const Timer&) { return Status::OK(); })
            .ok());
  };
  for (bool incremental : {false, true}) {
    SCOPED_TRACE(incremental ? "incremental" : "canonical");
    auto view = a.backend->TakeSnapshot();
    ASSERT_TRUE(view.ok());
    EXPECT_EQ(
        WrittenElsewhereAndRestored(std::move(*view), &store, incremental, 2001, keep_writing),
        at_barrier);
    WriteKeys(a, keys, 1);  // back to the state of the barrier for the next round
    ASSERT_TRUE(a.backend->RegisterTimer(TimeDomain::kEventTime, 10).ok());
    a.Key(2000);
    ASSERT_TRUE(v.Clear().ok());
  }
  // A snapshot stays valid after its backend is destroyed.
  auto view = a.backend->TakeSnapshot();
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(
      WrittenElsewhereAndRestored(std::move(*view), &store, true, 2001, [&] { a.backend.reset(); }),
      at_barrier);
}

// The barrier only switches memtables; the snapshot links the SST files later. When writes
// made after the barrier reach SST files first (here a flush and compaction), linking would
// capture them: the snapshot writes the barrier's state in full instead, with a warning, and the
// next checkpoint is incremental again.
TEST(RocksDbKeyedState, AnIncrementalSnapshotOvertakenByLaterFilesWritesTheBarriersStateInFull) {
  ::floe::testing::TempDir shared;
  DirSharedStateStore store(shared.path());
  Fixture a(Incremental({0, 128}, &store));
  const std::vector<int64_t> keys = KeysUpTo(2000);
  WriteKeys(a, keys, 1);
  auto view = a.backend->TakeSnapshot();
  ASSERT_TRUE(view.ok());
  WriteKeys(a, keys, 2);
  ASSERT_TRUE(CompactRocksDbKeyedState(*a.backend).ok());
  std::vector<std::string> warnings;
  SetLogSinkForTesting([&](LogLevel level, std::string_view line) {
    if (level == LogLevel::kWarn) warnings.emplace_back(line);
  });
  StateWriter w;
  w.PutU32(99);  // RestoreFrom's frame, as CheckpointOf writes it
  std::vector<SharedStateFile> files;
  Status st = (*view)->WriteTo(w, &files);
  SetLogSinkForTesting({});
  w.PutString("tail");
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(files.empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("writing the full state"), std::string::npos) << warnings[0];
  Fixture b(Incremental({0, 128}, &store));
  ASSERT_TRUE(RestoreFrom(*b.backend, w.Finish()).ok());
  EXPECT_EQ(Versions(b, 2000), std::vector<int>(2000, 1));
  std::vector<SharedStateFile> next;
  const std::string blob = CheckpointOf(*a.backend, &next);
  EXPECT_FALSE(next.empty());
  Fixture c(Incremental({0, 128}, &store));
  ASSERT_TRUE(RestoreFrom(*c.backend, blob).ok());
  EXPECT_EQ(Versions(c, 2000), std::vector<int>(2000, 2));
}

// Every incremental barrier makes the memtables immutable. With flushes held back (paused here;
// under load, flushes that share a core with the task), the fourth waiting memtable of a family
// stops RocksDB's writes. A barrier's own switch of the state family causes that stop here, with
// a timer still in the timers family's memtable: the barrier waits until the flushes run, then
// takes its snapshot, and the log says how long it waited and why. A family with an empty
// memtable never makes a barrier wait. (With RocksDB's default of two memtables, the second
// barrier would stop writes.)
TEST(RocksDbKeyedState, ABarrierWaitsWhileRocksDbStopsWritesAndSaysWhy) {
  ::floe::testing::TempDir shared;
  DirSharedStateStore store(shared.path());
  Fixture a(Incremental({0, 128}, &store));
  ASSERT_TRUE(PauseRocksDbBackgroundWork(*a.backend, true).ok());
  std::vector<std::string> warnings;
  SetLogSinkForTesting([&](LogLevel level, std::string_view line) {
    if (level == LogLevel::kWarn) warnings.emplace_back(line);
  });
  for (int64_t k = 0; k < 3; ++k) {
    WriteKeys(a, {k}, 1);
    auto taken = a.backend->TakeSnapshot();  // one more memtable waits for its flush
    ASSERT_TRUE(taken.ok()) << k << ": " << taken.status().ToString();
  }
  WriteKeys(a, {3}, 1);
  ASSERT_TRUE(a.backend->RegisterTimer(TimeDomain::kEventTime, 10).ok());
  // A barrier that takes over 100 ms is logged too (a loaded machine): only a stop counts here.
  auto stops = [&] {
    return std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
      return w.find("while RocksDB stopped writes") != std::string::npos;
    });
  };
  EXPECT_EQ(stops(), 0);
  std::thread resume([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_TRUE(PauseRocksDbBackgroundWork(*a.backend, false).ok());
  });
  auto view = a.backend->TakeSnapshot();
  resume.join();
  SetLogSinkForTesting({});
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_EQ(stops(), 1);
  StateWriter w;
  w.PutU32(99);
  std::vector<SharedStateFile> files;
  ASSERT_TRUE((*view)->WriteTo(w, &files).ok());
  w.PutString("tail");
  Fixture b(Incremental({0, 128}, &store));
  ASSERT_TRUE(RestoreFrom(*b.backend, w.Finish()).ok());
  EXPECT_EQ(Versions(b, 5), std::vector<int>({1, 1, 1, 1, -1}));
  std::vector<Timer> fired;
  ASSERT_TRUE(b.backend
                  ->AdvanceWatermark(Watermark(100),
                                     [&](const Timer& t) {
                                       fired.push_back(t);
                                       return Status::OK();
                                     })
                  .ok());
  EXPECT_EQ(fired.size(), 1u);

  // The same stop with the timers family's memtable empty: the barrier has nothing to wait for.
  ASSERT_TRUE(CompactRocksDbKeyedState(*a.backend).ok());  // every memtable flushed
  ASSERT_TRUE(PauseRocksDbBackgroundWork(*a.backend, true).ok());
  warnings.clear();
  SetLogSinkForTesting([&](LogLevel level, std::string_view line) {
    if (level == LogLevel::kWarn) warnings.emplace_back(line);
  });
  for (int64_t k = 4; k < 8; ++k) {
    WriteKeys(a, {k}, 1);
    auto taken = a.backend->TakeSnapshot();
    ASSERT_TRUE(taken.ok()) << k << ": " << taken.status().ToString();
  }
  SetLogSinkForTesting({});
  EXPECT_EQ(stops(), 0);
  ASSERT_TRUE(PauseRocksDbBackgroundWork(*a.backend, false).ok());
}

TEST(RocksDbKeyedState, MissingSharedFileIsNotFoundNamingIt) {
  ::floe::testing::TempDir shared;
  DirSharedStateStore store(shared.path());
  Fixture a(Incremental({0, 128}, &store));
  WriteKeys(a, {1, 2, 3}, 1);
  std::vector<SharedStateFile> files;
  const std::string blob = CheckpointOf(*a.backend, &files);
  ASSERT_FALSE(files.empty());
  std::filesystem::remove(std::filesystem::path(shared.path()) / files[0].name);
  Fixture b(Incremental({0, 128}, &store));
  Status st = RestoreFrom(*b.backend, blob);
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find("needs shared file '" + files[0].name + "'"), std::string::npos)
      << st.message();
}

TEST(RocksDbKeyedState, RescaledSubtasksCopyTheirKeyGroupsOutOfIncrementalSnapshots) {
  ::floe::testing::TempDir shared;
  DirSharedStateStore store(shared.path());
  std::vector<std::string> blobs;
  std::vector<int64_t> keys(600);
  for (int64_t k = 0; k < 600; ++k) keys[static_cast<size_t>(k)] = k;
  for (uint32_t s = 0; s < 2; ++s) {
    Fixture old(Incremental(KeyGroupRangeForSubtask(s, 128, 2), &store));
    std::vector<int64_t> mine;
    for (int64_t k : keys) {
      if (old.backend->SetCurrentKey(std::to_string(k), HashOf(k)).ok()) mine.push_back(k);
    }
    WriteKeys(old, mine, static_cast<int>(s) + 1);
    for (int64_t k : mine) {
      old.Key(k);
      ASSERT_TRUE(old.backend->RegisterTimer(TimeDomain::kEventTime, 1000 + k).ok());
    }
    std::vector<SharedStateFile> files;
    blobs.push_back(CheckpointOf(*old.backend, &files));
  }
  size_t found = 0, timers = 0;
  for (uint32_t s = 0; s < 3; ++s) {
    Fixture next(Incremental(KeyGroupRangeForSubtask(s, 128, 3), &store));
    for (const std::string& blob : blobs) ASSERT_TRUE(RestoreFrom(*next.backend, blob).ok());
    for (int64_t k : keys) {
      if (!next.backend->SetCurrentKey(std::to_string(k), HashOf(k)).ok()) continue;
      const uint32_t g = next.backend->current_key_group();
      const int expected = KeyGroupRangeForSubtask(0, 128, 2).end > g ? 1 : 2;
      const std::string value = GetValue(*next.backend->GetValueState("v"));
      EXPECT_EQ(value.substr(0, value.find('x')),
                std::to_string(k) + ":" + std::to_string(expected));
      ++found;
    }
    std::vector<int64_t> fired;
    ASSERT_TRUE(next.backend
                    ->AdvanceWatermark(Watermark(INT64_MAX),
                                       [&](const Timer& t) {
                                         fired.push_back(t.timestamp);
                                         if (std::stoll(t.key) + 1000 != t.timestamp) {
                                           return Status::Internal("wrong timer");
                                         }
                                         return Status::OK();
                                       })
                    .ok());
    EXPECT_TRUE(std::is_sorted(fired.begin(), fired.end()));
    timers += fired.size();
    if (s == 0) {
      EXPECT_EQ(RestoreFrom(*next.backend, blobs[0]).code(), StatusCode::kCorruption);
    }
  }
  EXPECT_EQ(found, 600u);
  EXPECT_EQ(timers, 600u);
}

TEST(RocksDbKeyedState, CompactionRemovesExpiredStateButNotWhatAPendingSnapshotNeeds) {
  Fixture a(KeyGroupRange{0, 128}, milliseconds(1000), 128, "rocksdb");
  ValueState v = *a.backend->GetValueState("v", /*ttl=*/true);
  ListState l = *a.backend->GetListState("l", true);
  const int64_t start = a.clock.NowMillis();
  a.Key(1);
  ASSERT_TRUE(v.Update("a").ok());
  ASSERT_TRUE(l.Add("old").ok());
  a.clock.Advance(milliseconds(600));
  ASSERT_TRUE(l.Add("new").ok());
  auto view = a.backend->TakeSnapshot();
  ASSERT_TRUE(view.ok());
  a.clock.Advance(milliseconds(500));  // "a" and "old" expire; the snapshot still needs them
  ASSERT_TRUE(CompactRocksDbKeyedState(*a.backend).ok());
  EXPECT_EQ(a.backend->num_entries(), 2u);
  StateWriter w;
  w.PutU32(99);
  ASSERT_TRUE((*view)->WriteTo(w).ok());
  w.PutString("tail");
  view->reset();
  Fixture b(KeyGroupRange{0, 128}, milliseconds(1000), 128, "hashmap");
  b.clock.Set(start + 600);
  ValueState v2 = *b.backend->GetValueState("v", true);
  ListState l2 = *b.backend->GetListState("l", true);
  ASSERT_TRUE(RestoreFrom(*b.backend, w.Finish()).ok());
  b.Key(1);
  EXPECT_EQ(GetValue(v2), "a");
  EXPECT_EQ(GetList(l2), (std::vector<std::string>{"old", "new"}));
  // Written and released: the next compaction removes the value and the expired element (seen
  // by turning the clock back, when reads would show them if they were still stored).
  ASSERT_TRUE(CompactRocksDbKeyedState(*a.backend).ok());
  EXPECT_EQ(a.backend->num_entries(), 1u);
  a.clock.Set(start + 600);
  a.Key(1);
  EXPECT_EQ(GetValue(v), "<none>");
  EXPECT_EQ(GetList(l), (std::vector<std::string>{"new"}));
  EXPECT_TRUE(CompactRocksDbKeyedState(*b.backend).IsInvalidArgument());
}

TEST(RocksDbKeyedState, WorkingDirectoriesAreRemovedWithTheBackendAndAfterAKill) {
  ::floe::testing::TempDir local;
  // A directory a killed process left behind (its pid no longer runs), and one of a live one.
  pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);
  const std::filesystem::path base(local.path());
  const std::filesystem::path dead = base / ("floe-" + std::to_string(child) + "-agg_0-1234");
  const std::filesystem::path live = base / ("floe-" + std::to_string(getppid()) + "-agg_1-5678");
  // Not a name the backend makes: never touched, whatever the pid.
  const std::filesystem::path other = base / (std::to_string(child) + "-backup");
  std::filesystem::create_directories(other);
  // An earlier process with this one's pid (a restarted container) left one too.
  const std::filesystem::path same_pid =
      base / ("floe-" + std::to_string(getpid()) + "-agg_0-9999");
  std::filesystem::create_directories(same_pid / "db");
  std::filesystem::create_directories(dead / "db");
  std::filesystem::create_directories(live / "db");
  std::ofstream(dead / "db" / "000001.sst") << "left over";
  KeyedStateOptions o = Options({0, 128}, milliseconds(0), 128, "rocksdb");
  o.rocksdb_local_dir = local.path();
  o.task_name = "agg[0]";
  {
    Fixture f(o);
    WriteKeys(f, {1, 2}, 1);
    EXPECT_FALSE(std::filesystem::exists(dead));
    EXPECT_FALSE(std::filesystem::exists(same_pid));
    Fixture second(o);  // a second backend of this process leaves the first's directory alone
    EXPECT_EQ(GetValue(*f.backend->GetValueState("v")), "2:1" + std::string(190, 'x'));
    EXPECT_TRUE(std::filesystem::exists(live));
    std::vector<std::string> mine;
    for (const auto& e : std::filesystem::directory_iterator(base)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("floe-" + std::to_string(getpid()) + "-agg_0_-", 0) == 0) {
        mine.push_back(name);
      }
    }
    EXPECT_EQ(mine.size(), 2u);
  }
  // Destroyed: its directory is gone; the live process's stays.
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(base)) {
    left.push_back(e.path().filename().string());
  }
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{other.filename().string(), live.filename().string()}));
}

TEST(RocksDbKeyedState, OptionsFloeDoesNotHonourAreRefused) {
  TaskInfo task;
  auto read = [&](std::string key, std::string value) {
    return KeyedStateOptions::FromOptions({{"state.backend.type", "rocksdb"}, {key, value}}, task);
  };
  auto o = read("state.backend.rocksdb.memory.fixed-per-slot", "128 mb");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->rocksdb_memory_bytes, uint64_t{128} << 20);
  EXPECT_EQ(read("state.backend.rocksdb.localdir", "/data/rocks")->rocksdb_local_dir,
            "/data/rocks");
  EXPECT_EQ(
      read("state.backend.rocksdb.memory.write-buffer-ratio", "0.25")->rocksdb_write_buffer_ratio,
      0.25);
  EXPECT_TRUE(read("state.backend.rocksdb.timer-service.factory", "ROCKSDB").ok());
  EXPECT_TRUE(read("state.backend.rocksdb.memory.managed", "true").ok());

  Status st = read("state.backend.rocksdb.compaction.style", "FIFO").status();
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message().rfind(
                "'state.backend.rocksdb.compaction.style' is not a rocksdb option floe honours", 0),
            0u)
      << st.message();
  st = read("state.backend.rocksdb.memory.fixed-per-slot", "1 mb").status();
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("is 1048576 bytes; floe needs at least 8 mb"), std::string::npos)
      << st.message();
  EXPECT_TRUE(
      read("state.backend.rocksdb.memory.fixed-per-slot", "lots").status().IsInvalidArgument());
  EXPECT_TRUE(read("state.backend.rocksdb.memory.managed", "false").status().IsInvalidArgument());
  EXPECT_TRUE(read("state.backend.rocksdb.memory.partitioned-index-filters", "true").ok());
  EXPECT_TRUE(read("state.backend.rocksdb.memory.partitioned-index-filters", "false")
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(read("state.backend.rocksdb.localdir", "/a,/b").status().IsInvalidArgument());
  EXPECT_TRUE(read("state.backend.rocksdb.memory.high-prio-pool-ratio", "1.5")
                  .status()
                  .IsInvalidArgument());
  EXPECT_EQ(read("state.backend.rocksdb.timer-service.factory", "heap").status().code(),
            StatusCode::kNotImplemented);
  EXPECT_TRUE(
      read("state.backend.rocksdb.timer-service.factory", "disk").status().IsInvalidArgument());
}

TEST(KeyedStateOptions, ReadsFlinkOptionNames) {
  TaskInfo task;
  task.max_parallelism = 256;
  task.key_groups = KeyGroupRange{128, 256};
  auto o = KeyedStateOptions::FromOptions(
      {{"state.backend.type", "hashmap"}, {"table.exec.state.ttl", "1 h"}}, task);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->ttl, milliseconds(3'600'000));
  EXPECT_EQ(o->max_parallelism, 256u);
  EXPECT_EQ(o->key_groups, (KeyGroupRange{128, 256}));
  EXPECT_TRUE(KeyedStateBackend::Make(*o).ok());

  auto defaults = KeyedStateOptions::FromOptions({}, task);
  EXPECT_EQ(defaults->ttl, milliseconds(0));
  EXPECT_EQ(defaults->backend, "hashmap");
  EXPECT_TRUE(KeyedStateOptions::FromOptions({{"table.exec.state.ttl", "soon"}}, task)
                  .status()
                  .IsInvalidArgument());

  auto rocks = KeyedStateOptions::FromOptions({{"state.backend.type", "rocksdb"}}, task);
  ASSERT_TRUE(rocks.ok()) << rocks.status().ToString();
  EXPECT_EQ(rocks->backend, "rocksdb");
  // Unknown backends are refused when read (the planner reads them before a worker starts)
  // and when made.
  EXPECT_EQ(
      KeyedStateOptions::FromOptions({{"state.backend.type", "heap"}}, task).status().message(),
      "'state.backend.type' = 'heap': expected 'hashmap' or 'rocksdb'");
  // Flink's deprecated key, read when the new one is unset, is not ignored either.
  EXPECT_EQ(KeyedStateOptions::FromOptions({{"state.backend", "rocksdb"}}, task)->backend,
            "rocksdb");
  EXPECT_EQ(KeyedStateOptions::FromOptions(
                {{"state.backend.type", "hashmap"}, {"state.backend", "rocksdb"}}, task)
                ->backend,
            "hashmap");
  KeyedStateOptions by_hand;
  by_hand.backend = "heap";
  EXPECT_TRUE(KeyedStateBackend::Make(by_hand).status().IsInvalidArgument());
  KeyedStateOptions bad_range;
  bad_range.key_groups = KeyGroupRange{0, 200};
  EXPECT_TRUE(KeyedStateBackend::Make(bad_range).status().IsInvalidArgument());
}

TEST(MaxParallelism, FollowsFlinksDefaultRule) {
  // min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768)
  EXPECT_EQ(DefaultMaxParallelism(1), 128u);
  EXPECT_EQ(DefaultMaxParallelism(85), 128u);   // 85 + 42 = 127
  EXPECT_EQ(DefaultMaxParallelism(86), 256u);   // 86 + 43 = 129
  EXPECT_EQ(DefaultMaxParallelism(100), 256u);  // 150
  EXPECT_EQ(DefaultMaxParallelism(171), 256u);  // 171 + 85 = 256
  EXPECT_EQ(DefaultMaxParallelism(172), 512u);  // 258
  EXPECT_EQ(DefaultMaxParallelism(1000), 2048u);
  EXPECT_EQ(DefaultMaxParallelism(21845), 32768u);  // 32767
  EXPECT_EQ(DefaultMaxParallelism(30000), 32768u);  // capped
  EXPECT_EQ(DefaultMaxParallelism(32768), 32768u);
}

// The asynchronous part writes the state as of TakeSnapshot, whatever the subtask writes
// meanwhile: values, lists, maps and timers, in the groups it touches and the ones it does not.
TEST_P(KeyedState, ASnapshotIsTheStateAtTheBarrierWhateverIsWrittenAfter) {
  Fixture a(KeyGroupRange{0, 128}, milliseconds(0), 128, GetParam());
  ValueState v = *a.backend->GetValueState("v");
  ListState l = *a.backend->GetListState("l");
  MapState m = *a.backend->GetMapState("m");
  for (int64_t k = 0; k < 300; ++k) {
    a.Key(k);
    ASSERT_TRUE(v.Update("before").ok());
    ASSERT_TRUE(l.Add("before").ok());
    ASSERT_TRUE(m.Put("u", "before").ok());
    ASSERT_TRUE(a.backend->RegisterTimer(TimeDomain::kEventTime, 1000 + k).ok());
  }
  const std::string expected = SnapshotOf(*a.backend);
  auto view = a.backend->TakeSnapshot();
  ASSERT_TRUE(view.ok());
  for (int64_t k = 0; k < 600; k += 2) {  // half the keys change, new keys come
    a.Key(k);
    ASSERT_TRUE(v.Update("after").ok());
    ASSERT_TRUE(l.Add("after").ok());
    ASSERT_TRUE(m.Remove("u").ok());
    ASSERT_TRUE(a.backend->RegisterTimer(TimeDomain::kEventTime, 5000 + k).ok());
  }
  ASSERT_TRUE(
      a.backend->AdvanceWatermark(Watermark(1100), [](const Timer&) { return Status::OK(); }).ok());
  StateWriter w;
  w.PutU32(99);
  ASSERT_TRUE((*view)->WriteTo(w).ok());
  w.PutString("tail");
  EXPECT_EQ(w.Finish(), expected);
  EXPECT_NE(SnapshotOf(*a.backend), expected);  // the backend itself moved on
}

}  // namespace
}  // namespace floe::runtime
