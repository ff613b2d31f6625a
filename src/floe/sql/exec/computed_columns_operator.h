#pragma once

#include <memory>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/time_zone.h"
#include "floe/runtime/operator.h"
#include "floe/sql/ast.h"

namespace floe::sql {

// A source table's computed columns (`name AS expr`, Flink's virtual columns), evaluated right
// after the source: the rows leave with every column of the table in declared order, so the
// WATERMARK, WHERE, GROUP BY and select list can use computed columns like physical ones.
struct ComputedColumnsSpec {
  std::string table;                          // for messages
  std::shared_ptr<const BatchSchema> input;   // the physical columns, as the source emits them
  std::vector<ColumnDef> columns;             // the table's columns, in declared order
  std::shared_ptr<const BatchSchema> output;  // every column, in declared order
  std::shared_ptr<const TimeZone> zone;       // 'table.local-time-zone' (null: UTC)
  // What a row whose computed columns fail does, as the table's 'scan.bad-records' says: fail
  // the batch (naming table, column and value), be skipped (counted in numRecordsInErrors), or
  // also go down side output 1 to the dead-letter table as (error_message STRING, row STRING:
  // its physical columns as a JSON object).
  enum class FailedRows { kFail, kSkip, kSideOutput };
  FailedRows failed_rows = FailedRows::kFail;
};

// What a computed column may be is what ScalarExpr evaluates (scalar_expr.h); the rest is
// refused by Compile with the expression's line and column. A row whose value cannot be computed
// fails the batch, naming the table, the column and the value.
class ComputedColumnsProgram {
 public:
  static Result<std::shared_ptr<const ComputedColumnsProgram>> Compile(
      const ComputedColumnsSpec& spec);
  // `watermark`: what CURRENT_WATERMARK reads (INT64_MIN: none yet).
  Result<RecordBatch> Apply(const RecordBatch& batch, int64_t watermark = INT64_MIN) const;
  ComputedColumnsSpec::FailedRows failed_rows() const;

  struct Impl;
  explicit ComputedColumnsProgram(std::unique_ptr<Impl> impl);
  ~ComputedColumnsProgram();

 private:
  std::unique_ptr<Impl> impl_;
};

class ComputedColumnsOperator final : public runtime::Operator {
 public:
  explicit ComputedColumnsOperator(std::shared_ptr<const ComputedColumnsProgram> program)
      : program_(std::move(program)) {}
  Status Open(const runtime::OperatorContext& ctx) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  // Remembered for CURRENT_WATERMARK (an aggregate's argument or key), as CalcOperator does.
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;

 private:
  std::shared_ptr<const ComputedColumnsProgram> program_;
  runtime::Watermark watermark_;
  std::string task_;
  runtime::Metric* errors_ = nullptr;  // rows skipped or dead-lettered
  uint64_t logged_ = 0;
};

}  // namespace floe::sql
