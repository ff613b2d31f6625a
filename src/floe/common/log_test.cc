#include "floe/common/log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace floe {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = GetLogLevel();
    SetLogSinkForTesting([this](LogLevel, std::string_view line) { lines_.emplace_back(line); });
  }
  void TearDown() override {
    SetLogSinkForTesting({});
    SetLogLevel(saved_);
  }
  LogLevel saved_ = LogLevel::kInfo;
  std::vector<std::string> lines_;
};

TEST_F(LogTest, PrefixesEveryLineAndNamesWarningsAndErrors) {
  SetLogLevel(LogLevel::kInfo);
  LogInfo("job %s started", "j1");
  LogWarn("cannot update %s", "job.json");
  LogError("failed: %d", 3);
  ASSERT_EQ(lines_.size(), 3u);
  EXPECT_EQ(lines_[0], "floe: job j1 started\n");
  EXPECT_EQ(lines_[1], "floe: warning: cannot update job.json\n");
  EXPECT_EQ(lines_[2], "floe: error: failed: 3\n");
}

TEST_F(LogTest, DropsLinesBelowTheThreshold) {
  SetLogLevel(LogLevel::kWarn);
  LogDebug("d");
  LogInfo("i");
  LogWarn("w");
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0], "floe: warning: w\n");
  SetLogLevel(LogLevel::kDebug);
  LogDebug("d");
  EXPECT_EQ(lines_.size(), 2u);
}

TEST(LogLevelTest, ParsesTheNamesAndRefusesOthers) {
  LogLevel level = LogLevel::kInfo;
  EXPECT_TRUE(ParseLogLevel("debug", &level));
  EXPECT_EQ(level, LogLevel::kDebug);
  EXPECT_TRUE(ParseLogLevel("warning", &level));
  EXPECT_EQ(level, LogLevel::kWarn);
  EXPECT_FALSE(ParseLogLevel("loud", &level));
  EXPECT_EQ(level, LogLevel::kWarn);
}

}  // namespace
}  // namespace floe
