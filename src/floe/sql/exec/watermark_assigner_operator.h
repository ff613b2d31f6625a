#pragma once

#include <chrono>
#include <cstdint>

#include "floe/runtime/clock.h"
#include "floe/runtime/operator.h"

namespace floe::sql {

// WatermarkAssignerOperator is Flink SQL's watermark assigner for a source that does not make
// watermarks itself: it passes batches through and, after each, emits the watermark of the
// table's `WATERMARK FOR col AS col - INTERVAL ...`: the highest event time seen in this subtask
// minus the delay, whenever that moves forward (watermarks never go back), at most once per
// `pipeline.auto-watermark-interval` (0: after every batch); one held back by the interval goes
// out with a later batch or at the next checkpoint barrier. Rows with a NULL event time leave it
// unchanged. Upstream watermarks are dropped except the end-of-input maximum,
// which is forwarded so every window fires. The emitted watermark is checkpointed, so a restore
// does not start below it.
class WatermarkAssignerOperator final : public runtime::Operator {
 public:
  // `time_column`: a TIMESTAMP / TIMESTAMP_LTZ column of the input (microseconds).
  WatermarkAssignerOperator(int time_column, int64_t delay_micros,
                            std::chrono::milliseconds interval = std::chrono::milliseconds(0),
                            const runtime::Clock* clock = nullptr);

  Status Restore(runtime::StateReader& state) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;
  Status OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                   runtime::Collector& out) override;

 private:
  // Emits the pending watermark if it is above the emitted one (and, unless `now`, if due).
  Status MaybeEmit(runtime::Collector& out, bool now);

  int time_column_;
  int64_t delay_;
  std::chrono::milliseconds interval_;
  const runtime::Clock* clock_;
  int64_t emitted_ = INT64_MIN;
  int64_t pending_ = INT64_MIN;  // highest watermark seen, maybe not emitted yet
  int64_t last_emit_ms_ = INT64_MIN;
};

}  // namespace floe::sql
