#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// Flink's time functions on floe's values (micros since the epoch, UTC: floe's session time zone
// is UTC), one value at a time, for ScalarExpr.
namespace floe::sql::time {

// EXTRACT(unit FROM t): YEAR, QUARTER, MONTH, WEEK (ISO 8601), DAY, HOUR, MINUTE, SECOND,
// MILLISECOND and MICROSECOND (within the minute, as Calcite's), DOY (1..366), DOW (1 = Sunday ..
// 7), ISODOW (1 = Monday .. 7). REQUIRES: IsExtractUnit(unit) (sql/scalar_types.h).
int64_t Extract(std::string_view unit, int64_t micros);

// DATE_FORMAT(t, pattern) with Java's SimpleDateFormat letters, as Flink formats: y (yyyy, yy),
// M (M, MM, MMM, MMMM), d, D (day of year), H, h, m, s, S (fraction digits), a, E (EEE, EEEE);
// text in single quotes ('' is a quote) and every other character as written.
void DateFormat(int64_t micros, std::string_view pattern, std::string* out);

}  // namespace floe::sql::time
