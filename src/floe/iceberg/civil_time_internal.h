#pragma once

// Internal to floe_iceberg: proleptic Gregorian calendar arithmetic on days since 1970-01-01
// (UTC, no time zones), used by the time transforms and human-readable values. Correct for
// negative (pre-1970) values: all divisions round toward negative infinity.

#include <cstdint>
#include <cstdio>
#include <string>

namespace floe::iceberg::internal {

inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

inline int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

struct CivilDate {
  int64_t year;
  int month;  // 1..12
  int day;    // 1..31
};

// Days since 1970-01-01 -> calendar date. Eras of 400 years (146097 days) starting in March,
// so the leap day is the last day of the shifted year.
inline CivilDate CivilFromDays(int64_t days) {
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

// Calendar date -> days since 1970-01-01. REQUIRES: month 1..12, day valid for the month.
inline int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  int64_t era = FloorDiv(year, 400);
  int64_t yoe = year - era * 400;
  int64_t mp = month > 2 ? month - 3 : month + 9;
  int64_t doy = (153 * mp + 2) / 5 + day - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kMicrosPerHour = 3600 * kMicrosPerSecond;
constexpr int64_t kMicrosPerDay = 24 * kMicrosPerHour;

// Years are printed with at least 4 digits (and a sign when negative), like java.time.
inline std::string FormatYear(int64_t year) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), year < 0 ? "-%04lld" : "%04lld",
                static_cast<long long>(year < 0 ? -year : year));
  return buf;
}

inline std::string Pad2(int64_t v) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%02d", static_cast<int>(v));
  return buf;
}

// "2024-01-02"
inline std::string FormatDate(int64_t days) {
  CivilDate c = CivilFromDays(days);
  return FormatYear(c.year) + "-" + Pad2(c.month) + "-" + Pad2(c.day);
}

// "2024-01-02T03:04:05" plus ".123456" when the micros are not zero.
inline std::string FormatTimestamp(int64_t micros) {
  int64_t days = FloorDiv(micros, kMicrosPerDay);
  int64_t in_day = micros - days * kMicrosPerDay;
  int64_t secs = in_day / kMicrosPerSecond;
  int64_t frac = in_day % kMicrosPerSecond;
  std::string out = FormatDate(days) + "T" + Pad2(secs / 3600) + ":" + Pad2(secs / 60 % 60) + ":" +
                    Pad2(secs % 60);
  if (frac != 0) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), ".%06lld", static_cast<long long>(frac));
    out += buf;
  }
  return out;
}

}  // namespace floe::iceberg::internal
