#include "floe/runtime/watermark_generator.h"

#include <algorithm>

namespace floe::runtime {

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

void WatermarkGenerator::OnEvent(const std::string& split, int64_t ts) {
  Split& s = splits_[split];
  s.max_ts = std::max(s.max_ts, ts);
  s.last_event_ms = clock_->NowMillis();
}

WatermarkGenerator::Update WatermarkGenerator::Poll() {
  Update u;
  const int64_t now = clock_->NowMillis();
  bool any_active = false;
  int64_t min = INT64_MAX;
  for (const auto& [name, s] : splits_) {
    if (idle_timeout_.count() > 0 && now - s.last_event_ms >= idle_timeout_.count()) continue;
    any_active = true;
    // A split with nothing yet holds the watermark back (its first record may be old).
    min = std::min(min, s.max_ts == INT64_MIN ? INT64_MIN : s.max_ts - delay_);
  }
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
  const bool due = interval_.count() == 0 || idle != idle_ || last_emit_ms_ == INT64_MIN ||
                   now - last_emit_ms_ >= interval_.count();
  if (min != INT64_MIN && min > emitted_ && due) {
    emitted_ = min;
    last_emit_ms_ = now;
    u.watermark = Watermark(min);
  }
  if (idle != idle_) {
    idle_ = idle;
    u.idle = idle;
  }
  return u;
}

}  // namespace floe::runtime
