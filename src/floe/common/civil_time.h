#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// floe's one calendar: proleptic Gregorian dates as days since 1970-01-01 (a DATE column's
// int32) and timestamps as microseconds since 1970-01-01T00:00:00 (a TIMESTAMP column's int64),
// UTC, no time zones, no leap seconds. The conversions are Howard Hinnant's days_from_civil /
// civil_from_days (400-year eras starting in March), exact far beyond the years a timestamp can
// hold; pre-1970 values round toward negative infinity, so 1969-12-31T23:00 is day -1, hour 23.
// Used by the JSON format (text values) and Iceberg (time transforms, partition paths).
// Everything here is a pure function, safe from any thread.
namespace floe {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerHour = 3600 * kMicrosPerSecond;
constexpr int64_t kMicrosPerDay = 24 * kMicrosPerHour;

// Division and remainder rounding toward negative infinity: FloorDiv(-1, 24) == -1,
// FloorMod(-1, 24) == 23. REQUIRES: b != 0.
constexpr int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
constexpr int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

struct CivilDate {
  int64_t year;  // astronomical: year 0 is 1 BC, -1 is 2 BC
  int month;     // 1..12
  int day;       // 1..31
  bool operator==(const CivilDate&) const = default;
};

bool IsLeapYear(int64_t year);
// REQUIRES: month 1..12.
int DaysInMonth(int64_t year, int month);

// Days since 1970-01-01 -> calendar date.
CivilDate CivilFromDays(int64_t days);
// Calendar date -> days since 1970-01-01. REQUIRES: month 1..12, day 1..DaysInMonth, |year| below
// 10^15.
int64_t DaysFromCivil(int64_t year, int month, int day);

// ---- text -------------------------------------------------------------------------------

// How years outside 0000..9999 are written. Both use at least four digits and put '-' before
// negative years ("-0001-01-01").
enum class YearStyle {
  kIso8601,     // '+' before years above 9999 ("+10000-01-01"), as ISO 8601 and java.time
  kNoPlusSign,  // "10000-01-01", as Iceberg's partition path values (String.format("%04d"))
};

// "YYYY-MM-DD".
void AppendDate(int64_t days, YearStyle style, std::string* out);
std::string FormatDate(int64_t days, YearStyle style = YearStyle::kIso8601);
// The year alone, as AppendDate writes it.
std::string FormatYear(int64_t year, YearStyle style = YearStyle::kIso8601);

struct TimestampFormat {
  char separator = 'T';       // between date and time: 'T' (ISO 8601) or ' ' (SQL)
  bool always_micros = true;  // ".ffffff" always; false: only when not zero
  YearStyle years = YearStyle::kIso8601;
  // Only the fraction digits needed (".5", ".123"; none when zero), as Flink's JSON format writes
  // timestamps whatever their precision. Implies !always_micros.
  bool trim_zeros = false;
};
// "YYYY-MM-DDTHH:MM:SS.ffffff" (see TimestampFormat); no zone suffix, callers add 'Z' or an offset.
void AppendTimestamp(int64_t micros, const TimestampFormat& format, std::string* out);
// A TIME value, microseconds since midnight, as "HH:MM:SS[.ffffff]" (the fraction as `format`
// says). REQUIRES: 0 <= micros < kMicrosPerDay.
void AppendTime(int64_t micros, const TimestampFormat& format, std::string* out);
std::string FormatTimestamp(int64_t micros, const TimestampFormat& format = {});

// The parsers return nullptr on success, else a short static reason for an error message
// ("day out of range"); they never allocate, for decoders' hot paths.
//
// "YYYY-MM-DD"; years beyond 0000..9999 with a sign and 4 to 9 digits ("+10000", "-0001").
const char* ParseDate(std::string_view s, int32_t* days);
// "YYYY-MM-DD HH:MM[:SS[.f{1,9}]]", or with 'T' for the space; digits past microseconds are
// truncated. With `with_zone`, an optional 'Z' or +HH:MM / -HH:MM offset follows and the result
// is UTC; without, any zone is an error.
const char* ParseTimestamp(std::string_view s, bool with_zone, int64_t* micros);
// "HH:MM[:SS[.f{1,9}]]" as microseconds since midnight (a TIME value).
const char* ParseTime(std::string_view s, int64_t* micros);

}  // namespace floe
