#pragma once

// The aggregate functions of floe's SQL aggregations (window and GROUP BY): accumulators kept in
// keyed state as bytes, and their results. Internal to floe_sql_exec.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/sql/aggregate_plan.h"

namespace floe::sql::internal {

// The accumulators of one group (a key, and a window for window aggregates), with the group's
// key cells so its output row can be built from the state alone.
struct AggregateState {
  using Counts = std::map<std::string, int64_t>;
  // What only DISTINCT, retracting MIN / MAX and LISTAGG keep: on the heap, made on first write,
  // so the common accumulator stays small (held per key and window in memory).
  struct Sets {
    Counts distinct;  // COUNT(DISTINCT): each value, the rows holding it
    // MIN / MAX of a retracting aggregation: each value, the rows holding it, so the next one
    // is known when the kept one is retracted (Flink's MinWithRetract / MaxWithRetract).
    Counts values;
    std::vector<std::string> list;  // LISTAGG's values, in order
  };
  // Sets owned on the heap, made when first written and copied with their owner.
  class SetsHolder {
   public:
    SetsHolder() = default;
    SetsHolder(const SetsHolder& o) : p_(o.p_ ? std::make_unique<Sets>(*o.p_) : nullptr) {}
    SetsHolder& operator=(const SetsHolder& o) {
      p_ = o.p_ ? std::make_unique<Sets>(*o.p_) : nullptr;
      return *this;
    }
    SetsHolder(SetsHolder&&) noexcept = default;
    SetsHolder& operator=(SetsHolder&&) noexcept = default;
    Sets& Mutable();
    const Sets& Read() const;  // an empty one when none was made

   private:
    std::unique_ptr<Sets> p_;
  };
  struct One {
    int64_t count = 0;  // COUNT / rows summed (AVG)
    bool has = false;   // SUM / MIN / MAX / AVG saw a non-null value
    Int128 integer = 0;
    double floating = 0;
    std::string cell;  // MIN / MAX
    SetsHolder sets;

    // The sets, made when written; read, an absent one is empty.
    Counts& distinct() { return sets.Mutable().distinct; }
    Counts& values() { return sets.Mutable().values; }
    std::vector<std::string>& list() { return sets.Mutable().list; }
    const Counts& distinct() const { return sets.Read().distinct; }
    const Counts& values() const { return sets.Read().values; }
    const std::vector<std::string>& list() const { return sets.Read().list; }
  };
  std::string key;  // KeyOf(...)
  std::vector<One> aggs;
  // The rows added minus the rows retracted (Flink's record counter): at 0 the group is gone.
  int64_t rows = 0;

  std::string Encode() const;
  static Result<AggregateState> Decode(std::string_view bytes);
};

// The GROUP BY key of a row as bytes: per key column a presence byte and the value's cell.
// Decodable by AppendKey; equal keys give equal bytes.
std::string KeyOf(const RecordBatch& batch, size_t row, const std::vector<int>& key_columns);
// KeyOf into *out (replacing what it held), so a caller reusing one string allocates once.
void KeyOfInto(const RecordBatch& batch, size_t row, const std::vector<int>& key_columns,
               std::string* out);
// Appends the key's values to columns first_column.. of `out`.
Status AppendKey(std::string_view key, size_t num_keys, RecordBatch* out, size_t first_column);

// What the keyed state of an aggregation over `keys` and `calls` means, in words: "keys
// (course_id STRING); COUNT(*), SUM(n BIGINT)". Checkpointed with the operator and compared at a
// restore, so a job whose query changed under the same operator names is refused instead of
// reading accumulators of another shape.
std::string StateShape(const BatchSchema& input, const std::vector<int>& keys,
                       const std::vector<AggregateCall>& calls);
// Refuses (InvalidArgument) a restored shape other than this job's, naming the task.
Status CheckStateShape(std::string_view task, std::string_view restored, std::string_view mine);

// Folds rows into AggregateStates and turns them into result columns (types as planned).
class Aggregator {
 public:
  // `retracting`: rows may also be taken back (Retract), as an aggregation over a changelog.
  Aggregator(std::shared_ptr<const BatchSchema> input, std::vector<AggregateCall> calls,
             bool retracting = false)
      : input_(std::move(input)), calls_(std::move(calls)), retracting_(retracting) {}

  AggregateState Create(std::string key) const;
  // Folds row `row` of `batch` (the input schema) into `state`. NULLs are skipped.
  void Add(const RecordBatch& batch, size_t row, AggregateState* state) const;
  // Takes row `row` back out of `state` (a -U or -D of a changelog). REQUIRES: retracting.
  void Retract(const RecordBatch& batch, size_t row, AggregateState* state) const;
  // Folds `from` into `into` (merging session windows).
  void Merge(const AggregateState& from, AggregateState* into) const;
  // Appends one result per call to columns first_column.. of `out`.
  void AppendResults(const AggregateState& state, RecordBatch* out, size_t first_column) const;

  const std::vector<AggregateCall>& calls() const { return calls_; }

 private:
  // The result of `call` over `a`, appended to `out`.
  void AppendResult(const AggregateCall& call, const AggregateState::One& a, Column* out) const;

  std::shared_ptr<const BatchSchema> input_;
  std::vector<AggregateCall> calls_;
  bool retracting_ = false;
};

}  // namespace floe::sql::internal
