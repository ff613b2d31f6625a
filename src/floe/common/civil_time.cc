#include "floe/common/civil_time.h"

#include <cstring>
#include <limits>

namespace floe {

namespace {

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

// The last "YYYY-MM-DD" this thread parsed: rows of one stream mostly share their date, and
// working the date out again was a tenth of parsing a row's timestamp.
struct LastDate {
  char text[10] = {};
  int64_t days = 0;
  bool set = false;
};
thread_local LastDate last_date;

// Parses the date part at the front of `s`; returns nullptr or a reason.
const char* ParseDatePart(std::string_view s, size_t* pos, int64_t* days) {
  const bool plain = *pos + 10 <= s.size() && (*pos + 10 == s.size() || !IsDigit(s[*pos + 10]));
  if (plain && last_date.set && std::memcmp(last_date.text, s.data() + *pos, 10) == 0) {
    *pos += 10;
    *days = last_date.days;
    return nullptr;
  }
  const size_t start = *pos;
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
  if (d < 1 || d > DaysInMonth(y, static_cast<int>(m))) return "day out of range";
  *days = DaysFromCivil(y, static_cast<int>(m), static_cast<int>(d));
  if (plain && *pos == start + 10) {  // the exact ten characters mean this day, whatever follows
    std::memcpy(last_date.text, s.data() + start, 10);
    last_date.days = *days;
    last_date.set = true;
  }
  return nullptr;
}

// `v` in decimal with leading zeros up to `width` digits. REQUIRES: v >= 0.
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

void AppendYear(int64_t year, YearStyle style, std::string* out) {
  if (year < 0) {
    out->push_back('-');
    AppendPadded(-year, 4, out);
    return;
  }
  if (year > 9999 && style == YearStyle::kIso8601) out->push_back('+');
  AppendPadded(year, 4, out);
}

}  // namespace

bool IsLeapYear(int64_t year) { return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0); }

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month == 2 && IsLeapYear(year)) return 29;
  return kDays[month - 1];
}

CivilDate CivilFromDays(int64_t days) {
  int64_t z = days + 719468;  // days since 0000-03-01
  int64_t era = FloorDiv(z, 146097);
  int64_t doe = z - era * 146097;                                       // [0, 146096]
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
  int64_t mp = (5 * doy + 2) / 153;                                     // [0, 11], March = 0
  int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return CivilDate{year, month, day};
}

int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2 ? 1 : 0;  // the shifted year starts in March: the leap day is its last
  int64_t era = FloorDiv(year, 400);
  int64_t yoe = year - era * 400;                       // [0, 399]
  int64_t mp = month > 2 ? month - 3 : month + 9;       // [0, 11], March = 0
  int64_t doy = (153 * mp + 2) / 5 + day - 1;           // [0, 365]
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;  // [0, 146096]
  return era * 146097 + doe - 719468;
}

void AppendDate(int64_t days, YearStyle style, std::string* out) {
  CivilDate c = CivilFromDays(days);
  AppendYear(c.year, style, out);
  out->push_back('-');
  AppendPadded(c.month, 2, out);
  out->push_back('-');
  AppendPadded(c.day, 2, out);
}

std::string FormatDate(int64_t days, YearStyle style) {
  std::string out;
  AppendDate(days, style, &out);
  return out;
}

std::string FormatYear(int64_t year, YearStyle style) {
  std::string out;
  AppendYear(year, style, &out);
  return out;
}

void AppendTimestamp(int64_t micros, const TimestampFormat& format, std::string* out) {
  int64_t days = FloorDiv(micros, kMicrosPerDay);
  // Not micros - days * kMicrosPerDay: that product overflows for the lowest timestamps (UBSan).
  int64_t rem = micros % kMicrosPerDay;  // [0, kMicrosPerDay) once adjusted
  if (rem < 0) rem += kMicrosPerDay;
  AppendDate(days, format.years, out);
  out->push_back(format.separator);
  AppendTime(rem, format, out);
}

void AppendTime(int64_t rem, const TimestampFormat& format, std::string* out) {
  int64_t secs = rem / kMicrosPerSecond;
  AppendPadded(secs / 3600, 2, out);
  out->push_back(':');
  AppendPadded(secs / 60 % 60, 2, out);
  out->push_back(':');
  AppendPadded(secs % 60, 2, out);
  int64_t frac = rem % kMicrosPerSecond;
  if (format.trim_zeros) {
    if (frac == 0) return;
    int digits = 6;
    while (frac % 10 == 0) frac /= 10, --digits;
    out->push_back('.');
    AppendPadded(frac, digits, out);
  } else if (format.always_micros || frac != 0) {
    out->push_back('.');
    AppendPadded(frac, 6, out);
  }
}

std::string FormatTimestamp(int64_t micros, const TimestampFormat& format) {
  std::string out;
  AppendTimestamp(micros, format, &out);
  return out;
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

namespace {

// "HH:MM[:SS[.f{1,9}]]" at *pos, as microseconds since midnight.
const char* ParseTimePart(std::string_view s, size_t* pos, int64_t* micros) {
  int64_t hh = 0, mm = 0, ss = 0;
  if (!Digits(s, pos, 2, &hh) || !Expect(s, pos, ':') || !Digits(s, pos, 2, &mm)) {
    return "not HH:MM:SS";
  }
  // Seconds may be left out ("2020-12-30T12:13", as Java's LocalDateTime.toString() writes whole
  // minutes); Flink's ISO-8601 parser (ISO_LOCAL_TIME) takes that too.
  bool has_seconds = *pos < s.size() && s[*pos] == ':';
  if (has_seconds && (!Expect(s, pos, ':') || !Digits(s, pos, 2, &ss))) return "not HH:MM:SS";
  if (hh > 23 || mm > 59 || ss > 59) return "time out of range";
  int64_t frac = 0;
  if (has_seconds && *pos < s.size() && s[*pos] == '.') {
    ++*pos;
    int n = 0;
    while (*pos < s.size() && IsDigit(s[*pos])) {
      if (n < 6) frac = frac * 10 + (s[*pos] - '0');  // beyond microseconds: truncated
      ++n;
      ++*pos;
    }
    if (n == 0 || n > 9) return "fraction must have 1 to 9 digits";
    for (int i = n; i < 6; ++i) frac *= 10;
  }
  *micros = (hh * 3600 + mm * 60 + ss) * kMicrosPerSecond + frac;
  return nullptr;
}

}  // namespace

const char* ParseTime(std::string_view s, int64_t* micros) {
  size_t pos = 0;
  if (const char* err = ParseTimePart(s, &pos, micros)) return err;
  return pos == s.size() ? nullptr : "unexpected text after the time";
}

const char* ParseTimestamp(std::string_view s, bool with_zone, int64_t* micros) {
  size_t pos = 0;
  int64_t days = 0;
  if (const char* err = ParseDatePart(s, &pos, &days)) return err;
  if (pos >= s.size() || (s[pos] != ' ' && s[pos] != 'T')) return "not YYYY-MM-DD HH:MM:SS";
  ++pos;
  int64_t time = 0;
  if (const char* err = ParseTimePart(s, &pos, &time)) {
    return std::string_view(err) == "not HH:MM:SS" ? "not YYYY-MM-DD HH:MM:SS" : err;
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
  if (pos != s.size()) {
    return with_zone ? "unexpected text after the time"
                     : "unexpected text after the time (no zone allowed)";
  }
  // 128 bits: the sum may leave int64's range for dates near its ends.
  __int128 total = static_cast<__int128>(days) * kMicrosPerDay + time -
                   static_cast<__int128>(offset_seconds) * kMicrosPerSecond;
  if (total < std::numeric_limits<int64_t>::min() || total > std::numeric_limits<int64_t>::max()) {
    return "timestamp out of range";
  }
  *micros = static_cast<int64_t>(total);
  return nullptr;
}

}  // namespace floe
