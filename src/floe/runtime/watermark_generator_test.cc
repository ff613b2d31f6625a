#include "floe/runtime/watermark_generator.h"

#include <gtest/gtest.h>

namespace floe::runtime {
namespace {

TEST(WatermarkGenerator, IsTheMinimumOverSplitsMinusTheDelayAndOnlyMovesForward) {
  FakeClock clock;
  WatermarkGenerator gen(/*delay=*/10, std::chrono::milliseconds(0), &clock);
  gen.SetSplits({"p0", "p1"});
  gen.OnEvent("p0", 100);
  WatermarkGenerator::Update u = gen.Poll();
  EXPECT_FALSE(u.watermark.has_value()) << "p1 has produced nothing yet: it holds back";
  gen.OnEvent("p1", 50);
  u = gen.Poll();
  ASSERT_TRUE(u.watermark.has_value());
  EXPECT_EQ(u.watermark->micros, 40);
  gen.OnEvent("p1", 30);  // out of order: no change
  EXPECT_FALSE(gen.Poll().watermark.has_value());
  gen.OnEvent("p1", 500);
  u = gen.Poll();
  ASSERT_TRUE(u.watermark.has_value());
  EXPECT_EQ(u.watermark->micros, 90);  // p0 is behind now
  EXPECT_FALSE(u.idle.has_value());
}

// pipeline.auto-watermark-interval: a rising watermark goes out at most once per interval, the
// highest one then; going idle does not wait.
TEST(WatermarkGenerator, EmitsAtMostOncePerAutoWatermarkInterval) {
  FakeClock clock;
  WatermarkGenerator gen(0, std::chrono::milliseconds(1000), &clock);
  gen.SetEmitInterval(std::chrono::milliseconds(200));
  gen.SetSplits({"p0"});
  gen.OnEvent("p0", 10);
  ASSERT_TRUE(gen.Poll().watermark.has_value());  // the first is due at once
  gen.OnEvent("p0", 20);
  clock.Advance(std::chrono::milliseconds(100));
  EXPECT_FALSE(gen.Poll().watermark.has_value());  // rose, but not due yet
  gen.OnEvent("p0", 30);
  clock.Advance(std::chrono::milliseconds(100));
  WatermarkGenerator::Update u = gen.Poll();
  ASSERT_TRUE(u.watermark.has_value());
  EXPECT_EQ(u.watermark->micros, 30);
  gen.OnEvent("p0", 40);
  clock.Advance(std::chrono::milliseconds(1000));  // idle now: emitted with the idleness
  u = gen.Poll();
  ASSERT_TRUE(u.watermark.has_value());
  EXPECT_EQ(u.watermark->micros, 40);
  EXPECT_EQ(u.idle, std::optional<bool>(true));
}

TEST(WatermarkGenerator, AnIdleSplitStopsHoldingBackAndRejoinsWhenItProduces) {
  FakeClock clock;
  WatermarkGenerator gen(0, std::chrono::milliseconds(1000), &clock);
  gen.SetSplits({"busy", "quiet"});
  gen.OnEvent("busy", 100);
  EXPECT_FALSE(gen.Poll().watermark.has_value());
  clock.Advance(std::chrono::milliseconds(1500));
  gen.OnEvent("busy", 200);
  WatermarkGenerator::Update u = gen.Poll();
  ASSERT_TRUE(u.watermark.has_value());
  EXPECT_EQ(u.watermark->micros, 200);  // "quiet" is idle
  gen.OnEvent("quiet", 150);            // back, behind: the watermark does not go back
  EXPECT_FALSE(gen.Poll().watermark.has_value());
  EXPECT_EQ(gen.current().micros, 200);
  // Everything idle: the subtask is idle, once; its watermark is the lowest produced (quiet's
  // 150 is below 200: nothing to emit).
  clock.Advance(std::chrono::milliseconds(2000));
  u = gen.Poll();
  ASSERT_TRUE(u.idle.has_value());
  EXPECT_TRUE(*u.idle);
  EXPECT_FALSE(u.watermark.has_value());
  EXPECT_FALSE(gen.Poll().idle.has_value());
  gen.OnEvent("busy", 300);
  u = gen.Poll();
  ASSERT_TRUE(u.idle.has_value());
  EXPECT_FALSE(*u.idle);
}

// Records of one split all arrive before the empty splits' timeouts run out; then everything is
// idle: the watermark still moves to what that split produced, so its windows fire.
TEST(WatermarkGenerator, GoingIdleReleasesTheWatermarkOfTheSplitsThatProduced) {
  FakeClock clock;
  WatermarkGenerator gen(10, std::chrono::milliseconds(300), &clock);
  gen.SetSplits({"data", "empty1", "empty2"});
  gen.OnEvent("data", 1000);
  EXPECT_FALSE(gen.Poll().watermark.has_value());
  clock.Advance(std::chrono::milliseconds(400));  // all three idle at once
  WatermarkGenerator::Update u = gen.Poll();
  ASSERT_TRUE(u.watermark.has_value());
  EXPECT_EQ(u.watermark->micros, 990);
  ASSERT_TRUE(u.idle.has_value());
  EXPECT_TRUE(*u.idle);
}

TEST(WatermarkGenerator, ASubtaskWithoutSplitsIsIdle) {
  FakeClock clock;
  WatermarkGenerator gen(0, std::chrono::milliseconds(0), &clock);
  WatermarkGenerator::Update u = gen.Poll();
  ASSERT_TRUE(u.idle.has_value());
  EXPECT_TRUE(*u.idle);
}

}  // namespace
}  // namespace floe::runtime
