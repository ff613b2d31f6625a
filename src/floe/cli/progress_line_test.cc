#include "floe/cli/progress_line.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace floe::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(FormatBytes, PicksTheLargestUnitBelow1024) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.0 KiB");
  EXPECT_EQ(FormatBytes(3277), "3.2 KiB");
  EXPECT_EQ(FormatBytes(96LL << 20), "96.0 MiB");
  EXPECT_EQ(FormatBytes(3LL << 29), "1.5 GiB");
  EXPECT_EQ(FormatBytes(2LL << 40), "2.0 TiB");
  EXPECT_EQ(FormatBytes(2048LL << 40), "2048.0 TiB");
}

TEST(FormatDuration, SecondsMinutesHours) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(44.6), "45s");
  EXPECT_EQ(FormatDuration(185), "3m05s");
  EXPECT_EQ(FormatDuration(3720), "1h02m");
  EXPECT_EQ(FormatDuration(-1), "0s");
}

TEST(FormatProgress, AppendShowsRowsRateBytesPercentAndEta) {
  ProgressCounts c;
  c.rows = 120000;
  c.bytes = 12LL << 20;
  c.bytes_total = 48LL << 20;
  // A quarter in 2 s: 6 s to go at the same rate.
  EXPECT_EQ(FormatProgress("append", c, 2.0),
            "append: 120000 rows, 60000 rows/s, 12.0 MiB/48.0 MiB, 25%, ETA 6s");
}

TEST(FormatProgress, MaintenanceMeasuresByBytesOverFiles) {
  ProgressCounts c;
  c.files = 3;
  c.files_total = 40;
  c.rows = 9000;
  c.bytes = 100LL << 20;
  c.bytes_total = 1000LL << 20;
  EXPECT_EQ(FormatProgress("compact", c, 2.0),
            "compact: 3/40 files, 9000 rows, 4500 rows/s, 100.0 MiB/1000.0 MiB, 10%, ETA 18s");
}

TEST(FormatProgress, FilesAloneGiveThePercentage) {
  ProgressCounts c;
  c.files = 30;
  c.files_total = 40;
  EXPECT_EQ(FormatProgress("expire-snapshots", c, 60.0),
            "expire-snapshots: 30/40 files, 75%, ETA 20s");
}

TEST(FormatProgress, NoTotalNoPercentageAndNothingDoneNoEta) {
  ProgressCounts c;
  c.rows = 500;
  EXPECT_EQ(FormatProgress("scan", c, 0.0), "scan: 500 rows, 0 rows/s");
  ProgressCounts start;
  start.files_total = 4;
  start.bytes_total = 4096;
  EXPECT_EQ(FormatProgress("compact", start, 0.0), "compact: 0/4 files, 0 B/4.0 KiB, 0%");
}

TEST(ProgressWanted, TerminalUnlessTheEnvironmentSays) {
  EXPECT_TRUE(ProgressWanted(nullptr, true));
  EXPECT_FALSE(ProgressWanted(nullptr, false));
  EXPECT_TRUE(ProgressWanted("always", false));
  EXPECT_FALSE(ProgressWanted("never", true));
  EXPECT_TRUE(ProgressWanted("auto", true));
  EXPECT_FALSE(ProgressWanted("", false));
}

// A ProgressLine drawing into memory on a clock the test moves.
class ProgressLineTest : public ::testing::Test {
 protected:
  void SetUp() override { out_ = open_memstream(&buf_, &size_); }
  void TearDown() override {
    std::fclose(out_);
    std::free(buf_);
  }
  std::string Output() {
    std::fflush(out_);
    return std::string(buf_, size_);
  }
  ProgressLine::Clock Clock() {
    return [this] { return now_; };
  }
  static ProgressCounts Rows(int64_t rows) {
    ProgressCounts c;
    c.rows = rows;
    return c;
  }

  std::FILE* out_ = nullptr;
  char* buf_ = nullptr;
  size_t size_ = 0;
  std::chrono::steady_clock::time_point now_{};
};

TEST_F(ProgressLineTest, RedrawsInPlaceAtMostEvery200MsAndClearsAtTheEnd) {
  ProgressLine line("append", out_, Clock());
  now_ += seconds(1);
  line.Update(Rows(1000));  // the first update draws at once
  now_ += milliseconds(199);
  line.Update(Rows(1100));  // too soon
  now_ += milliseconds(1);
  line.Update(Rows(120));  // 200 ms after the last draw; shorter, so blanks cover the rest
  line.Done();
  line.Update(Rows(5000));  // after Done: nothing
  EXPECT_EQ(Output(),
            "\rappend: 1000 rows, 1000 rows/s"
            "\rappend: 120 rows, 100 rows/s  "
            "\r                            \r");
}

TEST_F(ProgressLineTest, SilentWithoutAnOutputAndClearsNothingWhenNothingWasDrawn) {
  {
    ProgressLine silent("append", nullptr, Clock());
    silent.Update(Rows(1));
  }
  { ProgressLine never_updated("append", out_, Clock()); }
  EXPECT_EQ(Output(), "");
}

// CaptureStderr points fd 2 at a file: stderr is not a terminal here however the test is run.
TEST(ProgressLine, OnStderrOnlyWhenATerminalOrFloeProgressAlways) {
  using ::testing::internal::CaptureStderr;
  using ::testing::internal::GetCapturedStderr;
  ProgressCounts c;
  c.rows = 1;
  ::unsetenv("FLOE_PROGRESS");
  CaptureStderr();
  {
    ProgressLine line("append");
    line.Update(c);
  }
  EXPECT_EQ(GetCapturedStderr(), "");

  ::setenv("FLOE_PROGRESS", "always", 1);
  CaptureStderr();
  {
    ProgressLine line("append");
    line.Update(c);
  }
  {
    ProgressLine quiet("append", /*wanted=*/false);  // --quiet wins over the environment
    quiet.Update(c);
  }
  std::string err = GetCapturedStderr();
  ::unsetenv("FLOE_PROGRESS");
  EXPECT_EQ(err.rfind("\rappend: 1 rows, ", 0), 0u) << err;
  EXPECT_EQ(err.back(), '\r') << "cleared at the end";
  EXPECT_EQ(std::count(err.begin(), err.end(), '\r'), 3);
}

}  // namespace
}  // namespace floe::cli
