#include "floe/sql/exec/watermark_assigner_operator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "floe/runtime/state.h"

namespace floe::sql {
namespace {

constexpr int64_t kMs = 1000;  // microseconds

std::shared_ptr<const BatchSchema> TimeSchema() {
  auto s = std::make_shared<BatchSchema>();
  s->fields = {Field{"event_time", DataType::Timestamp(), true, 0}};
  return s;
}

RecordBatch Times(const std::vector<std::optional<int64_t>>& times_ms) {
  RecordBatch b(TimeSchema());
  for (const std::optional<int64_t>& t : times_ms) {
    t ? b.mutable_column(0).Append<int64_t>(*t * kMs) : b.mutable_column(0).AppendNull();
  }
  return b;
}

// What the assigner emitted, in order: "r<ms>" for a row, "w<ms>" for a watermark.
class TraceCollector final : public runtime::Collector {
 public:
  Status Emit(RecordBatch batch) override {
    for (size_t r = 0; r < batch.num_rows(); ++r) {
      trace.push_back(batch.column(0).IsNull(r)
                          ? "rnull"
                          : "r" + std::to_string(batch.column(0).Get<int64_t>(r) / kMs));
    }
    return Status::OK();
  }
  Status EmitWatermark(runtime::Watermark w) override {
    trace.push_back("w" + std::to_string(w.micros / kMs));
    return Status::OK();
  }
  std::vector<std::string> trace;
};

using Trace = std::vector<std::string>;

// Flink's rule: after each record, the watermark goes out once it has risen by more than the
// interval since the last one emitted, between that record and the next of the same batch.
TEST(WatermarkAssigner, EmitsTheWatermarkRightAfterTheRecordThatRaisedItByMoreThanTheInterval) {
  WatermarkAssignerOperator op(0, /*delay=*/5 * kMs, std::chrono::milliseconds(10));
  TraceCollector out;
  ASSERT_TRUE(op.ProcessBatch(Times({100, 104, 115, 116, 90, 127}), 0, out).ok());
  // 95 goes out at once (the first); 110 - 95 = 15 > 10: out after 115; 111 waits (1 <= 10);
  // 122 - 110 = 12 > 10: out after 127.
  EXPECT_EQ(out.trace,
            (Trace{"r100", "w95", "r104", "r115", "w110", "r116", "r90", "r127", "w122"}));
}

TEST(WatermarkAssigner, AnIntervalOfZeroEmitsEveryRiseAndNullTimesLeaveItUnchanged) {
  WatermarkAssignerOperator op(0, 0, std::chrono::milliseconds(0));
  TraceCollector out;
  ASSERT_TRUE(op.ProcessBatch(Times({10, std::nullopt, 10, 8, 11}), 0, out).ok());
  EXPECT_EQ(out.trace, (Trace{"r10", "w10", "rnull", "r10", "r8", "r11", "w11"}));
}

// The same records give the same sequence however they are cut into batches.
TEST(WatermarkAssigner, TheOrderOfRowsAndWatermarksDoesNotDependOnBatchBoundaries) {
  const std::vector<std::optional<int64_t>> times = {100, 104, 115, 116, 90, 127, 128, 150, 120};
  Trace whole;
  {
    WatermarkAssignerOperator op(0, 5 * kMs, std::chrono::milliseconds(10));
    TraceCollector out;
    ASSERT_TRUE(op.ProcessBatch(Times(times), 0, out).ok());
    whole = out.trace;
  }
  for (size_t cut = 0; cut <= times.size(); ++cut) {
    WatermarkAssignerOperator op(0, 5 * kMs, std::chrono::milliseconds(10));
    TraceCollector out;
    ASSERT_TRUE(op.ProcessBatch(Times({times.begin(), times.begin() + cut}), 0, out).ok());
    ASSERT_TRUE(op.ProcessBatch(Times({times.begin() + cut, times.end()}), 0, out).ok());
    EXPECT_EQ(out.trace, whole) << "cut after " << cut << " rows";
  }
}

// A watermark the interval held back goes out at the next checkpoint barrier, and the emitted
// one is restored.
TEST(WatermarkAssigner, TheBarrierFlushesAHeldBackWatermarkAndRestoreKeepsIt) {
  WatermarkAssignerOperator op(0, 0, std::chrono::milliseconds(10));
  TraceCollector out;
  ASSERT_TRUE(op.ProcessBatch(Times({100, 105}), 0, out).ok());
  runtime::StateWriter state;
  ASSERT_TRUE(op.OnBarrier(runtime::CheckpointId(1), state, out).ok());
  EXPECT_EQ(out.trace, (Trace{"r100", "w100", "r105", "w105"}));
  WatermarkAssignerOperator restored(0, 0, std::chrono::milliseconds(10));
  const std::string blob = state.Finish();
  runtime::StateReader reader(blob);
  ASSERT_TRUE(restored.Restore(reader).ok());
  TraceCollector again;
  ASSERT_TRUE(restored.ProcessBatch(Times({110, 116}), 0, again).ok());
  EXPECT_EQ(again.trace, (Trace{"r110", "r116", "w116"}));
}

// Restored at another parallelism (a parallel filesystem source rescaled), a subtask starts at
// the lowest watermark of the old subtasks: rows of the slowest one are not late.
TEST(WatermarkAssigner, RestoredAtAnotherParallelismStartsAtTheLowestOldWatermark) {
  std::vector<std::string> blobs;
  for (int64_t t : {300, 120, 200}) {
    WatermarkAssignerOperator old(0, 0, std::chrono::milliseconds(0));
    TraceCollector out;
    ASSERT_TRUE(old.ProcessBatch(Times({t}), 0, out).ok());
    runtime::StateWriter state;
    ASSERT_TRUE(old.OnBarrier(runtime::CheckpointId(1), state, out).ok());
    blobs.push_back(state.Finish());
  }
  blobs.push_back("");  // an old subtask without state
  WatermarkAssignerOperator restored(0, 0, std::chrono::milliseconds(0));
  ASSERT_TRUE(restored.RestoreRescaled(blobs).ok());
  TraceCollector out;
  ASSERT_TRUE(restored.ProcessBatch(Times({110, 121, 150}), 0, out).ok());
  EXPECT_EQ(out.trace, (Trace{"r110", "r121", "w121", "r150", "w150"}));
  blobs[0] = "x";
  EXPECT_FALSE(restored.RestoreRescaled(blobs).ok());
}

}  // namespace
}  // namespace floe::sql
