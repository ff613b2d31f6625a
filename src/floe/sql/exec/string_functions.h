#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// Flink's string functions on UTF-8 text, one value at a time (ScalarExpr calls them per row).
// Positions and lengths count code points, as Flink's BinaryStringData does.
namespace floe::sql::strings {

// UPPER / LOWER into *out: ASCII, Latin-1 (sharp s upper-cases to "SS"), Greek and Cyrillic
// letters mapped as Java's toUpperCase / toLowerCase map them; other characters are copied
// unchanged (Flink maps every Unicode letter).
void MapCase(std::string_view s, bool upper, std::string* out);

// LEFT / RIGHT: the first / last `count` code points (none for count <= 0).
std::string_view Left(std::string_view s, int64_t count);
std::string_view Right(std::string_view s, int64_t count);

// POSITION(search IN s) / LOCATE(search, s, from): the 1-based code-point position of the first
// `search` at or after `from` (from <= 0 is 1), 0 when there is none; an empty `search` is at 1,
// as Flink's SqlFunctionUtils.position.
int64_t Position(std::string_view search, std::string_view s, int64_t from);

// CHAR_LENGTH: the number of code points.
size_t CodePoints(std::string_view s);

// TRIM / LTRIM / RTRIM: `s` without the leading and/or trailing code points found in `chars`.
std::string_view Trim(std::string_view s, std::string_view chars, bool leading, bool trailing);

// SUBSTRING(s, start [, length]) by Flink's rules: 1-based, a start of 0 is 1, a negative one
// counts from the end (and one before the first character gives ''); past the end ''; the
// length is clamped to the end; a negative length is NULL (nullopt).
std::optional<std::string_view> Substring(std::string_view s, int64_t start,
                                          std::optional<int64_t> length);

// s LIKE pattern: '%' any run of characters, '_' one character, every other character itself
// (no escape character: Flink's LikeCallGen passes none without an ESCAPE clause, so '\\' is
// an ordinary character); the whole of s must match.
bool Like(std::string_view s, std::string_view pattern);

// REPLACE(s, search, replacement) into *out: every occurrence, left to right, as Java's
// String.replace (an empty `search` puts the replacement around every character).
void Replace(std::string_view s, std::string_view search, std::string_view replacement,
             std::string* out);

// REGEXP_EXTRACT(s, regex, group): the group's text in the first match (0: the whole match), as
// Flink's SqlFunctionUtils.regexpExtract; nullopt (SQL NULL) for no match, a group out of range
// or that took no part, and a regex that does not compile. ECMAScript regex syntax (std::regex),
// which agrees with Java's for the common constructs; patterns are compiled once per thread.
std::optional<std::string> RegexpExtract(std::string_view s, std::string_view regex, int64_t group);

}  // namespace floe::sql::strings
