#pragma once

// Internal to floe_iceberg: nlohmann::json helpers shared by the schema, partition spec and
// table metadata codecs. Never included from a public header.
//
// Every getter checks presence and JSON type before converting, so decoding never throws; errors
// are Corruption and name `where` (a file or a description of the input) and the field path,
// e.g. "v3.metadata.json: field 'snapshots[2].manifest-list': expected string, got number".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "floe/common/status.h"
#include "floe/iceberg/partition_spec.h"
#include "floe/iceberg/schema.h"

namespace floe::iceberg::internal {

using Json = nlohmann::ordered_json;

// Parses `text` without exceptions; Corruption naming `where` if it is not one JSON value.
Result<Json> ParseJson(std::string_view text, std::string_view where);
// Serializes without exceptions (invalid UTF-8 is replaced, not thrown on).
std::string DumpJson(const Json& j, int indent = -1);

// Where a value sits, for error messages.
struct JsonPath {
  std::string_view where;  // the file or input
  std::string path;        // "snapshots[2]" ("" = the root)

  JsonPath Child(std::string_view key) const;
  JsonPath Index(size_t i) const;
  Status Error(std::string_view what) const;
};

const char* JsonTypeName(const Json& j);

// Required members of the object `obj` (which must be an object, checked by the caller).
Result<const Json*> GetMember(const Json& obj, std::string_view key, const JsonPath& at);
Result<int64_t> GetInt64(const Json& obj, std::string_view key, const JsonPath& at);
Result<int32_t> GetInt32(const Json& obj, std::string_view key, const JsonPath& at);
Result<std::string> GetString(const Json& obj, std::string_view key, const JsonPath& at);
Result<bool> GetBool(const Json& obj, std::string_view key, const JsonPath& at);
// Optional members: nullopt when absent or JSON null.
Result<std::optional<int64_t>> GetOptionalInt64(const Json& obj, std::string_view key,
                                                const JsonPath& at);
Result<std::optional<int32_t>> GetOptionalInt32(const Json& obj, std::string_view key,
                                                const JsonPath& at);
// Converts a JSON value (not a member) to an integer with range checks.
Result<int64_t> AsInt64(const Json& v, const JsonPath& at);
Result<int32_t> AsInt32(const Json& v, const JsonPath& at);

Json SchemaToJsonValue(const Schema& schema);
Result<Schema> SchemaFromJsonValue(const Json& j, const JsonPath& at);
Json PartitionSpecToJsonValue(const PartitionSpec& spec);
Result<PartitionSpec> PartitionSpecFromJsonValue(const Json& j, const JsonPath& at);

}  // namespace floe::iceberg::internal
