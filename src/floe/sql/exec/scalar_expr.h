#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/sql/ast.h"

namespace floe {
class TimeZone;
}

namespace floe::sql {

// ScalarExpr is one scalar expression compiled against a batch's columns and evaluated a
// column at a time into one value column, with Flink's semantics (NULL in, NULL out). Computed
// columns, the Calc (WHERE and the select list) and aggregate arguments evaluate with it.
//
// What is evaluated (the rest is refused by Compile with the expression's line and column):
// * columns and literals; NULL where CASE's other results or a CAST type it;
// * comparisons (sql/exec/comparisons.h), a string literal compared with a number, BOOLEAN,
//   DATE or TIMESTAMP cast to that type once, when compiled, as Flink's planner casts it;
//   AND / OR / NOT with SQL's three-valued logic (a BOOLEAN column, NULL for UNKNOWN), IS [NOT]
//   NULL; AND, OR, CASE and COALESCE are lazy, as Flink's generated code: an operand is
//   evaluated only for the rows the earlier ones left open, so it cannot fail for the others;
// * CASE (IF, NULLIF and IS [NOT] TRUE/FALSE arrive as CASE), its type the results' common type
//   (scalar_types.h CommonType);
// * arithmetic `+ - * / %`, MOD(a, b) and unary minus on INT, BIGINT, FLOAT and DOUBLE, with
//   Flink's result types (sql/scalar_types.h): INT and BIGINT wrap around on overflow as Java
//   does, integer division truncates toward zero, an integer divided by zero (or % 0) is an
//   error naming the value; FLOAT and DOUBLE follow IEEE 754; DECIMAL with DECIMAL or an
//   integer exactly (sql/exec/decimal_arithmetic.h), unary minus of a DECIMAL;
// * the string functions of sql/exec/string_functions.h and COALESCE;
// * TO_TIMESTAMP_LTZ(epoch, 0 | 3) of an integer or DOUBLE epoch;
// * CAST between
//   the same type (TIMESTAMP(p) / TIMESTAMP_LTZ(p): truncated to p fractional digits),
//   INT, BIGINT, FLOAT, DOUBLE (integers out of range are an error); DECIMAL to INT, BIGINT
//   (truncated), FLOAT, DOUBLE, STRING and DECIMAL (HALF_UP, NULL when it does not fit) and
//   INT/BIGINT/STRING to DECIMAL;
//   STRING to INT, BIGINT, DOUBLE, BOOLEAN, DATE, TIMESTAMP, TIMESTAMP_LTZ (parsed as Flink's
//   JSON does: "2026-01-01 10:00:00[.fff]" or with 'T'; a value that does not parse is an
//   error naming the value), INT/BIGINT to STRING, TIMESTAMP <-> TIMESTAMP_LTZ (in the
//   session zone: docs/sql.md, "The session time zone"), DATE -> TIMESTAMP(_LTZ), TIMESTAMP(_LTZ)
//   -> DATE, INT/BIGINT -> TIMESTAMP_LTZ (epoch seconds, as Flink), DATE to STRING ("2020-10-10")
//   and TIMESTAMP(p) / TIMESTAMP_LTZ(p) to STRING ("2020-10-10 00:00:04.000": p fraction digits; a
//   column's p as Field::precision declares it, else 6).
class ScalarExpr {
 public:
  // `place` ends the refusal of what is not evaluated: "in a computed column". `zone` is the
  // session time zone ('table.local-time-zone'; null: UTC).
  static Result<ScalarExpr> Compile(const Expr& e, const BatchSchema& input, std::string_view place,
                                    std::shared_ptr<const TimeZone> zone);
  ScalarExpr(ScalarExpr&&) noexcept;
  ScalarExpr& operator=(ScalarExpr&&) noexcept;
  ~ScalarExpr();

  const SqlType& type() const;
  const std::string& text() const;  // the expression's SQL, for messages

  // The value of every row of `batch` (which has the compiled input's columns). `keep`, when
  // given, has one byte per row: rows with 0 are not evaluated and come out NULL, so a row a
  // WHERE drops cannot fail. `what` names the value in a row's error: "table 't', computed
  // column 'c'". `watermark`: CURRENT_WATERMARK's value (INT64_MIN: none yet, NULL).
  Result<Column> Evaluate(const RecordBatch& batch, std::string_view what,
                          const uint8_t* keep = nullptr, int64_t watermark = INT64_MIN) const;

  struct Node;

 private:
  explicit ScalarExpr(std::unique_ptr<Node> root);
  std::unique_ptr<Node> root_;
  std::shared_ptr<const TimeZone> zone_;  // the nodes point into it
};

}  // namespace floe::sql
