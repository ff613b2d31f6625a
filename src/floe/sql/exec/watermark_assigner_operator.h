#pragma once

#include <cstdint>

#include "floe/runtime/operator.h"

namespace floe::sql {

// WatermarkAssignerOperator is Flink SQL's watermark assigner for a source that does not make
// watermarks itself: it passes batches through and, after each, emits the watermark of the
// table's `WATERMARK FOR col AS col - INTERVAL ...`: the highest event time seen in this subtask
// minus the delay, whenever that moves forward (watermarks never go back). Rows with a NULL event
// time leave it unchanged. Upstream watermarks are dropped except the end-of-input maximum,
// which is forwarded so every window fires. The emitted watermark is checkpointed, so a restore
// does not start below it.
class WatermarkAssignerOperator final : public runtime::Operator {
 public:
  // `time_column`: a TIMESTAMP / TIMESTAMP_LTZ column of the input (microseconds).
  WatermarkAssignerOperator(int time_column, int64_t delay_micros)
      : time_column_(time_column), delay_(delay_micros) {}

  Status Restore(runtime::StateReader& state) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;
  Status OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                   runtime::Collector& out) override;

 private:
  int time_column_;
  int64_t delay_;
  int64_t emitted_ = INT64_MIN;
};

}  // namespace floe::sql
