#pragma once

// Text forms of dates, timestamps, decimals and bytes shared by the JSON decoder and encoder.
// Internal to floe_json.

#include <cstdint>
#include <string>
#include <string_view>

#include "floe/common/record_batch.h"

namespace floe::json::internal {

// Proleptic Gregorian calendar (Howard Hinnant's days_from_civil / civil_from_days), valid far
// beyond the years a timestamp can hold.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d);
void CivilFromDays(int64_t days, int64_t* y, int64_t* m, int64_t* d);

// Each parser returns nullptr on success, else a short reason for the error message.
// "YYYY-MM-DD"; years beyond 0000-9999 are written with a sign and 4+ digits ("+10000", "-0001").
const char* ParseDate(std::string_view s, int32_t* days);
// "YYYY-MM-DD HH:MM[:SS[.f{1,9}]]" or with 'T'; digits past microseconds are truncated. With
// `with_zone`, an optional 'Z' or +HH:MM / -HH:MM offset follows and the result is UTC.
const char* ParseTimestamp(std::string_view s, bool with_zone, int64_t* micros);
// A decimal number ("-12.30", "1e3"), exact. Extra fractional digits must be zeros.
const char* ParseDecimal(std::string_view s, int precision, int scale, Int128* unscaled);
// Standard base64 with optional padding.
bool DecodeBase64(std::string_view s, std::string* out);

void AppendDate(int32_t days, std::string* out);
// "YYYY-MM-DD<separator>HH:MM:SS.ffffff" (separator 'T' or ' '), plus 'Z' when `zulu`.
void AppendTimestamp(int64_t micros, bool zulu, char separator, std::string* out);
// Exactly `scale` fractional digits.
void AppendDecimal(Int128 unscaled, int scale, std::string* out);
void AppendBase64(std::string_view bytes, std::string* out);

}  // namespace floe::json::internal
