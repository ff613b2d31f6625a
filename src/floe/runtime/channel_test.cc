#include "floe/runtime/channel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "floe/runtime/test_util.h"

namespace floe::runtime {
namespace {

using testing::Event;
using testing::Int64Batch;

TEST(InputGate, TryPushFailsWhenChannelIsFull) {
  InputGate gate(2, 3);
  for (int i = 0; i < 3; ++i) {
    StreamElement e = Int64Batch({i});
    ASSERT_TRUE(*gate.TryPush(0, e));
  }
  StreamElement e = Int64Batch({99});
  EXPECT_FALSE(*gate.TryPush(0, e));
  EXPECT_TRUE(std::holds_alternative<RecordBatch>(e));  // untouched
  EXPECT_EQ(gate.queued(0), 3u);
  // The other channel has its own capacity.
  EXPECT_TRUE(*gate.TryPush(1, e));
}

// A deferred wake-up: records and watermarks pushed with defer_wakeup do not wake a waiting
// consumer until the producer calls WakeConsumer, the channel is half full, or an element of
// another kind (a barrier) comes.
TEST(InputGate, DeferredWakeupsWaitForTheProducerOrHalfAChannel) {
  auto consume = [](InputGate& gate, std::atomic<bool>* got) {
    std::thread t([&gate, got] {
      auto next = gate.Pop({});
      got->store(next.ok() && next->kind == InputGate::Next::Kind::kElement);
    });
    while (!gate.consumer_waiting()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return t;
  };
  auto returns_within = [](std::atomic<bool>& got, std::chrono::milliseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (!got.load() && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return got.load();
  };
  {
    InputGate gate(1, 8);
    std::atomic<bool> got{false};
    std::thread consumer = consume(gate, &got);
    ASSERT_TRUE(gate.Push(0, Int64Batch({1}), {}, /*defer_wakeup=*/true).ok());
    ASSERT_TRUE(gate.Push(0, Watermark(5), {}, /*defer_wakeup=*/true).ok());
    EXPECT_FALSE(returns_within(got, std::chrono::milliseconds(200)));  // still asleep
    gate.WakeConsumer();
    EXPECT_TRUE(returns_within(got, std::chrono::seconds(10)));
    consumer.join();
  }
  {
    InputGate gate(1, 8);
    std::atomic<bool> got{false};
    std::thread consumer = consume(gate, &got);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(gate.Push(0, Int64Batch({i}), {}, true).ok());
    EXPECT_FALSE(returns_within(got, std::chrono::milliseconds(200)));
    ASSERT_TRUE(gate.Push(0, Int64Batch({3}), {}, true).ok());  // half of 8
    EXPECT_TRUE(returns_within(got, std::chrono::seconds(10)));
    consumer.join();
  }
  {
    InputGate gate(1, 8);
    std::atomic<bool> got{false};
    std::thread consumer = consume(gate, &got);
    ASSERT_TRUE(gate.Push(0, Int64Batch({1}), {}, true).ok());
    ASSERT_TRUE(gate.Push(0, Barrier{CheckpointId(1), false}, {}, true).ok());
    EXPECT_TRUE(returns_within(got, std::chrono::seconds(10)));
    consumer.join();
  }
}

TEST(InputGate, BlockedPushResumesAfterPop) {
  InputGate gate(1, 1);
  ASSERT_TRUE(gate.Push(0, Int64Batch({1})).ok());
  Event blocked;
  Status pushed;
  std::thread producer([&] { pushed = gate.Push(0, Int64Batch({2}), [&] { blocked.Set(); }); });
  ASSERT_TRUE(blocked.Wait());  // the producer found the channel full
  auto first = gate.Pop({});
  ASSERT_TRUE(first.ok());
  producer.join();  // returns only because Pop made room
  EXPECT_TRUE(pushed.ok());
  auto second = gate.Pop({});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(testing::Int64Values(std::get<RecordBatch>(second->element)), std::vector<int64_t>{2});
}

TEST(InputGate, CancelUnblocksProducerAndConsumer) {
  InputGate gate(1, 1);
  ASSERT_TRUE(gate.Push(0, Int64Batch({1})).ok());
  Event blocked;
  Status pushed;
  std::thread producer([&] { pushed = gate.Push(0, Int64Batch({2}), [&] { blocked.Set(); }); });
  ASSERT_TRUE(blocked.Wait());
  gate.Cancel();
  producer.join();
  EXPECT_EQ(pushed.code(), StatusCode::kUnavailable);
  EXPECT_FALSE(gate.Pop({}).ok());

  InputGate empty(1, 1);
  Result<InputGate::Next> popped = Status::Internal("unset");
  std::thread consumer([&] { popped = empty.Pop({}); });
  empty.Cancel();
  consumer.join();
  EXPECT_EQ(popped.status().code(), StatusCode::kUnavailable);
}

TEST(InputGate, CommandsComeBeforeQueuedData) {
  InputGate gate(1, 4);
  ASSERT_TRUE(gate.Push(0, Int64Batch({1})).ok());
  gate.PostCommand(TaskCommand{TaskCommand::Kind::kCheckpointComplete, CheckpointId(3), false});
  auto n = gate.Pop({});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->kind, InputGate::Next::Kind::kCommand);
  EXPECT_EQ(n->command.id, CheckpointId(3));
  n = gate.Pop({});
  EXPECT_EQ(n->kind, InputGate::Next::Kind::kElement);
}

// Counting slots of rows: small pieces and watermarks take their share, a batch of slot_rows
// rows or more a whole slot, and the element cap bounds a channel of tiny pieces; popping frees
// what the element took.
TEST(InputGate, WithSlotRowsTheCapacityCountsRowsNotElements) {
  auto rows = [](size_t n) {
    std::vector<int64_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(i);
    return Int64Batch(v);
  };
  InputGate gate(1, 2, /*slot_rows=*/100);
  for (int i = 0; i < 6; ++i) {  // 6 x 20 rows = 1.2 slots, and 6 watermarks 0.375
    StreamElement piece = rows(20);
    ASSERT_TRUE(*gate.TryPush(0, piece));
    StreamElement w = Watermark(i);
    ASSERT_TRUE(*gate.TryPush(0, w));
  }
  StreamElement big = rows(500);       // one slot, however many rows
  ASSERT_TRUE(*gate.TryPush(0, big));  // 2.575 slots now: full
  StreamElement more = rows(1);
  EXPECT_FALSE(*gate.TryPush(0, more));
  EXPECT_EQ(gate.queued(0), 13u);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(gate.Pop({}).ok());  // 20 rows, a watermark, 20 rows
  EXPECT_FALSE(*gate.TryPush(0, more));                        // 2.1125 slots
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(gate.Pop({}).ok());  // a watermark, 20 rows
  EXPECT_TRUE(*gate.TryPush(0, more));                         // 1.85 slots

  InputGate tiny(1, 1, /*slot_rows=*/1000);  // at most 16 elements of one row each
  for (int i = 0; i < 16; ++i) {
    StreamElement one = rows(1);
    ASSERT_TRUE(*tiny.TryPush(0, one)) << i;
  }
  StreamElement one = rows(1);
  EXPECT_FALSE(*tiny.TryPush(0, one));
}

TEST(InputGate, BlockedChannelsAreSkipped) {
  InputGate gate(2, 4);
  ASSERT_TRUE(gate.Push(0, Int64Batch({1})).ok());
  ASSERT_TRUE(gate.Push(1, Int64Batch({2})).ok());
  std::vector<bool> blocked{true, false};
  auto n = gate.Pop(blocked);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->channel, 1u);
  // Only the blocked channel has data now: Pop times out instead of returning it.
  n = gate.Pop(blocked, std::chrono::milliseconds(1));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->kind, InputGate::Next::Kind::kTimeout);
  n = gate.Pop({});
  EXPECT_EQ(n->channel, 0u);
}

TEST(InputGate, PopsChannelsRoundRobin) {
  InputGate gate(2, 8);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(gate.Push(0, Int64Batch({i})).ok());
    ASSERT_TRUE(gate.Push(1, Int64Batch({i})).ok());
  }
  std::vector<size_t> order;
  for (int i = 0; i < 6; ++i) order.push_back(gate.Pop({})->channel);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 0, 1, 0, 1}));
}

}  // namespace
}  // namespace floe::runtime
