#include "floe/iceberg/json_internal.h"

#include <limits>
#include <set>

namespace floe::iceberg::internal {

Result<Json> ParseJson(std::string_view text, std::string_view where) {
  if (text.empty()) return Status::Corruption(std::string(where) + ": empty, expected JSON");
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Corruption(std::string(where) + ": not valid JSON (truncated or corrupt, " +
                              std::to_string(text.size()) + " bytes)");
  }
  return j;
}

std::string DumpJson(const Json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

JsonPath JsonPath::Child(std::string_view key) const {
  JsonPath p{where, path};
  if (!p.path.empty()) p.path.push_back('.');
  p.path.append(key);
  return p;
}

JsonPath JsonPath::Index(size_t i) const {
  return JsonPath{where, path + "[" + std::to_string(i) + "]"};
}

Status JsonPath::Error(std::string_view what) const {
  std::string msg(where);
  msg += path.empty() ? std::string(": ") : ": field '" + path + "': ";
  msg.append(what);
  return Status::Corruption(std::move(msg));
}

const char* JsonTypeName(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    default:
      return "unknown";
  }
}

Result<const Json*> GetMember(const Json& obj, std::string_view key, const JsonPath& at) {
  if (!obj.is_object()) return at.Error(std::string("expected object, got ") + JsonTypeName(obj));
  auto it = obj.find(key);
  if (it == obj.end()) return at.Child(key).Error("required field is missing");
  return &*it;
}

Result<int64_t> AsInt64(const Json& v, const JsonPath& at) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return at.Error("integer out of range for a 64-bit signed value");
    }
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return at.Error(std::string("expected integer, got ") + JsonTypeName(v));
}

Result<int32_t> AsInt32(const Json& v, const JsonPath& at) {
  FLOE_ASSIGN_OR_RAISE(int64_t x, AsInt64(v, at));
  if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
    return at.Error("integer " + std::to_string(x) + " out of range for a 32-bit value");
  }
  return static_cast<int32_t>(x);
}

Result<int64_t> GetInt64(const Json& obj, std::string_view key, const JsonPath& at) {
  FLOE_ASSIGN_OR_RAISE(const Json* v, GetMember(obj, key, at));
  return AsInt64(*v, at.Child(key));
}

Result<int32_t> GetInt32(const Json& obj, std::string_view key, const JsonPath& at) {
  FLOE_ASSIGN_OR_RAISE(const Json* v, GetMember(obj, key, at));
  return AsInt32(*v, at.Child(key));
}

Result<std::string> GetString(const Json& obj, std::string_view key, const JsonPath& at) {
  FLOE_ASSIGN_OR_RAISE(const Json* v, GetMember(obj, key, at));
  if (!v->is_string()) {
    return at.Child(key).Error(std::string("expected string, got ") + JsonTypeName(*v));
  }
  return v->get<std::string>();
}

Result<bool> GetBool(const Json& obj, std::string_view key, const JsonPath& at) {
  FLOE_ASSIGN_OR_RAISE(const Json* v, GetMember(obj, key, at));
  if (!v->is_boolean()) {
    return at.Child(key).Error(std::string("expected boolean, got ") + JsonTypeName(*v));
  }
  return v->get<bool>();
}

Result<std::optional<int64_t>> GetOptionalInt64(const Json& obj, std::string_view key,
                                                const JsonPath& at) {
  if (!obj.is_object()) return at.Error(std::string("expected object, got ") + JsonTypeName(obj));
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<int64_t>();
  FLOE_ASSIGN_OR_RAISE(int64_t v, AsInt64(*it, at.Child(key)));
  return std::optional<int64_t>(v);
}

Result<std::optional<int32_t>> GetOptionalInt32(const Json& obj, std::string_view key,
                                                const JsonPath& at) {
  if (!obj.is_object()) return at.Error(std::string("expected object, got ") + JsonTypeName(obj));
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<int32_t>();
  FLOE_ASSIGN_OR_RAISE(int32_t v, AsInt32(*it, at.Child(key)));
  return std::optional<int32_t>(v);
}

// ---- schema ------------------------------------------------------------------------------

Json SchemaToJsonValue(const Schema& schema) {
  Json j = Json::object();
  j["type"] = "struct";
  j["schema-id"] = schema.schema_id;
  if (!schema.identifier_field_ids.empty()) {
    j["identifier-field-ids"] = schema.identifier_field_ids;
  }
  Json fields = Json::array();
  for (const Field& f : schema.fields) {
    Json jf = Json::object();
    jf["id"] = f.field_id;
    jf["name"] = f.name;
    jf["required"] = !f.nullable;
    jf["type"] = f.type.ToString();
    fields.push_back(std::move(jf));
  }
  j["fields"] = std::move(fields);
  return j;
}

Result<Schema> SchemaFromJsonValue(const Json& j, const JsonPath& at) {
  if (!j.is_object())
    return at.Error(std::string("expected schema object, got ") + JsonTypeName(j));
  Schema schema;
  auto type_it = j.find("type");
  if (type_it != j.end() && !(type_it->is_string() && type_it->get<std::string>() == "struct")) {
    return at.Child("type").Error("expected \"struct\"");
  }
  FLOE_ASSIGN_OR_RAISE(std::optional<int32_t> schema_id, GetOptionalInt32(j, "schema-id", at));
  schema.schema_id = schema_id.value_or(0);
  FLOE_ASSIGN_OR_RAISE(const Json* fields, GetMember(j, "fields", at));
  JsonPath fields_at = at.Child("fields");
  if (!fields->is_array()) {
    return fields_at.Error(std::string("expected array, got ") + JsonTypeName(*fields));
  }
  std::set<int32_t> ids;
  std::set<std::string> names;
  for (size_t i = 0; i < fields->size(); ++i) {
    const Json& jf = (*fields)[i];
    JsonPath fat = fields_at.Index(i);
    if (!jf.is_object()) return fat.Error(std::string("expected object, got ") + JsonTypeName(jf));
    Field f;
    FLOE_ASSIGN_OR_RAISE(f.field_id, GetInt32(jf, "id", fat));
    FLOE_ASSIGN_OR_RAISE(f.name, GetString(jf, "name", fat));
    FLOE_ASSIGN_OR_RAISE(bool required, GetBool(jf, "required", fat));
    f.nullable = !required;
    FLOE_ASSIGN_OR_RAISE(const Json* type, GetMember(jf, "type", fat));
    if (!type->is_string()) {
      return fat.Child("type").Error(
          std::string("floe supports only primitive types here, got JSON ") + JsonTypeName(*type));
    }
    Result<DataType> dt = ParseIcebergType(type->get<std::string>());
    if (!dt.ok()) return fat.Child("type").Error(dt.status().message());
    f.type = *dt;
    if (f.field_id <= 0) return fat.Child("id").Error("field ids must be positive");
    if (!ids.insert(f.field_id).second) {
      return fat.Child("id").Error("duplicate field id " + std::to_string(f.field_id));
    }
    if (!names.insert(f.name).second) {
      return fat.Child("name").Error("duplicate field name '" + f.name + "'");
    }
    schema.fields.push_back(std::move(f));
  }
  auto ident = j.find("identifier-field-ids");
  if (ident != j.end() && !ident->is_null()) {
    JsonPath iat = at.Child("identifier-field-ids");
    if (!ident->is_array()) {
      return iat.Error(std::string("expected array, got ") + JsonTypeName(*ident));
    }
    for (size_t i = 0; i < ident->size(); ++i) {
      FLOE_ASSIGN_OR_RAISE(int32_t id, AsInt32((*ident)[i], iat.Index(i)));
      if (ids.count(id) == 0) {
        return iat.Index(i).Error("identifier field id " + std::to_string(id) +
                                  " is not a field of the schema");
      }
      schema.identifier_field_ids.push_back(id);
    }
  }
  return schema;
}

// ---- partition spec ----------------------------------------------------------------------

Json PartitionSpecToJsonValue(const PartitionSpec& spec) {
  Json j = Json::object();
  j["spec-id"] = spec.spec_id;
  Json fields = Json::array();
  for (const PartitionField& f : spec.fields) {
    Json jf = Json::object();
    jf["name"] = f.name;
    jf["transform"] = f.transform.ToString();
    jf["source-id"] = f.source_id;
    jf["field-id"] = f.field_id;
    fields.push_back(std::move(jf));
  }
  j["fields"] = std::move(fields);
  return j;
}

Result<PartitionSpec> PartitionSpecFromJsonValue(const Json& j, const JsonPath& at) {
  if (!j.is_object()) {
    return at.Error(std::string("expected partition spec object, got ") + JsonTypeName(j));
  }
  PartitionSpec spec;
  FLOE_ASSIGN_OR_RAISE(spec.spec_id, GetInt32(j, "spec-id", at));
  FLOE_ASSIGN_OR_RAISE(const Json* fields, GetMember(j, "fields", at));
  JsonPath fields_at = at.Child("fields");
  if (!fields->is_array()) {
    return fields_at.Error(std::string("expected array, got ") + JsonTypeName(*fields));
  }
  for (size_t i = 0; i < fields->size(); ++i) {
    const Json& jf = (*fields)[i];
    JsonPath fat = fields_at.Index(i);
    if (!jf.is_object()) return fat.Error(std::string("expected object, got ") + JsonTypeName(jf));
    PartitionField f;
    FLOE_ASSIGN_OR_RAISE(f.source_id, GetInt32(jf, "source-id", fat));
    FLOE_ASSIGN_OR_RAISE(f.field_id, GetInt32(jf, "field-id", fat));
    FLOE_ASSIGN_OR_RAISE(f.name, GetString(jf, "name", fat));
    FLOE_ASSIGN_OR_RAISE(std::string transform, GetString(jf, "transform", fat));
    Result<Transform> t = Transform::Parse(transform);
    if (!t.ok()) return fat.Child("transform").Error(t.status().message());
    f.transform = *t;
    spec.fields.push_back(std::move(f));
  }
  return spec;
}

}  // namespace floe::iceberg::internal
