#include "floe/sql/scalar_types.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

namespace floe::sql {
namespace {

// The order of widening among the types arithmetic takes; 0 for the others.
int Rank(TypeId id) {
  switch (id) {
    case TypeId::kInt32:
      return 1;
    case TypeId::kInt64:
      return 2;
    case TypeId::kFloat:
      return 3;
    case TypeId::kDouble:
      return 4;
    default:
      return 0;
  }
}

// An exact operand as a decimal's (precision, scale): INT is (10, 0), BIGINT (19, 0).
std::pair<int, int> DecimalShape(const DataType& t) {
  if (t.id == TypeId::kDecimal) return {t.precision, t.scale};
  return {t.id == TypeId::kInt32 ? 10 : 19, 0};
}

// Flink's LogicalTypeMerging.adjustPrecisionScale: past 38 digits, the integer digits are kept
// and the scale gives way, down to min(scale, 6).
DataType AdjustedDecimal(int precision, int scale) {
  if (precision <= 38) return DataType::Decimal(precision, scale);
  const int integer_digits = precision - scale;
  return DataType::Decimal(38, std::max(38 - integer_digits, std::min(scale, 6)));
}

// Flink's decimal result types (LogicalTypeMerging.find*DecimalType).
DataType DecimalArithmeticType(ArithOp op, const DataType& l, const DataType& r) {
  const auto [p1, s1] = DecimalShape(l);
  const auto [p2, s2] = DecimalShape(r);
  switch (op) {
    case ArithOp::kAdd:
    case ArithOp::kSub: {
      const int scale = std::max(s1, s2);
      return AdjustedDecimal(std::max(p1 - s1, p2 - s2) + scale + 1, scale);
    }
    case ArithOp::kMul:
      return AdjustedDecimal(p1 + p2 + 1, s1 + s2);
    case ArithOp::kDiv: {
      const int scale = std::max(6, s1 + p2 + 1);
      return AdjustedDecimal(p1 - s1 + s2 + scale, scale);
    }
    case ArithOp::kMod: {
      const int scale = std::max(s1, s2);
      return AdjustedDecimal(std::min(p1 - s1, p2 - s2) + scale, scale);
    }
  }
  return DataType::Decimal(38, 0);
}

}  // namespace

Result<DataType> ArithmeticType(ArithOp op, const DataType& l, const DataType& r) {
  // DECIMAL with FLOAT or DOUBLE is DOUBLE in Flink, whichever side it is on.
  const bool decimal_with_floating = (l.id == TypeId::kDecimal && Rank(r.id) >= 3) ||
                                     (r.id == TypeId::kDecimal && Rank(l.id) >= 3);
  if (decimal_with_floating && op != ArithOp::kMod) return DataType::Double();
  const bool exact_l = l.id == TypeId::kDecimal || Rank(l.id) == 1 || Rank(l.id) == 2;
  const bool exact_r = r.id == TypeId::kDecimal || Rank(r.id) == 1 || Rank(r.id) == 2;
  if ((l.id == TypeId::kDecimal || r.id == TypeId::kDecimal) && exact_l && exact_r) {
    return DecimalArithmeticType(op, l, r);
  }
  if (Rank(l.id) == 0 || Rank(r.id) == 0) {
    return Status::InvalidArgument("cannot apply '" + std::string(ToString(op)) + "' to " +
                                   SqlTypeName(l) + " and " + SqlTypeName(r) +
                                   " (it takes INT, BIGINT, FLOAT, DOUBLE and DECIMAL)");
  }
  if (op == ArithOp::kMod) {
    // Calcite's MOD: exact operands, the divisor's type (the remainder is smaller than it).
    if (Rank(l.id) > 2 || Rank(r.id) > 2) {
      return Status::InvalidArgument("cannot apply '%' (MOD) to " + SqlTypeName(l) + " and " +
                                     SqlTypeName(r) + " (it takes INT and BIGINT)");
    }
    return r;
  }
  return Rank(l.id) >= Rank(r.id) ? l : r;
}

Result<DataType> DecimalLiteralType(std::string_view text, Int128* unscaled) {
  int int_digits = 0, frac_digits = 0;
  bool fraction = false;
  Int128 v = 0;
  for (char c : text) {
    if (c == '.') {
      fraction = true;
      continue;
    }
    if (c < '0' || c > '9') continue;  // the sign
    if (fraction) {
      ++frac_digits;
    } else if (int_digits > 0 || c != '0') {
      ++int_digits;
    }
    if (int_digits + frac_digits > 38) {
      return Status::InvalidArgument("number " + std::string(text) + " has more than 38 digits");
    }
    v = v * 10 + (c - '0');
  }
  *unscaled = !text.empty() && text[0] == '-' ? -v : v;
  return DataType::Decimal(std::max(1, int_digits + frac_digits), frac_digits);
}

namespace {

// The time functions of ScalarFunctionType; NotFound for other names.
Result<DataType> TemporalFunctionType(const std::string& fn, const std::vector<DataType>& args,
                                      const std::function<Status(const std::string&)>& wrong) {
  auto temporal = [](const DataType& t) {
    return t.id == TypeId::kDate || t.id == TypeId::kTimestamp || t.id == TypeId::kTimestampTz;
  };
  if (fn == "EXTRACT") {
    if (args.size() != 2 || args[0].id != TypeId::kString ||
        (!temporal(args[1]) && args[1].id != TypeId::kTime)) {
      return wrong("(unit FROM a DATE, TIME or TIMESTAMP)");
    }
    return DataType::Int64();
  }
  if (fn == "DATE_FORMAT") {
    if (args.size() != 2 || !temporal(args[0]) || args[1].id != TypeId::kString) {
      return wrong("a DATE or TIMESTAMP and a STRING pattern");
    }
    return DataType::String();
  }
  if (fn == "CURRENT_TIMESTAMP" || fn == "LOCALTIMESTAMP" || fn == "CURRENT_DATE" ||
      fn == "CURRENT_TIME" || fn == "LOCALTIME" || fn == "PROCTIME") {
    if (!args.empty()) return wrong("no arguments");
    return fn == "CURRENT_DATE"                            ? DataType::Date()
           : fn == "LOCALTIMESTAMP"                        ? DataType::Timestamp()
           : fn == "CURRENT_TIMESTAMP" || fn == "PROCTIME" ? DataType::TimestampTz()
                                                           : DataType::Time();
  }
  // Flink's non-deterministic functions (a value per row) and its catalog names: floe's tables
  // are in Flink's default catalog and database.
  if (fn == "RAND" || fn == "UUID" || fn == "CURRENT_DATABASE" || fn == "CURRENT_CATALOG") {
    if (!args.empty()) {
      return wrong(fn == "RAND" ? "no arguments (RAND(seed) is not supported yet)"
                                : "no arguments");
    }
    return fn == "RAND" ? DataType::Double() : DataType::String();
  }
  if (fn == "RAND_INTEGER") {
    if (args.size() != 1 || (args[0].id != TypeId::kInt32 && args[0].id != TypeId::kInt64)) {
      return wrong("an INT bound (RAND_INTEGER(seed, bound) is not supported yet)");
    }
    return DataType::Int32();
  }
  if (fn == "CURRENT_WATERMARK") {  // the planner checks the argument is the rowtime
    if (args.size() != 1 ||
        (args[0].id != TypeId::kTimestamp && args[0].id != TypeId::kTimestampTz)) {
      return wrong("the table's rowtime attribute (a TIMESTAMP or TIMESTAMP_LTZ WATERMARK column)");
    }
    return args[0];
  }
  if (fn == "TO_TIMESTAMP") {
    const bool ok = (args.size() == 1 || args.size() == 2) &&
                    std::all_of(args.begin(), args.end(),
                                [](const DataType& t) { return t.id == TypeId::kString; });
    if (!ok) return wrong("a STRING and, optionally, its STRING pattern ('yyyy-MM-dd HH:mm:ss')");
    return DataType::Timestamp();
  }
  if (fn == "FLOOR" || fn == "CEIL") {
    if (args.size() == 2 && temporal(args[0]) && args[1].id == TypeId::kString) return args[0];
    const bool number =
        args.size() == 1 && (args[0].id == TypeId::kInt32 || args[0].id == TypeId::kInt64 ||
                             args[0].id == TypeId::kFloat || args[0].id == TypeId::kDouble ||
                             args[0].id == TypeId::kDecimal);
    if (!number) {
      return wrong("an INT, BIGINT, FLOAT, DOUBLE or DECIMAL, or (a DATE or TIMESTAMP TO unit)");
    }
    // DECIMAL(p, s) gives DECIMAL(p, 0), as Calcite's ARG0_OR_EXACT_NO_SCALE (Flink's FLOOR).
    if (args[0].id == TypeId::kDecimal) return DataType::Decimal(args[0].precision, 0);
    return args[0];
  }
  if (fn == "TIMESTAMPADD") {
    const bool ok = args.size() == 3 && args[0].id == TypeId::kString &&
                    (args[1].id == TypeId::kInt32 || args[1].id == TypeId::kInt64) &&
                    temporal(args[2]);
    if (!ok) return wrong("(unit, an INT or BIGINT count, a DATE or TIMESTAMP)");
    return args[2];
  }
  if (fn == "TIMESTAMPDIFF") {
    const bool ok =
        args.size() == 3 && args[0].id == TypeId::kString && temporal(args[1]) && temporal(args[2]);
    if (!ok) return wrong("(unit, a DATE or TIMESTAMP, a DATE or TIMESTAMP)");
    return DataType::Int32();
  }
  return Status::NotFound("function " + fn);
}

}  // namespace

Result<DataType> ScalarFunctionType(std::string_view name, const std::vector<DataType>& args) {
  const std::string fn(name);
  auto wrong = [&](const std::string& takes) {
    std::string got;
    for (const DataType& t : args) got += (got.empty() ? "" : ", ") + SqlTypeName(t);
    return Status::InvalidArgument(fn + " takes " + takes + ", got (" + got + ")");
  };
  auto strings = [&](size_t from, size_t to) {
    if (args.size() < from || args.size() > to) return false;
    for (const DataType& t : args) {
      if (t.id != TypeId::kString) return false;
    }
    return true;
  };
  if (fn == "UPPER" || fn == "LOWER") {
    if (!strings(1, 1)) return wrong("one STRING");
    return DataType::String();
  }
  if (fn == "TRIM" || fn == "LTRIM" || fn == "RTRIM") {
    if (!strings(1, 2)) return wrong("a STRING and the STRING of characters to remove");
    return DataType::String();
  }
  if (fn == "CHAR_LENGTH" || fn == "CHARACTER_LENGTH") {
    if (!strings(1, 1)) return wrong("one STRING");
    return DataType::Int32();
  }
  if (fn == "REPLACE") {
    if (!strings(3, 3)) return wrong("three STRINGs");
    return DataType::String();
  }
  if (fn == "CONCAT") {
    if (!strings(1, 1000)) return wrong("STRINGs");
    return DataType::String();
  }
  if (fn == "SUBSTRING") {
    const bool ok = (args.size() == 2 || args.size() == 3) && args[0].id == TypeId::kString &&
                    args[1].id == TypeId::kInt32 &&
                    (args.size() == 2 || args[2].id == TypeId::kInt32);
    if (!ok) return wrong("a STRING, an INT start and an optional INT length");
    return DataType::String();
  }
  if (fn == "CONCAT_WS") {
    if (!strings(2, 1000)) return wrong("a STRING separator and STRINGs");
    return DataType::String();
  }
  if (fn == "LEFT" || fn == "RIGHT") {
    if (args.size() != 2 || args[0].id != TypeId::kString || args[1].id != TypeId::kInt32) {
      return wrong("a STRING and an INT count");
    }
    return DataType::String();
  }
  if (fn == "POSITION" || fn == "LOCATE") {
    const bool ok = (args.size() == 2 || (fn == "LOCATE" && args.size() == 3)) &&
                    args[0].id == TypeId::kString && args[1].id == TypeId::kString &&
                    (args.size() == 2 || args[2].id == TypeId::kInt32);
    if (!ok) return wrong(fn == "LOCATE" ? "two STRINGs and an optional INT start" : "two STRINGs");
    return DataType::Int32();
  }
  if (fn == "JSON_VALUE") {
    if (!strings(2, 2)) return wrong("a STRING of JSON and a STRING path ('$.a.b[0]')");
    return DataType::String();
  }
  if (fn == "REGEXP_EXTRACT") {
    const bool ok =
        (args.size() == 2 || args.size() == 3) && args[0].id == TypeId::kString &&
        args[1].id == TypeId::kString &&
        (args.size() == 2 || args[2].id == TypeId::kInt32 || args[2].id == TypeId::kInt64);
    if (!ok) return wrong("a STRING, a STRING regex and an optional INT group");
    return DataType::String();
  }
  Result<DataType> temporal = TemporalFunctionType(fn, args, wrong);
  if (temporal.status().code() != StatusCode::kNotFound) return temporal;
  if (fn == "POWER" || fn == "SQRT" || fn == "ABS") {
    const size_t n = fn == "POWER" ? 2 : 1;
    bool numbers = args.size() == n;
    for (const DataType& t : args) numbers = numbers && IsNumericType(t.id);
    if (!numbers) return wrong(fn == "POWER" ? "two numbers" : "a number");
    return fn == "ABS" ? args[0] : DataType::Double();
  }
  if (fn == "LIKE") {
    if (!strings(2, 2)) return wrong("a STRING and a STRING pattern");
    return DataType::Boolean();
  }
  if (fn == "COALESCE") {
    if (args.empty()) return wrong("one or more arguments");
    Result<DataType> type = CommonType(args);
    if (!type.ok()) return wrong("arguments of one type, or numbers");
    return type;
  }
  return Status::NotFound("function " + fn);
}

Result<DataType> CommonType(const std::vector<DataType>& types) {
  if (types.empty()) return Status::InvalidArgument("no types");
  bool same = true, numbers = true, floating = false, decimal = false;
  DataType widest = types[0];
  int integer_digits = 0, scale = 0;
  for (const DataType& t : types) {
    same = same && t == types[0];
    numbers = numbers && IsNumericType(t.id);
    if (!numbers) continue;
    floating = floating || Rank(t.id) >= 3;
    decimal = decimal || t.id == TypeId::kDecimal;
    if (Rank(t.id) > Rank(widest.id)) widest = t;
    // The digits each needs left and right of the point (INT 10, BIGINT 19).
    const int digits = t.id == TypeId::kDecimal ? t.precision - t.scale
                       : t.id == TypeId::kInt32 ? 10
                                                : 19;
    integer_digits = std::max(integer_digits, digits);
    if (t.id == TypeId::kDecimal) scale = std::max(scale, t.scale);
  }
  if (same) return types[0];
  if (!numbers) {
    std::string names;
    for (const DataType& t : types) names += (names.empty() ? "" : ", ") + SqlTypeName(t);
    return Status::InvalidArgument(names + " have no common type (values of one type, or numbers)");
  }
  if (floating) return decimal ? DataType::Double() : widest;
  if (!decimal) return widest;
  return DataType::Decimal(std::min(38, integer_digits + scale), scale);
}

bool IsTimeUnit(std::string_view unit) {
  for (std::string_view u :
       {"SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}) {
    if (u == unit) return true;
  }
  return false;
}

bool IsExtractUnit(std::string_view unit) {
  for (std::string_view u : {"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND",
                             "MILLISECOND", "MICROSECOND", "DOY", "DOW", "ISODOW"}) {
    if (u == unit) return true;
  }
  return false;
}

bool IsScalarFunction(std::string_view name) {
  return name == "MOD" || name == "TO_TIMESTAMP_LTZ" ||
         ScalarFunctionType(name, {}).status().code() != StatusCode::kNotFound;
}

bool IsNumericType(TypeId id) {
  return id == TypeId::kInt32 || id == TypeId::kInt64 || id == TypeId::kFloat ||
         id == TypeId::kDouble || id == TypeId::kDecimal;
}

double DecimalToDouble(Int128 unscaled, int scale) {
  long double divisor = 1;
  for (int i = 0; i < scale; ++i) divisor *= 10;
  return static_cast<double>(static_cast<long double>(unscaled) / divisor);
}

double NumberAsDouble(const Column& c, size_t i) {
  switch (c.type().id) {
    case TypeId::kInt32:
      return c.Get<int32_t>(i);
    case TypeId::kInt64:
      return static_cast<double>(c.Get<int64_t>(i));
    case TypeId::kFloat:
      return c.Get<float>(i);
    case TypeId::kDecimal:
      return DecimalToDouble(c.Get<Int128>(i), c.type().scale);
    default:
      return c.Get<double>(i);
  }
}

Result<DataType> NegationType(const DataType& operand) {
  if (Rank(operand.id) == 0 && operand.id != TypeId::kDecimal) {
    return Status::InvalidArgument("cannot negate " + SqlTypeName(operand) +
                                   " (unary minus takes INT, BIGINT, FLOAT, DOUBLE and DECIMAL)");
  }
  return operand;
}

}  // namespace floe::sql
