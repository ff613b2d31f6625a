#include "floe/sql/exec/watermark_assigner_operator.h"

#include <algorithm>

#include "floe/runtime/watermark_generator.h"

namespace floe::sql {

namespace {
constexpr uint32_t kStateVersion = 1;
}  // namespace

WatermarkAssignerOperator::WatermarkAssignerOperator(int time_column, int64_t delay_micros,
                                                     std::chrono::milliseconds interval)
    : time_column_(time_column), delay_(delay_micros), interval_(interval) {}

bool WatermarkAssignerOperator::Due() const {
  if (pending_ <= emitted_) return false;
  if (emitted_ == INT64_MIN) return true;  // the first goes out at once, as in Flink
  return pending_ - emitted_ > interval_.count() * 1000;
}

Status WatermarkAssignerOperator::Emit(runtime::Collector& out) {
  if (pending_ <= emitted_) return Status::OK();
  emitted_ = pending_;
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

// The old subtasks' inputs are spread over the new ones, so each starts at the lowest of their
// watermarks: none of its rows can be late by a watermark another old subtask reached.
Status WatermarkAssignerOperator::RestoreRescaled(const std::vector<std::string>& states) {
  int64_t lowest = INT64_MAX;
  for (const std::string& blob : states) {
    if (blob.empty()) continue;
    runtime::StateReader reader(blob);
    FLOE_RETURN_NOT_OK(Restore(reader));
    lowest = std::min(lowest, emitted_);
  }
  emitted_ = pending_ = lowest == INT64_MAX ? INT64_MIN : lowest;
  return Status::OK();
}

Status WatermarkAssignerOperator::ProcessBatch(const RecordBatch& batch, int input,
                                               runtime::Collector& out) {
  (void)input;
  const Column& time = batch.column(time_column_);
  const size_t rows = batch.num_rows();
  size_t piece_start = 0;  // first row not emitted yet
  for (size_t r = 0; r < rows; ++r) {
    if (time.IsNull(r)) continue;
    pending_ = std::max(pending_, time.Get<int64_t>(r) - delay_);
    if (!Due()) continue;
    FLOE_RETURN_NOT_OK(runtime::EmitRowRange(batch, piece_start, r + 1, out));
    piece_start = r + 1;
    FLOE_RETURN_NOT_OK(Emit(out));
  }
  return runtime::EmitRowRange(batch, piece_start, rows, out);
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
  FLOE_RETURN_NOT_OK(Emit(out));
  state.PutU32(kStateVersion);
  state.PutI64(emitted_);
  return Status::OK();
}

}  // namespace floe::sql
