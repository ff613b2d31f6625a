#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/record_batch.h"

// The syntax tree of a floe SQL script (see README.md for the grammar). Plain values, no
// planning: names are kept as written (case-sensitive), types are already floe DataTypes.
namespace floe::sql {

// Where a node starts in the caller's original text (before ${VAR} substitution), 1-based;
// columns count UTF-8 code points. Positions are diagnostics, not meaning: any two SourcePos
// compare equal, so ASTs compare structurally (a hand-built tree equals a parsed one, and
// reformatting a script does not change its AST). Compare .line/.column to test positions.
struct SourcePos {
  int line = 0;
  int column = 0;
  // Byte offset in the text after ${VAR} substitution: lets the parser report an error at a
  // node it checks after parsing (with the source line and caret). Not for other modules.
  size_t offset = 0;
  bool operator==(const SourcePos&) const { return true; }
};

struct Literal {
  enum class Kind : uint8_t {
    kBoolean,  // TRUE, FALSE
    kInteger,  // digits that fit int64 (with an optional leading '-')
    kDecimal,  // digits with a '.' or too long for int64: exact, kept as text ("1.50")
    kDouble,   // has an exponent: 1e3, 2.5E-1
    kString,   // 'text' ('' is a quote); UTF-8 bytes as written
    kNull,     // NULL where its type comes from the context: a CASE result, CAST(NULL AS t)
  };
  Kind kind = Kind::kInteger;
  bool boolean = false;  // kBoolean
  int64_t integer = 0;   // kInteger
  double real = 0;       // kDouble
  std::string text;      // kString: the value; kDecimal: the number as written

  static Literal Boolean(bool v) { return {Kind::kBoolean, v, 0, 0, {}}; }
  static Literal Integer(int64_t v) { return {Kind::kInteger, false, v, 0, {}}; }
  static Literal Decimal(std::string v) { return {Kind::kDecimal, false, 0, 0, std::move(v)}; }
  static Literal Double(double v) { return {Kind::kDouble, false, 0, v, {}}; }
  static Literal String(std::string v) { return {Kind::kString, false, 0, 0, std::move(v)}; }
  static Literal Null() { return {Kind::kNull, false, 0, 0, {}}; }
  bool operator==(const Literal&) const = default;
};

enum class ExprKind : uint8_t {
  kColumn,     // name
  kLiteral,    // literal
  kCompare,    // op, children = {left, right}
  kAnd,        // children: 2 or more, as chained at one level ("a AND b AND c" -> 3)
  kOr,         // children: 2 or more
  kNot,        // children = {operand}
  kIsNull,     // children = {operand}
  kIsNotNull,  // children = {operand}
  kCall,       // name (upper case), children = arguments; distinct for COUNT(DISTINCT x);
               // COUNT(*) is name "COUNT" with star set and no children
  kCast,       // CAST(operand AS type): children = {operand}, cast_type; name "TRY_CAST" for
               // TRY_CAST (NULL where CAST fails), else empty
  kArith,      // arith, children = {left, right}
  kNegate,     // unary minus: children = {operand}
  kCase,       // CASE WHEN c1 THEN v1 ... ELSE e END: children = {c1, v1, ..., e}, the ELSE
               // always there (a NULL literal when not written); IF and NULLIF are written so
};

enum class CompareOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };  // kNe: both <> and !=
enum class ArithOp : uint8_t { kAdd, kSub, kMul, kDiv, kMod };    // + - * / %

// A type as written in SQL: floe's DataType plus the timestamp precision that DataType drops
// (time attributes must be TIMESTAMP(p) / TIMESTAMP_LTZ(p) with p <= 3, as in Flink).
struct SqlType {
  DataType type;
  int precision = 0;  // TIMESTAMP / TIMESTAMP_LTZ: as written (default 6); 0 for other types
  bool operator==(const SqlType&) const = default;
};

// "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)", "BIGINT", "DECIMAL(10, 2)": Flink's spelling.
std::string ToString(const SqlType& type);

// A scalar expression. Typed literals (DATE '2024-01-01') would extend ExprKind and
// ParsePrimary in parser.cc.
struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  std::string name;               // kColumn: the column; kCall: the function, upper case
  Literal literal;                // kLiteral
  CompareOp op = CompareOp::kEq;  // kCompare
  ArithOp arith = ArithOp::kAdd;  // kArith
  std::vector<Expr> children;
  bool distinct = false;  // kCall: COUNT(DISTINCT x)
  bool star = false;      // kCall: COUNT(*)
  SqlType cast_type;      // kCast
  SourcePos pos;  // the token that makes the node: column/literal, operator, NOT, IS, function

  static Expr Column(std::string name);
  static Expr Lit(Literal literal);
  static Expr Compare(CompareOp op, Expr left, Expr right);
  static Expr And(std::vector<Expr> operands);
  static Expr Or(std::vector<Expr> operands);
  static Expr Not(Expr operand);
  static Expr IsNull(Expr operand);
  static Expr IsNotNull(Expr operand);
  static Expr Call(std::string name, std::vector<Expr> args);
  static Expr CountStar();
  static Expr Cast(Expr operand, SqlType type);
  static Expr Arith(ArithOp op, Expr left, Expr right);
  static Expr Negate(Expr operand);
  // {c1, v1, c2, v2, ..., else}
  static Expr Case(std::vector<Expr> whens_thens_else);
  bool operator==(const Expr&) const = default;
};

// SQL text of an expression, fully parenthesised, names backquoted only where needed:
// "((active = TRUE) AND (seq > 10))". For messages and tests.
std::string ToString(const Expr& expr);
std::string_view ToString(CompareOp op);
std::string_view ToString(ArithOp op);

// A physical column (`name TYPE [NOT NULL]`) or a computed one (`name AS expr`, Flink's virtual
// column: computed from the physical columns when the table is read, skipped when it is
// written). A computed column's type is derived from its expression by the parser.
struct ColumnDef {
  std::string name;
  DataType type;
  bool not_null = false;  // as written; primary-key columns are NOT NULL in Flink regardless
  SourcePos pos;
  int precision = 0;             // TIMESTAMP / TIMESTAMP_LTZ precision (default 6), else 0
  std::optional<Expr> computed;  // `name AS expr`
  // `name TYPE METADATA [FROM 'key'] [VIRTUAL]`: a value the connector gives per record (a
  // Kafka record's topic, offset, timestamp), the key being the column's name without FROM.
  std::optional<std::string> metadata;
  bool is_virtual = false;  // VIRTUAL: read-only, never part of a sink's columns
  bool operator==(const ColumnDef&) const = default;

  SqlType sql_type() const { return {type, precision}; }
  // `name AS PROCTIME()`: the table's processing-time attribute.
  bool is_proctime() const {
    return computed && computed->kind == ExprKind::kCall && computed->name == "PROCTIME" &&
           computed->children.empty();
  }
};

// WATERMARK FOR column AS column [- INTERVAL 'n' unit]: bounded out-of-orderness on `column`
// (a TIMESTAMP(p) or TIMESTAMP_LTZ(p) column of the table, p <= 3, physical or computed). The
// column becomes the table's event-time attribute (rowtime). Richer watermark expressions would
// add an Expr here.
struct Watermark {
  std::string column;
  int64_t delay_millis = 0;
  SourcePos pos;
  bool operator==(const Watermark&) const = default;
};

struct SetStatement {
  std::string key;
  std::string value;
  SourcePos pos;
  bool operator==(const SetStatement&) const = default;
};

struct CreateTable {
  std::string name;
  std::vector<ColumnDef> columns;
  std::vector<std::string> primary_key;  // empty = none
  std::vector<std::string> partitioned_by;
  std::vector<std::pair<std::string, std::string>> options;  // WITH (...), in written order
  std::optional<Watermark> watermark;
  SourcePos pos;

  // The column called `name` (case-sensitive), or nullptr.
  const ColumnDef* FindColumn(std::string_view name) const;
  // Index of the column called `name` in `columns` (declared order, computed ones included),
  // or -1.
  int ColumnIndex(std::string_view name) const;
  // Whether any column is computed (`name AS expr`).
  bool has_computed_columns() const;
  bool operator==(const CreateTable&) const = default;
};

struct SelectItem {
  Expr expr;
  std::string alias;  // empty = none
  bool operator==(const SelectItem&) const = default;
};

enum class WindowKind : uint8_t { kTumble, kHop, kCumulate, kSession };
std::string_view ToString(WindowKind kind);  // "TUMBLE", "HOP", "CUMULATE", "SESSION"

// A window table-valued function in FROM, Flink's syntax:
//   TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))
//   TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size [, offset]))
//   TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, size [, offset]))
//   TABLE(SESSION(TABLE t [PARTITION BY k | PARTITION BY (k1, ...)], DESCRIPTOR(ts), gap))
// or with named arguments (DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE | SLIDE | STEP |
// GAP | OFFSET => INTERVAL ...), DATA first. It adds window_start, window_end and window_time to
// the table's columns. Durations are in milliseconds.
struct WindowTvf {
  WindowKind kind = WindowKind::kTumble;
  std::string time_column;                // DESCRIPTOR(ts)
  int64_t size_millis = 0;                // TUMBLE/HOP/CUMULATE size; SESSION gap
  int64_t step_millis = 0;                // HOP slide, CUMULATE step; 0 otherwise
  std::optional<int64_t> offset_millis;   // as written; may be negative
  std::vector<std::string> partition_by;  // SESSION's PARTITION BY
  SourcePos pos;                          // the function name (TUMBLE, ...)
  SourcePos time_column_pos;              // the column inside DESCRIPTOR(...)
  SourcePos offset_pos;                   // the offset's INTERVAL, when there is one
  bool operator==(const WindowTvf&) const = default;
};

// A legacy group window as written (GROUP BY TUMBLE(ts, INTERVAL ...), HOP(ts, slide, size),
// SESSION(ts, gap)), or one of its auxiliary functions (TUMBLE_START(...), ...): the parser
// writes it into a window TVF.
struct GroupWindowCall {
  WindowKind kind = WindowKind::kTumble;
  std::string column;
  std::vector<int64_t> intervals;  // milliseconds, as written
  std::string auxiliary;           // TUMBLE_START, ...; empty for the window itself
  size_t offset = 0;               // the function's name
  size_t column_offset = 0;
  bool operator==(const GroupWindowCall&) const = default;
};

// The output columns a window TVF adds, in this order.
inline constexpr std::string_view kWindowStart = "window_start";
inline constexpr std::string_view kWindowEnd = "window_end";
inline constexpr std::string_view kWindowTime = "window_time";

// ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) in a view or subquery, kept to a range by
// the query that reads it (`WHERE rn <= 3`): Flink's deduplication and Top-N. In the view's
// select list the number is the column kRowNumberColumn; the reading query's WHERE on it sets
// the range, and selecting it sets `selected`.
struct RowNumber {
  std::vector<std::string> partition_by;  // columns of the table read
  struct Order {
    std::string column;
    bool descending = false;
    bool nulls_first = true;  // NULLS FIRST / LAST; unwritten: first ascending, last descending
    bool proctime = false;    // ORDER BY PROCTIME() (no column): the order rows arrive in
    bool operator==(const Order&) const = default;
  };
  std::vector<Order> order_by;
  int64_t first = 1;  // the rank range kept, 1-based, inclusive
  int64_t last = 0;   // 0 until the reading query's WHERE sets it
  bool selected = false;
  SourcePos pos;  // ROW_NUMBER
  bool operator==(const RowNumber&) const = default;
};

// The row number's column in the rows of a query over ROW_NUMBER: BIGINT NOT NULL.
inline constexpr std::string_view kRowNumberColumn = "$rn";

struct Insert {
  std::string sink;
  std::vector<SelectItem> select;               // empty = SELECT *
  std::string source;                           // the table read (inside the window TVF, if any)
  std::optional<WindowTvf> window;              // FROM TABLE(TUMBLE(TABLE source, ...))
  std::optional<GroupWindowCall> group_window;  // the GROUP BY TUMBLE(...) `window` stands for
  std::optional<Expr> where;
  std::vector<Expr> group_by;  // GROUP BY items, as written; empty = no GROUP BY
  // GROUPING SETS, CUBE, ROLLUP: each grouping set as the indices (ascending) of its items in
  // group_by, which then holds each distinct item once. Empty for a plain GROUP BY.
  std::vector<std::vector<int>> grouping_sets;
  std::optional<Expr> having;
  // FROM a view or subquery planned as a source of its own (it aggregates, ranks, or is a
  // UNION ALL): its query (over a table) and its columns' names; `source` is then the view's
  // name. At most one element.
  std::vector<Insert> from_view;
  std::vector<std::string> from_view_columns;
  // Read through a view (or subquery) with ROW_NUMBER(): the rows are ranked per partition
  // after `where` (the view's), and only the ranks in the range go on.
  std::optional<RowNumber> row_number;
  // `query UNION ALL query ...`: the queries after the first, each into the same sink (their
  // `sink` set) or, in a view, into its columns; the first is this Insert.
  std::vector<Insert> union_all;
  SourcePos pos;
  SourcePos from_pos;      // the FROM keyword
  SourcePos group_by_pos;  // the GROUP keyword
  bool operator==(const Insert&) const = default;
};

// A parsed script. Statements of each kind keep their written order; `pos` orders them across
// kinds. Every INSERT names tables created earlier in the script and columns of its source.
struct Script {
  std::vector<SetStatement> sets;
  std::vector<CreateTable> tables;
  std::vector<Insert> inserts;

  // The table called `name` (case-sensitive), or nullptr.
  const CreateTable* FindTable(std::string_view name) const;
  bool operator==(const Script&) const = default;
};

}  // namespace floe::sql
