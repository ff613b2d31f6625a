#include "floe/sql/exec/watermark_assigner_operator.h"

#include <algorithm>

namespace floe::sql {

namespace {
constexpr uint32_t kStateVersion = 1;
}  // namespace

WatermarkAssignerOperator::WatermarkAssignerOperator(int time_column, int64_t delay_micros,
                                                     std::chrono::milliseconds interval,
                                                     const runtime::Clock* clock)
    : time_column_(time_column),
      delay_(delay_micros),
      interval_(interval),
      clock_(clock != nullptr ? clock : runtime::SteadyClock::Get()) {}

Status WatermarkAssignerOperator::MaybeEmit(runtime::Collector& out, bool now) {
  if (pending_ <= emitted_) return Status::OK();
  const int64_t t = clock_->NowMillis();
  if (!now && interval_.count() > 0 && last_emit_ms_ != INT64_MIN &&
      t - last_emit_ms_ < interval_.count()) {
    return Status::OK();
  }
  emitted_ = pending_;
  last_emit_ms_ = t;
  return out.EmitWatermark(runtime::Watermark(emitted_));
}

Status WatermarkAssignerOperator::Restore(runtime::StateReader& state) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, state.GetU32());
  if (version != kStateVersion) {
    return Status::Corruption("watermark assigner state: unknown format version " +
                              std::to_string(version));
  }
  FLOE_ASSIGN_OR_RAISE(emitted_, state.GetI64());
  pending_ = emitted_;
  return state.ExpectEnd();
}

Status WatermarkAssignerOperator::ProcessBatch(const RecordBatch& batch, int input,
                                               runtime::Collector& out) {
  (void)input;
  const Column& time = batch.column(time_column_);
  int64_t max = INT64_MIN;
  for (size_t r = 0; r < batch.num_rows(); ++r) {
    if (!time.IsNull(r)) max = std::max(max, time.Get<int64_t>(r));
  }
  FLOE_RETURN_NOT_OK(out.Emit(batch));
  if (max != INT64_MIN) pending_ = std::max(pending_, max - delay_);
  return MaybeEmit(out, /*now=*/false);
}

Status WatermarkAssignerOperator::OnWatermark(runtime::Watermark watermark,
                                              runtime::Collector& out) {
  if (watermark.micros != INT64_MAX) return Status::OK();  // the table's watermark wins
  emitted_ = pending_ = INT64_MAX;
  return out.EmitWatermark(watermark);
}

Status WatermarkAssignerOperator::OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                                            runtime::Collector& out) {
  (void)id;
  // A watermark the interval held back goes out before the barrier, so a paused input does not
  // keep its windows open longer than a checkpoint interval.
  FLOE_RETURN_NOT_OK(MaybeEmit(out, /*now=*/true));
  state.PutU32(kStateVersion);
  state.PutI64(emitted_);
  return Status::OK();
}

}  // namespace floe::sql
