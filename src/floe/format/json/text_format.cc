#include "floe/format/json/text_format_internal.h"

namespace floe::json::internal {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

const char* ParseDecimal(std::string_view s, int precision, int scale, Int128* unscaled) {
  size_t pos = 0;
  bool neg = false;
  if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) neg = s[pos++] == '-';
  // Significant digits (leading zeros dropped) and how many of them are fractional.
  char digits[80];
  int64_t ndigits = 0;
  int64_t frac_digits = 0;
  bool any = false;
  auto take = [&](char c, bool fractional) -> bool {
    any = true;
    if (ndigits == 0 && c == '0') {
      frac_digits += fractional;
      return true;
    }
    if (ndigits >= static_cast<int64_t>(sizeof(digits))) return false;
    digits[ndigits++] = c;
    frac_digits += fractional;
    return true;
  };
  constexpr const char* kTooManyDigits = "more digits than the precision allows";
  while (pos < s.size() && IsDigit(s[pos])) {
    if (!take(s[pos++], false)) return kTooManyDigits;
  }
  if (!any) return "not a number";
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    while (pos < s.size() && IsDigit(s[pos])) {
      char c = s[pos++];
      // Past the buffer only trailing zeros may follow; they do not change the value.
      if (!take(c, true) && c != '0') return kTooManyDigits;
    }
    if (pos == start) return "not a number";
  }
  int64_t exponent = 0;
  if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
    ++pos;
    bool eneg = false;
    if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) eneg = s[pos++] == '-';
    size_t start = pos;
    while (pos < s.size() && IsDigit(s[pos])) {
      if (exponent < 100000) exponent = exponent * 10 + (s[pos] - '0');
      ++pos;
    }
    if (pos == start) return "not a number";
    if (eneg) exponent = -exponent;
  }
  if (pos != s.size()) return "not a number";
  // value = digits * 10^(exponent - frac_digits), needed at `scale`.
  int64_t shift = scale + exponent - frac_digits;  // zeros to append (or drop if negative)
  int64_t kept = ndigits;
  if (shift < 0) {
    int64_t drop = -shift;
    for (int64_t i = 0; i < drop && i < ndigits; ++i) {
      if (digits[ndigits - 1 - i] != '0') return "more fractional digits than the scale allows";
    }
    kept = drop >= ndigits ? 0 : ndigits - drop;
    shift = 0;
  }
  if (kept + shift > precision) return "more digits than the precision allows";
  Int128 v = 0;
  for (int64_t i = 0; i < kept; ++i) v = v * 10 + (digits[i] - '0');
  for (int64_t i = 0; i < shift; ++i) v *= 10;
  *unscaled = neg ? -v : v;
  return nullptr;
}

namespace {
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int B64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

bool DecodeBase64(std::string_view s, std::string* out) {
  out->clear();
  if (s.size() % 4 == 0 && !s.empty()) {
    if (s.back() == '=') s.remove_suffix(1);
    if (s.back() == '=') s.remove_suffix(1);
  }
  if (s.size() % 4 == 1) return false;
  out->reserve(s.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    int v = B64Value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  // Leftover bits must be zero, so that each byte string has exactly one encoding.
  return (acc & ((1u << bits) - 1)) == 0;
}

void AppendBase64(std::string_view bytes, std::string* out) {
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (static_cast<uint8_t>(bytes[i]) << 16) |
                 (static_cast<uint8_t>(bytes[i + 1]) << 8) | static_cast<uint8_t>(bytes[i + 2]);
    out->push_back(kB64[v >> 18]);
    out->push_back(kB64[(v >> 12) & 63]);
    out->push_back(kB64[(v >> 6) & 63]);
    out->push_back(kB64[v & 63]);
  }
  size_t rest = bytes.size() - i;
  if (rest == 1) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    out->push_back(kB64[v >> 18]);
    out->push_back(kB64[(v >> 12) & 63]);
    out->append("==");
  } else if (rest == 2) {
    uint32_t v = (static_cast<uint8_t>(bytes[i]) << 16) | (static_cast<uint8_t>(bytes[i + 1]) << 8);
    out->push_back(kB64[v >> 18]);
    out->push_back(kB64[(v >> 12) & 63]);
    out->push_back(kB64[(v >> 6) & 63]);
    out->push_back('=');
  }
}

void AppendDecimal(Int128 unscaled, int scale, std::string* out) {
  bool neg = unscaled < 0;
  // Unsigned magnitude: -(2^127) would overflow as signed.
  unsigned __int128 mag =
      neg ? -static_cast<unsigned __int128>(unscaled) : static_cast<unsigned __int128>(unscaled);
  char buf[48];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + static_cast<int>(mag % 10));
    mag /= 10;
  } while (mag > 0);
  while (n <= scale) buf[n++] = '0';  // at least one integer digit
  if (neg) out->push_back('-');
  for (int i = n - 1; i >= 0; --i) {
    out->push_back(buf[i]);
    if (i == scale && scale > 0) out->push_back('.');
  }
}

}  // namespace floe::json::internal
