#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// Flink's time functions on floe's values (micros since the epoch, a wall clock: ScalarExpr
// shifts a TIMESTAMP_LTZ into the session zone first), one value at a time, for ScalarExpr.
namespace floe::sql::time {

// EXTRACT(unit FROM t): YEAR, QUARTER, MONTH, WEEK (ISO 8601), DAY, HOUR, MINUTE, SECOND,
// MILLISECOND and MICROSECOND (within the minute, as Calcite's), DOY (1..366), DOW (1 = Sunday ..
// 7), ISODOW (1 = Monday .. 7). REQUIRES: IsExtractUnit(unit) (sql/scalar_types.h).
int64_t Extract(std::string_view unit, int64_t micros);

// DATE_FORMAT(t, pattern) with Java's SimpleDateFormat letters, as Flink formats: y (yyyy, yy),
// M (M, MM, MMM, MMMM), d, D (day of year), H, h, m, s, S (fraction digits), a, E (EEE, EEEE);
// text in single quotes ('' is a quote) and every other character as written.
void DateFormat(int64_t micros, std::string_view pattern, std::string* out);

// TO_TIMESTAMP(s, pattern): `s` read with java.time's DateTimeFormatter letters as Flink's
// DateTimeUtils.parseTimestampData reads it: y (yy: 2000 + two digits; else at least as many
// digits as letters), M, d, H, m, s (one letter: one or two digits; two: exactly two), S (exactly
// as many fraction digits as letters), text in single quotes ('' is a quote) and any other
// character as written; the whole text must be read, fields left out are 1970-01-01 00:00:00.
// When that fails, Flink's fallback: "yyyy-[M]M-[d]d[ [H]H:[m]m:[s]s[.fffffffff]]". False when
// neither reads, or the pattern has another letter (UnsupportedPatternLetter says which).
bool ParseWithPattern(std::string_view text, std::string_view pattern, int64_t* micros);
// The first letter of `pattern` ParseWithPattern does not read, or 0.
char UnsupportedPatternLetter(std::string_view pattern);

// FLOOR(t TO unit) and CEIL(t TO unit), unit SECOND, MINUTE, HOUR, DAY, WEEK (from Sunday),
// MONTH, QUARTER or YEAR: the unit's first moment at or before t (at or after t).
// REQUIRES: IsTimeUnit(unit) (sql/scalar_types.h).
int64_t RoundTo(std::string_view unit, int64_t micros, bool up);

// TIMESTAMPADD(unit, n, t), unit SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR;
// months keep the day of the month, clamped to the month's last (Calcite's addMonths).
// REQUIRES: IsTimeUnit(unit).
int64_t AddUnits(std::string_view unit, int64_t n, int64_t micros);
// TIMESTAMPDIFF(unit, a, b): the whole units from a to b, truncated toward zero; MONTH, QUARTER
// and YEAR count months as Calcite's subtractMonths (2020-01-31 to 2020-02-29 is a month, to
// 2020-02-28 none).
int64_t DiffUnits(std::string_view unit, int64_t a, int64_t b);

}  // namespace floe::sql::time
