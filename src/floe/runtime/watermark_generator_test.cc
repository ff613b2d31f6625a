#include "floe/runtime/watermark_generator.h"

#include <gtest/gtest.h>

namespace floe::runtime {
namespace {

TEST(WatermarkGenerator, IsTheMinimumOverSplitsMinusTheDelayAndOnlyMovesForward) {
  FakeClock clock;
  WatermarkGenerator gen(/*delay=*/10, std::chrono::milliseconds(0), &clock);
  gen.SetSplits({"p0", "p1"});
  EXPECT_FALSE(gen.OnEvent("p0", 100).has_value()) << "p1 has produced nothing yet: it holds back";
  EXPECT_FALSE(gen.Poll(false).watermark.has_value());
  std::optional<Watermark> w = gen.OnEvent("p1", 50);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->micros, 40);
  EXPECT_FALSE(gen.OnEvent("p1", 30).has_value());  // out of order: no change
  w = gen.OnEvent("p1", 500);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->micros, 90);  // p0 is behind now
  WatermarkGenerator::Update u = gen.Poll(false);
  EXPECT_FALSE(u.watermark.has_value());
  EXPECT_FALSE(u.idle.has_value());
}

// pipeline.auto-watermark-interval per record, as Flink's SQL assigner: the combined watermark
// goes out right after the record that raised it by more than the interval. One held back goes
// out when a poll brings nothing (the input is quiet) or the subtask goes idle, never after a
// busy poll, so where polls end does not change which records are late.
TEST(WatermarkGenerator, EmitsAfterTheRecordThatRaisesItByMoreThanTheInterval) {
  constexpr int64_t ms = 1000;
  FakeClock clock;
  WatermarkGenerator gen(0, std::chrono::milliseconds(1000), &clock);
  gen.SetEmitInterval(std::chrono::milliseconds(10));
  gen.SetSplits({"p0"});
  EXPECT_EQ(gen.OnEvent("p0", 100 * ms), std::optional<Watermark>(Watermark(100 * ms)));
  EXPECT_FALSE(gen.OnEvent("p0", 105 * ms).has_value());  // rose by 5 ms <= 10
  EXPECT_FALSE(gen.Poll(/*input_quiet=*/false).watermark.has_value());
  EXPECT_EQ(gen.OnEvent("p0", 111 * ms), std::optional<Watermark>(Watermark(111 * ms)));
  EXPECT_FALSE(gen.OnEvent("p0", 115 * ms).has_value());
  EXPECT_EQ(gen.Poll(/*input_quiet=*/true).watermark,
            std::optional<Watermark>(Watermark(115 * ms)));
  EXPECT_FALSE(gen.OnEvent("p0", 118 * ms).has_value());
  clock.Advance(std::chrono::milliseconds(1000));  // idle now: emitted with the idleness
  WatermarkGenerator::Update u = gen.Poll(false);
  EXPECT_EQ(u.watermark, std::optional<Watermark>(Watermark(118 * ms)));
  EXPECT_EQ(u.idle, std::optional<bool>(true));
}

TEST(WatermarkGenerator, AnIdleSplitStopsHoldingBackAndRejoinsWhenItProduces) {
  FakeClock clock;
  WatermarkGenerator gen(0, std::chrono::milliseconds(1000), &clock);
  gen.SetSplits({"busy", "quiet"});
  EXPECT_FALSE(gen.OnEvent("busy", 100).has_value());
  EXPECT_FALSE(gen.Poll(false).watermark.has_value());
  clock.Advance(std::chrono::milliseconds(1500));
  // "quiet" is idle
  EXPECT_EQ(gen.OnEvent("busy", 200), std::optional<Watermark>(Watermark(200)));
  EXPECT_FALSE(gen.OnEvent("quiet", 150).has_value());  // back, behind: no going back
  EXPECT_FALSE(gen.Poll(false).watermark.has_value());
  EXPECT_EQ(gen.current().micros, 200);
  // Everything idle: the subtask is idle, once; its watermark is the lowest produced (quiet's
  // 150 is below 200: nothing to emit).
  clock.Advance(std::chrono::milliseconds(2000));
  WatermarkGenerator::Update u = gen.Poll(false);
  ASSERT_TRUE(u.idle.has_value());
  EXPECT_TRUE(*u.idle);
  EXPECT_FALSE(u.watermark.has_value());
  EXPECT_FALSE(gen.Poll(false).idle.has_value());
  EXPECT_EQ(gen.OnEvent("busy", 300), std::optional<Watermark>(Watermark(300)));
  u = gen.Poll(false);
  ASSERT_TRUE(u.idle.has_value());
  EXPECT_FALSE(*u.idle);
}

// Records of one split all arrive before the empty splits' timeouts run out; then everything is
// idle: the watermark still moves to what that split produced, so its windows fire.
TEST(WatermarkGenerator, GoingIdleReleasesTheWatermarkOfTheSplitsThatProduced) {
  FakeClock clock;
  WatermarkGenerator gen(10, std::chrono::milliseconds(300), &clock);
  gen.SetSplits({"data", "empty1", "empty2"});
  EXPECT_FALSE(gen.OnEvent("data", 1000).has_value());
  EXPECT_FALSE(gen.Poll(false).watermark.has_value());
  clock.Advance(std::chrono::milliseconds(400));  // all three idle at once
  WatermarkGenerator::Update u = gen.Poll(false);
  ASSERT_TRUE(u.watermark.has_value());
  EXPECT_EQ(u.watermark->micros, 990);
  ASSERT_TRUE(u.idle.has_value());
  EXPECT_TRUE(*u.idle);
}

TEST(WatermarkGenerator, ASubtaskWithoutSplitsIsIdle) {
  FakeClock clock;
  WatermarkGenerator gen(0, std::chrono::milliseconds(0), &clock);
  WatermarkGenerator::Update u = gen.Poll(false);
  ASSERT_TRUE(u.idle.has_value());
  EXPECT_TRUE(*u.idle);
}

}  // namespace
}  // namespace floe::runtime
