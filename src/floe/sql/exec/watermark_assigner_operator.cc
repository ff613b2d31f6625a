#include "floe/sql/exec/watermark_assigner_operator.h"

#include <algorithm>

namespace floe::sql {

namespace {
constexpr uint32_t kStateVersion = 1;
}  // namespace

Status WatermarkAssignerOperator::Restore(runtime::StateReader& state) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, state.GetU32());
  if (version != kStateVersion) {
    return Status::Corruption("watermark assigner state: unknown format version " +
                              std::to_string(version));
  }
  FLOE_ASSIGN_OR_RAISE(emitted_, state.GetI64());
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
  if (max == INT64_MIN || max - delay_ <= emitted_) return Status::OK();
  emitted_ = max - delay_;
  return out.EmitWatermark(runtime::Watermark(emitted_));
}

Status WatermarkAssignerOperator::OnWatermark(runtime::Watermark watermark,
                                              runtime::Collector& out) {
  if (watermark.micros != INT64_MAX) return Status::OK();  // the table's watermark wins
  emitted_ = INT64_MAX;
  return out.EmitWatermark(watermark);
}

Status WatermarkAssignerOperator::OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                                            runtime::Collector& out) {
  (void)id, (void)out;
  state.PutU32(kStateVersion);
  state.PutI64(emitted_);
  return Status::OK();
}

}  // namespace floe::sql
