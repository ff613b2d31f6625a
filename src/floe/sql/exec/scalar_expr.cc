#include "floe/sql/exec/scalar_expr.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include "floe/common/civil_time.h"
#include "floe/common/time_zone.h"
#include "floe/common/uuid.h"
#include "floe/format/json/json_lines.h"
#include "floe/format/json/text_format_internal.h"
#include "floe/sql/exec/comparisons.h"
#include "floe/sql/exec/decimal_arithmetic.h"
#include "floe/sql/exec/string_functions.h"
#include "floe/sql/exec/time_functions.h"
#include "floe/sql/scalar_types.h"

namespace floe::sql {

// A compiled expression node: what it reads and the SQL type it yields.
struct ScalarExpr::Node {
  enum class Kind {
    kColumn,
    kLiteral,
    kCast,
    kToTimestampLtz,
    kArith,
    kNegate,
    kFunction,  // fn: UPPER, SUBSTRING, COALESCE, ... (ScalarFunctionType's list)
    kCompare,   // comparison
    kAnd,       // children: two or more BOOLEANs
    kOr,
    kNot,
    kIsNull,    // negated: IS NOT NULL
    kCase,      // children: when, then, ..., else (Expr's kCase)
    kZoneShift  // a TIMESTAMP_LTZ to the session zone's wall clock (TIMESTAMP), or back
  } kind = Kind::kColumn;
  // kFunction, resolved from the name when compiled (rows never compare names).
  enum class Fn {
    kUpper,
    kLower,
    kCharLength,
    kTrim,
    kLtrim,
    kRtrim,
    kConcat,
    kConcatWs,
    kReplace,
    kSubstring,
    kLeft,
    kRight,
    kPosition,
    kLike,
    kCoalesce,
    kToTimestamp,
    kExtract,
    kDateFormat,
    kNow,  // CURRENT_TIMESTAMP, LOCALTIMESTAMP, CURRENT_DATE, CURRENT_TIME: the clock, per batch
    kCurrentWatermark,  // the operator's watermark when the batch came, NULL before the first
    kRand,              // RAND(): a uniform DOUBLE in [0, 1) per row
    kRandInteger,       // RAND_INTEGER(n): a uniform INT in [0, n) per row
    kUuid,              // UUID(): a random (version 4) UUID per row
    kJsonValue,
    kRegexpExtract,
    kFloor,
    kCeil,
    kTimestampAdd,
    kTimestampDiff,
    kPower,
    kSqrt,
    kAbs
  } fn = Fn::kUpper;
  SqlType type;
  SourcePos pos;
  std::string text;                   // for messages
  int column = -1;                    // kColumn: into the input
  Column literal{DataType::Int64()};  // kLiteral: one value of `type`
  int64_t epoch_unit = 1;             // kToTimestampLtz: micros per epoch unit
  ArithOp op = ArithOp::kAdd;         // kArith
  Comparison comparison;              // kCompare
  bool negated = false;               // kIsNull: IS NOT NULL
  bool null_on_failure = false;       // kCast: TRY_CAST
  bool to_local = false;              // kZoneShift: instant -> wall clock (else back)
  // The session zone where the node depends on it (kZoneShift, a STRING -> TIMESTAMP_LTZ cast,
  // FLOOR / CEIL of a TIMESTAMP_LTZ, the clock functions); null for UTC.
  const TimeZone* zone = nullptr;
  std::vector<Node> children;
};

namespace {

using Node = ScalarExpr::Node;

// The generator of RAND, RAND_INTEGER and UUID: one per thread (each subtask runs on its own),
// seeded from the system's entropy, so values differ between runs and replays, as in Flink.
std::mt19937_64& RandomEngine() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

// UUID(): as Java's UUID.randomUUID().toString().
std::string RandomUuid() {
  const uint64_t hi = RandomEngine()();
  return UuidV4Text(hi, RandomEngine()());
}

std::string Where(const SourcePos& pos) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": ";
}

bool IsInteger(TypeId id) { return id == TypeId::kInt32 || id == TypeId::kInt64; }
bool IsFloating(TypeId id) { return id == TypeId::kFloat || id == TypeId::kDouble; }
bool IsTimestamp(TypeId id) { return id == TypeId::kTimestamp || id == TypeId::kTimestampTz; }
// The types whose SQL precision is their fraction's digits.
bool HasFraction(TypeId id) { return IsTimestamp(id) || id == TypeId::kTime; }

// A TIME as Flink casts it to STRING: "HH:mm:ss" and, for precision p > 0, p fraction digits.
std::string TimeText(int64_t micros, int precision) {
  std::string text;
  AppendTime(micros, TimestampFormat{}, &text);  // ".ffffff" always
  text.resize(precision <= 0 ? 8 : 9 + std::min(precision, 6));
  return text;
}

// A timestamp as Flink casts it to STRING: "yyyy-MM-dd HH:mm:ss" and, for precision p > 0, a
// fraction of exactly p digits (TIMESTAMP(3): "2020-10-10 00:00:04.000").
std::string TimestampText(int64_t micros, int precision) {
  TimestampFormat format;
  format.separator = ' ';
  std::string text;
  AppendTimestamp(micros, format, &text);  // ".ffffff" always
  const size_t dot = text.rfind('.');
  if (dot != std::string::npos) text.resize(precision <= 0 ? dot : dot + 1 + precision);
  return text;
}

// Whether CAST(from AS to) is evaluated (see the header).
bool CastSupported(const SqlType& from, const SqlType& to) {
  const TypeId a = from.type.id, b = to.type.id;
  if (a == b && a != TypeId::kDecimal) return true;
  const bool num_a = IsInteger(a) || IsFloating(a), num_b = IsInteger(b) || IsFloating(b);
  if (num_a && num_b) return true;
  if (a == TypeId::kDecimal) return num_b || b == TypeId::kDecimal || b == TypeId::kString;
  if ((IsInteger(a) || IsFloating(a)) && b == TypeId::kDecimal) return true;
  if (a == TypeId::kString) {
    return IsInteger(b) || b == TypeId::kDouble || b == TypeId::kBoolean || b == TypeId::kDate ||
           HasFraction(b) || b == TypeId::kDecimal;
  }
  if (IsInteger(a) && (b == TypeId::kString || b == TypeId::kBoolean)) return true;
  if (IsTimestamp(a) && IsTimestamp(b)) return true;
  if ((IsTimestamp(a) || a == TypeId::kDate) && b == TypeId::kString) return true;
  if (a == TypeId::kDate && IsTimestamp(b)) return true;
  if (IsTimestamp(a) && b == TypeId::kDate) return true;
  if ((a == TypeId::kTime && (IsTimestamp(b) || b == TypeId::kString)) ||
      (IsTimestamp(a) && b == TypeId::kTime)) {
    return true;
  }
  return IsInteger(a) && b == TypeId::kTimestampTz;
}

// What an expression is compiled against: the input's columns, where it stands (for refusals),
// and the session time zone when it is not UTC (null: UTC, nothing to shift).
struct Scope {
  const BatchSchema& input;
  std::string_view place;
  const TimeZone* zone;
};

Result<Node> CompileArith(const Expr& e, ArithOp op, const Scope& scope);
Result<Node> CompileNode(const Expr& e, const Scope& scope);

bool IsNullLiteral(const Expr& e) {
  return e.kind == ExprKind::kLiteral && e.literal.kind == Literal::Kind::kNull;
}

// NULL as a value of `type` (a CASE result, CAST(NULL AS type)).
Node NullOf(const SqlType& type, const SourcePos& pos) {
  Node n;
  n.kind = Node::Kind::kLiteral;
  n.type = type;
  n.pos = pos;
  n.text = "NULL";
  n.literal = Column(type.type);
  n.literal.AppendNull();
  return n;
}

// `child` (a TIMESTAMP_LTZ) as the session zone's wall clock, a TIMESTAMP of its precision, or
// (`to_local` false; a TIMESTAMP) the instant of that wall clock, as Flink casts between them.
Node ShiftZone(Node child, bool to_local, const TimeZone* zone) {
  Node n;
  n.kind = Node::Kind::kZoneShift;
  n.pos = child.pos;
  n.text = child.text;
  n.to_local = to_local;
  n.zone = zone;
  n.type =
      SqlType{to_local ? DataType::Timestamp() : DataType::TimestampTz(), child.type.precision};
  n.children.push_back(std::move(child));
  return n;
}

// In a session zone other than UTC, a TIMESTAMP_LTZ argument of a function that reads its
// fields (EXTRACT, DATE_FORMAT) reads the zone's wall clock, as Flink's.
void ReadLtzInZone(Node* arg, const Scope& scope) {
  if (scope.zone != nullptr && arg->type.type.id == TypeId::kTimestampTz) {
    *arg = ShiftZone(std::move(*arg), true, scope.zone);
  }
}

// An exact operand's digits as a decimal; an integer literal has only its own.
DecimalShape ShapeOf(const Node& n, const Expr& e) {
  const DataType& t = n.type.type;
  if (t.id == TypeId::kDecimal) return {t.precision, t.scale};
  if (e.kind == ExprKind::kLiteral && e.literal.kind == Literal::Kind::kInteger) {
    int digits = 1;
    for (int64_t v = e.literal.integer; v >= 10 || v <= -10; v /= 10) ++digits;
    return {digits, 0};
  }
  return {t.id == TypeId::kInt32 ? 10 : 19, 0};
}

// A string literal compared with a value of another type is that type's value, as Flink's
// planner casts it (BIGINT for integers, DOUBLE for FLOAT); cast once, here.
Result<Node> CastLiteral(const Node& literal, const SqlType& to, const TimeZone* zone);

Status CoerceStringLiteral(const Node& other, const TimeZone* zone, Node* side) {
  if (side->kind != Node::Kind::kLiteral || side->type.type.id != TypeId::kString ||
      side->literal.IsNull(0)) {
    return Status::OK();
  }
  const TypeId id = other.type.type.id;
  SqlType to = other.type;
  if (IsInteger(id)) {
    to = SqlType{DataType::Int64(), 0};
  } else if (IsFloating(id)) {
    to = SqlType{DataType::Double(), 0};
  } else if (id != TypeId::kBoolean && id != TypeId::kDate && !HasFraction(id)) {
    return Status::OK();
  }
  FLOE_ASSIGN_OR_RAISE(*side, CastLiteral(*side, to, zone));
  return Status::OK();
}

Result<Node> CompileCompare(const Expr& e, const Scope& scope, Node n) {
  n.kind = Node::Kind::kCompare;
  n.type.type = DataType::Boolean();
  FLOE_ASSIGN_OR_RAISE(Node l, CompileNode(e.children.at(0), scope));
  FLOE_ASSIGN_OR_RAISE(Node r, CompileNode(e.children.at(1), scope));
  FLOE_RETURN_NOT_OK(CoerceStringLiteral(r, scope.zone, &l));
  FLOE_RETURN_NOT_OK(CoerceStringLiteral(l, scope.zone, &r));
  Result<Comparison> c = PlanComparison(e.op, l.type.type, ShapeOf(l, e.children[0]), r.type.type,
                                        ShapeOf(r, e.children[1]));
  if (!c.ok()) {
    return Status::InvalidArgument(Where(e.pos) + "cannot compare " + SqlTypeName(l.type.type) +
                                   " with " + SqlTypeName(r.type.type) + " in " + n.text +
                                   c.status().message());
  }
  n.comparison = *c;
  n.children.push_back(std::move(l));
  n.children.push_back(std::move(r));
  return n;
}

// AND, OR, NOT, IS [NOT] NULL: BOOLEAN; the operands of the first three must be BOOLEAN.
Result<Node> CompileLogic(const Expr& e, const Scope& scope, Node n) {
  n.type.type = DataType::Boolean();
  n.kind = e.kind == ExprKind::kAnd   ? Node::Kind::kAnd
           : e.kind == ExprKind::kOr  ? Node::Kind::kOr
           : e.kind == ExprKind::kNot ? Node::Kind::kNot
                                      : Node::Kind::kIsNull;
  n.negated = e.kind == ExprKind::kIsNotNull;
  for (const Expr& c : e.children) {
    FLOE_ASSIGN_OR_RAISE(Node child, CompileNode(c, scope));
    if (n.kind != Node::Kind::kIsNull && child.type.type.id != TypeId::kBoolean) {
      const char* what = n.kind == Node::Kind::kAnd  ? "AND"
                         : n.kind == Node::Kind::kOr ? "OR"
                                                     : "NOT";
      return Status::InvalidArgument(Where(c.pos) + what + " needs BOOLEAN operands, but " +
                                     child.text + " is " + SqlTypeName(child.type.type));
    }
    n.children.push_back(std::move(child));
  }
  return n;
}

// CASE: BOOLEAN conditions; the results' common type (CommonType), NULL results typed by it.
Result<Node> CompileCase(const Expr& e, const Scope& scope, Node n) {
  n.kind = Node::Kind::kCase;
  std::vector<DataType> types;
  int precision = 0;
  n.children.resize(e.children.size());
  for (size_t i = 0; i < e.children.size(); ++i) {
    const Expr& c = e.children[i];
    const bool result = i % 2 == 1 || i + 1 == e.children.size();
    if (result && IsNullLiteral(c)) continue;
    FLOE_ASSIGN_OR_RAISE(n.children[i], CompileNode(c, scope));
    const SqlType& t = n.children[i].type;
    if (!result && t.type.id != TypeId::kBoolean) {
      return Status::InvalidArgument(Where(c.pos) + "CASE WHEN needs a BOOLEAN condition, but " +
                                     n.children[i].text + " is " + ToString(t));
    }
    if (result) {
      types.push_back(t.type);
      precision = std::max(precision, t.precision);
    }
  }
  if (types.empty()) {
    return Status::InvalidArgument(Where(e.pos) +
                                   "CASE needs a result that is not NULL (ELSE or a THEN)");
  }
  Result<DataType> type = CommonType(types);
  if (!type.ok()) {
    return Status::InvalidArgument(Where(e.pos) + "CASE's results: " + type.status().message());
  }
  n.type = SqlType{*type, IsTimestamp(type->id) ? precision : 0};
  for (size_t i = 1; i < e.children.size(); i += 2) {
    if (IsNullLiteral(e.children[i])) n.children[i] = NullOf(n.type, e.children[i].pos);
  }
  if (IsNullLiteral(e.children.back())) n.children.back() = NullOf(n.type, e.children.back().pos);
  return n;
}

// The function a name ScalarFunctionType accepted stands for.
Node::Fn FunctionOf(const std::string& name) {
  static const std::pair<std::string_view, Node::Fn> kNames[] = {
      {"UPPER", Node::Fn::kUpper},
      {"LOWER", Node::Fn::kLower},
      {"CHAR_LENGTH", Node::Fn::kCharLength},
      {"CHARACTER_LENGTH", Node::Fn::kCharLength},
      {"TRIM", Node::Fn::kTrim},
      {"LTRIM", Node::Fn::kLtrim},
      {"RTRIM", Node::Fn::kRtrim},
      {"CONCAT", Node::Fn::kConcat},
      {"CONCAT_WS", Node::Fn::kConcatWs},
      {"REPLACE", Node::Fn::kReplace},
      {"SUBSTRING", Node::Fn::kSubstring},
      {"LEFT", Node::Fn::kLeft},
      {"RIGHT", Node::Fn::kRight},
      {"POSITION", Node::Fn::kPosition},
      {"LOCATE", Node::Fn::kPosition},
      {"LIKE", Node::Fn::kLike},
      {"COALESCE", Node::Fn::kCoalesce},
      {"TO_TIMESTAMP", Node::Fn::kToTimestamp},
      {"EXTRACT", Node::Fn::kExtract},
      {"DATE_FORMAT", Node::Fn::kDateFormat},
      {"CURRENT_TIMESTAMP", Node::Fn::kNow},
      {"PROCTIME", Node::Fn::kNow},  // a processing-time attribute read as a value: the clock
      {"CURRENT_WATERMARK", Node::Fn::kCurrentWatermark},
      {"RAND", Node::Fn::kRand},
      {"RAND_INTEGER", Node::Fn::kRandInteger},
      {"UUID", Node::Fn::kUuid},
      {"LOCALTIMESTAMP", Node::Fn::kNow},
      {"CURRENT_DATE", Node::Fn::kNow},
      {"CURRENT_TIME", Node::Fn::kNow},
      {"LOCALTIME", Node::Fn::kNow},
      {"JSON_VALUE", Node::Fn::kJsonValue},
      {"REGEXP_EXTRACT", Node::Fn::kRegexpExtract},
      {"FLOOR", Node::Fn::kFloor},
      {"CEIL", Node::Fn::kCeil},
      {"TIMESTAMPADD", Node::Fn::kTimestampAdd},
      {"TIMESTAMPDIFF", Node::Fn::kTimestampDiff},
      {"POWER", Node::Fn::kPower},
      {"SQRT", Node::Fn::kSqrt},
      {"ABS", Node::Fn::kAbs},
  };
  for (const auto& [n, fn] : kNames) {
    if (n == name) return fn;
  }
  return Node::Fn::kCoalesce;  // unreachable: ScalarFunctionType knows no other name
}

// A literal: one value of its type (Flink's: an integer is INT when it fits, else BIGINT).
Result<Node> CompileLiteral(const Expr& e, Node n) {
  n.kind = Node::Kind::kLiteral;
  const Literal& l = e.literal;
  switch (l.kind) {
    case Literal::Kind::kBoolean:
      n.type.type = DataType::Boolean();
      n.literal = Column(n.type.type);
      n.literal.Append<uint8_t>(l.boolean ? 1 : 0);
      return n;
    case Literal::Kind::kInteger:
      if (l.integer >= std::numeric_limits<int32_t>::min() &&
          l.integer <= std::numeric_limits<int32_t>::max()) {
        n.type.type = DataType::Int32();
        n.literal = Column(n.type.type);
        n.literal.Append<int32_t>(static_cast<int32_t>(l.integer));
      } else {
        n.type.type = DataType::Int64();
        n.literal = Column(n.type.type);
        n.literal.Append<int64_t>(l.integer);
      }
      return n;
    case Literal::Kind::kDouble:
      n.type.type = DataType::Double();
      n.literal = Column(n.type.type);
      n.literal.Append<double>(l.real);
      return n;
    case Literal::Kind::kString:
      n.type.type = DataType::String();
      n.literal = Column(n.type.type);
      n.literal.AppendBytes(l.text);
      return n;
    case Literal::Kind::kDecimal: {
      Int128 unscaled = 0;
      Result<DataType> type = DecimalLiteralType(l.text, &unscaled);
      if (!type.ok()) return Status::InvalidArgument(Where(e.pos) + type.status().message());
      n.type.type = *type;
      n.literal = Column(n.type.type);
      n.literal.Append<Int128>(unscaled);
      return n;
    }
    case Literal::Kind::kNull:
      return Status::InvalidArgument(Where(e.pos) +
                                     "NULL is not a value here; write CAST(NULL AS type)");
  }
  return Status::Internal("unknown literal kind");
}

// TO_TIMESTAMP's literal pattern: every letter one floe reads (time::ParseWithPattern).
Status CheckPattern(const Expr& e, const Node& n) {
  if (n.children.size() < 2 || n.children[1].kind != Node::Kind::kLiteral) return Status::OK();
  const Column& pattern = n.children[1].literal;
  if (pattern.IsNull(0)) return Status::OK();
  const char letter = time::UnsupportedPatternLetter(pattern.GetBytes(0));
  if (letter == 0) return Status::OK();
  return Status::NotImplemented(Where(e.children[1].pos) + "not implemented yet: pattern letter '" +
                                std::string(1, letter) + "' in " + n.text +
                                " (TO_TIMESTAMP reads y, M, MM, d, dd, H, HH, m, mm, s, ss, S and "
                                "quoted text)");
}

// CAST `n` of `child`. In a session zone other than UTC, a TIMESTAMP_LTZ cast to TIMESTAMP,
// DATE or STRING is read as the zone's wall clock, a TIMESTAMP or DATE cast to TIMESTAMP_LTZ is
// the instant of its wall clock, and a STRING cast to TIMESTAMP_LTZ without an offset is a wall
// clock too (Flink's cast rules).
Node CompileCastInZone(Node n, Node child, const Scope& scope) {
  const TypeId from = child.type.type.id, to = n.type.type.id;
  if (scope.zone != nullptr && from == TypeId::kTimestampTz && to != TypeId::kTimestampTz) {
    child = ShiftZone(std::move(child), true, scope.zone);
  } else if (scope.zone != nullptr && to == TypeId::kTimestampTz &&
             (from == TypeId::kTimestamp || from == TypeId::kDate || from == TypeId::kTime)) {
    Node local = n;
    local.type.type = DataType::Timestamp();
    local.children.push_back(std::move(child));
    return ShiftZone(std::move(local), false, scope.zone);
  } else if (to == TypeId::kTimestampTz && from == TypeId::kString) {
    n.zone = scope.zone;
  }
  n.children.push_back(std::move(child));
  return n;
}

// TO_TIMESTAMP_LTZ(epoch, 0 | 3): epoch seconds or milliseconds as an instant.
Result<Node> CompileToTimestampLtz(const Expr& e, const Scope& scope, Node n) {
  n.kind = Node::Kind::kToTimestampLtz;
  FLOE_ASSIGN_OR_RAISE(Node epoch, CompileNode(e.children[0], scope));
  const TypeId id = epoch.type.type.id;
  if (!IsInteger(id) && id != TypeId::kDouble) {
    return Status::NotImplemented(Where(e.pos) + "not implemented yet: TO_TIMESTAMP_LTZ of " +
                                  ToString(epoch.type) + " (INT, BIGINT or DOUBLE epochs)");
  }
  const int64_t precision = e.children[1].literal.integer;
  n.epoch_unit = precision == 3 ? 1000 : kMicrosPerSecond;
  n.type = SqlType{DataType::TimestampTz(), static_cast<int>(precision)};
  n.children.push_back(std::move(epoch));
  return n;
}

Result<Node> CompileNode(const Expr& e, const Scope& scope) {
  Node n;
  n.pos = e.pos;
  n.text = ToString(e);
  switch (e.kind) {
    case ExprKind::kColumn: {
      n.kind = Node::Kind::kColumn;
      n.column = scope.input.FieldIndex(e.name);
      if (n.column < 0) {
        return Status::InvalidArgument(Where(e.pos) + "unknown column '" + e.name + "' " +
                                       std::string(scope.place));
      }
      // Timestamps hold microseconds: precision 6 is the safe reading where none is declared.
      const Field& f = scope.input.fields[static_cast<size_t>(n.column)];
      n.type = SqlType{f.type, HasFraction(f.type.id) && f.precision >= 0 ? f.precision : 6};
      return n;
    }
    case ExprKind::kLiteral:
      return CompileLiteral(e, std::move(n));
    case ExprKind::kCast: {
      if (IsNullLiteral(e.children.at(0))) return NullOf(e.cast_type, e.pos);
      n.kind = Node::Kind::kCast;
      n.null_on_failure = e.name == "TRY_CAST";
      FLOE_ASSIGN_OR_RAISE(Node child, CompileNode(e.children.at(0), scope));
      n.type = e.cast_type;
      if (!CastSupported(child.type, n.type)) {
        return Status::NotImplemented(Where(e.pos) + "not implemented yet: CAST from " +
                                      ToString(child.type) + " to " + ToString(n.type) + " " +
                                      std::string(scope.place));
      }
      return CompileCastInZone(std::move(n), std::move(child), scope);
    }
    case ExprKind::kCall: {
      if (e.name == "TO_TIMESTAMP_LTZ" && e.children.size() == 2 &&
          e.children[1].kind == ExprKind::kLiteral) {
        return CompileToTimestampLtz(e, scope, std::move(n));
      }
      if (e.name == "MOD" && e.children.size() == 2 && !e.distinct) {
        return CompileArith(e, ArithOp::kMod, scope);
      }
      if ((e.name == "CURRENT_DATABASE" || e.name == "CURRENT_CATALOG") && e.children.empty()) {
        Expr name = Expr::Lit(
            Literal::String(e.name == "CURRENT_DATABASE" ? "default_database" : "default_catalog"));
        name.pos = e.pos;
        return CompileLiteral(name, std::move(n));
      }
      if (e.distinct || e.star) break;
      std::vector<DataType> types;
      for (const Expr& child : e.children) {
        FLOE_ASSIGN_OR_RAISE(Node arg, CompileNode(child, scope));
        types.push_back(arg.type.type);
        n.children.push_back(std::move(arg));
      }
      Result<DataType> type = ScalarFunctionType(e.name, types);
      if (type.status().code() == StatusCode::kNotFound) break;
      if (!type.ok()) return Status::InvalidArgument(Where(e.pos) + type.status().message());
      n.kind = Node::Kind::kFunction;
      n.fn = FunctionOf(e.name);
      n.type.type = *type;
      if (n.fn == Node::Fn::kToTimestamp) {
        n.type.precision = 3;
        FLOE_RETURN_NOT_OK(CheckPattern(e, n));
      }
      if (n.fn == Node::Fn::kFloor || n.fn == Node::Fn::kCeil) {
        n.type.precision = n.children[0].type.precision;
        n.zone = scope.zone;
      }
      if (n.fn == Node::Fn::kCurrentWatermark) n.type.precision = 3;
      if (n.fn == Node::Fn::kNow) {
        n.zone = scope.zone;
        n.type.precision = n.type.type.id == TypeId::kTime ? 0 : 3;  // CURRENT_TIME is TIME(0)
      }
      if (n.fn == Node::Fn::kExtract) ReadLtzInZone(&n.children[1], scope);
      if (n.fn == Node::Fn::kDateFormat) ReadLtzInZone(&n.children[0], scope);
      if (n.fn == Node::Fn::kTimestampAdd) {
        n.type.precision = n.children[2].type.precision;
        const std::string_view unit = e.children[0].literal.text;
        if (types[2].id == TypeId::kDate && unit != "DAY" && unit != "WEEK" && unit != "MONTH" &&
            unit != "QUARTER" && unit != "YEAR") {
          return Status::NotImplemented(Where(e.pos) + "not implemented yet: TIMESTAMPADD of " +
                                        std::string(unit) +
                                        " to a DATE; CAST the DATE to TIMESTAMP(0) first");
        }
      }
      return n;
    }
    case ExprKind::kArith:
      return CompileArith(e, e.arith, scope);
    case ExprKind::kCompare:
      return CompileCompare(e, scope, std::move(n));
    case ExprKind::kAnd:
    case ExprKind::kOr:
    case ExprKind::kNot:
    case ExprKind::kIsNull:
    case ExprKind::kIsNotNull:
      return CompileLogic(e, scope, std::move(n));
    case ExprKind::kCase:
      return CompileCase(e, scope, std::move(n));
    case ExprKind::kNegate: {
      n.kind = Node::Kind::kNegate;
      FLOE_ASSIGN_OR_RAISE(Node operand, CompileNode(e.children.at(0), scope));
      Result<DataType> type = NegationType(operand.type.type);
      if (!type.ok()) return Status::InvalidArgument(Where(e.pos) + type.status().message());
      n.type.type = *type;
      n.children.push_back(std::move(operand));
      return n;
    }
  }
  return Status::NotImplemented(
      Where(e.pos) + "not implemented yet: " + n.text + " " + std::string(scope.place) +
      " (columns, literals, arithmetic, comparisons, CASE, CAST, TO_TIMESTAMP_LTZ and the "
      "functions in docs/sql.md are evaluated)");
}

// `a op b` (or MOD(a, b)) with Flink's result type; the operands are converted to it.
Result<Node> CompileArith(const Expr& e, ArithOp op, const Scope& scope) {
  Node n;
  n.kind = Node::Kind::kArith;
  n.op = op;
  n.pos = e.pos;
  n.text = ToString(e);
  for (const Expr& child : e.children) {
    FLOE_ASSIGN_OR_RAISE(Node operand, CompileNode(child, scope));
    n.children.push_back(std::move(operand));
  }
  Result<DataType> type = ArithmeticType(op, n.children[0].type.type, n.children[1].type.type);
  if (!type.ok()) return Status::InvalidArgument(Where(e.pos) + type.status().message());
  const Expr& divisor = e.children[1];
  if (op == ArithOp::kDiv && divisor.kind == ExprKind::kLiteral &&
      ((divisor.literal.kind == Literal::Kind::kInteger && divisor.literal.integer == 0) ||
       (divisor.literal.kind == Literal::Kind::kDouble && divisor.literal.real == 0))) {
    // As Flink's planner, which reduces constants: dividing by a literal zero never runs.
    return Status::InvalidArgument(Where(e.pos) + "division by zero in " + n.text);
  }
  n.type.type = *type;
  return n;
}

// Micros truncated to `precision` fractional digits (floor, as Flink truncates).
int64_t Truncate(int64_t micros, int precision) {
  if (precision >= 6) return micros;
  int64_t unit = 1;
  for (int i = precision; i < 6; ++i) unit *= 10;
  int64_t r = micros % unit;
  if (r < 0) r += unit;
  return micros - r;
}

class Evaluator {
 public:
  Evaluator(std::string_view what, const RecordBatch& batch, const uint8_t* keep, int64_t watermark)
      : what_(what), batch_(batch), keep_(keep), watermark_(watermark) {}

  Result<Column> Eval(const Node& n) {
    const size_t rows = batch_.num_rows();
    switch (n.kind) {
      case Node::Kind::kColumn:
        return batch_.column(static_cast<size_t>(n.column));
      case Node::Kind::kLiteral: {
        Column out(n.type.type);
        out.Reserve(rows);
        for (size_t r = 0; r < rows; ++r) out.AppendFrom(n.literal, 0);
        return out;
      }
      case Node::Kind::kToTimestampLtz: {
        Column storage(DataType::Int64());
        FLOE_ASSIGN_OR_RAISE(const Column* operand, Operand(n.children[0], &storage));
        const Column& in = *operand;
        Column out(DataType::TimestampTz());
        out.Reserve(rows);
        for (size_t r = 0; r < rows; ++r) {
          if (in.IsNull(r) || Skipped(r)) {
            out.AppendNull();
            continue;
          }
          const TypeId id = in.type().id;
          if (id == TypeId::kDouble) {
            const double v = in.Get<double>(r) * static_cast<double>(n.epoch_unit);
            if (!std::isfinite(v) || std::fabs(v) > 9.2e18) return Bad(n, std::to_string(v));
            out.Append<int64_t>(static_cast<int64_t>(v));
            continue;
          }
          const int64_t v = id == TypeId::kInt32 ? in.Get<int32_t>(r) : in.Get<int64_t>(r);
          int64_t micros;
          if (__builtin_mul_overflow(v, n.epoch_unit, &micros)) return Bad(n, std::to_string(v));
          out.Append<int64_t>(micros);
        }
        return out;
      }
      case Node::Kind::kCast: {
        Column storage(DataType::Int64());
        FLOE_ASSIGN_OR_RAISE(const Column* operand, Operand(n.children[0], &storage));
        return Cast(n, *operand);
      }
      case Node::Kind::kArith:
        return EvalArith(n);
      case Node::Kind::kNegate:
        return EvalNegate(n);
      case Node::Kind::kFunction:
        return EvalFunction(n);
      case Node::Kind::kCompare:
        return EvalCompare(n);
      case Node::Kind::kAnd:
      case Node::Kind::kOr:
        return EvalAndOr(n);
      case Node::Kind::kNot:
      case Node::Kind::kIsNull:
        return EvalNotOrIsNull(n);
      case Node::Kind::kCase:
        return EvalCase(n);
      case Node::Kind::kZoneShift:
        return EvalZoneShift(n);
    }
    return Status::Internal("unknown computed expression");
  }

  Result<Column> EvalZoneShift(const Node& n) {
    Column storage(DataType::Int64());
    FLOE_ASSIGN_OR_RAISE(const Column* operand, Operand(n.children[0], &storage));
    Column out(n.type.type);
    out.Reserve(operand->size());
    for (size_t r = 0; r < operand->size(); ++r) {
      if (operand->IsNull(r) || Skipped(r)) {
        out.AppendNull();
        continue;
      }
      const int64_t v = operand->Get<int64_t>(r);
      out.Append<int64_t>(n.to_local ? n.zone->ToLocal(v) : n.zone->ToInstant(v));
    }
    return out;
  }

  Result<Column> EvalCompare(const Node& n) {
    const Node& l = n.children[0];
    const Node& r = n.children[1];
    Column l_storage(DataType::Int64()), r_storage(DataType::Int64());
    const bool l_constant = l.kind == Node::Kind::kLiteral;
    const bool r_constant = r.kind == Node::Kind::kLiteral;
    const Column* lc = &l.literal;
    const Column* rc = &r.literal;
    if (!l_constant) {
      FLOE_ASSIGN_OR_RAISE(lc, Operand(l, &l_storage));
    }
    if (!r_constant) {
      FLOE_ASSIGN_OR_RAISE(rc, Operand(r, &r_storage));
    }
    return CompareColumns(n.comparison, *lc, l_constant, *rc, r_constant, batch_.num_rows());
  }

  // Three-valued AND / OR, lazy as Flink's generated code: an operand is evaluated only for the
  // rows the earlier ones left undecided, so `b <> 0 AND a / b > 1` cannot fail where b is 0.
  Result<Column> EvalAndOr(const Node& n) {
    const size_t rows = batch_.num_rows();
    const bool is_and = n.kind == Node::Kind::kAnd;
    constexpr uint8_t kFalse = 0, kTrue = 1, kUnknown = 2;
    const uint8_t dominant = is_and ? kFalse : kTrue;
    std::vector<uint8_t> truth(rows, is_and ? kTrue : kFalse);
    std::vector<uint8_t> open(rows);
    for (size_t r = 0; r < rows; ++r) open[r] = Skipped(r) ? 0 : 1;
    for (const Node& child : n.children) {
      Evaluator only_open(what_, batch_, open.data(), watermark_);
      Column storage(DataType::Int64());
      FLOE_ASSIGN_OR_RAISE(const Column* operand, only_open.Operand(child, &storage));
      for (size_t r = 0; r < rows; ++r) {
        if (open[r] == 0) continue;
        const uint8_t v = operand->IsNull(r) ? kUnknown : operand->Get<uint8_t>(r);
        if (v == dominant) {
          truth[r] = dominant;
          open[r] = 0;
        } else if (v == kUnknown) {
          truth[r] = kUnknown;
        }
      }
    }
    Column out(DataType::Boolean());
    out.Reserve(rows);
    for (size_t r = 0; r < rows; ++r) {
      truth[r] == kUnknown ? out.AppendNull() : out.Append<uint8_t>(truth[r]);
    }
    return out;
  }

  // NOT x (UNKNOWN stays UNKNOWN); x IS [NOT] NULL (never UNKNOWN).
  Result<Column> EvalNotOrIsNull(const Node& n) {
    Column storage(DataType::Int64());
    FLOE_ASSIGN_OR_RAISE(const Column* operand, Operand(n.children[0], &storage));
    const Column& in = *operand;
    const size_t rows = batch_.num_rows();
    Column out(DataType::Boolean());
    out.Reserve(rows);
    for (size_t r = 0; r < rows; ++r) {
      if (n.kind == Node::Kind::kIsNull) {
        out.Append<uint8_t>(in.IsNull(r) != n.negated ? 1 : 0);
      } else if (in.IsNull(r)) {
        out.AppendNull();
      } else {
        out.Append<uint8_t>(in.Get<uint8_t>(r) != 0 ? 0 : 1);
      }
    }
    return out;
  }

  // CASE: each WHEN is evaluated only for the rows no earlier WHEN took, and each result only
  // for the rows whose WHEN it answers (as Flink's generated code branches), so a result
  // cannot fail for a row that does not take it.
  Result<Column> EvalCase(const Node& n) {
    const size_t rows = batch_.num_rows();
    const size_t pairs = n.children.size() / 2;
    std::vector<uint8_t> open(rows);
    for (size_t r = 0; r < rows; ++r) open[r] = Skipped(r) ? 0 : 1;
    std::vector<uint32_t> chosen(rows, static_cast<uint32_t>(pairs));  // pairs: ELSE
    for (size_t k = 0; k < pairs; ++k) {
      Evaluator only_open(what_, batch_, open.data(), watermark_);
      Column storage(DataType::Int64());
      FLOE_ASSIGN_OR_RAISE(const Column* when, only_open.Operand(n.children[2 * k], &storage));
      for (size_t r = 0; r < rows; ++r) {
        if (open[r] != 0 && !when->IsNull(r) && when->Get<uint8_t>(r) != 0) {
          chosen[r] = static_cast<uint32_t>(k);
          open[r] = 0;
        }
      }
    }
    std::vector<Column> results;
    results.reserve(pairs + 1);
    std::vector<uint8_t> takes(rows);
    for (size_t k = 0; k <= pairs; ++k) {
      const Node& result = k < pairs ? n.children[2 * k + 1] : n.children.back();
      for (size_t r = 0; r < rows; ++r) takes[r] = !Skipped(r) && chosen[r] == k ? 1 : 0;
      Evaluator only_takers(what_, batch_, takes.data(), watermark_);
      FLOE_ASSIGN_OR_RAISE(Column value, only_takers.Eval(result));
      if (value.type() != n.type.type) {
        FLOE_ASSIGN_OR_RAISE(value, Widen(value, n.type.type));
      }
      results.push_back(std::move(value));
    }
    Column out(n.type.type);
    out.Reserve(rows);
    for (size_t r = 0; r < rows; ++r) {
      Skipped(r) ? out.AppendNull() : out.AppendFrom(results[chosen[r]], r);
    }
    return out;
  }

  // DECIMAL (with DECIMAL or an integer): each operand at its own scale, exact, the result
  // rounded HALF_UP to the result's scale and NULL when it does not fit its precision, as
  // Flink's DecimalDataUtils; dividing by zero fails, as there.
  Result<Column> EvalDecimalArith(const Node& n) {
    Operands operands;
    FLOE_RETURN_NOT_OK(EvalOperands(n, nullptr, &operands));
    const Column& l = *operands.cols[0];
    const Column& r = *operands.cols[1];
    const int sl = l.type().id == TypeId::kDecimal ? l.type().scale : 0;
    const int sr = r.type().id == TypeId::kDecimal ? r.type().scale : 0;
    const DataType& to = n.type.type;
    Column out(to);
    out.Reserve(l.size());
    for (size_t i = 0; i < l.size(); ++i) {
      if (l.IsNull(i) || r.IsNull(i) || Skipped(i)) {
        out.AppendNull();
        continue;
      }
      const Int128 a = ExactValue(l, i), b = ExactValue(r, i);
      if (b == 0 && (n.op == ArithOp::kDiv || n.op == ArithOp::kMod)) {
        return Bad(n, DecimalText(a, sl) + " / 0 (division by zero)");
      }
      const std::optional<Int128> v = decimal::Apply(n.op, a, sl, b, sr, to.precision, to.scale);
      v ? out.Append<Int128>(*v) : out.AppendNull();
    }
    return out;
  }

  // An INT, BIGINT or DECIMAL value as an unscaled integer.
  static Int128 ExactValue(const Column& c, size_t i) {
    switch (c.type().id) {
      case TypeId::kInt32:
        return c.Get<int32_t>(i);
      case TypeId::kInt64:
        return c.Get<int64_t>(i);
      default:
        return c.Get<Int128>(i);
    }
  }

  static std::string DecimalText(Int128 unscaled, int scale) {
    std::string text;
    json::internal::AppendDecimal(unscaled, scale, &text);
    return text;
  }

  // Both operands as the result type, then the operator row by row.
  // MOD has the divisor's type: it is computed as BIGINT and narrowed, which always fits.
  Result<Column> EvalArith(const Node& n) {
    if (n.type.type.id == TypeId::kDecimal) return EvalDecimalArith(n);
    const DataType computed = n.op == ArithOp::kMod ? DataType::Int64() : n.type.type;
    Operands operands;
    FLOE_RETURN_NOT_OK(EvalOperands(n, &computed, &operands));
    const Column& l = *operands.cols[0];
    const Column& r = *operands.cols[1];
    if (n.op == ArithOp::kMod) {
      FLOE_ASSIGN_OR_RAISE(Column remainder, Arith<int64_t>(n, l, r));
      if (n.type.type.id == TypeId::kInt64) return remainder;
      Column out(n.type.type);
      out.Reserve(remainder.size());
      for (size_t i = 0; i < remainder.size(); ++i) {
        if (remainder.IsNull(i)) {
          out.AppendNull();
        } else {
          out.Append<int32_t>(static_cast<int32_t>(remainder.Get<int64_t>(i)));
        }
      }
      return out;
    }
    switch (computed.id) {
      case TypeId::kInt32:
        return Arith<int32_t>(n, l, r);
      case TypeId::kInt64:
        return Arith<int64_t>(n, l, r);
      case TypeId::kFloat:
        return Arith<float>(n, l, r);
      case TypeId::kDouble:
        return Arith<double>(n, l, r);
      default:
        return Status::Internal("arithmetic not compiled: " + n.text);
    }
  }

  // The children's columns: the batch's own where a child is a column of it, the others
  // evaluated; converted to `*to` where given and different. Nothing is copied.
  struct Operands {
    std::vector<Column> owned;  // reserved up front: `cols` point into it
    std::vector<const Column*> cols;
  };
  Status EvalOperands(const Node& n, const DataType* to, Operands* out) {
    out->owned.reserve(2 * n.children.size());
    for (const Node& child : n.children) {
      Column storage(DataType::Int64());
      FLOE_ASSIGN_OR_RAISE(const Column* c, Operand(child, &storage));
      if (c == &storage) c = &out->owned.emplace_back(std::move(storage));
      if (to != nullptr && c->type() != *to) {
        FLOE_ASSIGN_OR_RAISE(Column widened, Widen(*c, *to));
        c = &out->owned.emplace_back(std::move(widened));
      }
      out->cols.push_back(c);
    }
    return Status::OK();
  }

  // `in` converted to `to` (a numeric type at least as wide, as ArithmeticType picks it).
  static Result<Column> Widen(const Column& in, const DataType& to) {
    Column out(to);
    out.Reserve(in.size());
    for (size_t r = 0; r < in.size(); ++r) {
      if (in.IsNull(r)) {
        out.AppendNull();
        continue;
      }
      const TypeId a = in.type().id;
      const int64_t i = a == TypeId::kInt32   ? in.Get<int32_t>(r)
                        : a == TypeId::kInt64 ? in.Get<int64_t>(r)
                                              : 0;
      const double d = a == TypeId::kFloat     ? in.Get<float>(r)
                       : a == TypeId::kDouble  ? in.Get<double>(r)
                       : a == TypeId::kDecimal ? DecimalToDouble(in.Get<Int128>(r), in.type().scale)
                                               : static_cast<double>(i);
      switch (to.id) {
        case TypeId::kInt64:
          out.Append<int64_t>(i);
          break;
        case TypeId::kFloat:
          out.Append<float>(static_cast<float>(d));
          break;
        case TypeId::kDouble:
          out.Append<double>(d);
          break;
        case TypeId::kDecimal: {  // from an integer or a DECIMAL of a scale no larger
          const bool decimal = a == TypeId::kDecimal;
          Int128 v = decimal ? in.Get<Int128>(r) : Int128(i);
          for (int k = decimal ? in.type().scale : 0; k < to.scale; ++k) v *= 10;
          out.Append<Int128>(v);
          break;
        }
        default:
          return Status::Internal("cannot widen " + SqlTypeName(in.type()) + " to " +
                                  SqlTypeName(to));
      }
    }
    return out;
  }

  // Row by row, NULL in NULL out. Integers follow Java's int and long arithmetic, as Flink's
  // generated code: wrap-around on overflow, division toward zero, the remainder with the
  // dividend's sign; dividing by zero fails. FLOAT and DOUBLE follow IEEE 754 (x / 0 is an
  // infinity or NaN, as in Java).
  template <typename T>
  Result<Column> Arith(const Node& n, const Column& l, const Column& r) {
    Column out(l.type());
    const size_t rows = l.size();
    out.Reserve(rows);
    for (size_t i = 0; i < rows; ++i) {
      if (l.IsNull(i) || r.IsNull(i) || Skipped(i)) {
        out.AppendNull();
        continue;
      }
      const T a = l.Get<T>(i), b = r.Get<T>(i);
      T v{};
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        switch (n.op) {
          case ArithOp::kAdd:
            v = static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
            break;
          case ArithOp::kSub:
            v = static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
            break;
          case ArithOp::kMul:
            v = static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
            break;
          case ArithOp::kDiv:
          case ArithOp::kMod:
            if (b == 0) return Bad(n, std::to_string(a) + " / 0 (division by zero)");
            if (b == -1) {  // MIN / -1 wraps to MIN in Java; MIN % -1 is 0
              v = n.op == ArithOp::kDiv ? static_cast<T>(U{0} - static_cast<U>(a)) : T{0};
            } else {
              v = n.op == ArithOp::kDiv ? static_cast<T>(a / b) : static_cast<T>(a % b);
            }
            break;
        }
      } else {
        switch (n.op) {
          case ArithOp::kAdd:
            v = a + b;
            break;
          case ArithOp::kSub:
            v = a - b;
            break;
          case ArithOp::kMul:
            v = a * b;
            break;
          case ArithOp::kDiv:
            v = a / b;
            break;
          case ArithOp::kMod:
            return Status::Internal("MOD of floating-point numbers is not compiled");
        }
      }
      out.Append<T>(v);
    }
    return out;
  }

  Result<Column> EvalFunction(const Node& n) {
    if (n.fn == Node::Fn::kCoalesce) return EvalCoalesce(n);
    if (n.fn == Node::Fn::kNow) return EvalNow(n);
    if (n.fn == Node::Fn::kRand || n.fn == Node::Fn::kUuid) return EvalRandom(n);
    if (n.fn == Node::Fn::kCurrentWatermark) {
      Column out(n.type.type);
      out.Reserve(batch_.num_rows());
      for (size_t r = 0; r < batch_.num_rows(); ++r) {
        watermark_ == INT64_MIN ? out.AppendNull() : out.Append<int64_t>(watermark_);
      }
      return out;
    }
    Operands operands;
    FLOE_RETURN_NOT_OK(EvalOperands(n, nullptr, &operands));
    const std::vector<const Column*>& args = operands.cols;
    const size_t rows = batch_.num_rows();
    Column out(n.type.type);
    out.Reserve(rows);
    std::string buffer;
    for (size_t r = 0; r < rows; ++r) {
      if (n.fn == Node::Fn::kConcatWs && !Skipped(r) && !args[0]->IsNull(r)) {
        ConcatWs(args, r, &buffer);  // NULL arguments are skipped
        out.AppendBytes(buffer);
        continue;
      }
      bool null = Skipped(r);
      for (const Column* a : args) null = null || a->IsNull(r);
      if (null) {  // NULL in, NULL out
        out.AppendNull();
        continue;
      }
      FLOE_RETURN_NOT_OK(StringFunction(n, args, r, &buffer, &out));
    }
    return out;
  }

  // The first argument that is not NULL, in COALESCE's type. Lazy, as Flink's: an argument is
  // evaluated only for the rows all earlier ones left NULL, so it cannot fail for the others.
  Result<Column> EvalCoalesce(const Node& n) {
    const size_t rows = batch_.num_rows();
    std::vector<uint8_t> open(rows);
    for (size_t r = 0; r < rows; ++r) open[r] = Skipped(r) ? 0 : 1;
    std::vector<Column> args;
    for (const Node& child : n.children) {
      Evaluator only_open(what_, batch_, open.data(), watermark_);
      FLOE_ASSIGN_OR_RAISE(Column value, only_open.Eval(child));
      if (value.type() != n.type.type) {
        FLOE_ASSIGN_OR_RAISE(value, Widen(value, n.type.type));
      }
      for (size_t r = 0; r < rows; ++r) {
        if (!value.IsNull(r)) open[r] = 0;
      }
      args.push_back(std::move(value));
    }
    Column out(n.type.type);
    out.Reserve(rows);
    for (size_t r = 0; r < rows; ++r) {
      const Column* first = nullptr;
      for (const Column& a : args) {
        if (!a.IsNull(r)) {
          first = &a;
          break;
        }
      }
      first == nullptr ? out.AppendNull() : out.AppendFrom(*first, r);
    }
    return out;
  }

  // CONCAT_WS(separator, ...) of one row: the arguments that are not NULL, joined.
  static void ConcatWs(const std::vector<const Column*>& args, size_t r, std::string* out) {
    out->clear();
    bool first = true;
    for (size_t a = 1; a < args.size(); ++a) {
      if (args[a]->IsNull(r)) continue;
      if (!first) out->append(args[0]->GetBytes(r));
      out->append(args[a]->GetBytes(r));
      first = false;
    }
  }

  // One row of a string function; its arguments are not NULL.
  Status StringFunction(const Node& n, const std::vector<const Column*>& args, size_t r,
                        std::string* buffer, Column* out) {
    using Fn = Node::Fn;
    const std::string_view s =
        args[0]->type().is_variable_width() ? args[0]->GetBytes(r) : std::string_view();
    auto text = [&](size_t a) { return args[a]->GetBytes(r); };
    auto integer = [&](size_t a) -> int64_t { return args[a]->Get<int32_t>(r); };
    switch (n.fn) {
      case Fn::kUpper:
      case Fn::kLower:
        strings::MapCase(s, n.fn == Fn::kUpper, buffer);
        out->AppendBytes(*buffer);
        return Status::OK();
      case Fn::kCharLength:
        out->Append<int32_t>(static_cast<int32_t>(strings::CodePoints(s)));
        return Status::OK();
      case Fn::kTrim:
      case Fn::kLtrim:
      case Fn::kRtrim:
        out->AppendBytes(strings::Trim(s, args.size() > 1 ? text(1) : std::string_view(" "),
                                       n.fn != Fn::kRtrim, n.fn != Fn::kLtrim));
        return Status::OK();
      case Fn::kConcat:
        buffer->clear();
        for (size_t a = 0; a < args.size(); ++a) buffer->append(text(a));
        out->AppendBytes(*buffer);
        return Status::OK();
      case Fn::kReplace:
        strings::Replace(s, text(1), text(2), buffer);
        out->AppendBytes(*buffer);
        return Status::OK();
      case Fn::kLeft:
        out->AppendBytes(strings::Left(s, integer(1)));
        return Status::OK();
      case Fn::kRight:
        out->AppendBytes(strings::Right(s, integer(1)));
        return Status::OK();
      case Fn::kPosition:  // POSITION(search IN s), LOCATE(search, s [, from])
        out->Append<int32_t>(
            static_cast<int32_t>(strings::Position(s, text(1), args.size() > 2 ? integer(2) : 1)));
        return Status::OK();
      case Fn::kLike:
        out->Append<uint8_t>(strings::Like(s, text(1)) ? 1 : 0);
        return Status::OK();
      case Fn::kSubstring: {
        std::optional<int64_t> length;
        if (args.size() > 2) length = integer(2);
        const std::optional<std::string_view> part = strings::Substring(s, integer(1), length);
        part ? out->AppendBytes(*part) : out->AppendNull();
        return Status::OK();
      }
      case Fn::kJsonValue: {  // NULL for no scalar there (Flink's NULL ON EMPTY / ON ERROR)
        const std::optional<std::string> value = json::JsonValue(s, text(1));
        value ? out->AppendBytes(*value) : out->AppendNull();
        return Status::OK();
      }
      case Fn::kExtract:  // EXTRACT('UNIT', t)
        out->Append<int64_t>(time::Extract(s, MicrosOf(*args[1], r)));
        return Status::OK();
      case Fn::kDateFormat:
        time::DateFormat(MicrosOf(*args[0], r), text(1), buffer);
        out->AppendBytes(*buffer);
        return Status::OK();
      case Fn::kToTimestamp: {  // Flink's: NULL for text that is no timestamp
        int64_t micros = 0;
        const bool read = args.size() == 2 ? time::ParseWithPattern(s, text(1), &micros)
                                           : ParseTimestamp(s, false, &micros) == nullptr;
        if (!read) {
          out->AppendNull();
        } else {
          out->Append<int64_t>(Truncate(micros, 3));
        }
        return Status::OK();
      }
      case Fn::kRegexpExtract: {
        const int64_t group = args.size() < 3                        ? 0
                              : args[2]->type().id == TypeId::kInt64 ? args[2]->Get<int64_t>(r)
                                                                     : integer(2);
        const std::optional<std::string> part = strings::RegexpExtract(s, text(1), group);
        part ? out->AppendBytes(*part) : out->AppendNull();
        return Status::OK();
      }
      case Fn::kFloor:
      case Fn::kCeil:
        return Round(*args[0], args.size() > 1 ? text(1) : std::string_view(), n.fn == Fn::kCeil,
                     n.zone, r, out);
      case Fn::kTimestampAdd: {  // TIMESTAMPADD('UNIT', n, t)
        const int64_t count =
            args[1]->type().id == TypeId::kInt64 ? args[1]->Get<int64_t>(r) : integer(1);
        AppendMicros(time::AddUnits(s, count, MicrosOf(*args[2], r)), out);
        return Status::OK();
      }
      case Fn::kTimestampDiff:  // TIMESTAMPDIFF('UNIT', a, b)
        out->Append<int32_t>(
            static_cast<int32_t>(time::DiffUnits(s, MicrosOf(*args[1], r), MicrosOf(*args[2], r))));
        return Status::OK();
      case Fn::kPower:  // Java's Math.pow, as Flink's
        out->Append<double>(std::pow(NumberAsDouble(*args[0], r), NumberAsDouble(*args[1], r)));
        return Status::OK();
      case Fn::kSqrt:
        out->Append<double>(std::sqrt(NumberAsDouble(*args[0], r)));
        return Status::OK();
      case Fn::kAbs:
        return Abs(*args[0], r, out);
      case Fn::kConcatWs:
      case Fn::kRandInteger:
        return RandomInteger(n, *args[0], r, out);
      case Fn::kCoalesce:
      case Fn::kNow:
      case Fn::kCurrentWatermark:
      case Fn::kRand:
      case Fn::kUuid:
        break;  // not row by row with every argument set
    }
    return Status::Internal("function not compiled: " + n.text);
  }

  // RAND_INTEGER(bound) of row r: uniform in [0, bound); a bound below 1 fails the row.
  Status RandomInteger(const Node& n, const Column& bounds, size_t r, Column* out) {
    const int64_t bound =
        bounds.type().id == TypeId::kInt32 ? bounds.Get<int32_t>(r) : bounds.Get<int64_t>(r);
    if (bound <= 0 || bound > INT32_MAX) return Bad(n, std::to_string(bound));
    out->Append<int32_t>(
        static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, bound - 1)(RandomEngine())));
    return Status::OK();
  }

  // RAND() and UUID(): a value per row kept (NULL for a row a WHERE dropped).
  Result<Column> EvalRandom(const Node& n) {
    Column out(n.type.type);
    out.Reserve(batch_.num_rows());
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (size_t r = 0; r < batch_.num_rows(); ++r) {
      if (Skipped(r)) {
        out.AppendNull();
      } else if (n.fn == Node::Fn::kRand) {
        out.Append<double>(unit(RandomEngine()));
      } else {
        out.AppendBytes(RandomUuid());
      }
    }
    return out;
  }

  // The clock in milliseconds, read once for the batch, where Flink reads it per record:
  // CURRENT_TIMESTAMP the instant, LOCALTIMESTAMP and CURRENT_DATE the session zone's wall clock.
  Result<Column> EvalNow(const Node& n) {
    int64_t millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    if (n.zone != nullptr && n.type.type.id != TypeId::kTimestampTz) {
      millis = n.zone->ToLocal(millis * 1000) / 1000;
    }
    Column out(n.type.type);
    out.Reserve(batch_.num_rows());
    for (size_t r = 0; r < batch_.num_rows(); ++r) {
      if (n.type.type.id == TypeId::kDate) {
        out.Append<int32_t>(static_cast<int32_t>(FloorDiv(millis, int64_t{86'400'000})));
      } else if (n.type.type.id == TypeId::kTime) {
        out.Append<int64_t>(FloorMod(millis, int64_t{86'400'000}) * 1000);
      } else {
        out.Append<int64_t>(millis * 1000);
      }
    }
    return out;
  }

  // Micros since the epoch into `out`, a DATE (whole days) or a timestamp column.
  static void AppendMicros(int64_t micros, Column* out) {
    if (out->type().id == TypeId::kDate) {
      out->Append<int32_t>(static_cast<int32_t>(FloorDiv(micros, kMicrosPerDay)));
    } else {
      out->Append<int64_t>(micros);
    }
  }

  // ABS of one number, in its type (the most negative integer stays itself, as Java's).
  static Status Abs(const Column& value, size_t r, Column* out) {
    switch (value.type().id) {
      case TypeId::kInt32: {
        const int32_t v = value.Get<int32_t>(r);
        out->Append<int32_t>(v < 0 ? static_cast<int32_t>(0u - static_cast<uint32_t>(v)) : v);
        return Status::OK();
      }
      case TypeId::kInt64: {
        const int64_t v = value.Get<int64_t>(r);
        out->Append<int64_t>(v < 0 ? static_cast<int64_t>(0ull - static_cast<uint64_t>(v)) : v);
        return Status::OK();
      }
      case TypeId::kFloat:
        out->Append<float>(std::fabs(value.Get<float>(r)));
        return Status::OK();
      case TypeId::kDouble:
        out->Append<double>(std::fabs(value.Get<double>(r)));
        return Status::OK();
      default: {  // DECIMAL
        const Int128 v = value.Get<Int128>(r);
        out->Append<Int128>(v < 0 ? -v : v);
        return Status::OK();
      }
    }
  }

  // FLOOR / CEIL of one value: a number, or a DATE or timestamp TO `unit`.
  // A TIMESTAMP_LTZ in a session zone other than UTC is rounded on its wall clock, shifted by
  // the offset at the value (Flink's DateTimeUtils.timestampFloor / timestampCeil).
  static Status Round(const Column& value, std::string_view unit, bool up, const TimeZone* zone,
                      size_t r, Column* out) {
    switch (value.type().id) {
      case TypeId::kInt32:
      case TypeId::kInt64:
        out->AppendFrom(value, r);
        return Status::OK();
      case TypeId::kFloat: {
        const float v = value.Get<float>(r);
        out->Append<float>(up ? std::ceil(v) : std::floor(v));
        return Status::OK();
      }
      case TypeId::kDouble: {
        const double v = value.Get<double>(r);
        out->Append<double>(up ? std::ceil(v) : std::floor(v));
        return Status::OK();
      }
      case TypeId::kDecimal:
        out->Append<Int128>(decimal::RoundToInteger(value.Get<Int128>(r), value.type().scale, up));
        return Status::OK();
      default: {
        const int64_t micros = MicrosOf(value, r);
        int64_t shift = 0;
        if (zone != nullptr && value.type().id == TypeId::kTimestampTz) {
          shift = int64_t{zone->OffsetAt(FloorDiv(micros, kMicrosPerSecond))} * kMicrosPerSecond;
        }
        AppendMicros(time::RoundTo(unit, micros + shift, up) - shift, out);
        return Status::OK();
      }
    }
  }

  // A DATE, TIMESTAMP or TIMESTAMP_LTZ value as micros since the epoch.
  static int64_t MicrosOf(const Column& c, size_t r) {
    return c.type().id == TypeId::kDate ? int64_t{c.Get<int32_t>(r)} * kMicrosPerDay
                                        : c.Get<int64_t>(r);
  }

  Result<Column> EvalNegate(const Node& n) {
    Column storage(DataType::Int64());
    FLOE_ASSIGN_OR_RAISE(const Column* operand, Operand(n.children[0], &storage));
    const Column& in = *operand;
    Column out(n.type.type);
    out.Reserve(in.size());
    for (size_t r = 0; r < in.size(); ++r) {
      if (in.IsNull(r) || Skipped(r)) {
        out.AppendNull();
        continue;
      }
      switch (n.type.type.id) {
        case TypeId::kInt32:  // -MIN is MIN, as in Java
          out.Append<int32_t>(static_cast<int32_t>(0u - static_cast<uint32_t>(in.Get<int32_t>(r))));
          break;
        case TypeId::kInt64:
          out.Append<int64_t>(
              static_cast<int64_t>(0ull - static_cast<uint64_t>(in.Get<int64_t>(r))));
          break;
        case TypeId::kFloat:
          out.Append<float>(-in.Get<float>(r));
          break;
        case TypeId::kDouble:
          out.Append<double>(-in.Get<double>(r));
          break;
        case TypeId::kDecimal:  // the same digits: it always fits
          out.Append<Int128>(-in.Get<Int128>(r));
          break;
        default:
          return Status::Internal("negation not compiled: " + n.text);
      }
    }
    return out;
  }

 private:
  // An operand: the batch's own column when it is one (not copied), else evaluated into
  // `storage`.
  Result<const Column*> Operand(const Node& n, Column* storage) {
    if (n.kind == Node::Kind::kColumn) return &batch_.column(static_cast<size_t>(n.column));
    FLOE_ASSIGN_OR_RAISE(*storage, Eval(n));
    return storage;
  }

  Status Bad(const Node& n, const std::string& value) const {
    return Status::InvalidArgument(std::string(what_) + ": " + n.text +
                                   " cannot be evaluated for the value " + value);
  }

  bool Skipped(size_t r) const { return keep_ != nullptr && keep_[r] == 0; }

  Result<Column> Cast(const Node& n, const Column& in) {
    const DataType& from = in.type();
    const DataType& to = n.type.type;
    const size_t rows = in.size();
    Column out(to);
    out.Reserve(rows);
    for (size_t r = 0; r < rows; ++r) {
      if (in.IsNull(r) || Skipped(r)) {
        out.AppendNull();
        continue;
      }
      Status cast = CastValue(n, in, r, from, to, &out);
      if (!cast.ok() && !n.null_on_failure) return cast;
      if (!cast.ok()) out.AppendNull();  // TRY_CAST: the value did not convert
    }
    return out;
  }

  Status CastValue(const Node& n, const Column& in, size_t r, const DataType& from,
                   const DataType& to, Column* out) {
    const TypeId a = from.id, b = to.id;
    if (a == TypeId::kString) return ParseValue(n, in.GetBytes(r), to, out);
    if (a == TypeId::kTime) {  // to TIME, STRING, or a timestamp on 1970-01-01
      const int64_t micros = in.Get<int64_t>(r);
      if (b == TypeId::kString) {
        out->AppendBytes(TimeText(micros, n.children[0].type.precision));
      } else {
        out->Append<int64_t>(Truncate(micros, n.type.precision));
      }
      return Status::OK();
    }
    if (b == TypeId::kTime) {  // a timestamp's time of day
      out->Append<int64_t>(Truncate(FloorMod(in.Get<int64_t>(r), kMicrosPerDay), n.type.precision));
      return Status::OK();
    }
    if (IsTimestamp(a) || a == TypeId::kDate) {
      const int64_t micros =
          a == TypeId::kDate ? int64_t{in.Get<int32_t>(r)} * kMicrosPerDay : in.Get<int64_t>(r);
      if (b == TypeId::kDate) {
        int64_t days = micros / kMicrosPerDay;
        if (micros % kMicrosPerDay < 0) --days;
        out->Append<int32_t>(static_cast<int32_t>(days));
      } else if (b == TypeId::kString) {
        out->AppendBytes(a == TypeId::kDate ? FormatDate(in.Get<int32_t>(r))
                                            : TimestampText(micros, n.children[0].type.precision));
      } else {
        out->Append<int64_t>(Truncate(micros, n.type.precision));
      }
      return Status::OK();
    }
    if (a == TypeId::kBoolean) {  // only to BOOLEAN
      out->Append<uint8_t>(in.Get<uint8_t>(r));
      return Status::OK();
    }
    if (a == TypeId::kDecimal) return CastDecimal(n, in.Get<Int128>(r), from.scale, to, out);
    // Numbers.
    const bool integral = IsInteger(a);
    const int64_t i = a == TypeId::kInt32   ? in.Get<int32_t>(r)
                      : a == TypeId::kInt64 ? in.Get<int64_t>(r)
                                            : 0;
    const double d = a == TypeId::kFloat    ? in.Get<float>(r)
                     : a == TypeId::kDouble ? in.Get<double>(r)
                                            : static_cast<double>(i);
    switch (b) {
      case TypeId::kInt32:
      case TypeId::kInt64: {
        int64_t v = i;
        if (!integral) {
          if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return Bad(n, std::to_string(d));
          v = static_cast<int64_t>(d);  // toward zero, as Flink
        }
        if (b == TypeId::kInt32) {
          if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
            return Bad(n, std::to_string(v));
          }
          out->Append<int32_t>(static_cast<int32_t>(v));
        } else {
          out->Append<int64_t>(v);
        }
        return Status::OK();
      }
      case TypeId::kFloat:
        out->Append<float>(static_cast<float>(d));
        return Status::OK();
      case TypeId::kDouble:
        out->Append<double>(d);
        return Status::OK();
      case TypeId::kDecimal: {
        if (integral) return CastDecimal(n, i, 0, to, out);
        // As Flink's BigDecimal.valueOf(d): the shortest decimal that reads back as d.
        if (!std::isfinite(d)) return Bad(n, std::to_string(d));
        char text[400];  // fixed notation of any finite double
        const std::to_chars_result written =
            std::to_chars(text, text + sizeof(text), d, std::chars_format::fixed);
        return ParseValue(n, std::string_view(text, static_cast<size_t>(written.ptr - text)), to,
                          out);
      }
      case TypeId::kString:
        out->AppendBytes(std::to_string(i));
        return Status::OK();
      case TypeId::kBoolean:  // an integer: TRUE unless 0, as Flink's NumericToBooleanCastRule
        out->Append<uint8_t>(i != 0 ? 1 : 0);
        return Status::OK();
      case TypeId::kTimestampTz: {
        int64_t micros;
        if (__builtin_mul_overflow(i, kMicrosPerSecond, &micros)) {
          return Bad(n, std::to_string(i));
        }
        out->Append<int64_t>(micros);
        return Status::OK();
      }
      default:
        return Status::Internal("cast not compiled: " + n.text);
    }
  }

  // A DECIMAL of scale `scale` (an integer: scale 0) as `to`, as Flink casts it: to an integer
  // truncated toward zero (out of range fails, as every integer CAST here), to FLOAT / DOUBLE
  // the nearest, to DECIMAL rounded HALF_UP and NULL when it does not fit, to STRING its digits.
  Status CastDecimal(const Node& n, Int128 v, int scale, const DataType& to, Column* out) {
    switch (to.id) {
      case TypeId::kInt32:
      case TypeId::kInt64: {
        Int128 whole = v;
        for (int k = 0; k < scale; ++k) whole /= 10;
        const Int128 lo = to.id == TypeId::kInt32 ? std::numeric_limits<int32_t>::min()
                                                  : std::numeric_limits<int64_t>::min();
        const Int128 hi = to.id == TypeId::kInt32 ? std::numeric_limits<int32_t>::max()
                                                  : std::numeric_limits<int64_t>::max();
        if (whole < lo || whole > hi) return Bad(n, DecimalText(v, scale));
        to.id == TypeId::kInt32 ? out->Append<int32_t>(static_cast<int32_t>(whole))
                                : out->Append<int64_t>(static_cast<int64_t>(whole));
        return Status::OK();
      }
      case TypeId::kFloat:
        out->Append<float>(static_cast<float>(DecimalToDouble(v, scale)));
        return Status::OK();
      case TypeId::kDouble:
        out->Append<double>(DecimalToDouble(v, scale));
        return Status::OK();
      case TypeId::kDecimal: {
        const std::optional<Int128> fitted = decimal::Rescale(v, scale, to.precision, to.scale);
        fitted ? out->Append<Int128>(*fitted) : out->AppendNull();
        return Status::OK();
      }
      case TypeId::kString:
        out->AppendBytes(DecimalText(v, scale));
        return Status::OK();
      default:
        return Status::Internal("cast not compiled: " + n.text);
    }
  }

  // "[+-]digits[.digits]" (or ".digits") as a DECIMAL of `to`'s type; false when it is none.
  bool ParseDecimal(std::string_view text, const DataType& to, Column* out) {
    size_t digits = 0, dots = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c >= '0' && c <= '9') {
        ++digits;
      } else if (c == '.') {
        ++dots;
      } else if (!(i == 0 && (c == '-' || c == '+'))) {
        return false;
      }
    }
    if (digits == 0 || dots > 1) return false;
    Int128 unscaled = 0;
    Result<DataType> type = DecimalLiteralType(text, &unscaled);
    if (!type.ok()) return false;
    const std::optional<Int128> fitted =
        decimal::Rescale(unscaled, type->scale, to.precision, to.scale);
    fitted ? out->Append<Int128>(*fitted) : out->AppendNull();
    return true;
  }

  // The whole of [first, last) as a T, appended; false when it is not one.
  template <typename T>
  static bool ParseNumber(const char* first, const char* last, Column* out) {
    T v{};
    auto [end, ec] = std::from_chars(first, last, v);
    if (first == last || ec != std::errc() || end != last) return false;
    out->Append<T>(v);
    return true;
  }

  // Parses without allocating (this runs per row); the message is built only on failure.
  Status ParseValue(const Node& n, std::string_view s, const DataType& to, Column* out) {
    auto bad = [&] { return Bad(n, "'" + std::string(s.substr(0, 64)) + "'"); };
    std::string_view text = s;
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    const char* first = text.data();
    const char* last = text.data() + text.size();
    switch (to.id) {
      case TypeId::kInt32:
        return ParseNumber<int32_t>(first, last, out) ? Status::OK() : bad();
      case TypeId::kInt64:
        return ParseNumber<int64_t>(first, last, out) ? Status::OK() : bad();
      case TypeId::kDouble:
        return ParseNumber<double>(first, last, out) ? Status::OK() : bad();
      case TypeId::kBoolean: {
        auto is = [&text](std::string_view word) {
          return text.size() == word.size() &&
                 std::equal(text.begin(), text.end(), word.begin(), [](char a, char b) {
                   return std::tolower(static_cast<unsigned char>(a)) == b;
                 });
        };
        if (!is("true") && !is("false")) return bad();
        out->Append<uint8_t>(is("true") ? 1 : 0);
        return Status::OK();
      }
      case TypeId::kDate: {
        int32_t days;
        if (ParseDate(text, &days) != nullptr) return bad();
        out->Append<int32_t>(days);
        return Status::OK();
      }
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz: {
        int64_t micros;
        if (to.id == TypeId::kTimestampTz && n.zone != nullptr &&
            ParseTimestamp(text, false, &micros) == nullptr) {
          micros = n.zone->ToInstant(micros);  // no offset written: the session zone's
        } else if (ParseTimestamp(text, to.id == TypeId::kTimestampTz, &micros) != nullptr) {
          return bad();
        }
        out->Append<int64_t>(Truncate(micros, n.type.precision));
        return Status::OK();
      }
      case TypeId::kTime: {
        int64_t micros;
        if (ParseTime(text, &micros) != nullptr) return bad();
        out->Append<int64_t>(Truncate(micros, n.type.precision));
        return Status::OK();
      }
      case TypeId::kString:
        out->AppendBytes(s);
        return Status::OK();
      case TypeId::kDecimal:
        return ParseDecimal(text, to, out) ? Status::OK() : bad();
      default:
        return Status::Internal("cast not compiled: " + n.text);
    }
  }

  std::string_view what_;
  const RecordBatch& batch_;
  const uint8_t* keep_;
  int64_t watermark_;
};

Result<Node> CastLiteral(const Node& literal, const SqlType& to, const TimeZone* zone) {
  Node cast;
  cast.kind = Node::Kind::kCast;
  cast.zone = zone;
  cast.type = to;
  cast.pos = literal.pos;
  cast.text = "CAST(" + literal.text + " AS " + ToString(to) + ")";
  cast.children.push_back(literal);
  // One row of any column drives the evaluation of a constant.
  auto schema = std::make_shared<BatchSchema>();
  schema->fields.push_back(Field{"one", DataType::Boolean(), true});
  Column one(DataType::Boolean());
  one.Append<uint8_t>(1);
  const RecordBatch batch(schema, {std::move(one)});
  Evaluator eval("the literal", batch, nullptr, INT64_MIN);
  Result<Column> value = eval.Eval(cast);
  if (!value.ok()) {
    return Status::InvalidArgument(Where(literal.pos) + literal.text + " is not a " +
                                   SqlTypeName(to.type) + ", so it cannot be compared with one");
  }
  Node folded = NullOf(to, literal.pos);
  folded.text = literal.text;
  folded.literal = std::move(*value);
  return folded;
}

}  // namespace

ScalarExpr::ScalarExpr(std::unique_ptr<Node> root) : root_(std::move(root)) {}
ScalarExpr::ScalarExpr(ScalarExpr&&) noexcept = default;
ScalarExpr& ScalarExpr::operator=(ScalarExpr&&) noexcept = default;
ScalarExpr::~ScalarExpr() = default;

Result<ScalarExpr> ScalarExpr::Compile(const Expr& e, const BatchSchema& input,
                                       std::string_view place,
                                       std::shared_ptr<const TimeZone> zone) {
  if (zone != nullptr && zone->is_utc()) zone = nullptr;
  FLOE_ASSIGN_OR_RAISE(Node root, CompileNode(e, Scope{input, place, zone.get()}));
  ScalarExpr compiled(std::make_unique<Node>(std::move(root)));
  compiled.zone_ = std::move(zone);
  return compiled;
}

const SqlType& ScalarExpr::type() const { return root_->type; }
const std::string& ScalarExpr::text() const { return root_->text; }

Result<Column> ScalarExpr::Evaluate(const RecordBatch& batch, std::string_view what,
                                    const uint8_t* keep, int64_t watermark) const {
  Evaluator eval(what, batch, keep, watermark);
  return eval.Eval(*root_);
}

}  // namespace floe::sql
