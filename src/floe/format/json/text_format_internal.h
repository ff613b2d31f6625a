#pragma once

// Text forms of decimals and bytes shared by the JSON decoder and encoder (dates and timestamps
// are floe/common/civil_time.h). Internal to floe_json.

#include <cstdint>
#include <string>
#include <string_view>

#include "floe/common/record_batch.h"

namespace floe::json::internal {

// A decimal number ("-12.30", "1e3"), exact. Extra fractional digits must be zeros. Returns
// nullptr on success, else a short reason for the error message.
const char* ParseDecimal(std::string_view s, int precision, int scale, Int128* unscaled);
// Standard base64 with optional padding.
bool DecodeBase64(std::string_view s, std::string* out);

// Exactly `scale` fractional digits.
void AppendDecimal(Int128 unscaled, int scale, std::string* out);
void AppendBase64(std::string_view bytes, std::string* out);

}  // namespace floe::json::internal
