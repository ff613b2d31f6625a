#include "floe/iceberg/json_internal.h"

#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

namespace floe::iceberg::internal {

// ---- schema ------------------------------------------------------------------------------

OrderedJson SchemaToJsonValue(const Schema& schema) {
  OrderedJson j = OrderedJson::object();
  j["type"] = "struct";
  j["schema-id"] = schema.schema_id;
  if (!schema.identifier_field_ids.empty()) {
    j["identifier-field-ids"] = schema.identifier_field_ids;
  }
  OrderedJson fields = OrderedJson::array();
  for (const Field& f : schema.fields) {
    OrderedJson jf = OrderedJson::object();
    jf["id"] = f.field_id;
    jf["name"] = f.name;
    jf["required"] = !f.nullable;
    jf["type"] = f.type.ToString();
    fields.push_back(std::move(jf));
  }
  j["fields"] = std::move(fields);
  return j;
}

Result<Schema> SchemaFromJsonValue(const OrderedJson& j, const JsonPath& at) {
  if (!j.is_object()) {
    return at.Error(std::string("expected schema object, got ") + JsonTypeName(j));
  }
  JsonObject o(j, at);
  Schema schema;
  std::string type = "struct";
  if (!o.Get("type", &type).ok() || type != "struct") return o.Error("type", "expected \"struct\"");
  std::optional<int32_t> schema_id;
  FLOE_RETURN_NOT_OK(o.Get("schema-id", &schema_id));
  schema.schema_id = schema_id.value_or(0);
  const OrderedJson* fields = nullptr;
  FLOE_RETURN_NOT_OK(o.RequiredArray("fields", &fields));
  std::set<int32_t> ids;
  std::set<std::string> names;
  for (size_t i = 0; i < fields->size(); ++i) {
    JsonObject jf((*fields)[i], at.Child("fields").Index(i));
    FLOE_RETURN_NOT_OK(jf.Check());
    Field f;
    bool required = false;
    FLOE_RETURN_NOT_OK(jf.Required("id", &f.field_id));
    FLOE_RETURN_NOT_OK(jf.Required("name", &f.name));
    FLOE_RETURN_NOT_OK(jf.Required("required", &required));
    f.nullable = !required;
    const OrderedJson* type_json = jf.Find("type");
    if (type_json == nullptr) return jf.Error("type", "required field is missing");
    if (!type_json->is_string()) {
      return jf.Error("type", std::string("floe supports only primitive types here, got JSON ") +
                                  JsonTypeName(*type_json));
    }
    Result<DataType> dt = ParseIcebergType(type_json->get<std::string>());
    if (!dt.ok()) return jf.Error("type", dt.status().message());
    f.type = *dt;
    if (f.field_id <= 0) return jf.Error("id", "field ids must be positive");
    if (!ids.insert(f.field_id).second) {
      return jf.Error("id", "duplicate field id " + std::to_string(f.field_id));
    }
    if (!names.insert(f.name).second) {
      return jf.Error("name", "duplicate field name '" + f.name + "'");
    }
    schema.fields.push_back(std::move(f));
  }
  std::optional<std::vector<int32_t>> identifier_ids;
  FLOE_RETURN_NOT_OK(o.Get("identifier-field-ids", &identifier_ids));
  for (size_t i = 0; identifier_ids && i < identifier_ids->size(); ++i) {
    int32_t id = (*identifier_ids)[i];
    if (ids.count(id) == 0) {
      return at.Child("identifier-field-ids")
          .Index(i)
          .Error("identifier field id " + std::to_string(id) + " is not a field of the schema");
    }
    schema.identifier_field_ids.push_back(id);
  }
  return schema;
}

// ---- partition spec ----------------------------------------------------------------------

OrderedJson PartitionSpecToJsonValue(const PartitionSpec& spec) {
  OrderedJson j = OrderedJson::object();
  j["spec-id"] = spec.spec_id;
  OrderedJson fields = OrderedJson::array();
  for (const PartitionField& f : spec.fields) {
    OrderedJson jf = OrderedJson::object();
    jf["name"] = f.name;
    jf["transform"] = f.transform.ToString();
    jf["source-id"] = f.source_id;
    jf["field-id"] = f.field_id;
    fields.push_back(std::move(jf));
  }
  j["fields"] = std::move(fields);
  return j;
}

Result<PartitionSpec> PartitionSpecFromJsonValue(const OrderedJson& j, const JsonPath& at) {
  if (!j.is_object()) {
    return at.Error(std::string("expected partition spec object, got ") + JsonTypeName(j));
  }
  JsonObject o(j, at);
  PartitionSpec spec;
  FLOE_RETURN_NOT_OK(o.Required("spec-id", &spec.spec_id));
  const OrderedJson* fields = nullptr;
  FLOE_RETURN_NOT_OK(o.RequiredArray("fields", &fields));
  for (size_t i = 0; i < fields->size(); ++i) {
    JsonObject jf((*fields)[i], at.Child("fields").Index(i));
    FLOE_RETURN_NOT_OK(jf.Check());
    PartitionField f;
    std::string transform;
    FLOE_RETURN_NOT_OK(jf.Required("source-id", &f.source_id));
    FLOE_RETURN_NOT_OK(jf.Required("field-id", &f.field_id));
    FLOE_RETURN_NOT_OK(jf.Required("name", &f.name));
    FLOE_RETURN_NOT_OK(jf.Required("transform", &transform));
    Result<Transform> t = Transform::Parse(transform);
    if (!t.ok()) return jf.Error("transform", t.status().message());
    f.transform = *t;
    spec.fields.push_back(std::move(f));
  }
  return spec;
}

}  // namespace floe::iceberg::internal
