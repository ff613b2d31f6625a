#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/common/time_zone.h"
#include "floe/runtime/operator.h"
#include "floe/sql/ast.h"

namespace floe::sql {

// What an INSERT's SELECT does to each batch: keep the rows WHERE holds, then compute the select
// list into the sink's columns (matched by position, as in Flink's INSERT).
struct CalcSpec {
  std::shared_ptr<const BatchSchema> input;   // the source table's columns
  std::optional<Expr> where;                  // none = keep every row
  std::vector<SelectItem> select;             // empty = SELECT *
  std::shared_ptr<const BatchSchema> output;  // the sink table's columns (names, types, NOT NULL)
  std::string sink_name;                      // for messages
  std::shared_ptr<const TimeZone> zone;       // 'table.local-time-zone' (null: UTC)
};

// CalcProgram is a compiled CalcSpec (Flink's Calc: filter + projection), immutable and shared
// by the subtasks of a Calc vertex. WHERE and every select item beyond a column or a literal are
// ScalarExprs (comparisons, AND/OR/NOT with SQL's three-valued logic, CASE, arithmetic, CAST,
// functions); a row is kept only when the WHERE is TRUE, and the select list is evaluated for
// the rows kept only (Flink's Calc projects after its condition), so a dropped row cannot fail
// the batch.
//
// Changelog input (a last column named kRowKindColumn, see connector.h): expressions see only
// the declared columns; the kind column is appended to the output untouched for the rows kept.
//
// Each select item is converted to its sink column's type by Flink's implicit widening: INT ->
// BIGINT, DOUBLE, DECIMAL; BIGINT -> DOUBLE, DECIMAL; FLOAT -> DOUBLE; DECIMAL(p,s) -> DECIMAL
// with room for its digits; literals to any type that holds their value exactly. Anything else
// is refused by Compile, naming the query column, the sink column and both types. A NULL
// reaching a NOT NULL sink column fails Apply (Flink's default
// 'table.exec.sink.not-null-enforcer' = ERROR).
class CalcProgram {
 public:
  // Errors are InvalidArgument "line L, column C: ..." at the offending expression.
  static Result<std::shared_ptr<const CalcProgram>> Compile(const CalcSpec& spec);
  ~CalcProgram();

  // Rows of `batch` the WHERE keeps (all when there is none), in order; an error when a value
  // cannot be computed (an integer divided by zero, a CAST of text that does not parse).
  // REQUIRES: batch has the spec's input schema.
  Result<std::vector<uint32_t>> Filter(const RecordBatch& batch) const;
  // Filter + projection; the result has the output schema (possibly 0 rows). `watermark`:
  // what CURRENT_WATERMARK reads (INT64_MIN: none yet).
  Result<RecordBatch> Apply(const RecordBatch& batch, int64_t watermark = INT64_MIN) const;

  const std::shared_ptr<const BatchSchema>& output_schema() const;
  // No WHERE, SELECT *, and the sink's columns equal the source's: the Calc can be left out.
  bool is_identity() const;

  struct Impl;
  explicit CalcProgram(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// CalcOperator runs a CalcProgram on every batch; it emits nothing for a batch with no row left.
// Stateless (nothing in checkpoints); watermarks pass through, and the last one is what
// CURRENT_WATERMARK reads (the watermark assigner, or a source making its own, cuts batches
// where it rises, so that is the watermark Flink's Calc would see at each record). After a restore
// it is NULL until the first watermark arrives, as in Flink.
class CalcOperator final : public runtime::Operator {
 public:
  explicit CalcOperator(std::shared_ptr<const CalcProgram> program)
      : program_(std::move(program)) {}
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;

 private:
  std::shared_ptr<const CalcProgram> program_;
  runtime::Watermark watermark_;
};

}  // namespace floe::sql
