#include "floe/sql/scalar_types.h"

#include <algorithm>
#include <string>

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

}  // namespace

Result<DataType> ArithmeticType(ArithOp op, const DataType& l, const DataType& r) {
  // DECIMAL with FLOAT or DOUBLE is DOUBLE in Flink, whichever side it is on.
  const bool decimal_with_floating = (l.id == TypeId::kDecimal && Rank(r.id) >= 3) ||
                                     (r.id == TypeId::kDecimal && Rank(l.id) >= 3);
  if (decimal_with_floating && op != ArithOp::kMod) return DataType::Double();
  if (Rank(l.id) == 0 || Rank(r.id) == 0) {
    const std::string why = l.id == TypeId::kDecimal || r.id == TypeId::kDecimal
                                ? " (arithmetic on DECIMAL is not supported yet)"
                                : " (it takes INT, BIGINT, FLOAT and DOUBLE)";
    return Status::InvalidArgument("cannot apply '" + std::string(ToString(op)) + "' to " +
                                   SqlTypeName(l) + " and " + SqlTypeName(r) + why);
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

Result<DataType> NegationType(const DataType& operand) {
  if (Rank(operand.id) == 0) {
    return Status::InvalidArgument("cannot negate " + SqlTypeName(operand) +
                                   " (unary minus takes INT, BIGINT, FLOAT and DOUBLE)");
  }
  return operand;
}

}  // namespace floe::sql
