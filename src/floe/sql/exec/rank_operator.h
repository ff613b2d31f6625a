#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/common/time_zone.h"
#include "floe/runtime/keyed_state.h"
#include "floe/runtime/operator.h"

namespace floe::sql {

// ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) kept to ranks 1..limit, over an append-only
// input: Flink's deduplication and Top-N, per partition key on keyed state.
struct RankSpec {
  std::shared_ptr<const BatchSchema> input;
  std::vector<int> partition_columns;  // the HASH edge into this operator uses the same columns
  struct Order {
    int column = -1;
    bool descending = false;
    bool nulls_first = true;
  };
  std::vector<Order> order;  // empty: the order rows arrive in (a processing-time attribute)
  int64_t limit = 1;
  // Keep-last deduplication (ORDER BY rowtime DESC, limit 1): a row whose time equals the kept
  // one's replaces it (Flink's RowTimeDeduplicateFunction); elsewhere the row kept first wins a
  // tie.
  bool ties_replace = false;
  bool output_number = false;  // emit the rank as kRowNumberColumn
  // Keep-first deduplication on arrival (ORDER BY proctime, limit 1): its rows are never
  // replaced, so it emits inserts only and its output has no row-kind column, as Flink's
  // ProcTimeDeduplicateKeepFirstRowFunction.
  bool insert_only = false;
  // The job's settings: state.backend.type and table.exec.state.ttl.
  std::map<std::string, std::string> job_config;
  // Window Top-N and window deduplication (Flink's WindowRank): each row's window is its
  // window_start / window_end columns (the partition is the other partition columns and the
  // window); a window's kept rows, ranks `first`..`limit`, go out once, as inserts, when the
  // watermark reaches its end - 1 ms, and its state goes; a row whose window has fired is
  // late and dropped. -1: not windowed.
  int window_start_column = -1;
  int window_end_column = -1;
  int64_t first = 1;
  // A window rank over windows of a TIMESTAMP_LTZ time: the session zone their wall-clock ends
  // fire in (WindowClock); else null.
  std::shared_ptr<const TimeZone> zone;
};

// The input's columns, [kRowNumberColumn BIGINT NOT NULL], then the row-kind column (none for a
// window rank or an insert-only deduplication: they emit inserts only).
std::shared_ptr<const BatchSchema> RankOutput(const RankSpec& spec);

// RankOperator keeps each partition's best `limit` rows, ordered by `order` (NULL first or last
// as each order says; equal keys in arrival order), and emits a changelog per input row,
// as Flink's append-only rank functions do:
//   limit 1 (deduplication, FastTop1Function): +I for a partition's first row; a better row
//     gives -U (the old) and +U (the new).
//   limit > 1 without the number (AppendOnlyTopNFunction): +I for a row that enters the top,
//     after -D for the row it pushes out.
//   limit > 1 with the number: the ranks from the new row's down shift, each a -U / +U pair of
//     the rows at that rank; a new last rank is +I.
// A row that does not enter the top emits nothing. Without an order (a processing-time
// attribute) every row ties: keep-first keeps a partition's first row, keep-last
// (`ties_replace`) each newer one. Subject to `table.exec.state.ttl`.
class RankOperator final : public runtime::Operator {
 public:
  static Result<std::unique_ptr<RankOperator>> Make(RankSpec spec);
  ~RankOperator() override;

  static Result<runtime::KeyedStateOptions> KeyedStateOptionsFor(const RankSpec& spec);
  Status Open(const runtime::OperatorContext& ctx) override;
  Status Restore(runtime::StateReader& state) override;
  Status RestoreRescaled(const std::vector<std::string>& states) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                   runtime::Collector& out) override;
  // A window rank fires the windows the watermark passed; otherwise the watermark goes on.
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;

  struct Entry;  // a kept row: its order key and its cells

 private:
  explicit RankOperator(RankSpec spec);
  bool windowed() const { return spec_.window_end_column >= 0; }
  // Whether a row of order key `order` enters `top`: always while it is not full, then only
  // ahead of the last kept row (a tie stays out, as in Flink), except keep-last deduplication,
  // where an equal time replaces it.
  bool Enters(const std::string& order, const std::vector<Entry>& top) const;
  // Puts `entry`, which Enters, at its rank in `top` (equal keys in arrival order; keep-last
  // deduplication: first), past the limit until the caller drops it; its position.
  size_t Place(Entry entry, std::vector<Entry>* top) const;
  // Places `entry` in a partition's `top` and appends the changes that makes.
  Status Rank(Entry entry, std::vector<Entry>* top, RecordBatch* changes);
  Status Append(const Entry& entry, int64_t rank, const char* kind, RecordBatch* changes) const;

  RankSpec spec_;
  std::shared_ptr<const BatchSchema> output_;
  std::vector<int> all_columns_;
  runtime::KeyedStateBackend* state_ = nullptr;
  runtime::ValueState kept_;
  std::string task_;
  std::string shape_;
  runtime::Watermark watermark_;  // a window rank's: windows up to it have fired
};

}  // namespace floe::sql
