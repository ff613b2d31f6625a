#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/common/time_zone.h"
#include "floe/runtime/keyed_state.h"
#include "floe/runtime/operator.h"
#include "floe/sql/aggregate_plan.h"
#include "floe/sql/exec/aggregator.h"
#include "floe/sql/exec/claimed_splits.h"

namespace floe::sql {

// A window's namespace in the keyed state of the window operators (aggregate, rank): its start
// and end as little-endian 64-bit integers, held inline so that setting it per row allocates
// nothing.
class WindowNamespace {
 public:
  WindowNamespace(int64_t start, int64_t end) {
    for (int i = 0; i < 8; ++i) {
      bytes_[i] = static_cast<char>((static_cast<uint64_t>(start) >> (8 * i)) & 0xff);
      bytes_[8 + i] = static_cast<char>((static_cast<uint64_t>(end) >> (8 * i)) & 0xff);
    }
  }
  operator std::string_view() const { return std::string_view(bytes_, sizeof bytes_); }

 private:
  char bytes_[16];
};

// The windows (start, end) holding event time `ts` (microseconds), ascending by end, for a
// TUMBLE, HOP or CUMULATE window (sizes in milliseconds, as planned). REQUIRES: a valid spec
// (size > 0; step > 0 for HOP and CUMULATE, size a multiple of it).
std::vector<std::pair<int64_t, int64_t>> WindowsOf(const WindowSpec& spec, int64_t ts);

// The times of windows over a TIMESTAMP_LTZ time column in a session zone other than UTC, as
// Flink's TimeWindowUtil: windows are laid out on the zone's wall clock (window_start and
// window_end are wall-clock TIMESTAMPs), a window fires once the watermark reaches the instant
// of its last millisecond (a gap's end, an overlap's later instant), and window_time is that last
// millisecond as an instant (an overlap's earlier). Without a zone (a TIMESTAMP time column, or
// UTC) every time is the column's value. One per operator subtask (it remembers the last window
// end it resolved: a batch's rows mostly share their windows).
class WindowClock {
 public:
  explicit WindowClock(std::shared_ptr<const TimeZone> zone)
      : zone_(zone != nullptr && !zone->is_utc() ? std::move(zone) : nullptr) {}
  // A row's time as windows are laid out.
  int64_t Local(int64_t ts) const { return zone_ ? zone_->ToLocal(ts) : ts; }
  // The watermark at which the window ending at `end` fires (its timer).
  int64_t FiresAt(int64_t end) const {
    if (!zone_) return end - kMillisecond;
    if (end != resolved_end_) {
      resolved_end_ = end;
      resolved_fires_at_ = zone_->ToFiringInstant(end - kMillisecond);
    }
    return resolved_fires_at_;
  }
  // window_time of the window ending at `end`.
  int64_t WindowTime(int64_t end) const {
    return zone_ ? zone_->ToInstant(end - kMillisecond) : end - kMillisecond;
  }
  // " in <zone>" where windows depend on it, for the state's shape; else "".
  std::string Describe() const { return zone_ ? " in " + zone_->name() : ""; }

 private:
  static constexpr int64_t kMillisecond = 1000;  // timestamps are microseconds
  std::shared_ptr<const TimeZone> zone_;
  mutable int64_t resolved_end_ = INT64_MIN;
  mutable int64_t resolved_fires_at_ = 0;
};

// A window aggregation: GROUP BY window_start, window_end[, keys] over a window TVF.
// Built from an AggregatePlan (aggregate_plan.h) with a window.
struct WindowAggregateSpec {
  std::shared_ptr<const BatchSchema> input;
  std::vector<int> key_columns;  // the HASH edge into this operator uses the same columns
  WindowSpec window;             // window.time_column: TIMESTAMP(3) / TIMESTAMP_LTZ(3)
  std::vector<AggregateCall> aggregates;
  // The job's settings: state.backend.type (runtime::KeyedStateOptions::FromOptions).
  std::map<std::string, std::string> job_config;
  // Scaled out by Kafka partition: the input's kSourceSplitColumn (-1: not scaled out). A row's
  // key group is then its claim's partition, and output rows carry the claim's split last.
  int split_column = -1;
  // The session zone when the time column is TIMESTAMP_LTZ (WindowClock); else null.
  std::shared_ptr<const TimeZone> zone;
  // The input is a changelog (its kRowKindColumn last): -U and -D rows are taken back out of
  // their windows (Flink's window aggregation over a CDC source).
  bool changelog = false;
  // Windows held in memory before they are written to the keyed state (the class comment says
  // when else they are); the planner sets `table.exec.window-agg.buffer-size-limit`. 0 writes
  // each batch's windows at its end.
  size_t max_cached_windows = 100000;
};

// The default of `table.exec.window-agg.buffer-size-limit`, Flink's option, which floe counts in
// windows held (a key's window accumulator) where Flink counts records: 1,000,000 on the hashmap
// backend (its state is on the heap anyway, and a window held that fires never reaches it),
// 100,000 (Flink's figure) on rocksdb.
size_t DefaultWindowBufferLimit(std::string_view backend);

// The output columns: keys (input names and types), window_start, window_end (TIMESTAMP),
// window_time (window_end - 1 ms, the rowtime of the result, typed like the time column), then
// one column per aggregate named agg0, agg1, ... (the planner projects and renames after it),
// and kSourceSplitColumn when scaled out.
std::shared_ptr<const BatchSchema> WindowAggregateOutput(const WindowAggregateSpec& spec);

// WindowAggregateOperator computes window aggregates on keyed state (runtime/keyed_state.h).
// Per row: every window holding its event time gets the row folded into its accumulator
// (state per key and window), and an event-time timer at window_end - 1 ms. The accumulators
// rows touch are held in memory between flushes (as Flink's window buffer): a window's state is
// read once when a row first touches it and written back at the next flush (a key's windows when
// its timer fires, and every window when more than max_cached_windows are held). A window held
// that the state never had fires from memory when due, never written. A checkpoint barrier writes
// the buffer as it stands into the keyed state, one value per key group, and keeps it in memory:
// a restore (or a claim taken over) reads it back. SESSION
// windows (the key is the PARTITION BY): a row opens [ts, ts + gap), which merges with every open
// session of its key it overlaps or touches (Flink's TimeWindow.intersects), their accumulators
// merged and their timers replaced by one at the merged end. When the watermark reaches a window's
// timer (Flink fires a window once watermark >= window_end - 1), its row is emitted and its state
// cleared: final results only, append-only, emitted before the watermark is forwarded. A row whose
// windows have all fired is late: dropped and counted (late_records_dropped, Flink's
// numLateRecordsDropped), never silently; a NULL event time is dropped and counted too. Over a
// changelog, a retraction is folded out of its windows (a late one is dropped alike), and a window
// whose rows were all retracted emits nothing. Checkpointed: the watermark, the late count and the
// keyed state with its timers, so no window fires twice or is lost across a restore.
class WindowAggregateOperator final : public runtime::Operator {
 public:
  // InvalidArgument for a spec that cannot run (no time column, bad sizes, columns out of range).
  static Result<std::unique_ptr<WindowAggregateOperator>> Make(WindowAggregateSpec spec);
  ~WindowAggregateOperator() override;

  // The keyed state its vertex needs (JobGraph::SetKeyedState): the job's backend settings, no
  // TTL (windows are purged by their timers).
  static Result<runtime::KeyedStateOptions> KeyedStateOptionsFor(const WindowAggregateSpec& spec);

  // REQUIRES: ctx.keyed_state.
  Status Open(const runtime::OperatorContext& ctx) override;
  Status Restore(runtime::StateReader& state) override;
  // Flink's union state: the lowest watermark of the old subtasks (so lateness is judged right
  // after a rescale); subtask 0 takes their late-row count.
  Status RestoreRescaled(const std::vector<std::string>& states) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  // Fires the windows the watermark passed, in slices of at most 4096 (ContinueWork goes on),
  // and forwards the watermark after the last.
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;
  Result<bool> ContinueWork(runtime::Collector& out) override;
  // Scaled out: notes the claim's split (the runtime moved its key group already); a group taken
  // over may hold windows the watermark passed, which fire now.
  Status OnClaimChange(const runtime::ClaimChange& change, runtime::Collector& out) override;
  // Writes the window buffer into the keyed state, a value per key group, ahead of its snapshot.
  Status PrepareBarrier(runtime::CheckpointId id, runtime::Collector& out) override;
  Status OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                   runtime::Collector& out) override;

  int64_t late_records_dropped() const { return late_records_dropped_; }
  // Windows whose state is held now.
  size_t open_windows() const;

 private:
  explicit WindowAggregateOperator(WindowAggregateSpec spec);
  Status Fire(const runtime::Timer& timer, RecordBatch* out);
  // After a restore: a checkpoint taken between two slices left windows behind the watermark.
  void ResumeFiring();
  // Adds the row to `acc`, or takes it back out (a -U / -D of a changelog).
  void Fold(const RecordBatch& batch, size_t row, internal::AggregateState* acc) const;
  // The windows held in memory (the .cc file has their layout).
  struct CachedWindow;
  struct CachedKey;
  struct Cache;
  // The row's key in the cache, added (with its sessions, for SESSION) when new. `text` is the
  // row's CacheKeyText, `key_size` what it returned, `hash` FlatStringMap::HashOf(text),
  // `position` where a lookup ahead found the key in the cache (FlatStringMap::npos: not found).
  Result<CachedKey*> CachedKeyOf(const RecordBatch& batch, size_t row, std::string_view text,
                                 size_t key_size, uint64_t hash, size_t position);
  // The row's key as the cache holds it (the split appended when scaled out) into *out; returns
  // the length of the key alone.
  size_t CacheKeyText(const RecordBatch& batch, size_t row, std::string* out) const;
  // TUMBLE, HOP, CUMULATE: folds the row into each of its windows that has not fired.
  Status AddToWindows(CachedKey& key, int64_t ts, const RecordBatch& batch, size_t row, bool* late);
  // SESSION: the row opens [ts, ts + gap) and merges with the key's sessions it touches. Sets
  // *late when the merged session already fired.
  Status AddToSession(CachedKey& key, int64_t ts, const RecordBatch& batch, size_t row, bool* late);
  // Writes every window held to the keyed state (accumulators, timers, a key's session list)
  // and empties the cache; FlushKey does it for one key.
  Status Flush();
  Status FlushKey(CachedKey& key);
  // The buffer at a barrier, a keyed state value per key group (kBufferLayout); a restore reads
  // it back: ReadBuffers for the subtask's key groups, ReadBuffer for one (then Renumber).
  Status WriteBuffers();
  Status ReadBuffers();
  Status ReadBuffer(uint32_t key_group);
  uint32_t KeyGroupOf(const CachedKey& key) const;
  // Windows held that the state never had fire from memory, without touching the state:
  // NoteDue records when one is due (RebuildDue when most records are stale), FireHeld appends
  // the due ones' rows to `out`, while it has fewer than `max_rows`; true when some are left.
  void NoteDue(const CachedKey& key, int64_t fires_at);
  void RebuildDue();
  // After keys left the cache: their positions again, and the due records.
  void Renumber();
  void DropKeysWithoutWindows();
  Result<bool> FireHeld(RecordBatch* out, size_t max_rows);
  // A fired window's output row. `scope`: the key's ClaimedSplits scope (its key group when
  // scaled out).
  Status AppendFired(const internal::AggregateState& acc, int64_t start, int64_t end,
                     uint64_t scope, RecordBatch* out) const;

  WindowAggregateSpec spec_;
  WindowClock clock_;
  std::shared_ptr<const BatchSchema> output_;
  internal::Aggregator aggregator_;
  // Reads one old blob: its watermark and late count, and nested keyed state (written before
  // the runtime owned keyed state) into the backend.
  Status ReadState(runtime::StateReader& state, runtime::Watermark* watermark, int64_t* late);

  runtime::KeyedStateBackend* state_ = nullptr;  // the runtime's
  internal::ClaimedSplits claims_;
  runtime::ValueState accumulators_;
  runtime::ValueState sessions_;  // SESSION: the open sessions of a key (namespace "")
  runtime::ValueState buffer_;    // WriteBuffers
  std::unique_ptr<Cache> cache_;
  std::string scratch_;  // a state value or cache key being read or built
  runtime::Watermark watermark_;
  bool firing_ = false;  // timers at or behind watermark_ may remain
  int64_t late_records_dropped_ = 0;
  int64_t late_reported_ = 0;               // the count last logged
  runtime::Metric* late_metric_ = nullptr;  // numLateRecordsDropped
  std::string task_;                        // for messages
  std::string shape_;  // what its state means, checked at a restore (internal::StateShape)
  uint32_t subtask_ = 0;
  int kind_column_ = -1;  // the input's kRowKindColumn, over a changelog
};

}  // namespace floe::sql
