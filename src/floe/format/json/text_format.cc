#include <cstring>
#include <limits>

#include "floe/format/json/text_format_internal.h"

namespace floe::json::internal {

namespace {

constexpr int64_t kMicrosPerDay = int64_t{86400} * 1000000;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `n` digits at s[*pos].
bool Digits(std::string_view s, size_t* pos, int n, int64_t* v) {
  if (*pos + n > s.size()) return false;
  int64_t x = 0;
  for (int i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (!IsDigit(c)) return false;
    x = x * 10 + (c - '0');
  }
  *pos += n;
  *v = x;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

int64_t DaysInMonth(int64_t y, int64_t m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m == 2 && (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) return 29;
  return kDays[m - 1];
}

// Parses the date part at the front of `s`; returns nullptr or a reason.
const char* ParseDatePart(std::string_view s, size_t* pos, int64_t* days) {
  bool neg = false;
  int max_digits = 4;
  if (*pos < s.size() && (s[*pos] == '+' || s[*pos] == '-')) {
    neg = s[*pos] == '-';
    ++*pos;
    max_digits = 9;  // signed (expanded) years: 4 to 9 digits
  }
  int64_t y = 0;
  int n = 0;
  while (*pos < s.size() && IsDigit(s[*pos]) && n < max_digits) {
    y = y * 10 + (s[(*pos)++] - '0');
    ++n;
  }
  if (n < 4 || (*pos < s.size() && IsDigit(s[*pos]))) return "bad year";
  if (neg) y = -y;
  int64_t m = 0, d = 0;
  if (!Expect(s, pos, '-') || !Digits(s, pos, 2, &m) || !Expect(s, pos, '-') ||
      !Digits(s, pos, 2, &d)) {
    return "not YYYY-MM-DD";
  }
  if (m < 1 || m > 12) return "month out of range";
  if (d < 1 || d > DaysInMonth(y, m)) return "day out of range";
  *days = DaysFromCivil(y, m, d);
  return nullptr;
}

void AppendPadded(int64_t v, int width, std::string* out) {
  char buf[24];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  for (int i = n; i < width; ++i) out->push_back('0');
  while (n > 0) out->push_back(buf[--n]);
}

void AppendCivilDate(int64_t days, std::string* out) {
  int64_t y, m, d;
  CivilFromDays(days, &y, &m, &d);
  if (y < 0) {
    out->push_back('-');
    AppendPadded(-y, 4, out);
  } else {
    if (y > 9999) out->push_back('+');
    AppendPadded(y, 4, out);
  }
  out->push_back('-');
  AppendPadded(m, 2, out);
  out->push_back('-');
  AppendPadded(d, 2, out);
}

}  // namespace

int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, int64_t* m, int64_t* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yoe + era * 400 + (*m <= 2);
}

const char* ParseDate(std::string_view s, int32_t* days) {
  size_t pos = 0;
  int64_t d = 0;
  if (const char* err = ParseDatePart(s, &pos, &d)) return err;
  if (pos != s.size()) return "not YYYY-MM-DD";
  if (d < std::numeric_limits<int32_t>::min() || d > std::numeric_limits<int32_t>::max()) {
    return "date out of range";
  }
  *days = static_cast<int32_t>(d);
  return nullptr;
}

const char* ParseTimestamp(std::string_view s, bool with_zone, int64_t* micros) {
  size_t pos = 0;
  int64_t days = 0;
  if (const char* err = ParseDatePart(s, &pos, &days)) return err;
  if (pos >= s.size() || (s[pos] != ' ' && s[pos] != 'T')) return "not YYYY-MM-DD HH:MM:SS";
  ++pos;
  int64_t hh = 0, mm = 0, ss = 0;
  if (!Digits(s, &pos, 2, &hh) || !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &mm)) {
    return "not YYYY-MM-DD HH:MM:SS";
  }
  // Seconds may be left out ("2020-12-30T12:13", as Java's LocalDateTime.toString() writes whole
  // minutes); Flink's ISO-8601 parser (ISO_LOCAL_TIME) takes that too.
  bool has_seconds = pos < s.size() && s[pos] == ':';
  if (has_seconds && (!Expect(s, &pos, ':') || !Digits(s, &pos, 2, &ss))) {
    return "not YYYY-MM-DD HH:MM:SS";
  }
  if (hh > 23 || mm > 59 || ss > 59) return "time out of range";
  int64_t frac = 0;
  if (has_seconds && pos < s.size() && s[pos] == '.') {
    ++pos;
    int n = 0;
    while (pos < s.size() && IsDigit(s[pos])) {
      if (n < 6) frac = frac * 10 + (s[pos] - '0');  // beyond microseconds: truncated
      ++n;
      ++pos;
    }
    if (n == 0 || n > 9) return "fraction must have 1 to 9 digits";
    for (int i = n; i < 6; ++i) frac *= 10;
  }
  int64_t offset_seconds = 0;
  if (with_zone && pos < s.size()) {
    if (s[pos] == 'Z') {
      ++pos;
    } else if (s[pos] == '+' || s[pos] == '-') {
      int64_t sign = s[pos] == '-' ? -1 : 1;
      ++pos;
      int64_t oh = 0, om = 0;
      if (!Digits(s, &pos, 2, &oh) || !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &om) ||
          oh > 18 || om > 59) {
        return "bad zone offset (expected Z or +HH:MM)";
      }
      offset_seconds = sign * (oh * 3600 + om * 60);
    }
  }
  if (pos != s.size())
    return with_zone ? "unexpected text after the time"
                     : "unexpected text after the time (no zone allowed)";
  Int128 total = static_cast<Int128>(days) * kMicrosPerDay +
                 static_cast<Int128>(hh * 3600 + mm * 60 + ss - offset_seconds) * 1000000 + frac;
  if (total < std::numeric_limits<int64_t>::min() || total > std::numeric_limits<int64_t>::max()) {
    return "timestamp out of range";
  }
  *micros = static_cast<int64_t>(total);
  return nullptr;
}

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

void AppendDate(int32_t days, std::string* out) { AppendCivilDate(days, out); }

void AppendTimestamp(int64_t micros, bool zulu, char separator, std::string* out) {
  // Floor division so that times before 1970 get a positive time of day.
  int64_t days = micros / kMicrosPerDay;
  int64_t rem = micros % kMicrosPerDay;
  if (rem < 0) {
    rem += kMicrosPerDay;
    --days;
  }
  AppendCivilDate(days, out);
  out->push_back(separator);
  int64_t secs = rem / 1000000;
  AppendPadded(secs / 3600, 2, out);
  out->push_back(':');
  AppendPadded(secs / 60 % 60, 2, out);
  out->push_back(':');
  AppendPadded(secs % 60, 2, out);
  out->push_back('.');
  AppendPadded(rem % 1000000, 6, out);
  if (zulu) out->push_back('Z');
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
