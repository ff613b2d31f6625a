#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/runtime/clock.h"
#include "floe/runtime/ids.h"
#include "floe/runtime/operator.h"

namespace floe::runtime {

// Emits rows [begin, end) of `batch` (the batch itself when that is all of it): the pieces a
// batch is cut into when a watermark goes out between two of its records.
Status EmitRowRange(const RecordBatch& batch, size_t begin, size_t end, Collector& out);

// Bounded-out-of-orderness watermarks per split (a Kafka partition), combined by a source
// subtask the way Flink's sources do (per-partition watermarks, SourceOperator):
//   * a split's watermark is the highest event time it produced minus the delay (the table's
//     `WATERMARK FOR col AS col - INTERVAL ...`);
//   * the subtask's watermark is the minimum over its splits; a split that has produced nothing
//     yet holds it back (Flink does the same), unless it is idle;
//   * a split without records for `idle_timeout` (`scan.watermark.idle-timeout`, else
//     `table.exec.source.idle-timeout`; 0 = never) is idle and left out until it produces again;
//   * with no split at all, or every split idle, the subtask is idle (Collector::
//     EmitWatermarkStatus), so it never holds back the tasks it feeds; going idle, its
//     watermark first moves up to the lowest of the splits that produced (floe's choice: Flink
//     keeps the last combined value, so a split whose records all came before its siblings'
//     timeouts ran out never lets the windows it fed fire);
//   * watermarks only move forward.
// Event times and watermarks are microseconds. Not thread-safe: one source subtask.
class WatermarkGenerator {
 public:
  WatermarkGenerator(int64_t delay_micros, std::chrono::milliseconds idle_timeout,
                     const Clock* clock = nullptr);  // null: SteadyClock

  // pipeline.auto-watermark-interval, applied per record as Flink's SQL watermark assigner
  // does: after a record, the combined watermark goes out if it has risen by more than
  // `interval` since the last one emitted (0: whenever it rises).
  void SetEmitInterval(std::chrono::milliseconds interval) { interval_ = interval; }
  // The splits this subtask reads (replaces the previous set; positions of kept splits stay).
  void SetSplits(const std::vector<std::string>& splits);
  // A record of `split` with event time `ts` (call for every record with a non-NULL time, in
  // the order the records go out). Returns the watermark to emit right after this record, if
  // the per-record rule makes one due; which records are late then depends on record order
  // only, not on how records were grouped into polls.
  std::optional<Watermark> OnEvent(const std::string& split, int64_t ts);

  // Emit the watermark first, then the idleness (a watermark makes an output active).
  struct Update {
    std::optional<Watermark> watermark;  // a new, higher watermark to emit
    std::optional<bool> idle;            // a change of the subtask's idleness to emit
  };
  // What to emit after a poll of the input (call after each, and when idle so idleness is
  // noticed). A watermark the interval held back goes out only when `input_quiet` (the poll
  // brought no records: Flink's periodic timer covering quiet inputs) or the subtask goes idle.
  Update Poll(bool input_quiet);

  Watermark current() const { return Watermark(emitted_); }

 private:
  struct Split {
    int64_t max_ts = INT64_MIN;  // INT64_MIN: nothing yet
    int64_t last_event_ms = 0;   // clock time of its last record (or of its assignment)
  };
  int64_t delay_;
  std::chrono::milliseconds idle_timeout_;
  const Clock* clock_;
  std::map<std::string, Split> splits_;
  int64_t emitted_ = INT64_MIN;
  bool idle_ = false;
  std::chrono::milliseconds interval_{0};

  // The minimum over the splits that are not idle; INT64_MIN while one has produced nothing.
  // `any_active`: whether a split is not idle.
  int64_t ActiveMinimum(int64_t now, bool* any_active) const;
};

}  // namespace floe::runtime
