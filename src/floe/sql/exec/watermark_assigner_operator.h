#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "floe/runtime/operator.h"

namespace floe::sql {

// WatermarkAssignerOperator is Flink SQL's watermark assigner for a source that does not make
// watermarks itself. The watermark of the table's `WATERMARK FOR col AS col - INTERVAL ...` is
// the highest event time seen in this subtask minus the delay, worked out after every record,
// as Flink's WatermarkAssignerOperator does: the record goes out, then the watermark if it has
// risen by more than `pipeline.auto-watermark-interval` since the last one emitted (0: whenever
// it rises). A batch is cut after each such record and the watermark goes out between the
// pieces, so which rows are late depends on record order only, never on batch boundaries. A
// watermark the interval held back goes out at the next checkpoint barrier (floe's stand-in for
// Flink's periodic timer, which covers quiet inputs). Rows with a NULL event time leave it
// unchanged. Upstream watermarks are dropped except the end-of-input maximum, which is
// forwarded so every window fires. The emitted watermark is checkpointed, so a restore does not
// start below it; a restore at another parallelism starts at the lowest of the old subtasks'.
class WatermarkAssignerOperator final : public runtime::Operator {
 public:
  // `time_column`: a TIMESTAMP / TIMESTAMP_LTZ column of the input (microseconds).
  WatermarkAssignerOperator(int time_column, int64_t delay_micros,
                            std::chrono::milliseconds interval = std::chrono::milliseconds(0));

  Status Restore(runtime::StateReader& state) override;
  Status RestoreRescaled(const std::vector<std::string>& states) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;
  Status OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                   runtime::Collector& out) override;

 private:
  // Whether the pending watermark is due after a record: above the emitted one by more than
  // the interval (compared in microseconds: Flink's millisecond rule for millisecond times).
  bool Due() const;
  // Emits the pending watermark if it is above the emitted one.
  Status Emit(runtime::Collector& out);

  int time_column_;
  int64_t delay_;
  std::chrono::milliseconds interval_;
  int64_t emitted_ = INT64_MIN;
  int64_t pending_ = INT64_MIN;  // highest watermark seen, maybe not emitted yet
};

}  // namespace floe::sql
