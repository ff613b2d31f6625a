#include "floe/sql/exec/comparisons.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "floe/sql/exec/decimal_arithmetic.h"
#include "floe/sql/scalar_types.h"

namespace floe::sql {
namespace {

bool IsInteger(TypeId id) { return id == TypeId::kInt32 || id == TypeId::kInt64; }
bool IsFloating(TypeId id) { return id == TypeId::kFloat || id == TypeId::kDouble; }
bool IsTemporal(TypeId id) {
  return id == TypeId::kDate || id == TypeId::kTimestamp || id == TypeId::kTimestampTz ||
         id == TypeId::kTime;
}

// One operand in a domain's representation: the column's own values when they already are, else
// converted once per batch.
template <typename T>
struct Values {
  const T* data = nullptr;
  std::vector<T> storage;
  bool constant = false;
  T At(size_t i) const { return data[constant ? 0 : i]; }
};

Values<int64_t> AsInt(const Column& c, bool constant) {
  Values<int64_t> v;
  v.constant = constant;
  if (c.type().fixed_width() == 8) {
    v.data = c.values<int64_t>();
    return v;
  }
  v.storage.resize(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    v.storage[i] = c.type().fixed_width() == 4 ? c.Get<int32_t>(i) : c.Get<uint8_t>(i);
  }
  v.data = v.storage.data();
  return v;
}

Values<double> AsDouble(const Column& c, bool constant) {
  Values<double> v;
  v.constant = constant;
  if (c.type().id == TypeId::kDouble) {
    v.data = c.values<double>();
    return v;
  }
  v.storage.resize(c.size());
  for (size_t i = 0; i < c.size(); ++i) v.storage[i] = NumberAsDouble(c, i);
  v.data = v.storage.data();
  return v;
}

Values<Int128> AsDecimal(const Column& c, bool constant, int scale) {
  Values<Int128> v;
  v.constant = constant;
  const TypeId id = c.type().id;
  if (id == TypeId::kDecimal && c.type().scale == scale) {
    v.data = c.values<Int128>();
    return v;
  }
  const Int128 factor = decimal::Pow10(scale - (id == TypeId::kDecimal ? c.type().scale : 0));
  v.storage.resize(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    const Int128 x = id == TypeId::kDecimal ? c.Get<Int128>(i)
                     : id == TypeId::kInt32 ? Int128(c.Get<int32_t>(i))
                                            : Int128(c.Get<int64_t>(i));
    v.storage[i] = x * factor;
  }
  v.data = v.storage.data();
  return v;
}

template <typename T, typename Cmp>
void CompareRows(size_t rows, const Values<T>& l, const Values<T>& r, Cmp cmp, uint8_t* out) {
  for (size_t i = 0; i < rows; ++i) out[i] = cmp(l.At(i), r.At(i)) ? 1 : 0;
}

template <typename T>
void CompareValues(CompareOp op, size_t rows, const Values<T>& l, const Values<T>& r,
                   uint8_t* out) {
  switch (op) {
    case CompareOp::kEq:
      return CompareRows(rows, l, r, std::equal_to<T>(), out);
    case CompareOp::kNe:
      return CompareRows(rows, l, r, std::not_equal_to<T>(), out);
    case CompareOp::kLt:
      return CompareRows(rows, l, r, std::less<T>(), out);
    case CompareOp::kLe:
      return CompareRows(rows, l, r, std::less_equal<T>(), out);
    case CompareOp::kGt:
      return CompareRows(rows, l, r, std::greater<T>(), out);
    case CompareOp::kGe:
      return CompareRows(rows, l, r, std::greater_equal<T>(), out);
  }
}

bool Holds(CompareOp op, int c) {
  switch (op) {
    case CompareOp::kEq:
      return c == 0;
    case CompareOp::kNe:
      return c != 0;
    case CompareOp::kLt:
      return c < 0;
    case CompareOp::kLe:
      return c <= 0;
    case CompareOp::kGt:
      return c > 0;
    case CompareOp::kGe:
      return c >= 0;
  }
  return false;
}

}  // namespace

Result<Comparison> PlanComparison(CompareOp op, const DataType& l, DecimalShape l_shape,
                                  const DataType& r, DecimalShape r_shape) {
  Comparison c;
  c.op = op;
  const TypeId a = l.id, b = r.id;
  if (IsNumericType(a) && IsNumericType(b)) {
    if (IsInteger(a) && IsInteger(b)) {
      c.domain = Comparison::Domain::kInt;
    } else if (IsFloating(a) || IsFloating(b)) {
      c.domain = Comparison::Domain::kDouble;
    } else {
      // Decimal with decimal or integer: exact at the larger scale when it fits 38 digits.
      const int scale = std::max(l_shape.scale, r_shape.scale);
      const int digits =
          std::max(l_shape.precision - l_shape.scale, r_shape.precision - r_shape.scale) + scale;
      c.domain = digits <= 38 ? Comparison::Domain::kDecimal : Comparison::Domain::kDouble;
      c.scale = scale;
    }
    return c;
  }
  if (a == b && (a == TypeId::kString || a == TypeId::kBinary)) {
    c.domain = Comparison::Domain::kBytes;
    return c;
  }
  if (a == b && (a == TypeId::kBoolean || IsTemporal(a))) {
    c.domain = Comparison::Domain::kInt;
    return c;
  }
  if (IsTemporal(a) || IsTemporal(b)) {
    return Status::InvalidArgument(
        " (a DATE, TIME or TIMESTAMP compares with a value of its own type or a string literal)");
  }
  return Status::InvalidArgument("");
}

Column CompareColumns(const Comparison& c, const Column& l, bool l_constant, const Column& r,
                      bool r_constant, size_t rows) {
  Column out(DataType::Boolean());
  out.Reserve(rows);
  std::vector<uint8_t> truth(rows);
  switch (c.domain) {
    case Comparison::Domain::kInt:
      CompareValues(c.op, rows, AsInt(l, l_constant), AsInt(r, r_constant), truth.data());
      break;
    case Comparison::Domain::kDouble:
      CompareValues(c.op, rows, AsDouble(l, l_constant), AsDouble(r, r_constant), truth.data());
      break;
    case Comparison::Domain::kDecimal:
      CompareValues(c.op, rows, AsDecimal(l, l_constant, c.scale),
                    AsDecimal(r, r_constant, c.scale), truth.data());
      break;
    case Comparison::Domain::kBytes:
      for (size_t i = 0; i < rows; ++i) {
        const std::string_view a = l.GetBytes(l_constant ? 0 : i);
        const std::string_view b = r.GetBytes(r_constant ? 0 : i);
        truth[i] = Holds(c.op, a.compare(b)) ? 1 : 0;
      }
      break;
  }
  const bool nulls = l.null_count() > 0 || r.null_count() > 0;
  for (size_t i = 0; i < rows; ++i) {
    if (nulls && (l.IsNull(l_constant ? 0 : i) || r.IsNull(r_constant ? 0 : i))) {
      out.AppendNull();
    } else {
      out.Append<uint8_t>(truth[i]);
    }
  }
  return out;
}

}  // namespace floe::sql
