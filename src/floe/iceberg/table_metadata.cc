#include "floe/iceberg/table_metadata.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/iceberg/json_internal.h"
#include "floe/iceberg/table_paths.h"

namespace floe::iceberg {

// Iceberg's files keep their members in the order other writers use.
using Json = OrderedJson;

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

std::optional<int32_t> TableMetadata::WrittenSortOrderId() const {
  for (const SortOrder& o : sort_orders) {
    if (o.order_id == default_sort_order_id) {
      return o.unsorted ? std::optional<int32_t>(o.order_id) : std::nullopt;
    }
  }
  // Order id 0 is reserved for the unsorted order, declared or not.
  return default_sort_order_id == 0 ? std::optional<int32_t>(0) : std::nullopt;
}

void TableMetadata::SetMain(int64_t snapshot_id) {
  current_snapshot_id = snapshot_id;
  SnapshotRef& main = refs["main"];
  main.snapshot_id = snapshot_id;
  main.type = "branch";
}

void TableMetadata::RemoveSnapshots(const std::vector<int64_t>& snapshot_ids) {
  const std::set<int64_t> gone(snapshot_ids.begin(), snapshot_ids.end());
  std::erase_if(snapshots, [&](const Snapshot& s) { return gone.count(s.snapshot_id) > 0; });
  std::erase_if(snapshot_log,
                [&](const SnapshotLogEntry& e) { return gone.count(e.snapshot_id) > 0; });
  for (std::vector<StatisticsFile>* files : {&statistics, &partition_statistics}) {
    std::erase_if(*files, [&](const StatisticsFile& f) { return gone.count(f.snapshot_id) > 0; });
  }
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

Json SnapshotRefToJsonValue(const SnapshotRef& ref) {
  Json r = Json::object();
  r["snapshot-id"] = ref.snapshot_id;
  r["type"] = ref.type;
  if (ref.min_snapshots_to_keep) r["min-snapshots-to-keep"] = *ref.min_snapshots_to_keep;
  if (ref.max_snapshot_age_ms) r["max-snapshot-age-ms"] = *ref.max_snapshot_age_ms;
  if (ref.max_ref_age_ms) r["max-ref-age-ms"] = *ref.max_ref_age_ms;
  return r;
}

// The entries floe keeps as another engine wrote them (each `json` was written by DumpJson of a
// parsed value, so it parses).
template <typename Kept>
Json KeptJsonArray(const std::vector<Kept>& kept) {
  Json a = Json::array();
  for (const Kept& k : kept) {
    Result<Json> v = ParseOrderedJson(k.json, JsonPath("kept entry"));
    if (v.ok()) a.push_back(std::move(v).value());
  }
  return a;
}

// ---- JSON decoding -----------------------------------------------------------------------

Result<SnapshotRef> SnapshotRefFromJsonValue(const Json& j, const JsonPath& at) {
  JsonObject jr(j, at);
  SnapshotRef ref;
  FLOE_RETURN_NOT_OK(jr.Required("snapshot-id", &ref.snapshot_id));
  FLOE_RETURN_NOT_OK(jr.Required("type", &ref.type));
  if (ref.type != "branch" && ref.type != "tag") {
    return at.Child("type").Error("expected \"branch\" or \"tag\", got \"" + ref.type + "\"");
  }
  FLOE_RETURN_NOT_OK(jr.Get("min-snapshots-to-keep", &ref.min_snapshots_to_keep));
  FLOE_RETURN_NOT_OK(jr.Get("max-snapshot-age-ms", &ref.max_snapshot_age_ms));
  FLOE_RETURN_NOT_OK(jr.Get("max-ref-age-ms", &ref.max_ref_age_ms));
  return ref;
}

// Entries floe keeps as written (sort orders, statistics): `read` takes from each object the
// fields floe acts on; the whole object is kept compact.
template <typename Kept, typename ReadFields>
Result<std::vector<Kept>> KeptFromJsonValue(const Json& entries, const JsonPath& at,
                                            ReadFields read) {
  std::vector<Kept> out;
  for (size_t i = 0; i < entries.size(); ++i) {
    JsonObject o(entries[i], at.Index(i));
    FLOE_RETURN_NOT_OK(o.Check());
    Kept k;
    FLOE_RETURN_NOT_OK(read(o, &k));
    k.json = DumpJson(entries[i]);
    out.push_back(std::move(k));
  }
  return out;
}

// "sort-orders": each an object with an integer order-id and an array of fields.
Status ReadSortOrder(const JsonObject<Json>& o, SortOrder* out) {
  FLOE_RETURN_NOT_OK(o.Required("order-id", &out->order_id));
  const Json* fields = nullptr;
  FLOE_RETURN_NOT_OK(o.RequiredArray("fields", &fields));
  out->unsorted = fields->empty();
  return Status::OK();
}

// "statistics" / "partition-statistics": each names its snapshot and its file.
Status ReadStatisticsFile(const JsonObject<Json>& o, StatisticsFile* out) {
  FLOE_RETURN_NOT_OK(o.Required("snapshot-id", &out->snapshot_id));
  return o.Required("statistics-path", &out->path);
}

Result<Snapshot> SnapshotFromJsonValue(const Json& j, const JsonPath& at) {
  JsonObject o(j, at);
  FLOE_RETURN_NOT_OK(o.Check());
  Snapshot s;
  FLOE_RETURN_NOT_OK(o.Required("snapshot-id", &s.snapshot_id));
  FLOE_RETURN_NOT_OK(o.Get("parent-snapshot-id", &s.parent_snapshot_id));
  FLOE_RETURN_NOT_OK(o.Required("sequence-number", &s.sequence_number));
  FLOE_RETURN_NOT_OK(o.Required("timestamp-ms", &s.timestamp_ms));
  FLOE_RETURN_NOT_OK(o.Required("manifest-list", &s.manifest_list));
  FLOE_RETURN_NOT_OK(o.Required("summary", &s.summary));
  if (s.summary.count("operation") == 0) {
    return o.Error("summary.operation", "required field is missing");
  }
  FLOE_RETURN_NOT_OK(o.Get("schema-id", &s.schema_id));
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
  FLOE_RETURN_NOT_OK(CheckPathProperties("at " + md.location, md));
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
  j["sort-orders"] = KeptJsonArray(md.sort_orders);
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
  for (const auto& [name, ref] : all_refs) refs[name] = SnapshotRefToJsonValue(ref);
  j["refs"] = std::move(refs);
  Json snapshots = Json::array();
  for (const Snapshot& s : md.snapshots) snapshots.push_back(SnapshotToJsonValue(s));
  j["snapshots"] = std::move(snapshots);
  j["statistics"] = KeptJsonArray(md.statistics);
  if (!md.partition_statistics.empty()) {
    j["partition-statistics"] = KeptJsonArray(md.partition_statistics);
  }
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
  return DumpJson(j, 2);
}

// Stays long: reads the fields in the spec's order, each cross-field check beside its field.
Result<TableMetadata> TableMetadataFromJson(std::string_view text, std::string_view source) {
  JsonPath root{std::string(source)};
  FLOE_ASSIGN_OR_RAISE(Json j, ParseOrderedJson(text, root));
  if (!j.is_object()) {
    return root.Error(std::string("expected a JSON object, got ") + JsonTypeName(j));
  }
  JsonObject o(j, root);
  TableMetadata md;
  FLOE_RETURN_NOT_OK(o.Required("format-version", &md.format_version));
  if (md.format_version != 2) {
    return Status::NotImplemented(std::string(source) + ": format-version " +
                                  std::to_string(md.format_version) +
                                  " is not supported (floe reads and writes v2 tables)");
  }
  FLOE_RETURN_NOT_OK(o.Required("table-uuid", &md.table_uuid));
  FLOE_RETURN_NOT_OK(o.Required("location", &md.location));
  FLOE_RETURN_NOT_OK(o.Required("last-sequence-number", &md.last_sequence_number));
  FLOE_RETURN_NOT_OK(o.Required("last-updated-ms", &md.last_updated_ms));
  FLOE_RETURN_NOT_OK(o.Required("last-column-id", &md.last_column_id));

  const Json* schemas = nullptr;
  FLOE_RETURN_NOT_OK(o.RequiredArray("schemas", &schemas));
  for (size_t i = 0; i < schemas->size(); ++i) {
    FLOE_ASSIGN_OR_RAISE(
        Schema s, internal::SchemaFromJsonValue((*schemas)[i], root.Child("schemas").Index(i)));
    md.schemas.push_back(std::move(s));
  }
  FLOE_RETURN_NOT_OK(o.Required("current-schema-id", &md.current_schema_id));
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

  const Json* specs = nullptr;
  FLOE_RETURN_NOT_OK(o.RequiredArray("partition-specs", &specs));
  for (size_t i = 0; i < specs->size(); ++i) {
    FLOE_ASSIGN_OR_RAISE(PartitionSpec s, internal::PartitionSpecFromJsonValue(
                                              (*specs)[i], root.Child("partition-specs").Index(i)));
    md.partition_specs.push_back(std::move(s));
  }
  FLOE_RETURN_NOT_OK(o.Required("default-spec-id", &md.default_spec_id));
  if (md.FindSpec(md.default_spec_id) == nullptr) {
    return root.Child("default-spec-id")
        .Error("no partition spec with id " + std::to_string(md.default_spec_id));
  }
  FLOE_RETURN_NOT_OK(o.Required("last-partition-id", &md.last_partition_id));

  const Json* sort_orders = nullptr;
  FLOE_RETURN_NOT_OK(o.RequiredArray("sort-orders", &sort_orders));
  FLOE_ASSIGN_OR_RAISE(md.sort_orders, KeptFromJsonValue<SortOrder>(
                                           *sort_orders, root.Child("sort-orders"), ReadSortOrder));
  FLOE_RETURN_NOT_OK(o.Required("default-sort-order-id", &md.default_sort_order_id));
  if (md.default_sort_order_id != 0 &&
      std::none_of(md.sort_orders.begin(), md.sort_orders.end(),
                   [&](const SortOrder& so) { return so.order_id == md.default_sort_order_id; })) {
    return root.Child("default-sort-order-id")
        .Error("no sort order with id " + std::to_string(md.default_sort_order_id));
  }

  std::optional<std::map<std::string, std::string>> properties;
  FLOE_RETURN_NOT_OK(o.Get("properties", &properties));
  if (properties) md.properties = std::move(*properties);

  std::optional<int64_t> current;
  FLOE_RETURN_NOT_OK(o.Get("current-snapshot-id", &current));
  if (current && *current != -1) md.current_snapshot_id = current;

  const Json* snapshots = nullptr;
  FLOE_RETURN_NOT_OK(o.GetArray("snapshots", &snapshots));
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

  const Json* snapshot_log = nullptr;
  FLOE_RETURN_NOT_OK(o.GetArray("snapshot-log", &snapshot_log));
  if (snapshot_log != nullptr) {
    for (size_t i = 0; i < snapshot_log->size(); ++i) {
      JsonObject je((*snapshot_log)[i], root.Child("snapshot-log").Index(i));
      SnapshotLogEntry e;
      FLOE_RETURN_NOT_OK(je.Required("timestamp-ms", &e.timestamp_ms));
      FLOE_RETURN_NOT_OK(je.Required("snapshot-id", &e.snapshot_id));
      md.snapshot_log.push_back(e);
    }
  }
  const Json* metadata_log = nullptr;
  FLOE_RETURN_NOT_OK(o.GetArray("metadata-log", &metadata_log));
  if (metadata_log != nullptr) {
    for (size_t i = 0; i < metadata_log->size(); ++i) {
      JsonObject je((*metadata_log)[i], root.Child("metadata-log").Index(i));
      MetadataLogEntry e;
      FLOE_RETURN_NOT_OK(je.Required("timestamp-ms", &e.timestamp_ms));
      FLOE_RETURN_NOT_OK(je.Required("metadata-file", &e.metadata_file));
      md.metadata_log.push_back(std::move(e));
    }
  }

  const Json* refs = nullptr;
  FLOE_RETURN_NOT_OK(o.GetObject("refs", &refs));
  if (refs != nullptr) {
    JsonPath rat = root.Child("refs");
    for (auto it = refs->begin(); it != refs->end(); ++it) {
      JsonPath at = rat.Child(it.key());
      FLOE_ASSIGN_OR_RAISE(SnapshotRef ref, SnapshotRefFromJsonValue(it.value(), at));
      if (md.FindSnapshot(ref.snapshot_id) == nullptr) {
        return at.Child("snapshot-id")
            .Error("snapshot " + std::to_string(ref.snapshot_id) + " is not in 'snapshots'");
      }
      md.refs[it.key()] = ref;
    }
  }
  for (const auto& [key, out] : {std::pair{"statistics", &md.statistics},
                                 std::pair{"partition-statistics", &md.partition_statistics}}) {
    const Json* files = nullptr;
    FLOE_RETURN_NOT_OK(o.GetArray(key, &files));
    if (files != nullptr) {
      FLOE_ASSIGN_OR_RAISE(
          *out, KeptFromJsonValue<StatisticsFile>(*files, root.Child(key), ReadStatisticsFile));
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
  return DumpJson(SnapshotToJsonValue(snapshot));
}

std::string SnapshotRefToJson(const SnapshotRef& ref) {
  return DumpJson(SnapshotRefToJsonValue(ref));
}

Result<SnapshotRef> SnapshotRefFromJson(std::string_view json, std::string_view source) {
  JsonPath at{std::string(source)};
  FLOE_ASSIGN_OR_RAISE(Json j, ParseOrderedJson(json, at));
  return SnapshotRefFromJsonValue(j, at);
}

Result<Snapshot> SnapshotFromJson(std::string_view json, std::string_view source) {
  JsonPath at{std::string(source)};
  FLOE_ASSIGN_OR_RAISE(Json j, ParseOrderedJson(json, at));
  return SnapshotFromJsonValue(j, at);
}

namespace {

// Whether a `from` column may be read as `to` (Iceberg's type promotions).
bool Widens(const DataType& from, const DataType& to) {
  if (from.id == TypeId::kInt32 && to.id == TypeId::kInt64) return true;
  if (from.id == TypeId::kFloat && to.id == TypeId::kDouble) return true;
  return from.id == TypeId::kDecimal && to.id == TypeId::kDecimal && from.scale == to.scale &&
         from.precision < to.precision;
}

}  // namespace

namespace {

// `base` with `next` as a new schema (the next schema id) made current.
TableMetadata WithCurrentSchema(const TableMetadata& base, Schema next, int32_t last_column_id) {
  TableMetadata out = base;
  int32_t highest_schema_id = 0;
  for (const Schema& s : base.schemas) highest_schema_id = std::max(highest_schema_id, s.schema_id);
  next.schema_id = highest_schema_id + 1;
  out.schemas.push_back(std::move(next));
  out.current_schema_id = highest_schema_id + 1;
  out.last_column_id = last_column_id;
  return out;
}

}  // namespace

Result<TableMetadata> EvolveSchema(const TableMetadata& base, const std::vector<Field>& declared,
                                   std::vector<std::string>* changes, bool keep_other_columns) {
  const Schema& current = base.current_schema();
  Schema next = current;
  int32_t last_column_id = std::max(base.last_column_id, current.HighestFieldId());
  std::vector<std::string> changed;
  for (const Field& d : declared) {
    auto it = std::find_if(next.fields.begin(), next.fields.end(),
                           [&](const Field& f) { return f.name == d.name; });
    if (it == next.fields.end()) {
      if (!d.nullable) {
        return Status::InvalidArgument("column '" + d.name +
                                       "' is new to the table and declared NOT NULL: a column "
                                       "added to an Iceberg v2 table is optional (declare it "
                                       "nullable)");
      }
      Field added = d;
      added.nullable = true;
      added.field_id = ++last_column_id;
      next.fields.push_back(added);
      changed.push_back("added column '" + d.name + "' " + FlinkTypeName(d.type) + " (id " +
                        std::to_string(added.field_id) + ")");
      continue;
    }
    if (it->type == d.type) continue;
    if (!Widens(it->type, d.type)) {
      return Status::InvalidArgument("column '" + d.name + "' is declared " +
                                     FlinkTypeName(d.type) + " but the table has " +
                                     FlinkTypeName(it->type) +
                                     "; Iceberg widens only INT to BIGINT, FLOAT to DOUBLE and a "
                                     "DECIMAL's precision (same scale)");
    }
    changed.push_back("widened column '" + d.name + "' " + FlinkTypeName(it->type) + " -> " +
                      FlinkTypeName(d.type));
    it->type = d.type;
  }
  for (const Field& f : current.fields) {
    const bool kept =
        keep_other_columns || std::any_of(declared.begin(), declared.end(),
                                          [&](const Field& d) { return d.name == f.name; });
    if (!kept) {
      return Status::InvalidArgument("the table has column '" + f.name +
                                     "' that the declaration lacks (columns are added, never "
                                     "dropped)");
    }
  }
  if (changed.empty()) return base;
  if (changes != nullptr) *changes = std::move(changed);
  return WithCurrentSchema(base, std::move(next), last_column_id);
}

Result<TableMetadata> AdoptWrittenSchema(const TableMetadata& base, const Schema& written,
                                         std::vector<std::string>* changes) {
  const Schema& current = base.current_schema();
  Schema next = current;
  const int32_t table_last = std::max(base.last_column_id, current.HighestFieldId());
  int32_t last_column_id = table_last;
  std::vector<std::string> changed;
  for (const Field& w : written.fields) {
    auto it = std::find_if(next.fields.begin(), next.fields.end(),
                           [&](const Field& f) { return f.field_id == w.field_id; });
    if (it == next.fields.end()) {
      if (w.field_id <= table_last || next.FindByName(w.name) != nullptr) {
        return Status::InvalidArgument("the files were written with column '" + w.name + "' (id " +
                                       std::to_string(w.field_id) + "), but the table has " +
                                       (next.FindByName(w.name) != nullptr
                                            ? "a column of that name under another id"
                                            : "given that id out already") +
                                       ": the table's schema changed since the writer read it");
      }
      Field added = w;
      added.nullable = true;
      next.fields.push_back(added);
      last_column_id = std::max(last_column_id, w.field_id);
      changed.push_back("added column '" + w.name + "' " + FlinkTypeName(w.type) + " (id " +
                        std::to_string(w.field_id) + ")");
      continue;
    }
    if (it->name != w.name) {
      return Status::InvalidArgument("the files were written with column '" + w.name + "' as id " +
                                     std::to_string(w.field_id) + ", which the table names '" +
                                     it->name + "'");
    }
    if (it->type == w.type) continue;
    if (!Widens(it->type, w.type)) {
      return Status::InvalidArgument("the files were written with column '" + w.name + "' " +
                                     FlinkTypeName(w.type) + ", but the table has " +
                                     FlinkTypeName(it->type));
    }
    changed.push_back("widened column '" + w.name + "' " + FlinkTypeName(it->type) + " -> " +
                      FlinkTypeName(w.type));
    it->type = w.type;
  }
  if (changed.empty()) return base;
  if (changes != nullptr) *changes = std::move(changed);
  return WithCurrentSchema(base, std::move(next), last_column_id);
}

}  // namespace floe::iceberg
