#pragma once

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
  bool operator==(const SourcePos&) const { return true; }
};

struct Literal {
  enum class Kind : uint8_t {
    kBoolean,  // TRUE, FALSE
    kInteger,  // digits that fit int64 (with an optional leading '-')
    kDecimal,  // digits with a '.' or too long for int64: exact, kept as text ("1.50")
    kDouble,   // has an exponent: 1e3, 2.5E-1
    kString,   // 'text' ('' is a quote); UTF-8 bytes as written
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
};

enum class CompareOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };  // kNe: both <> and !=

// A scalar expression. Only what WHERE and the select list need today; new kinds (arithmetic,
// function calls, CAST, typed literals) extend ExprKind and ParsePrimary in parser.cc.
struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  std::string name;               // kColumn
  Literal literal;                // kLiteral
  CompareOp op = CompareOp::kEq;  // kCompare
  std::vector<Expr> children;
  SourcePos pos;  // the token that makes the node: column/literal, operator, NOT, IS

  static Expr Column(std::string name);
  static Expr Lit(Literal literal);
  static Expr Compare(CompareOp op, Expr left, Expr right);
  static Expr And(std::vector<Expr> operands);
  static Expr Or(std::vector<Expr> operands);
  static Expr Not(Expr operand);
  static Expr IsNull(Expr operand);
  static Expr IsNotNull(Expr operand);
  bool operator==(const Expr&) const = default;
};

// SQL text of an expression, fully parenthesised, names backquoted only where needed:
// "((active = TRUE) AND (seq > 10))". For messages and tests.
std::string ToString(const Expr& expr);
std::string_view ToString(CompareOp op);

struct ColumnDef {
  std::string name;
  DataType type;
  bool not_null = false;  // as written; primary-key columns are NOT NULL in Flink regardless
  SourcePos pos;
  bool operator==(const ColumnDef&) const = default;
};

// WATERMARK FOR column AS column [- INTERVAL 'n' unit]: bounded out-of-orderness on `column`
// (a TIMESTAMP or TIMESTAMP_LTZ column of the table). Richer watermark expressions would add an
// Expr here.
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
  bool operator==(const CreateTable&) const = default;
};

struct SelectItem {
  Expr expr;
  std::string alias;  // empty = none
  bool operator==(const SelectItem&) const = default;
};

struct Insert {
  std::string sink;
  std::vector<SelectItem> select;  // empty = SELECT *
  std::string source;
  std::optional<Expr> where;
  SourcePos pos;
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
