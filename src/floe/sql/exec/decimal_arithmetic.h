#pragma once

#include <optional>

#include "floe/common/record_batch.h"
#include "floe/sql/ast.h"

// Exact DECIMAL arithmetic on unscaled values, as Flink's DecimalDataUtils computes it with
// Java's BigDecimal: operands at their own scales, the result rounded HALF_UP to the result
// type's scale (sql/scalar_types.h ArithmeticType), NULL (nullopt) when it does not fit the
// result's precision. Intermediate values may exceed 128 bits and are kept in 256.
namespace floe::sql::decimal {

// `a op b` into DECIMAL(precision, scale); `a` has scale `sa`, `b` scale `sb`.
// REQUIRES: b != 0 for kDiv and kMod (the caller reports division by zero).
std::optional<Int128> Apply(ArithOp op, Int128 a, int sa, Int128 b, int sb, int precision,
                            int scale);

// `v` of scale `from` at scale `to` (HALF_UP when digits are dropped); nullopt when it does not
// fit `precision` digits.
std::optional<Int128> Rescale(Int128 v, int from, int precision, int to);

// 10^n. REQUIRES: 0 <= n <= 38.
Int128 Pow10(int n);

// FLOOR (CEIL when `up`) of `v` of scale `scale`: the integer at or below (above) it, scale 0.
Int128 RoundToInteger(Int128 v, int scale, bool up);

}  // namespace floe::sql::decimal
