#include "floe/runtime/process/json_fields.h"

namespace floe::process {

using nlohmann::json;

std::optional<json> ParseJson(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::string DumpJson(const json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

Status JsonFields::Error(std::string_view key, std::string_view what) const {
  std::string msg = where_;
  msg.append("field '").append(key).append("' ").append(what);
  return Status(code_, std::move(msg));
}

const json* JsonFields::Find(std::string_view key) const {
  auto it = object_.find(std::string(key));
  return it == object_.end() ? nullptr : &*it;
}

bool JsonFields::Has(std::string_view key) const { return Find(key) != nullptr; }

Status JsonFields::Get(std::string_view key, std::string* out) const {
  const json* v = Find(key);
  if (!v) return Status::OK();
  const auto* s = v->get_ptr<const json::string_t*>();
  if (!s) return Error(key, "must be a string");
  *out = *s;
  return Status::OK();
}

Status JsonFields::Get(std::string_view key, std::optional<std::string>* out) const {
  if (!Has(key)) return Status::OK();
  std::string s;
  FLOE_RETURN_NOT_OK(Get(key, &s));
  *out = std::move(s);
  return Status::OK();
}

Status JsonFields::Get(std::string_view key, bool* out) const {
  const json* v = Find(key);
  if (!v) return Status::OK();
  const auto* b = v->get_ptr<const json::boolean_t*>();
  if (!b) return Error(key, "must be a boolean");
  *out = *b;
  return Status::OK();
}

Status JsonFields::Get(std::string_view key, std::map<std::string, std::string>* out) const {
  const json* v = Find(key);
  if (!v) return Status::OK();
  const auto* obj = v->get_ptr<const json::object_t*>();
  if (!obj) return Error(key, "must be an object of strings");
  std::map<std::string, std::string> m;
  for (const auto& [k, member] : *obj) {
    const auto* s = member.get_ptr<const json::string_t*>();
    if (!s) return Error(key, "must be an object of strings");
    m.emplace(k, *s);
  }
  *out = std::move(m);
  return Status::OK();
}

Status JsonFields::GetSigned(std::string_view key, int64_t min, int64_t max, int64_t* out,
                             bool* found) const {
  const json* v = Find(key);
  if (!v) return Status::OK();
  auto range = [&] {
    return Error(key,
                 "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
  };
  if (const auto* u = v->get_ptr<const json::number_unsigned_t*>()) {
    if (*u > static_cast<uint64_t>(max)) return range();
    *out = static_cast<int64_t>(*u);
  } else if (const auto* i = v->get_ptr<const json::number_integer_t*>()) {
    if (*i < min || *i > max) return range();
    *out = *i;
  } else {
    return range();
  }
  *found = true;
  return Status::OK();
}

Status JsonFields::GetUnsigned(std::string_view key, uint64_t max, uint64_t* out,
                               bool* found) const {
  const json* v = Find(key);
  if (!v) return Status::OK();
  auto range = [&] { return Error(key, "must be an integer from 0 to " + std::to_string(max)); };
  if (const auto* u = v->get_ptr<const json::number_unsigned_t*>()) {
    if (*u > max) return range();
    *out = *u;
  } else if (const auto* i = v->get_ptr<const json::number_integer_t*>()) {
    if (*i < 0 || static_cast<uint64_t>(*i) > max) return range();
    *out = static_cast<uint64_t>(*i);
  } else {
    return range();
  }
  *found = true;
  return Status::OK();
}

}  // namespace floe::process
