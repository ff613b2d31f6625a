#include "floe/common/json.h"

#include <exception>
#include <nlohmann/json.hpp>

namespace floe {

namespace {

template <typename J>
Result<J> Parse(std::string_view text, const JsonPath& at) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return at.Error("empty, expected JSON");
  }
  try {
    J j = J::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) return j;
  } catch (const std::exception& e) {
    // Not a parse error (those are reported as discarded) but an allocation failure: still
    // nothing escapes the boundary.
    return at.Error(std::string("cannot be parsed: ") + e.what());
  }
  return at.Error("not valid JSON (" + std::to_string(text.size()) + " bytes)");
}

template <typename J>
const char* TypeName(const J& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "object";
    case nlohmann::json::value_t::array:
      return "array";
    case nlohmann::json::value_t::string:
      return "string";
    case nlohmann::json::value_t::boolean:
      return "boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return "integer";
    case nlohmann::json::value_t::number_float:
      return "number";
    default:
      return "unknown";
  }
}

template <typename J>
Status TypeError(const J& value, const JsonPath& at, std::string_view expected) {
  return at.Error("expected " + std::string(expected) + ", got " + TypeName(value));
}

Status RangeError(const JsonPath& at, const std::string& value, const std::string& min,
                  const std::string& max) {
  return at.Error("integer " + value + " out of range (" + min + " to " + max + ")");
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

JsonPath JsonPath::Child(std::string_view key) const {
  JsonPath p = *this;
  if (!p.path_.empty()) p.path_.push_back('.');
  p.path_.append(key);
  return p;
}

JsonPath JsonPath::Index(size_t i) const {
  JsonPath p = *this;
  p.path_ += "[" + std::to_string(i) + "]";
  return p;
}

Status JsonPath::Error(std::string_view what) const {
  std::string msg;
  if (!document_.empty()) msg = document_ + ": ";
  if (!path_.empty()) msg += "field '" + path_ + "': ";
  msg.append(what);
  return Status(code_, std::move(msg));
}

Result<Json> ParseJson(std::string_view text, const JsonPath& at) { return Parse<Json>(text, at); }

Result<OrderedJson> ParseOrderedJson(std::string_view text, const JsonPath& at) {
  return Parse<OrderedJson>(text, at);
}

std::string DumpJson(const Json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

std::string DumpJson(const OrderedJson& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, OrderedJson::error_handler_t::replace);
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;  // a continuation byte, an overlong lead (C0, C1) or beyond U+10FFFF
    }
    if (s.size() - i <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

const char* JsonTypeName(const Json& j) { return TypeName(j); }
const char* JsonTypeName(const OrderedJson& j) { return TypeName(j); }

void SetJsonBytes(Json& object, std::string_view key, std::string_view bytes) {
  object[std::string(key)] = std::string(bytes);  // DumpJson shows invalid UTF-8 as U+FFFD
  if (IsValidUtf8(bytes)) return;
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (char c : bytes) {
    hex.push_back(kHex[static_cast<unsigned char>(c) >> 4]);
    hex.push_back(kHex[static_cast<unsigned char>(c) & 0xF]);
  }
  object[std::string(key) + "_hex"] = std::move(hex);
}

template <typename J>
Status ReadJson(const J& value, const JsonPath& at, std::string* out) {
  const auto* s = value.template get_ptr<const typename J::string_t*>();
  if (s == nullptr) return TypeError(value, at, "string");
  *out = *s;
  return Status::OK();
}

template <typename J>
Status ReadJson(const J& value, const JsonPath& at, bool* out) {
  const auto* b = value.template get_ptr<const typename J::boolean_t*>();
  if (b == nullptr) return TypeError(value, at, "boolean");
  *out = *b;
  return Status::OK();
}

template <typename J>
Status ReadJson(const J& value, const JsonPath& at, double* out) {
  if (!value.is_number()) return TypeError(value, at, "number");
  *out = value.template get<double>();
  return Status::OK();
}

template <typename J>
Status ReadJson(const J& value, const JsonPath& at, std::map<std::string, std::string>* out) {
  if (!value.is_object()) return TypeError(value, at, "object");
  std::map<std::string, std::string> m;
  for (auto it = value.begin(); it != value.end(); ++it) {
    FLOE_RETURN_NOT_OK(ReadJson(it.value(), at.Child(it.key()), &m[it.key()]));
  }
  *out = std::move(m);
  return Status::OK();
}

namespace json_internal {

template <typename J>
Status ReadSigned(const J& value, const JsonPath& at, int64_t min, int64_t max, int64_t* out) {
  if (const auto* u = value.template get_ptr<const typename J::number_unsigned_t*>()) {
    if (*u > static_cast<uint64_t>(max)) {
      return RangeError(at, std::to_string(*u), std::to_string(min), std::to_string(max));
    }
    *out = static_cast<int64_t>(*u);
    return Status::OK();
  }
  if (const auto* i = value.template get_ptr<const typename J::number_integer_t*>()) {
    if (*i < min || *i > max) {
      return RangeError(at, std::to_string(*i), std::to_string(min), std::to_string(max));
    }
    *out = *i;
    return Status::OK();
  }
  return TypeError(value, at, "integer");
}

template <typename J>
Status ReadUnsigned(const J& value, const JsonPath& at, uint64_t max, uint64_t* out) {
  if (const auto* u = value.template get_ptr<const typename J::number_unsigned_t*>()) {
    if (*u > max) return RangeError(at, std::to_string(*u), "0", std::to_string(max));
    *out = *u;
    return Status::OK();
  }
  if (const auto* i = value.template get_ptr<const typename J::number_integer_t*>()) {
    if (*i < 0 || static_cast<uint64_t>(*i) > max) {
      return RangeError(at, std::to_string(*i), "0", std::to_string(max));
    }
    *out = static_cast<uint64_t>(*i);
    return Status::OK();
  }
  return TypeError(value, at, "integer");
}

template <typename J>
bool IsNull(const J& value) {
  return value.is_null();
}

template <typename J>
Result<size_t> ArraySize(const J& value, const JsonPath& at) {
  if (!value.is_array()) return TypeError(value, at, "array");
  return value.size();
}

template <typename J>
const J& Element(const J& array, size_t i) {
  return array[i];
}

}  // namespace json_internal

template <typename J>
Status JsonObject<J>::Check() const {
  return value_.is_object() ? Status::OK() : TypeError(value_, at_, "object");
}

template <typename J>
const J* JsonObject<J>::Find(std::string_view key) const {
  if (!value_.is_object()) return nullptr;
  auto it = value_.find(key);
  return it == value_.end() ? nullptr : &*it;
}

template <typename J>
Status JsonObject<J>::GetKind(std::string_view key, bool required, bool array,
                              const J** out) const {
  FLOE_RETURN_NOT_OK(Check());
  *out = nullptr;
  const J* v = Find(key);
  if (v == nullptr && required) return Error(key, "required field is missing");
  if (v == nullptr || (v->is_null() && !required)) return Status::OK();
  if (array ? !v->is_array() : !v->is_object()) {
    return TypeError(*v, at_.Child(key), array ? "array" : "object");
  }
  *out = v;
  return Status::OK();
}

template <typename J>
Status JsonObject<J>::GetArray(std::string_view key, const J** out) const {
  return GetKind(key, false, true, out);
}
template <typename J>
Status JsonObject<J>::RequiredArray(std::string_view key, const J** out) const {
  return GetKind(key, true, true, out);
}
template <typename J>
Status JsonObject<J>::GetObject(std::string_view key, const J** out) const {
  return GetKind(key, false, false, out);
}
template <typename J>
Status JsonObject<J>::RequiredObject(std::string_view key, const J** out) const {
  return GetKind(key, true, false, out);
}

template <typename J>
Status JsonObject<J>::RequiredBytes(std::string_view key, std::string* out) const {
  std::string hex_key = std::string(key) + "_hex";
  if (!Has(hex_key)) return Required(key, out);
  std::string hex;
  FLOE_RETURN_NOT_OK(Required(hex_key, &hex));
  if (hex.size() % 2 != 0) return Error(hex_key, "expected an even number of hex digits");
  std::string bytes;
  bytes.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = HexDigit(hex[i]);
    int lo = HexDigit(hex[i + 1]);
    if (hi < 0 || lo < 0) return Error(hex_key, "expected hex digits");
    bytes.push_back(static_cast<char>(hi << 4 | lo));
  }
  *out = std::move(bytes);
  return Status::OK();
}

#define FLOE_JSON_INSTANTIATE(J)                                                                  \
  template Status ReadJson<J>(const J&, const JsonPath&, std::string*);                           \
  template Status ReadJson<J>(const J&, const JsonPath&, bool*);                                  \
  template Status ReadJson<J>(const J&, const JsonPath&, double*);                                \
  template Status ReadJson<J>(const J&, const JsonPath&, std::map<std::string, std::string>*);    \
  template Status json_internal::ReadSigned<J>(const J&, const JsonPath&, int64_t, int64_t,       \
                                               int64_t*);                                         \
  template Status json_internal::ReadUnsigned<J>(const J&, const JsonPath&, uint64_t, uint64_t*); \
  template bool json_internal::IsNull<J>(const J&);                                               \
  template Result<size_t> json_internal::ArraySize<J>(const J&, const JsonPath&);                 \
  template const J& json_internal::Element<J>(const J&, size_t);                                  \
  template class JsonObject<J>;

FLOE_JSON_INSTANTIATE(Json)
FLOE_JSON_INSTANTIATE(OrderedJson)

#undef FLOE_JSON_INSTANTIATE

}  // namespace floe
