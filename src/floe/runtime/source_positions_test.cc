#include "floe/runtime/source_positions.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace floe::runtime {
namespace {

using std::chrono::milliseconds;

TEST(SourcePositionBoardCommitters, NoneRegisteredMeansNothingToWaitFor) {
  SourcePositionBoard board;
  EXPECT_EQ(board.CommittedByAll(), std::nullopt);
  EXPECT_TRUE(board.WaitCommittedByAll(CheckpointId(7), milliseconds(0), nullptr));
}

TEST(SourcePositionBoardCommitters, CommittedByAllIsTheSlowestCommitter) {
  SourcePositionBoard board;
  board.RegisterCommitter("a");
  board.RegisterCommitter("b");
  EXPECT_EQ(board.CommittedByAll(), std::optional<uint64_t>(0));
  board.ReportCommitted("a", CheckpointId(3));
  EXPECT_EQ(board.CommittedByAll(), std::optional<uint64_t>(0));
  board.ReportCommitted("b", CheckpointId(2));
  EXPECT_EQ(board.CommittedByAll(), std::optional<uint64_t>(2));
  board.ReportCommitted("b", CheckpointId(1));  // never goes back
  EXPECT_EQ(board.CommittedByAll(), std::optional<uint64_t>(2));
  // A restart registers the same subtask again: what it committed stays true.
  board.ReportClosed("a");
  board.RegisterCommitter("a");
  EXPECT_EQ(board.CommittedByAll(), std::optional<uint64_t>(2));
}

TEST(SourcePositionBoardCommitters, WaitEndsOnTheReportTimeoutCloseOrCancel) {
  SourcePositionBoard board;
  board.RegisterCommitter("a");
  std::thread reporter([&] {
    std::this_thread::sleep_for(milliseconds(200));
    board.ReportCommitted("a", CheckpointId(4));
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(board.WaitCommittedByAll(CheckpointId(4), milliseconds(10000), nullptr));
  reporter.join();
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(150));

  start = std::chrono::steady_clock::now();
  EXPECT_FALSE(board.WaitCommittedByAll(CheckpointId(5), milliseconds(200), nullptr));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(200));

  std::atomic<bool> cancel{true};
  EXPECT_FALSE(board.WaitCommittedByAll(CheckpointId(5), milliseconds(10000), &cancel));

  board.ReportClosed("a");
  start = std::chrono::steady_clock::now();
  EXPECT_FALSE(board.WaitCommittedByAll(CheckpointId(5), milliseconds(10000), nullptr));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
  // A closed committer that did reach the checkpoint does not block it.
  EXPECT_TRUE(board.WaitCommittedByAll(CheckpointId(4), milliseconds(0), nullptr));
}

}  // namespace
}  // namespace floe::runtime
