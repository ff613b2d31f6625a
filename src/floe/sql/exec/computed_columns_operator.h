#pragma once

#include <memory>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
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
};

// What a computed column may be (the rest is refused by Compile with the expression's line and
// column): a physical column, a literal, TO_TIMESTAMP_LTZ(epoch, 0 | 3) of an integer or DOUBLE
// epoch, and CAST between
//   the same type (TIMESTAMP(p) / TIMESTAMP_LTZ(p): truncated to p fractional digits),
//   INT, BIGINT, FLOAT, DOUBLE (integers out of range are an error), and INT/BIGINT to DECIMAL,
//   STRING to INT, BIGINT, DOUBLE, BOOLEAN, DATE, TIMESTAMP, TIMESTAMP_LTZ (parsed as Flink's
//   JSON does: "2026-01-01 10:00:00[.fff]" or with 'T'; a value that does not parse is an error
//   naming the table, column and value), INT/BIGINT to STRING,
//   TIMESTAMP <-> TIMESTAMP_LTZ (floe's session time zone is UTC), DATE -> TIMESTAMP(_LTZ),
//   TIMESTAMP(_LTZ) -> DATE, INT/BIGINT -> TIMESTAMP_LTZ (epoch seconds, as Flink).
// NULL in, NULL out.
class ComputedColumnsProgram {
 public:
  static Result<std::shared_ptr<const ComputedColumnsProgram>> Compile(
      const ComputedColumnsSpec& spec);
  Result<RecordBatch> Apply(const RecordBatch& batch) const;

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
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;

 private:
  std::shared_ptr<const ComputedColumnsProgram> program_;
};

}  // namespace floe::sql
