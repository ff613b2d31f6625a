#include "floe/iceberg/table_metadata.h"

#include <chrono>
#include <cstdio>
#include <random>
#include <set>

#include "floe/iceberg/json_internal.h"

namespace floe::iceberg {

using internal::Json;
using internal::JsonPath;
using internal::JsonTypeName;

std::string Snapshot::operation() const {
  auto it = summary.find("operation");
  return it == summary.end() ? std::string() : it->second;
}

const Schema& TableMetadata::current_schema() const {
  for (const Schema& s : schemas) {
    if (s.schema_id == current_schema_id) return s;
  }
  static const Schema kEmpty;
  return kEmpty;
}

const PartitionSpec& TableMetadata::default_spec() const {
  if (const PartitionSpec* s = FindSpec(default_spec_id)) return *s;
  static const PartitionSpec kUnpartitioned;
  return kUnpartitioned;
}

const PartitionSpec* TableMetadata::FindSpec(int32_t spec_id) const {
  for (const PartitionSpec& s : partition_specs) {
    if (s.spec_id == spec_id) return &s;
  }
  return nullptr;
}

const Snapshot* TableMetadata::current_snapshot() const {
  return current_snapshot_id ? FindSnapshot(*current_snapshot_id) : nullptr;
}

const Snapshot* TableMetadata::FindSnapshot(int64_t snapshot_id) const {
  for (const Snapshot& s : snapshots) {
    if (s.snapshot_id == snapshot_id) return &s;
  }
  return nullptr;
}

std::string TableMetadata::Property(const std::string& key, const std::string& fallback) const {
  auto it = properties.find(key);
  return it == properties.end() ? fallback : it->second;
}

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string RandomUuidV4() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(NowMs()));
  uint64_t hi = gen(), lo = gen();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;              // version 4
  lo = (lo & ~(0xC0ULL << 56)) | (0x80ULL << 56);  // variant 10xx
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xFFFF), static_cast<unsigned>(hi & 0xFFFF),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

Status ValidateSchema(const Schema& schema) {
  if (schema.fields.empty()) return Status::InvalidArgument("a table needs at least one column");
  std::set<int32_t> ids;
  std::set<std::string> names;
  for (const Field& f : schema.fields) {
    if (f.field_id <= 0) {
      return Status::InvalidArgument("column '" + f.name + "' has no field id (ids start at 1)");
    }
    if (!ids.insert(f.field_id).second) {
      return Status::InvalidArgument("column '" + f.name + "': duplicate field id " +
                                     std::to_string(f.field_id));
    }
    if (f.name.empty()) return Status::InvalidArgument("a column has an empty name");
    if (!names.insert(f.name).second) {
      return Status::InvalidArgument("duplicate column name '" + f.name + "'");
    }
  }
  for (int32_t id : schema.identifier_field_ids) {
    const Field* f = schema.FindById(id);
    if (f == nullptr) {
      return Status::InvalidArgument("identifier field id " + std::to_string(id) +
                                     " is not a column");
    }
    if (f->nullable) {
      return Status::InvalidArgument("primary key column '" + f->name +
                                     "' must be NOT NULL (Iceberg identifier fields are required)");
    }
    if (f->type.id == TypeId::kFloat || f->type.id == TypeId::kDouble) {
      return Status::InvalidArgument("primary key column '" + f->name +
                                     "' cannot be FLOAT or DOUBLE");
    }
  }
  return Status::OK();
}

// ---- JSON encoding -----------------------------------------------------------------------

Json SnapshotToJsonValue(const Snapshot& s) {
  Json j = Json::object();
  j["snapshot-id"] = s.snapshot_id;
  if (s.parent_snapshot_id) j["parent-snapshot-id"] = *s.parent_snapshot_id;
  j["sequence-number"] = s.sequence_number;
  j["timestamp-ms"] = s.timestamp_ms;
  j["manifest-list"] = s.manifest_list;
  Json summary = Json::object();
  // "operation" first, as other writers do; the rest sorted (std::map).
  auto op = s.summary.find("operation");
  if (op != s.summary.end()) summary["operation"] = op->second;
  for (const auto& [k, v] : s.summary) {
    if (k != "operation") summary[k] = v;
  }
  j["summary"] = std::move(summary);
  if (s.schema_id) j["schema-id"] = *s.schema_id;
  return j;
}

// ---- JSON decoding -----------------------------------------------------------------------

Result<const Json*> GetArray(const Json& obj, std::string_view key, const JsonPath& at,
                             bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || (!required && it->is_null())) {
    if (required) return at.Child(key).Error("required field is missing");
    return static_cast<const Json*>(nullptr);
  }
  if (!it->is_array()) {
    return at.Child(key).Error(std::string("expected array, got ") + JsonTypeName(*it));
  }
  return &*it;
}

Result<std::map<std::string, std::string>> GetStringMap(const Json& v, const JsonPath& at) {
  if (!v.is_object()) return at.Error(std::string("expected object, got ") + JsonTypeName(v));
  std::map<std::string, std::string> out;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it.value().is_string()) {
      return at.Child(it.key()).Error(std::string("expected string value, got ") +
                                      JsonTypeName(it.value()));
    }
    out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

Result<Snapshot> SnapshotFromJsonValue(const Json& j, const JsonPath& at) {
  if (!j.is_object()) return at.Error(std::string("expected object, got ") + JsonTypeName(j));
  Snapshot s;
  FLOE_ASSIGN_OR_RAISE(s.snapshot_id, internal::GetInt64(j, "snapshot-id", at));
  FLOE_ASSIGN_OR_RAISE(s.parent_snapshot_id,
                       internal::GetOptionalInt64(j, "parent-snapshot-id", at));
  FLOE_ASSIGN_OR_RAISE(s.sequence_number, internal::GetInt64(j, "sequence-number", at));
  FLOE_ASSIGN_OR_RAISE(s.timestamp_ms, internal::GetInt64(j, "timestamp-ms", at));
  FLOE_ASSIGN_OR_RAISE(s.manifest_list, internal::GetString(j, "manifest-list", at));
  FLOE_ASSIGN_OR_RAISE(const Json* summary, internal::GetMember(j, "summary", at));
  FLOE_ASSIGN_OR_RAISE(s.summary, GetStringMap(*summary, at.Child("summary")));
  if (s.summary.count("operation") == 0) {
    return at.Child("summary.operation").Error("required field is missing");
  }
  FLOE_ASSIGN_OR_RAISE(s.schema_id, internal::GetOptionalInt32(j, "schema-id", at));
  return s;
}

}  // namespace

Result<TableMetadata> NewTableMetadata(const Schema& schema, const PartitionSpec& spec,
                                       const std::string& location,
                                       std::map<std::string, std::string> properties) {
  FLOE_RETURN_NOT_OK(ValidateSchema(schema));
  if (location.empty()) return Status::InvalidArgument("table location is empty");
  TableMetadata md;
  md.table_uuid = RandomUuidV4();
  md.location = location;
  while (md.location.size() > 1 && md.location.back() == '/') md.location.pop_back();
  md.last_sequence_number = 0;
  md.last_updated_ms = NowMs();
  md.last_column_id = schema.HighestFieldId();
  Schema s = schema;
  s.schema_id = 0;
  md.schemas.push_back(std::move(s));
  md.current_schema_id = 0;
  PartitionSpec p = spec;
  p.spec_id = 0;
  std::set<std::string> names;
  for (size_t i = 0; i < p.fields.size(); ++i) {
    p.fields[i].field_id = 1000 + static_cast<int32_t>(i);
    if (!names.insert(p.fields[i].name).second) {
      return Status::InvalidArgument("duplicate partition field name '" + p.fields[i].name + "'");
    }
  }
  FLOE_RETURN_NOT_OK(p.PartitionTypes(md.schemas[0]).status());  // sources exist, transforms fit
  md.last_partition_id = 999 + static_cast<int32_t>(p.fields.size());
  md.partition_specs.push_back(std::move(p));
  md.default_spec_id = 0;
  md.default_sort_order_id = 0;
  md.properties = std::move(properties);
  return md;
}

std::string TableMetadataToJson(const TableMetadata& md) {
  Json j = Json::object();
  j["format-version"] = md.format_version;
  j["table-uuid"] = md.table_uuid;
  j["location"] = md.location;
  j["last-sequence-number"] = md.last_sequence_number;
  j["last-updated-ms"] = md.last_updated_ms;
  j["last-column-id"] = md.last_column_id;
  j["current-schema-id"] = md.current_schema_id;
  Json schemas = Json::array();
  for (const Schema& s : md.schemas) schemas.push_back(internal::SchemaToJsonValue(s));
  j["schemas"] = std::move(schemas);
  j["default-spec-id"] = md.default_spec_id;
  Json specs = Json::array();
  for (const PartitionSpec& s : md.partition_specs) {
    specs.push_back(internal::PartitionSpecToJsonValue(s));
  }
  j["partition-specs"] = std::move(specs);
  j["last-partition-id"] = md.last_partition_id;
  j["default-sort-order-id"] = md.default_sort_order_id;
  Json unsorted = Json::object();
  unsorted["order-id"] = 0;
  unsorted["fields"] = Json::array();
  j["sort-orders"] = Json::array({unsorted});
  Json props = Json::object();
  for (const auto& [k, v] : md.properties) props[k] = v;
  j["properties"] = std::move(props);
  // Java writes -1 for "no current snapshot" in v1/v2 tables; readers treat it as null.
  j["current-snapshot-id"] = md.current_snapshot_id.value_or(-1);
  Json refs = Json::object();
  std::map<std::string, SnapshotRef> all_refs = md.refs;
  if (md.current_snapshot_id && all_refs.count("main") == 0) {
    all_refs["main"] = SnapshotRef{*md.current_snapshot_id, "branch"};
  }
  for (const auto& [name, ref] : all_refs) {
    Json r = Json::object();
    r["snapshot-id"] = ref.snapshot_id;
    r["type"] = ref.type;
    refs[name] = std::move(r);
  }
  j["refs"] = std::move(refs);
  Json snapshots = Json::array();
  for (const Snapshot& s : md.snapshots) snapshots.push_back(SnapshotToJsonValue(s));
  j["snapshots"] = std::move(snapshots);
  j["statistics"] = Json::array();
  Json snapshot_log = Json::array();
  for (const SnapshotLogEntry& e : md.snapshot_log) {
    Json je = Json::object();
    je["timestamp-ms"] = e.timestamp_ms;
    je["snapshot-id"] = e.snapshot_id;
    snapshot_log.push_back(std::move(je));
  }
  j["snapshot-log"] = std::move(snapshot_log);
  Json metadata_log = Json::array();
  for (const MetadataLogEntry& e : md.metadata_log) {
    Json je = Json::object();
    je["timestamp-ms"] = e.timestamp_ms;
    je["metadata-file"] = e.metadata_file;
    metadata_log.push_back(std::move(je));
  }
  j["metadata-log"] = std::move(metadata_log);
  return internal::DumpJson(j, 2);
}

// Stays long: reads the fields in the spec's order, each cross-field check beside its field.
Result<TableMetadata> TableMetadataFromJson(std::string_view text, std::string_view source) {
  FLOE_ASSIGN_OR_RAISE(Json j, internal::ParseJson(text, source));
  JsonPath root{source, ""};
  if (!j.is_object()) {
    return root.Error(std::string("expected a JSON object, got ") + JsonTypeName(j));
  }
  TableMetadata md;
  FLOE_ASSIGN_OR_RAISE(md.format_version, internal::GetInt32(j, "format-version", root));
  if (md.format_version != 2) {
    return Status::NotImplemented(std::string(source) + ": format-version " +
                                  std::to_string(md.format_version) +
                                  " is not supported (floe reads and writes v2 tables)");
  }
  FLOE_ASSIGN_OR_RAISE(md.table_uuid, internal::GetString(j, "table-uuid", root));
  FLOE_ASSIGN_OR_RAISE(md.location, internal::GetString(j, "location", root));
  FLOE_ASSIGN_OR_RAISE(md.last_sequence_number,
                       internal::GetInt64(j, "last-sequence-number", root));
  FLOE_ASSIGN_OR_RAISE(md.last_updated_ms, internal::GetInt64(j, "last-updated-ms", root));
  FLOE_ASSIGN_OR_RAISE(md.last_column_id, internal::GetInt32(j, "last-column-id", root));

  FLOE_ASSIGN_OR_RAISE(const Json* schemas, GetArray(j, "schemas", root, true));
  for (size_t i = 0; i < schemas->size(); ++i) {
    FLOE_ASSIGN_OR_RAISE(
        Schema s, internal::SchemaFromJsonValue((*schemas)[i], root.Child("schemas").Index(i)));
    md.schemas.push_back(std::move(s));
  }
  FLOE_ASSIGN_OR_RAISE(md.current_schema_id, internal::GetInt32(j, "current-schema-id", root));
  bool found = false;
  for (const Schema& s : md.schemas) found |= s.schema_id == md.current_schema_id;
  if (!found) {
    return root.Child("current-schema-id")
        .Error("no schema with id " + std::to_string(md.current_schema_id));
  }
  for (const Schema& s : md.schemas) {
    if (s.HighestFieldId() > md.last_column_id) {
      return root.Child("last-column-id")
          .Error(std::to_string(md.last_column_id) + " is below a field id of schema " +
                 std::to_string(s.schema_id));
    }
  }

  FLOE_ASSIGN_OR_RAISE(const Json* specs, GetArray(j, "partition-specs", root, true));
  for (size_t i = 0; i < specs->size(); ++i) {
    FLOE_ASSIGN_OR_RAISE(PartitionSpec s, internal::PartitionSpecFromJsonValue(
                                              (*specs)[i], root.Child("partition-specs").Index(i)));
    md.partition_specs.push_back(std::move(s));
  }
  FLOE_ASSIGN_OR_RAISE(md.default_spec_id, internal::GetInt32(j, "default-spec-id", root));
  if (md.FindSpec(md.default_spec_id) == nullptr) {
    return root.Child("default-spec-id")
        .Error("no partition spec with id " + std::to_string(md.default_spec_id));
  }
  FLOE_ASSIGN_OR_RAISE(md.last_partition_id, internal::GetInt32(j, "last-partition-id", root));

  FLOE_ASSIGN_OR_RAISE(const Json* sort_orders, GetArray(j, "sort-orders", root, true));
  (void)sort_orders;
  FLOE_ASSIGN_OR_RAISE(md.default_sort_order_id,
                       internal::GetInt32(j, "default-sort-order-id", root));
  if (md.default_sort_order_id != 0) {
    return Status::NotImplemented(std::string(source) + ": default-sort-order-id " +
                                  std::to_string(md.default_sort_order_id) +
                                  ": sorted tables are not supported yet (only order 0)");
  }

  auto props = j.find("properties");
  if (props != j.end() && !props->is_null()) {
    FLOE_ASSIGN_OR_RAISE(md.properties, GetStringMap(*props, root.Child("properties")));
  }

  FLOE_ASSIGN_OR_RAISE(std::optional<int64_t> current,
                       internal::GetOptionalInt64(j, "current-snapshot-id", root));
  if (current && *current != -1) md.current_snapshot_id = current;

  FLOE_ASSIGN_OR_RAISE(const Json* snapshots, GetArray(j, "snapshots", root, false));
  if (snapshots != nullptr) {
    std::set<int64_t> ids;
    for (size_t i = 0; i < snapshots->size(); ++i) {
      JsonPath sat = root.Child("snapshots").Index(i);
      FLOE_ASSIGN_OR_RAISE(Snapshot s, SnapshotFromJsonValue((*snapshots)[i], sat));
      if (!ids.insert(s.snapshot_id).second) {
        return sat.Child("snapshot-id")
            .Error("duplicate snapshot id " + std::to_string(s.snapshot_id));
      }
      md.snapshots.push_back(std::move(s));
    }
  }
  if (md.current_snapshot_id && md.current_snapshot() == nullptr) {
    return root.Child("current-snapshot-id")
        .Error("snapshot " + std::to_string(*md.current_snapshot_id) + " is not in 'snapshots'");
  }

  FLOE_ASSIGN_OR_RAISE(const Json* snapshot_log, GetArray(j, "snapshot-log", root, false));
  if (snapshot_log != nullptr) {
    for (size_t i = 0; i < snapshot_log->size(); ++i) {
      JsonPath eat = root.Child("snapshot-log").Index(i);
      const Json& je = (*snapshot_log)[i];
      SnapshotLogEntry e;
      FLOE_ASSIGN_OR_RAISE(e.timestamp_ms, internal::GetInt64(je, "timestamp-ms", eat));
      FLOE_ASSIGN_OR_RAISE(e.snapshot_id, internal::GetInt64(je, "snapshot-id", eat));
      md.snapshot_log.push_back(e);
    }
  }
  FLOE_ASSIGN_OR_RAISE(const Json* metadata_log, GetArray(j, "metadata-log", root, false));
  if (metadata_log != nullptr) {
    for (size_t i = 0; i < metadata_log->size(); ++i) {
      JsonPath eat = root.Child("metadata-log").Index(i);
      const Json& je = (*metadata_log)[i];
      MetadataLogEntry e;
      FLOE_ASSIGN_OR_RAISE(e.timestamp_ms, internal::GetInt64(je, "timestamp-ms", eat));
      FLOE_ASSIGN_OR_RAISE(e.metadata_file, internal::GetString(je, "metadata-file", eat));
      md.metadata_log.push_back(std::move(e));
    }
  }

  auto refs = j.find("refs");
  if (refs != j.end() && !refs->is_null()) {
    JsonPath rat = root.Child("refs");
    if (!refs->is_object()) {
      return rat.Error(std::string("expected object, got ") + JsonTypeName(*refs));
    }
    for (auto it = refs->begin(); it != refs->end(); ++it) {
      JsonPath at = rat.Child(it.key());
      SnapshotRef ref;
      FLOE_ASSIGN_OR_RAISE(ref.snapshot_id, internal::GetInt64(it.value(), "snapshot-id", at));
      FLOE_ASSIGN_OR_RAISE(ref.type, internal::GetString(it.value(), "type", at));
      if (ref.type != "branch" && ref.type != "tag") {
        return at.Child("type").Error("expected \"branch\" or \"tag\", got \"" + ref.type + "\"");
      }
      if (md.FindSnapshot(ref.snapshot_id) == nullptr) {
        return at.Child("snapshot-id")
            .Error("snapshot " + std::to_string(ref.snapshot_id) + " is not in 'snapshots'");
      }
      md.refs[it.key()] = ref;
    }
  }
  auto main = md.refs.find("main");
  if (main != md.refs.end()) {
    if (main->second.type != "branch") {
      return root.Child("refs.main.type").Error("main must be a branch");
    }
    if (!md.current_snapshot_id) {
      // v2 allows refs without current-snapshot-id: main decides.
      md.current_snapshot_id = main->second.snapshot_id;
    } else if (*md.current_snapshot_id != main->second.snapshot_id) {
      return root.Child("refs.main.snapshot-id")
          .Error("differs from current-snapshot-id " + std::to_string(*md.current_snapshot_id));
    }
  } else if (md.current_snapshot_id) {
    // The spec: there is always a main branch pointing at current-snapshot-id.
    md.refs["main"] = SnapshotRef{*md.current_snapshot_id, "branch"};
  }
  return md;
}

std::string SnapshotToJson(const Snapshot& snapshot) {
  return internal::DumpJson(SnapshotToJsonValue(snapshot));
}

Result<Snapshot> SnapshotFromJson(std::string_view json, std::string_view source) {
  FLOE_ASSIGN_OR_RAISE(Json j, internal::ParseJson(json, source));
  return SnapshotFromJsonValue(j, JsonPath{source, ""});
}

}  // namespace floe::iceberg
