#pragma once

// JSON for the process layer without exceptions. Its input is hostile: control requests come
// from any local process, job.json and run.json from disk. nlohmann's `value()` and `get<T>()`
// throw type_error when a member has another type, `dump()` throws on invalid UTF-8, and nothing
// may throw out of this module.

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "floe/common/status.h"

namespace floe::process {

// Parses one JSON value; nullopt if `text` is not one.
std::optional<nlohmann::json> ParseJson(std::string_view text);
// Serializes without exceptions: invalid UTF-8 in a string is replaced (U+FFFD), not thrown on.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

// Reads the members of one JSON object with their types checked. An absent member leaves the
// output alone (or is an error, for `Required`); a member of another JSON type, or a number out of
// the output's range, is an error with the code given at construction, naming the member:
// "<where>field 'cmd' must be a string". Never throws. Holds a reference to the object.
// REQUIRES: `object` is a JSON object and outlives this.
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, StatusCode code, std::string where = "")
      : object_(object), code_(code), where_(std::move(where)) {}

  bool Has(std::string_view key) const;
  Status Get(std::string_view key, std::string* out) const;
  Status Get(std::string_view key, std::optional<std::string>* out) const;
  Status Get(std::string_view key, bool* out) const;
  // A map of strings to strings (a JSON object whose members are all strings).
  Status Get(std::string_view key, std::map<std::string, std::string>* out) const;
  // An integer (not a float) within T's range.
  template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Status
      Get(std::string_view key, T* out)
  const {
    if constexpr (std::is_signed_v<T>) {
      int64_t v = 0;
      bool found = false;
      FLOE_RETURN_NOT_OK(
          GetSigned(key, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), &v, &found));
      if (found) *out = static_cast<T>(v);
    } else {
      uint64_t v = 0;
      bool found = false;
      FLOE_RETURN_NOT_OK(GetUnsigned(key, std::numeric_limits<T>::max(), &v, &found));
      if (found) *out = static_cast<T>(v);
    }
    return Status::OK();
  }
  // The member must be present (then as Get).
  template <typename T>
  Status Required(std::string_view key, T* out) const {
    if (!Has(key)) return Error(key, "is missing");
    return Get(key, out);
  }

  // "<where>field '<key>' <what>" with this reader's code.
  Status Error(std::string_view key, std::string_view what) const;

 private:
  const nlohmann::json* Find(std::string_view key) const;
  Status GetSigned(std::string_view key, int64_t min, int64_t max, int64_t* out, bool* found) const;
  Status GetUnsigned(std::string_view key, uint64_t max, uint64_t* out, bool* found) const;

  const nlohmann::json& object_;
  StatusCode code_;
  std::string where_;
};

}  // namespace floe::process
