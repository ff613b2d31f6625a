#include "floe/runtime/watermark_generator.h"

#include <algorithm>

namespace floe::runtime {

Status EmitRowRange(const RecordBatch& batch, size_t begin, size_t end, Collector& out) {
  if (begin >= end) return Status::OK();
  if (begin == 0 && end == batch.num_rows()) return out.Emit(batch);
  return out.Emit(batch.Slice(begin, end));
}

WatermarkGenerator::WatermarkGenerator(int64_t delay_micros, std::chrono::milliseconds idle_timeout,
                                       const Clock* clock)
    : delay_(delay_micros),
      idle_timeout_(idle_timeout),
      clock_(clock != nullptr ? clock : SteadyClock::Get()) {}

void WatermarkGenerator::SetSplits(const std::vector<std::string>& splits) {
  std::map<std::string, Split> next;
  const int64_t now = clock_->NowMillis();
  for (const std::string& s : splits) {
    auto it = splits_.find(s);
    next[s] = it != splits_.end() ? it->second : Split{INT64_MIN, now};
  }
  splits_ = std::move(next);
}

std::optional<Watermark> WatermarkGenerator::OnEvent(const std::string& split, int64_t ts) {
  Split& s = splits_[split];
  const bool raised = ts > s.max_ts;
  s.max_ts = std::max(s.max_ts, ts);
  const int64_t now = clock_->NowMillis();
  s.last_event_ms = now;
  // Without idleness only a split's new maximum can raise the minimum: skip the walk over them.
  if (!raised && idle_timeout_.count() == 0) return std::nullopt;
  bool any_active = false;
  const int64_t min = ActiveMinimum(now, &any_active);
  if (min == INT64_MIN || min <= emitted_) return std::nullopt;
  // The difference in microseconds: Flink's millisecond rule for millisecond event times.
  if (emitted_ != INT64_MIN && min - emitted_ <= interval_.count() * 1000) return std::nullopt;
  emitted_ = min;
  return Watermark(min);
}

int64_t WatermarkGenerator::ActiveMinimum(int64_t now, bool* any_active) const {
  int64_t min = INT64_MAX;
  for (const auto& [name, s] : splits_) {
    if (idle_timeout_.count() > 0 && now - s.last_event_ms >= idle_timeout_.count()) continue;
    *any_active = true;
    // A split with nothing yet holds the watermark back (its first record may be old).
    min = std::min(min, s.max_ts == INT64_MIN ? INT64_MIN : s.max_ts - delay_);
  }
  return min == INT64_MAX ? INT64_MIN : min;
}

WatermarkGenerator::Update WatermarkGenerator::Poll(bool input_quiet) {
  Update u;
  bool any_active = false;
  int64_t min = ActiveMinimum(clock_->NowMillis(), &any_active);
  const bool idle = !any_active;
  if (idle) {
    // Nothing arrives from any split: what the splits that produced have shown is final for
    // now, so the watermark moves up to the lowest of them before the subtask goes idle (a
    // split whose records all came before its siblings' idle timeouts ran out would otherwise
    // never let the watermark pass them).
    min = INT64_MAX;
    for (const auto& [name, s] : splits_) {
      if (s.max_ts != INT64_MIN) min = std::min(min, s.max_ts - delay_);
    }
    if (min == INT64_MAX) min = INT64_MIN;
  }
  if (min != INT64_MIN && min > emitted_ && (input_quiet || idle)) {
    emitted_ = min;
    u.watermark = Watermark(min);
  }
  if (idle != idle_) {
    idle_ = idle;
    u.idle = idle;
  }
  return u;
}

}  // namespace floe::runtime
