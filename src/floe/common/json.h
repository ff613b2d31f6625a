#pragma once

// The one way floe reads and writes JSON (nlohmann), for every module. Nothing here throws:
// nlohmann's `dump()` throws on invalid UTF-8 and `get<T>()` / `value()` on a member of another
// type, and the strings in floe's JSON (file, table and topic names, error messages) come from
// users, so a stray byte would otherwise terminate a process, and again at every restart.
//
// - ParseJson: one JSON value or an error naming the document (nlohmann refuses invalid UTF-8).
// - DumpJson: invalid UTF-8 in a string or key becomes U+FFFD.
// - SetJsonBytes / JsonObject::RequiredBytes: bytes that must come back exactly (a file name).
// - ReadJson / JsonObject: typed reads; errors name the document and the field:
//   "job.json: field 'tables[0].table': expected string, got integer".

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "floe/common/status.h"

namespace floe {

using Json = nlohmann::json;
// Keeps members in insertion order (Iceberg's files, in the order other writers use).
using OrderedJson = nlohmann::ordered_json;

// Where a value sits, for error messages: the document ("job.json", "REST catalog response"),
// the path inside it ("snapshots[2].manifest-list"), and the code its errors carry (Corruption
// for what was stored, InvalidArgument for a request).
class JsonPath {
 public:
  explicit JsonPath(std::string document, StatusCode code = StatusCode::kCorruption)
      : document_(std::move(document)), code_(code) {}

  JsonPath Child(std::string_view key) const;
  JsonPath Index(size_t i) const;
  // "<document>: field '<path>': <what>"; without the field at the root, without
  // "<document>: " when the document has no name.
  Status Error(std::string_view what) const;

  const std::string& document() const { return document_; }
  StatusCode code() const { return code_; }

 private:
  std::string document_;
  std::string path_;  // "" = the root
  StatusCode code_;
};

// Exactly one JSON value (surrounding whitespace allowed); otherwise an error with at's code:
// "<document>: not valid JSON (N bytes)".
Result<Json> ParseJson(std::string_view text, const JsonPath& at);
Result<OrderedJson> ParseOrderedJson(std::string_view text, const JsonPath& at);

// Compact (indent < 0) or indented, UTF-8 (not \u-escaped); invalid UTF-8 becomes U+FFFD.
std::string DumpJson(const Json& j, int indent = -1);
std::string DumpJson(const OrderedJson& j, int indent = -1);

bool IsValidUtf8(std::string_view s);

// "object", "array", "string", "integer", "number" (not an integer), "boolean", "null".
const char* JsonTypeName(const Json& j);
const char* JsonTypeName(const OrderedJson& j);

// Bytes that may not be UTF-8 but must read back exactly (a file name): member `key` holds them
// as text (invalid UTF-8 as U+FFFD, for people), and only when they are not UTF-8, member
// "<key>_hex" holds them hex-encoded. Read with JsonObject::RequiredBytes.
void SetJsonBytes(Json& object, std::string_view key, std::string_view bytes);

// ReadJson: converts one value, checking its JSON type (and an integer's range for T), with
// errors at `at`. T: std::string, bool, double, an integer type, std::map<std::string,
// std::string> (an object of strings), std::vector<T> (an array), std::optional<T> (null or T).
// J: Json or OrderedJson.
template <typename J>
Status ReadJson(const J& value, const JsonPath& at, std::string* out);
template <typename J>
Status ReadJson(const J& value, const JsonPath& at, bool* out);
template <typename J>
Status ReadJson(const J& value, const JsonPath& at, double* out);
template <typename J>
Status ReadJson(const J& value, const JsonPath& at, std::map<std::string, std::string>* out);
// What the templates below need of J, defined in json.cc: this header sees only json_fwd.hpp.
namespace json_internal {
template <typename J>
Status ReadSigned(const J& value, const JsonPath& at, int64_t min, int64_t max, int64_t* out);
template <typename J>
Status ReadUnsigned(const J& value, const JsonPath& at, uint64_t max, uint64_t* out);
template <typename J>
bool IsNull(const J& value);
// The array's size, or an error unless `value` is an array.
template <typename J>
Result<size_t> ArraySize(const J& value, const JsonPath& at);
template <typename J>
const J& Element(const J& array, size_t i);
}  // namespace json_internal

template <typename J, typename T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Status
    ReadJson(const J& value, const JsonPath& at, T* out) {
  if constexpr (std::is_signed_v<T>) {
    int64_t v = 0;
    FLOE_RETURN_NOT_OK(json_internal::ReadSigned(value, at, std::numeric_limits<T>::min(),
                                                 std::numeric_limits<T>::max(), &v));
    *out = static_cast<T>(v);
  } else {
    uint64_t v = 0;
    FLOE_RETURN_NOT_OK(json_internal::ReadUnsigned(value, at, std::numeric_limits<T>::max(), &v));
    *out = static_cast<T>(v);
  }
  return Status::OK();
}

template <typename J, typename T>
Status ReadJson(const J& value, const JsonPath& at, std::optional<T>* out) {
  if (json_internal::IsNull(value)) {
    out->reset();
    return Status::OK();
  }
  T v{};
  FLOE_RETURN_NOT_OK(ReadJson(value, at, &v));
  *out = std::move(v);
  return Status::OK();
}

template <typename J, typename T>
Status ReadJson(const J& value, const JsonPath& at, std::vector<T>* out) {
  FLOE_ASSIGN_OR_RAISE(size_t n, json_internal::ArraySize(value, at));
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) {
    FLOE_RETURN_NOT_OK(ReadJson(json_internal::Element(value, i), at.Index(i), &v[i]));
  }
  *out = std::move(v);
  return Status::OK();
}

// Typed reads of one object's members. Get leaves the output alone when the member is absent;
// Required fails then ("required field is missing"). JSON null is a value of its own type, so
// it is refused, except where the output is a std::optional (then null means nullopt). If the
// value is not an object, every read fails saying so. Holds a reference to `value`.
template <typename J>  // Json or OrderedJson
class JsonObject {
 public:
  JsonObject(const J& value, JsonPath at) : value_(value), at_(std::move(at)) {}

  const J& value() const { return value_; }
  const JsonPath& at() const { return at_; }
  // OK if the value is an object; else "<document>: expected object, got array".
  Status Check() const;
  // The member, or nullptr when absent (or the value is not an object).
  const J* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  // An error about member `key`: at().Child(key).Error(what).
  Status Error(std::string_view key, std::string_view what) const {
    return at_.Child(key).Error(what);
  }

  template <typename T>
  Status Get(std::string_view key, T* out) const {
    FLOE_RETURN_NOT_OK(Check());
    const J* v = Find(key);
    return v == nullptr ? Status::OK() : ReadJson(*v, at_.Child(key), out);
  }
  template <typename T>
  Status Required(std::string_view key, T* out) const {
    FLOE_RETURN_NOT_OK(Check());
    const J* v = Find(key);
    if (v == nullptr) return Error(key, "required field is missing");
    return ReadJson(*v, at_.Child(key), out);
  }

  // A member that is an array (or object), for the caller to walk; the Get forms leave
  // nullptr when it is absent or null.
  Status GetArray(std::string_view key, const J** out) const;
  Status RequiredArray(std::string_view key, const J** out) const;
  Status GetObject(std::string_view key, const J** out) const;
  Status RequiredObject(std::string_view key, const J** out) const;

  // What SetJsonBytes wrote under `key` (the text of `key` when "<key>_hex" is absent).
  Status RequiredBytes(std::string_view key, std::string* out) const;

 private:
  Status GetKind(std::string_view key, bool required, bool array, const J** out) const;

  const J& value_;
  JsonPath at_;
};

}  // namespace floe
