#include "floe/sql/exec/decimal_arithmetic.h"

#include <cstdint>

namespace floe::sql::decimal {
namespace {

using U128 = unsigned __int128;

// An unsigned 256-bit magnitude: hi * 2^128 + lo.
struct U256 {
  U128 hi = 0;
  U128 lo = 0;
};

bool Less(const U256& a, const U256& b) { return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo; }

U256 Sub(const U256& a, const U256& b) {
  U256 r;
  r.lo = a.lo - b.lo;
  r.hi = a.hi - b.hi - (a.lo < b.lo ? 1 : 0);
  return r;
}

U256 Add(const U256& a, const U256& b) {
  U256 r;
  r.lo = a.lo + b.lo;
  r.hi = a.hi + b.hi + (r.lo < a.lo ? 1 : 0);
  return r;
}

// a * b for 128-bit magnitudes, exact.
U256 Mul(U128 a, U128 b) {
  const uint64_t a0 = static_cast<uint64_t>(a), a1 = static_cast<uint64_t>(a >> 64);
  const uint64_t b0 = static_cast<uint64_t>(b), b1 = static_cast<uint64_t>(b >> 64);
  const U128 p00 = static_cast<U128>(a0) * b0, p01 = static_cast<U128>(a0) * b1;
  const U128 p10 = static_cast<U128>(a1) * b0, p11 = static_cast<U128>(a1) * b1;
  const U128 middle = (p00 >> 64) + static_cast<uint64_t>(p01) + static_cast<uint64_t>(p10);
  U256 r;
  r.lo = (middle << 64) | static_cast<uint64_t>(p00);
  r.hi = p11 + (p01 >> 64) + (p10 >> 64) + (middle >> 64);
  return r;
}

// a * 10^n; false when it passes 256 bits. In steps of at most 10^38, which fits 128 bits.
bool MulPow10(U256 a, int n, U256* out) {
  while (n > 0) {
    const int step = n > 38 ? 38 : n;
    U128 p = 1;
    for (int i = 0; i < step; ++i) p *= 10;
    const U256 lo = Mul(a.lo, p);
    const U256 hi = Mul(a.hi, p);
    if (hi.hi != 0) return false;  // hi * p << 128 would not fit
    U256 shifted;
    shifted.hi = hi.lo;
    a = Add(lo, shifted);
    if (Less(a, lo)) return false;
    n -= step;
  }
  *out = a;
  return true;
}

// a / b and a % b: natively when both fit 128 bits (nearly always: values of 38 digits and
// their products at moderate scales), else by shift and subtract.
void DivMod(const U256& a, const U256& b, U256* quotient, U256* remainder) {
  if (a.hi == 0 && b.hi == 0) {
    *quotient = U256{0, a.lo / b.lo};
    *remainder = U256{0, a.lo % b.lo};
    return;
  }
  U256 q, r;
  for (int bit = 255; bit >= 0; --bit) {
    r.hi = (r.hi << 1) | (r.lo >> 127);
    r.lo <<= 1;
    const U128 word = bit >= 128 ? a.hi : a.lo;
    r.lo |= (word >> (bit % 128)) & 1;
    if (!Less(r, b)) {
      r = Sub(r, b);
      if (bit >= 128) {
        q.hi |= static_cast<U128>(1) << (bit - 128);
      } else {
        q.lo |= static_cast<U128>(1) << bit;
      }
    }
  }
  *quotient = q;
  *remainder = r;
}

U256 FromU128(U128 v) { return U256{0, v}; }
U128 Magnitude(Int128 v) { return v < 0 ? static_cast<U128>(0) - static_cast<U128>(v) : v; }

// Divides `a` by 10^n, HALF_UP (the dropped part rounds away from zero from one half on).
U256 DropDigits(const U256& a, int n) {
  if (n <= 0) return a;
  U256 divisor{0, 1};
  MulPow10(divisor, n, &divisor);  // n <= 76: 10^76 fits 256 bits
  U256 q, r;
  DivMod(a, divisor, &q, &r);
  // Round up when 2r >= divisor.
  const U256 twice = Add(r, r);
  if (!Less(twice, divisor) || Less(twice, r)) q = Add(q, FromU128(1));
  return q;
}

// The signed result of magnitude `m`, when it fits `precision` digits.
std::optional<Int128> Fit(const U256& m, bool negative, int precision) {
  U128 limit = 1;
  for (int i = 0; i < precision; ++i) limit *= 10;
  if (m.hi != 0 || m.lo >= limit) return std::nullopt;
  const Int128 v = static_cast<Int128>(m.lo);
  return negative ? -v : v;
}

// |v| * 10^n as 256 bits (n small enough that it fits: callers keep n <= 38).
U256 Scaled(Int128 v, int n) {
  U256 out = FromU128(Magnitude(v));
  MulPow10(out, n, &out);
  return out;
}

}  // namespace

std::optional<Int128> Rescale(Int128 v, int from, int precision, int to) {
  const bool negative = v < 0;
  U256 m = FromU128(Magnitude(v));
  if (to >= from) {
    if (!MulPow10(m, to - from, &m)) return std::nullopt;
  } else {
    m = DropDigits(m, from - to);
  }
  return Fit(m, negative, precision);
}

std::optional<Int128> Apply(ArithOp op, Int128 a, int sa, Int128 b, int sb, int precision,
                            int scale) {
  switch (op) {
    case ArithOp::kAdd:
    case ArithOp::kSub: {
      // Both at the larger scale, exact, then rounded to the result's scale.
      const int common = sa > sb ? sa : sb;
      const U256 x = Scaled(a, common - sa), y = Scaled(b, common - sb);
      const bool xneg = a < 0;
      const bool yneg = (b < 0) != (op == ArithOp::kSub);
      U256 m;
      bool negative;
      if (xneg == yneg) {
        m = Add(x, y);
        negative = xneg;
      } else if (Less(x, y)) {
        m = Sub(y, x);
        negative = yneg;
      } else {
        m = Sub(x, y);
        negative = xneg;
      }
      return Fit(DropDigits(m, common - scale), negative, precision);
    }
    case ArithOp::kMul: {
      const U256 m = Mul(Magnitude(a), Magnitude(b));  // at scale sa + sb
      return Fit(DropDigits(m, sa + sb - scale), (a < 0) != (b < 0), precision);
    }
    case ArithOp::kDiv: {
      // a / b at `scale`: a * 10^(scale - sa + sb) / b, HALF_UP; one more digit, then rounded.
      const int shift = scale - sa + sb + 1;
      U256 numerator = FromU128(Magnitude(a));
      U256 divisor = FromU128(Magnitude(b));
      if (shift >= 0) {
        if (!MulPow10(numerator, shift, &numerator)) return std::nullopt;
      } else if (!MulPow10(divisor, -shift, &divisor)) {
        return Fit(U256{}, false, precision);  // |a / b| rounds to zero
      }
      U256 q, r;
      DivMod(numerator, divisor, &q, &r);
      return Fit(DropDigits(q, 1), (a < 0) != (b < 0), precision);
    }
    case ArithOp::kMod: {
      // Java's BigDecimal remainder: both at the larger scale, the dividend's sign.
      const int common = sa > sb ? sa : sb;
      U256 q, r;
      DivMod(Scaled(a, common - sa), Scaled(b, common - sb), &q, &r);
      return Fit(DropDigits(r, common - scale), a < 0, precision);
    }
  }
  return std::nullopt;
}

Int128 Pow10(int n) {
  Int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

Int128 RoundToInteger(Int128 v, int scale, bool up) {
  const Int128 unit = Pow10(scale);
  const Int128 q = v / unit;  // toward zero
  const Int128 rem = v % unit;
  if (up && rem > 0) return q + 1;
  if (!up && rem < 0) return q - 1;
  return q;
}

}  // namespace floe::sql::decimal
