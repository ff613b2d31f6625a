#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/sql/ast.h"

// The plan-level description of an INSERT whose query aggregates: a window aggregation over a
// window TVF (final results, append-only) or a regular GROUP BY (a changelog). It is what the
// planner validated and what a runtime aggregate operator consumes; plain values, no runtime
// types, so the operators in floe_sql_exec can include it without depending on the planner.
namespace floe::sql {

enum class AggregateFunction : uint8_t { kCount, kSum, kMin, kMax, kAvg, kListAgg };
std::string_view ToString(AggregateFunction function);  // "COUNT", "SUM", ...

// One aggregate of the select list.
//   COUNT(*)            input_column = -1; counts rows
//   COUNT(col)          counts rows where col is not NULL
//   COUNT(DISTINCT col) distinct = true; distinct non-NULL values (SUM, AVG, MIN, MAX likewise
//                       over each distinct value once)
//   SUM / MIN / MAX / AVG(col): over the non-NULL values; NULL when there are none
// Output types follow Flink: COUNT -> BIGINT NOT NULL; SUM keeps the input type (INT stays INT,
// overflow wraps as in Java), DECIMAL(p, s) -> DECIMAL(38, s); AVG keeps integer and floating
// types (AVG of INT is an INT, truncated toward zero), DECIMAL(p, s) -> DECIMAL(38, max(6, s));
// MIN / MAX keep the input type. All but COUNT are nullable.
struct AggregateCall {
  AggregateFunction function = AggregateFunction::kCount;
  int input_column = -1;  // index into AggregatePlan::input; -1 for COUNT(*)
  bool distinct = false;
  DataType output_type;
  bool nullable = true;
  // LISTAGG(col [, separator]): the STRING values in arrival order (DISTINCT: first seen), joined
  // by the separator (',' unless given as a literal); NULL when there are none.
  std::string separator = ",";
  bool operator==(const AggregateCall&) const = default;
};

// The window of a window aggregation. Times are epoch milliseconds; windows are half-open
// [start, end) and a window fires when the watermark reaches end - 1 (Flink's isWindowFired).
//   TUMBLE:   size
//   HOP:      size, step = slide; size is a whole multiple of step
//   CUMULATE: size (the max), step; size is a whole multiple of step
//   SESSION:  size = the gap; sessions per partition key (= the GROUP BY keys)
// offset shifts window starts (Flink's optional OFFSET; 0 when not written).
struct WindowSpec {
  WindowKind kind = WindowKind::kTumble;
  int64_t size_ms = 0;
  int64_t step_ms = 0;
  int64_t offset_ms = 0;
  int time_column = -1;  // index into AggregatePlan::input: the table's rowtime column
  bool operator==(const WindowSpec&) const = default;
};

// The source table's watermark: watermark = max(rowtime seen) - delay_ms.
struct WatermarkDef {
  int column = -1;  // index into AggregatePlan::input
  int64_t delay_ms = 0;
  bool operator==(const WatermarkDef&) const = default;
};

// Where an output column comes from.
struct AggregateOutput {
  enum class Kind : uint8_t {
    kKey,
    kWindowStart,
    kWindowEnd,
    kWindowTime,
    kAggregate,
    kExpression
  };
  Kind kind = Kind::kKey;
  int index = -1;  // kKey: into key_columns; kAggregate: into aggregates; else -1
  // kExpression: an expression over the aggregate's layout (AggregateLayout): grouped columns,
  // window columns and aggregates as columns named by their SQL (`COUNT(*) + 1` is
  // `` `COUNT(*)` + 1 ``).
  std::optional<Expr> expr;
  bool operator==(const AggregateOutput&) const = default;
};

struct AggregatePlan {
  std::string source;  // the table read
  std::string sink;    // the table written
  // The source's rows as the aggregate sees them: its columns in declared order, computed ones
  // included (evaluated before the aggregate); primary-key columns NOT NULL.
  std::shared_ptr<const BatchSchema> input;
  std::optional<WatermarkDef> watermark;  // the source's WATERMARK, if it has one
  std::optional<Expr> where;              // keeps input rows before they are aggregated
  std::optional<WindowSpec> window;       // none: a regular GROUP BY (changelog output)
  std::vector<int> key_columns;           // GROUP BY columns other than window_*, into input
  // GROUPING SETS, CUBE, ROLLUP: per grouping set, which key_columns it groups by. Empty for a
  // plain GROUP BY. The rows reach the aggregate once per set (Flink's Expand), the keys not in
  // the set NULL, with the set's index as a last key column, kGroupingSetColumn.
  std::vector<std::vector<bool>> grouping_sets;
  bool groups_by_window_time = false;     // window_time is in the GROUP BY too
  std::vector<AggregateCall> aggregates;  // in select-list order, then HAVING's; each call once
  // The SQL of each aggregate ("COUNT(*)"): its column's name in AggregateLayout, so messages
  // about expressions over it read as written. Not compared by ==.
  std::vector<std::string> aggregate_names;
  std::optional<Expr> having;            // over the layout, as AggregateOutput::expr
  std::vector<AggregateOutput> outputs;  // the select list, in order
  // Names (alias, else the column's name, else Flink's EXPR$<position>; duplicates get Flink's
  // 0, 1, ... suffix), types and nullability of `outputs`. window_start / window_end are
  // TIMESTAMP(3) NOT NULL; window_time is TIMESTAMP(3) or TIMESTAMP_LTZ(3) like the time column,
  // NOT NULL (floe's timestamps hold microseconds; window bounds are whole milliseconds).
  std::shared_ptr<const BatchSchema> output;

  // A regular GROUP BY emits updates (-U/+U) and its sink must accept a changelog; a window
  // aggregation emits final rows only (inserts).
  bool emits_changelog() const { return !window.has_value(); }
  bool operator==(const AggregatePlan& other) const;
};

// The key column that tells the grouping sets apart: BIGINT NOT NULL, the set's index.
inline constexpr std::string_view kGroupingSetColumn = "$e";

// Whether `name` (upper case) is an aggregate function floe runs: COUNT, SUM, MIN, MAX, AVG,
// LISTAGG.
bool IsAggregateFunction(std::string_view name);
// Whether `name` (upper case) is an aggregate Flink (Calcite) computes from others: VAR_POP,
// VAR_SAMP (VARIANCE), STDDEV_POP, STDDEV_SAMP (STDDEV), over SUM(x * x), SUM(x) and COUNT(x).
// The planner writes them so before PlanAggregate.
bool IsReducedAggregate(std::string_view name);
// Whether `e` calls an aggregate function anywhere.
bool ContainsAggregateCall(const Expr& e);

// Whether `insert` aggregates (GROUP BY, HAVING, an aggregate function in the select list); such
// an INSERT is planned by PlanAggregate.
bool IsAggregateQuery(const Insert& insert);

// The type an expression over `layout` has (the evaluator's, sql/exec/scalar_expr.h), or its
// error with the expression's line and column; the planner passes it, so this module does not
// depend on the evaluator.
using ExpressionTyper = std::function<Result<SqlType>(const Expr& e, const BatchSchema& layout)>;

// Validates an aggregating INSERT of `script` (parsed by ParseScript) and describes it. Errors
// are InvalidArgument "line L, column C: ..." at the offending item: a window TVF not consumed
// by a window aggregation, GROUP BY window_start without window_end (or the reverse), a
// DESCRIPTOR column that is not the table's WATERMARK column, select columns neither grouped
// nor aggregated, unsupported functions, expressions and argument types. Flink rejects most of
// these too; what is floe's own limit says "not supported yet".
// Select items that are expressions over grouped columns and aggregates, and HAVING, need
// `typer`; without one they are refused.
// REQUIRES: IsAggregateQuery(insert).
Result<AggregatePlan> PlanAggregate(const Script& script, const Insert& insert,
                                    const ExpressionTyper& typer = nullptr);

// The window of a window TVF over `source`: its DESCRIPTOR column must be the table's
// WATERMARK column; errors name the line and column.
Result<WindowSpec> PlanWindowTvf(const WindowTvf& window, const CreateTable& source);

// The columns an aggregate operator emits, as expressions over it see them: the GROUP BY keys
// (their names; with grouping sets, nullable unless in every set, then kGroupingSetColumn),
// window_start, window_end and window_time (a window aggregation), then the
// aggregates, named by aggregate_names.
std::shared_ptr<const BatchSchema> AggregateLayout(const AggregatePlan& plan);

// Every column of `table` in declared order, computed ones included, as rows carry them once the
// computed columns are evaluated; primary-key columns NOT NULL (Flink).
std::shared_ptr<const BatchSchema> RowSchemaOf(const CreateTable& table);

// Human-readable one-line summary for logs and tests, e.g.
// "TUMBLE(size=300000ms, time=event_time) keys=[course_id] aggs=[COUNT(*):BIGINT NOT NULL]".
std::string ToString(const AggregatePlan& plan);
// "TUMBLE(size=300000ms, time=event_time)"; `input` is the schema the time column indexes.
std::string ToString(const WindowSpec& window, const BatchSchema& input);

}  // namespace floe::sql
