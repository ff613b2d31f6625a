#pragma once

#include <cstddef>
#include <cstdint>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/sql/ast.h"

// Comparisons of two values a column at a time, for ScalarExpr.
namespace floe::sql {

// The shape of an exact operand as a decimal: DECIMAL(p, s) as declared, INT (10, 0), BIGINT
// (19, 0), an integer literal its own digits.
struct DecimalShape {
  int precision = 0;
  int scale = 0;
};

// How a comparison is carried out: both operands converted into one domain.
struct Comparison {
  enum class Domain : uint8_t { kInt, kDouble, kDecimal, kBytes } domain = Domain::kInt;
  CompareOp op = CompareOp::kEq;
  int scale = 0;  // kDecimal: both operands at this scale
};

// What `l op r` compares as: numbers of any type with each other (integers exactly, decimals
// exactly at the larger scale when that fits 38 digits, anything with FLOAT/DOUBLE as double),
// STRING with STRING and BINARY with BINARY (byte order), BOOLEAN with BOOLEAN (FALSE < TRUE),
// DATE, TIMESTAMP and TIMESTAMP_LTZ with the same type. InvalidArgument otherwise, its message
// the reason after "cannot compare L with R in <expr>" (empty, or a hint in parentheses).
Result<Comparison> PlanComparison(CompareOp op, const DataType& l, DecimalShape l_shape,
                                  const DataType& r, DecimalShape r_shape);

// `l op r` for `rows` rows as a BOOLEAN column, NULL where either operand is NULL (UNKNOWN). A
// constant operand is a column of one row, read for every row.
Column CompareColumns(const Comparison& c, const Column& l, bool l_constant, const Column& r,
                      bool r_constant, size_t rows);

}  // namespace floe::sql
