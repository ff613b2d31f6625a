#include "floe/sql/exec/time_functions.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "floe/common/civil_time.h"

namespace floe::sql::time {
namespace {

// The calendar fields of a moment.
struct Fields {
  int64_t year;
  int month, day, hour, minute, second;
  int64_t micros;   // within the second
  int day_of_year;  // 1..366
  int iso_weekday;  // 1 = Monday .. 7 = Sunday
};

Fields FieldsOf(int64_t micros) {
  const int64_t days = FloorDiv(micros, kMicrosPerDay);
  const int64_t in_day = micros - days * kMicrosPerDay;
  const CivilDate date = CivilFromDays(days);
  Fields f{};
  f.year = date.year;
  f.month = date.month;
  f.day = date.day;
  f.hour = static_cast<int>(in_day / (3600 * kMicrosPerSecond));
  f.minute = static_cast<int>(in_day / (60 * kMicrosPerSecond) % 60);
  f.second = static_cast<int>(in_day / kMicrosPerSecond % 60);
  f.micros = in_day % kMicrosPerSecond;
  f.day_of_year = static_cast<int>(days - DaysFromCivil(date.year, 1, 1)) + 1;
  f.iso_weekday = static_cast<int>(FloorMod(days + 3, 7)) + 1;  // 1970-01-01 was a Thursday
  return f;
}

// ISO 8601 week number: weeks start on Monday; week 1 holds the year's first Thursday.
int64_t IsoWeek(const Fields& f) {
  const int64_t week = (f.day_of_year - f.iso_weekday + 10) / 7;
  auto weeks_in = [](int64_t year) {
    const int64_t jan1 = FloorMod(DaysFromCivil(year, 1, 1) + 3, 7) + 1;  // ISO weekday
    return jan1 == 4 || (jan1 == 3 && IsLeapYear(year)) ? 53 : 52;
  };
  if (week < 1) return weeks_in(f.year - 1);
  if (week > weeks_in(f.year)) return 1;
  return week;
}

void Padded(int64_t v, size_t width, std::string* out) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  if (v < 0) out->push_back('-');
  if (digits.size() < width) out->append(width - digits.size(), '0');
  out->append(digits);
}

constexpr std::array<const char*, 12> kMonths = {"January",   "February", "March",    "April",
                                                 "May",       "June",     "July",     "August",
                                                 "September", "October",  "November", "December"};
constexpr std::array<const char*, 7> kDays = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                              "Friday", "Saturday", "Sunday"};

void Name(const char* name, size_t count, std::string* out) {
  const std::string full(name);
  out->append(count >= 4 ? full : full.substr(0, 3));
}

}  // namespace

int64_t Extract(std::string_view unit, int64_t micros) {
  const Fields f = FieldsOf(micros);
  if (unit == "YEAR") return f.year;
  if (unit == "QUARTER") return (f.month - 1) / 3 + 1;
  if (unit == "MONTH") return f.month;
  if (unit == "WEEK") return IsoWeek(f);
  if (unit == "DAY") return f.day;
  if (unit == "HOUR") return f.hour;
  if (unit == "MINUTE") return f.minute;
  if (unit == "SECOND") return f.second;
  if (unit == "MILLISECOND") return f.second * 1000 + f.micros / 1000;
  if (unit == "MICROSECOND") return f.second * kMicrosPerSecond + f.micros;
  if (unit == "DOY") return f.day_of_year;
  if (unit == "DOW") return f.iso_weekday % 7 + 1;  // Sunday 1 .. Saturday 7
  return f.iso_weekday;                             // ISODOW
}

void DateFormat(int64_t micros, std::string_view pattern, std::string* out) {
  out->clear();
  const Fields f = FieldsOf(micros);
  size_t i = 0;
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (c == '\'') {  // quoted text; '' is a quote
      size_t end = i + 1;
      if (end < pattern.size() && pattern[end] == '\'') {
        out->push_back('\'');
        i += 2;
        continue;
      }
      while (end < pattern.size() && pattern[end] != '\'') out->push_back(pattern[end++]);
      i = end + 1;
      continue;
    }
    size_t count = 1;
    while (i + count < pattern.size() && pattern[i + count] == c) ++count;
    switch (c) {
      case 'y':
        count == 2 ? Padded(FloorMod(f.year, 100), 2, out) : Padded(f.year, count, out);
        break;
      case 'M':
        if (count >= 3) {
          Name(kMonths[static_cast<size_t>(f.month - 1)], count, out);
        } else {
          Padded(f.month, count, out);
        }
        break;
      case 'd':
        Padded(f.day, count, out);
        break;
      case 'D':
        Padded(f.day_of_year, count, out);
        break;
      case 'H':
        Padded(f.hour, count, out);
        break;
      case 'h':
        Padded(f.hour % 12 == 0 ? 12 : f.hour % 12, count, out);
        break;
      case 'm':
        Padded(f.minute, count, out);
        break;
      case 's':
        Padded(f.second, count, out);
        break;
      case 'S': {  // the fraction's first `count` digits (milliseconds for SSS)
        std::string digits;
        Padded(f.micros, 6, &digits);
        digits.resize(count, '0');
        out->append(digits);
        break;
      }
      case 'a':
        out->append(f.hour < 12 ? "AM" : "PM");
        break;
      case 'E':
        Name(kDays[static_cast<size_t>(f.iso_weekday - 1)], count, out);
        break;
      default:
        out->append(count, c);
    }
    i += count;
  }
}

namespace {

int64_t UnitMicros(std::string_view unit) {
  if (unit == "SECOND") return kMicrosPerSecond;
  if (unit == "MINUTE") return 60 * kMicrosPerSecond;
  if (unit == "HOUR") return kMicrosPerHour;
  if (unit == "DAY") return kMicrosPerDay;
  if (unit == "WEEK") return 7 * kMicrosPerDay;
  return 0;  // months
}

int64_t MonthsOf(std::string_view unit) { return unit == "YEAR" ? 12 : unit == "QUARTER" ? 3 : 1; }

// The day `months` months after `days`, its day of month clamped (Calcite's addMonths).
int64_t AddMonthsToDay(int64_t days, int64_t months) {
  const CivilDate d = CivilFromDays(days);
  const int64_t index = d.year * 12 + (d.month - 1) + months;
  const int64_t year = FloorDiv(index, 12);
  const int month = static_cast<int>(FloorMod(index, 12)) + 1;
  return DaysFromCivil(year, month, std::min(d.day, DaysInMonth(year, month)));
}

// Calcite's DateTimeUtils.subtractMonths(int date0, int date1) on days.
int64_t MonthsBetweenDays(int64_t date0, int64_t date1) {
  if (date0 < date1) return -MonthsBetweenDays(date1, date0);
  int64_t m = (date0 - date1) / 31;  // no month is longer: at most the answer
  while (true) {
    if (AddMonthsToDay(date1, m) >= date0) return m;
    if (AddMonthsToDay(date1, m + 1) > date0) return m;
    ++m;
  }
}

}  // namespace

int64_t RoundTo(std::string_view unit, int64_t micros, bool up) {
  int64_t floor = 0;
  if (unit == "WEEK") {
    // Weeks start on Sunday, as Calcite's (Flink's) julianDateFloor counts them.
    const int64_t days = FloorDiv(micros, kMicrosPerDay);
    floor = (days - FloorMod(days + 4, 7)) * kMicrosPerDay;  // 1970-01-01 was a Thursday
    return up && floor != micros ? floor + 7 * kMicrosPerDay : floor;
  }
  if (const int64_t size = UnitMicros(unit); size != 0) {
    floor = FloorDiv(micros, size) * size;
    return up && floor != micros ? floor + size : floor;
  }
  const CivilDate d = CivilFromDays(FloorDiv(micros, kMicrosPerDay));
  const int64_t months = MonthsOf(unit);
  const int month = static_cast<int>((d.month - 1) / months * months) + 1;
  floor = DaysFromCivil(d.year, month, 1) * kMicrosPerDay;
  if (!up || floor == micros) return floor;
  return AddMonthsToDay(floor / kMicrosPerDay, months) * kMicrosPerDay;
}

int64_t AddUnits(std::string_view unit, int64_t n, int64_t micros) {
  if (const int64_t size = UnitMicros(unit); size != 0) return micros + n * size;
  const int64_t days = FloorDiv(micros, kMicrosPerDay);
  const int64_t in_day = micros - days * kMicrosPerDay;
  return AddMonthsToDay(days, n * MonthsOf(unit)) * kMicrosPerDay + in_day;
}

int64_t DiffUnits(std::string_view unit, int64_t a, int64_t b) {
  if (const int64_t size = UnitMicros(unit); size != 0) return (b - a) / size;
  // Calcite's subtractMonths(t0 = b, t1 = a) on timestamps.
  const int64_t day0 = FloorDiv(b, kMicrosPerDay), day1 = FloorDiv(a, kMicrosPerDay);
  int64_t months = MonthsBetweenDays(day0, day1);
  if (AddMonthsToDay(day1, months) == day0 && b - day0 * kMicrosPerDay < a - day1 * kMicrosPerDay) {
    --months;
  }
  return months / MonthsOf(unit);
}

namespace {

// Digits at text[*pos]: at least `min`, at most `max`; false when fewer.
bool ReadDigits(std::string_view text, size_t* pos, int min, int max, int64_t* value) {
  int n = 0;
  *value = 0;
  while (*pos < text.size() && n < max && text[*pos] >= '0' && text[*pos] <= '9') {
    *value = *value * 10 + (text[(*pos)++] - '0');
    ++n;
  }
  return n >= min;
}

bool ValidDateTime(int64_t y, int64_t mo, int64_t d, int64_t h, int64_t mi, int64_t s) {
  return mo >= 1 && mo <= 12 && d >= 1 && d <= DaysInMonth(y, static_cast<int>(mo)) && h <= 23 &&
         mi <= 59 && s <= 59;
}

int64_t MicrosOf(int64_t y, int64_t mo, int64_t d, int64_t h, int64_t mi, int64_t s,
                 int64_t micros) {
  return DaysFromCivil(y, static_cast<int>(mo), static_cast<int>(d)) * kMicrosPerDay +
         (h * 3600 + mi * 60 + s) * kMicrosPerSecond + micros;
}

bool ParseStrict(std::string_view text, std::string_view pattern, int64_t* out) {
  int64_t year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, micros = 0;
  size_t pos = 0, i = 0;
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (c == '\'') {  // quoted text; '' is a quote
      if (i + 1 < pattern.size() && pattern[i + 1] == '\'') {
        if (pos >= text.size() || text[pos++] != '\'') return false;
        i += 2;
        continue;
      }
      size_t end = pattern.find('\'', i + 1);
      if (end == std::string_view::npos) return false;
      const std::string_view literal = pattern.substr(i + 1, end - i - 1);
      if (text.substr(pos, literal.size()) != literal) return false;
      pos += literal.size();
      i = end + 1;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c))) {
      if (pos >= text.size() || text[pos++] != c) return false;
      ++i;
      continue;
    }
    int count = 1;
    while (i + count < pattern.size() && pattern[i + count] == c) ++count;
    i += count;
    int64_t v = 0;
    // A field right before another takes only its letters' width (java.time's adjacent value
    // parsing: "yyyyMMdd").
    const bool adjacent =
        i < pattern.size() && std::isalpha(static_cast<unsigned char>(pattern[i]));
    if (c == 'y') {
      const int widest = count == 2 || adjacent ? std::max(count, 2) : 9;
      if (!ReadDigits(text, &pos, count == 2 ? 2 : count, widest, &v)) return false;
      year = count == 2 ? 2000 + v : v;
    } else if (c == 'S') {
      if (count > 9 || !ReadDigits(text, &pos, count, count, &v)) return false;
      for (int k = count; k < 6; ++k) v *= 10;
      for (int k = 6; k < count; ++k) v /= 10;
      micros = v;
    } else if (std::string_view("MdHms").find(c) != std::string_view::npos && count <= 2) {
      if (!ReadDigits(text, &pos, count, 2, &v)) return false;
      (c == 'M' ? month : c == 'd' ? day : c == 'H' ? hour : c == 'm' ? minute : second) = v;
    } else {
      return false;
    }
  }
  if (pos != text.size() || !ValidDateTime(year, month, day, hour, minute, second)) return false;
  *out = MicrosOf(year, month, day, hour, minute, second, micros);
  return true;
}

// java.sql.Timestamp.valueOf / java.sql.Date.valueOf, Flink's fallback.
bool ParseFallback(std::string_view text, int64_t* out) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  size_t pos = 0;
  int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, frac = 0;
  auto expect = [&](char c) { return pos < text.size() && text[pos++] == c; };
  if (!ReadDigits(text, &pos, 4, 4, &y) || !expect('-') || !ReadDigits(text, &pos, 1, 2, &mo) ||
      !expect('-') || !ReadDigits(text, &pos, 1, 2, &d)) {
    return false;
  }
  if (pos < text.size()) {
    if (!expect(' ') || !ReadDigits(text, &pos, 1, 2, &h) || !expect(':') ||
        !ReadDigits(text, &pos, 1, 2, &mi) || !expect(':') || !ReadDigits(text, &pos, 1, 2, &s)) {
      return false;
    }
    if (pos < text.size()) {
      const size_t start = pos + 1;
      if (!expect('.') || !ReadDigits(text, &pos, 1, 9, &frac)) return false;
      for (size_t k = pos - start; k < 6; ++k) frac *= 10;
      for (size_t k = 6; k < pos - start; ++k) frac /= 10;
    }
  }
  if (pos != text.size() || !ValidDateTime(y, mo, d, h, mi, s)) return false;
  *out = MicrosOf(y, mo, d, h, mi, s, frac);
  return true;
}

}  // namespace

char UnsupportedPatternLetter(std::string_view pattern) {
  bool quoted = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\'') quoted = !quoted;
    if (quoted || !std::isalpha(static_cast<unsigned char>(c))) continue;
    if (std::string_view("yMdHmsS").find(c) == std::string_view::npos) return c;
    size_t count = 1;
    while (i + count < pattern.size() && pattern[i + count] == c) ++count;
    if (std::string_view("MdHms").find(c) != std::string_view::npos && count > 2) return c;
    i += count - 1;
  }
  return 0;
}

bool ParseWithPattern(std::string_view text, std::string_view pattern, int64_t* micros) {
  if (UnsupportedPatternLetter(pattern) != 0) return false;
  return ParseStrict(text, pattern, micros) || ParseFallback(text, micros);
}

}  // namespace floe::sql::time
