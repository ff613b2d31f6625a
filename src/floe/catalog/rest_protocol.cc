#include "floe/catalog/rest_protocol.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "floe/common/json.h"

namespace floe::catalog::rest {

namespace {

using iceberg::TableMetadata;

std::optional<int64_t> RefSnapshot(const TableMetadata& m, const std::string& ref) {
  auto it = m.refs.find(ref);
  if (it == m.refs.end()) return std::nullopt;
  return it->second.snapshot_id;
}

// One requirement of a (hostile) request; its fields' errors are InvalidArgument naming them.
Status CheckRequirement(const JsonObject<Json>& r, const TableMetadata& m) {
  std::string type;
  FLOE_RETURN_NOT_OK(r.Required("type", &type));
  auto failed = [&](const std::string& what) {
    return Status::Conflict("requirement " + type + " failed: " + what);
  };
  auto int_equals = [&](const char* key, int64_t actual) -> Status {
    int64_t want = 0;
    FLOE_RETURN_NOT_OK(r.Required(key, &want));
    if (want != actual) {
      return failed(std::string(key) + " is " + std::to_string(actual) + ", not " +
                    std::to_string(want));
    }
    return Status::OK();
  };
  if (type == "assert-create") return failed("the table exists");
  if (type == "assert-table-uuid") {
    std::string uuid;
    FLOE_RETURN_NOT_OK(r.Required("uuid", &uuid));
    if (uuid != m.table_uuid) return failed("the table's uuid is " + m.table_uuid);
    return Status::OK();
  }
  if (type == "assert-ref-snapshot-id") {
    std::string ref;
    std::optional<int64_t> want;  // null: the ref must not exist
    FLOE_RETURN_NOT_OK(r.Required("ref", &ref));
    FLOE_RETURN_NOT_OK(r.Required("snapshot-id", &want));
    std::optional<int64_t> actual = RefSnapshot(m, ref);
    if (want != actual) {
      return failed("ref '" + ref + "' is at " +
                    (actual ? std::to_string(*actual) : std::string("no snapshot")) +
                    ", the client's base had " +
                    (want ? std::to_string(*want) : std::string("no snapshot")));
    }
    return Status::OK();
  }
  if (type == "assert-last-assigned-field-id") {
    return int_equals("last-assigned-field-id", m.last_column_id);
  }
  if (type == "assert-current-schema-id")
    return int_equals("current-schema-id", m.current_schema_id);
  if (type == "assert-last-assigned-partition-id") {
    return int_equals("last-assigned-partition-id", m.last_partition_id);
  }
  if (type == "assert-default-spec-id") return int_equals("default-spec-id", m.default_spec_id);
  if (type == "assert-default-sort-order-id") {
    return int_equals("default-sort-order-id", m.default_sort_order_id);
  }
  return Status::InvalidArgument("unknown requirement type '" + type + "'");
}

// The sort order of add-sort-order (spec "Sort Orders"), without its order-id (the table picks
// it): fields of a transform, a column of the current schema, asc|desc, nulls-first|nulls-last.
Result<Json> SortOrderOf(const JsonObject<Json>& u, const TableMetadata& m) {
  const Json* order = nullptr;
  FLOE_RETURN_NOT_OK(u.RequiredObject("sort-order", &order));
  JsonObject o(*order, u.at().Child("sort-order"));
  const Json* fields = nullptr;
  FLOE_RETURN_NOT_OK(o.RequiredArray("fields", &fields));
  for (size_t i = 0; i < fields->size(); ++i) {
    JsonObject f((*fields)[i], o.at().Child("fields").Index(i));
    std::string transform, direction, null_order;
    int32_t source = 0;
    FLOE_RETURN_NOT_OK(f.Required("transform", &transform));
    FLOE_RETURN_NOT_OK(f.Required("source-id", &source));
    FLOE_RETURN_NOT_OK(f.Required("direction", &direction));
    FLOE_RETURN_NOT_OK(f.Required("null-order", &null_order));
    if (m.current_schema().FindById(source) == nullptr) {
      return f.Error("source-id", std::to_string(source) + " is not a column");
    }
    if ((direction != "asc" && direction != "desc") ||
        (null_order != "nulls-first" && null_order != "nulls-last")) {
      return f.Error("direction", "expected asc|desc and nulls-first|nulls-last");
    }
  }
  Json out = *order;
  out.erase("order-id");
  return out;
}

// The updates of what a table keeps for the engines that use it (floe acts on neither):
// statistics files and sort orders. NotFound when `action` is none of them.
Status ApplyKeptUpdate(const std::string& action, const JsonObject<Json>& u, TableMetadata& m) {
  if (action == "set-statistics" || action == "set-partition-statistics") {
    const char* key = action == "set-statistics" ? "statistics" : "partition-statistics";
    const Json* file = nullptr;
    FLOE_RETURN_NOT_OK(u.RequiredObject(key, &file));
    JsonObject f(*file, u.at().Child(key));
    iceberg::StatisticsFile kept;
    FLOE_RETURN_NOT_OK(f.Required("snapshot-id", &kept.snapshot_id));
    FLOE_RETURN_NOT_OK(f.Required("statistics-path", &kept.path));
    if (m.FindSnapshot(kept.snapshot_id) == nullptr) {
      return f.Error("snapshot-id", "no snapshot " + std::to_string(kept.snapshot_id));
    }
    kept.json = DumpJson(*file);
    auto& files = action == "set-statistics" ? m.statistics : m.partition_statistics;
    std::erase_if(files, [&](const auto& x) { return x.snapshot_id == kept.snapshot_id; });
    files.push_back(std::move(kept));
    return Status::OK();
  }
  if (action == "remove-statistics" || action == "remove-partition-statistics") {
    int64_t id = 0;
    FLOE_RETURN_NOT_OK(u.Required("snapshot-id", &id));
    auto& files = action == "remove-statistics" ? m.statistics : m.partition_statistics;
    std::erase_if(files, [&](const auto& x) { return x.snapshot_id == id; });
    return Status::OK();
  }
  if (action == "add-sort-order") {
    FLOE_ASSIGN_OR_RAISE(Json order, SortOrderOf(u, m));
    // Iceberg's ids: 0 for the unsorted order, an order the table has keeps its id, else the
    // next one. The order added last goes last (set-default-sort-order -1 names it).
    const std::string fields = DumpJson(order);
    std::optional<int32_t> id;
    int32_t next = 1;
    for (auto it = m.sort_orders.begin(); it != m.sort_orders.end(); ++it) {
      next = std::max(next, it->order_id + 1);
      Json known = Json::parse(it->json, nullptr, /*allow_exceptions=*/false);
      if (known.is_object()) known.erase("order-id");
      if (DumpJson(known) == fields) {
        id = it->order_id;
        m.sort_orders.erase(it);
        break;
      }
    }
    const bool unsorted = order["fields"].empty();
    order["order-id"] = id.value_or(unsorted ? 0 : next);
    m.sort_orders.push_back({order["order-id"].get<int32_t>(), unsorted, DumpJson(order)});
    return Status::OK();
  }
  if (action == "set-default-sort-order") {
    int64_t id = 0;
    FLOE_RETURN_NOT_OK(u.Required("sort-order-id", &id));
    if (id == -1 && !m.sort_orders.empty()) id = m.sort_orders.back().order_id;  // last added
    const bool known =
        id == 0 || std::any_of(m.sort_orders.begin(), m.sort_orders.end(),
                               [&](const iceberg::SortOrder& o) { return o.order_id == id; });
    if (!known) {
      return Status::InvalidArgument("set-default-sort-order: no sort order " + std::to_string(id));
    }
    m.default_sort_order_id = static_cast<int32_t>(id);
    return Status::OK();
  }
  return Status::NotFound(action);
}

// Stays long: one short branch per REST update action, in the spec's order, read as a table.
Status ApplyUpdate(const JsonObject<Json>& u, TableMetadata& m) {
  std::string action;
  FLOE_RETURN_NOT_OK(u.Required("action", &action));
  if (action == "add-snapshot") {
    const Json* s = nullptr;
    FLOE_RETURN_NOT_OK(u.RequiredObject("snapshot", &s));
    Result<iceberg::Snapshot> parsed = iceberg::SnapshotFromJson(DumpJson(*s), "add-snapshot");
    if (!parsed.ok()) return Status::InvalidArgument(parsed.status().message());
    iceberg::Snapshot snapshot = std::move(parsed).value();
    if (m.FindSnapshot(snapshot.snapshot_id) != nullptr) {
      return Status::InvalidArgument("add-snapshot: snapshot " +
                                     std::to_string(snapshot.snapshot_id) + " already exists");
    }
    if (snapshot.sequence_number <= m.last_sequence_number && m.format_version >= 2) {
      return Status::InvalidArgument(
          "add-snapshot: sequence number " + std::to_string(snapshot.sequence_number) +
          " is not above the table's last " + std::to_string(m.last_sequence_number));
    }
    m.last_sequence_number = snapshot.sequence_number;
    m.snapshots.push_back(std::move(snapshot));
    return Status::OK();
  }
  if (action == "set-snapshot-ref") {
    std::string name, type;
    int64_t id = 0;
    FLOE_RETURN_NOT_OK(u.Required("ref-name", &name));
    FLOE_RETURN_NOT_OK(u.Required("type", &type));
    FLOE_RETURN_NOT_OK(u.Required("snapshot-id", &id));
    if (type != "branch" && type != "tag") {
      return Status::InvalidArgument("set-snapshot-ref: type '" + type + "' (branch or tag)");
    }
    const iceberg::Snapshot* s = m.FindSnapshot(id);
    if (s == nullptr) {
      return Status::InvalidArgument("set-snapshot-ref: no snapshot " + std::to_string(id));
    }
    if (name == "main") {
      if (type != "branch") return Status::InvalidArgument("set-snapshot-ref: main is a branch");
      if (m.current_snapshot_id != id) m.snapshot_log.push_back({s->timestamp_ms, id});
      m.current_snapshot_id = id;
    }
    // The ref with its retention, read as the metadata's refs are.
    Result<iceberg::SnapshotRef> ref =
        iceberg::SnapshotRefFromJson(DumpJson(u.value()), "set-snapshot-ref");
    if (!ref.ok()) return Status::InvalidArgument(ref.status().message());
    m.refs[name] = std::move(ref).value();
    return Status::OK();
  }
  if (action == "remove-snapshot-ref") {
    std::string name;
    FLOE_RETURN_NOT_OK(u.Required("ref-name", &name));
    m.refs.erase(name);
    if (name == "main") m.current_snapshot_id.reset();
    return Status::OK();
  }
  if (action == "remove-snapshots") {
    std::vector<int64_t> ids;
    FLOE_RETURN_NOT_OK(u.Required("snapshot-ids", &ids));
    std::set<int64_t> gone(ids.begin(), ids.end());
    for (const auto& [name, ref] : m.refs) {
      if (gone.count(ref.snapshot_id)) {
        return Status::InvalidArgument("remove-snapshots: snapshot " +
                                       std::to_string(ref.snapshot_id) + " is ref '" + name + "'");
      }
    }
    m.RemoveSnapshots(ids);
    return Status::OK();
  }
  if (action == "set-properties") {
    std::map<std::string, std::string> updates;
    FLOE_RETURN_NOT_OK(u.Required("updates", &updates));
    for (auto& [key, value] : updates) m.properties[key] = std::move(value);
    return Status::OK();
  }
  if (action == "remove-properties") {
    std::vector<std::string> removals;
    FLOE_RETURN_NOT_OK(u.Required("removals", &removals));
    for (const std::string& key : removals) m.properties.erase(key);
    return Status::OK();
  }
  if (action == "assign-uuid") {
    std::string uuid;
    FLOE_RETURN_NOT_OK(u.Required("uuid", &uuid));
    if (uuid != m.table_uuid) return Status::InvalidArgument("assign-uuid: the uuid is fixed");
    return Status::OK();
  }
  if (action == "upgrade-format-version") {
    int64_t version = 0;
    FLOE_RETURN_NOT_OK(u.Required("format-version", &version));
    if (version != m.format_version) {
      return Status::InvalidArgument("upgrade-format-version: floe's catalog keeps format " +
                                     std::to_string(m.format_version) + " tables");
    }
    return Status::OK();
  }
  if (action == "add-schema") {
    const Json* s = nullptr;
    FLOE_RETURN_NOT_OK(u.RequiredObject("schema", &s));
    Result<iceberg::Schema> parsed = iceberg::SchemaFromJson(DumpJson(*s));
    if (!parsed.ok()) return Status::InvalidArgument("add-schema: " + parsed.status().message());
    for (const iceberg::Schema& known : m.schemas) {
      if (known.schema_id == parsed->schema_id) {
        return Status::InvalidArgument("add-schema: schema " + std::to_string(known.schema_id) +
                                       " already exists");
      }
    }
    // 'last-column-id' is deprecated in the spec: the schema's own highest id is the floor.
    int64_t last = std::max<int64_t>(m.last_column_id, parsed->HighestFieldId());
    if (u.Has("last-column-id")) {
      FLOE_RETURN_NOT_OK(u.Required("last-column-id", &last));
      if (last < m.last_column_id || last < parsed->HighestFieldId()) {
        return Status::InvalidArgument("add-schema: last-column-id " + std::to_string(last) +
                                       " is below an assigned field id");
      }
    }
    m.last_column_id = static_cast<int32_t>(last);
    m.schemas.push_back(std::move(parsed).value());
    return Status::OK();
  }
  if (action == "set-current-schema") {
    int64_t id = 0;
    FLOE_RETURN_NOT_OK(u.Required("schema-id", &id));
    if (id == -1 && !m.schemas.empty()) id = m.schemas.back().schema_id;  // the last added
    const bool known = std::any_of(m.schemas.begin(), m.schemas.end(),
                                   [&](const iceberg::Schema& s) { return s.schema_id == id; });
    if (!known) {
      return Status::InvalidArgument("set-current-schema: no schema " + std::to_string(id));
    }
    m.current_schema_id = static_cast<int32_t>(id);
    return Status::OK();
  }
  if (Status kept = ApplyKeptUpdate(action, u, m); !kept.IsNotFound()) return kept;
  static const std::set<std::string> kKnownButUnsupported = {"add-spec",
                                                             "set-default-spec",
                                                             "set-location",
                                                             "remove-partition-specs",
                                                             "remove-schemas",
                                                             "add-encryption-key",
                                                             "remove-encryption-key",
                                                             "add-view-version",
                                                             "set-current-view-version"};
  if (kKnownButUnsupported.count(action)) {
    return Status::InvalidArgument("update '" + action +
                                   "' is not supported by floe's catalog server (tables keep "
                                   "their schema, partition spec and location)");
  }
  return Status::InvalidArgument("unknown update action '" + action + "'");
}

}  // namespace

Result<std::string> CommitRequest(const iceberg::TableIdentifier& id,
                                  const iceberg::LoadedTable& base,
                                  const iceberg::TableMetadata& updated) {
  const TableMetadata& b = base.metadata;
  // Schemas may only be appended (schema evolution adds one and makes it current).
  const bool schemas_appended =
      updated.schemas.size() >= b.schemas.size() &&
      std::equal(b.schemas.begin(), b.schemas.end(), updated.schemas.begin());
  if (!schemas_appended || updated.partition_specs != b.partition_specs ||
      updated.default_spec_id != b.default_spec_id || updated.location != b.location ||
      updated.format_version != b.format_version || updated.table_uuid != b.table_uuid) {
    return Status::NotImplemented(
        "committing schema changes other than an added schema, partition spec, location or "
        "format changes through a REST catalog");
  }
  Json requirements = Json::array();
  requirements.push_back({{"type", "assert-table-uuid"}, {"uuid", b.table_uuid}});
  Json updates = Json::array();
  if (updated.schemas.size() > b.schemas.size() ||
      updated.current_schema_id != b.current_schema_id) {
    requirements.push_back(
        {{"type", "assert-current-schema-id"}, {"current-schema-id", b.current_schema_id}});
    requirements.push_back(
        {{"type", "assert-last-assigned-field-id"}, {"last-assigned-field-id", b.last_column_id}});
    for (size_t i = b.schemas.size(); i < updated.schemas.size(); ++i) {
      FLOE_ASSIGN_OR_RAISE(
          Json schema, ParseJson(iceberg::SchemaToJson(updated.schemas[i]), JsonPath("schema")));
      updates.push_back({{"action", "add-schema"},
                         {"schema", std::move(schema)},
                         {"last-column-id", updated.last_column_id}});
    }
    if (updated.current_schema_id != b.current_schema_id) {
      updates.push_back(
          {{"action", "set-current-schema"}, {"schema-id", updated.current_schema_id}});
    }
  }
  std::set<std::string> refs = {"main"};
  for (const auto& [name, ref] : b.refs) {
    auto it = updated.refs.find(name);
    if (it == updated.refs.end() || it->second != ref) refs.insert(name);
  }
  for (const auto& [name, ref] : updated.refs) {
    if (!b.refs.count(name)) refs.insert(name);
  }
  for (const std::string& name : refs) {
    std::optional<int64_t> at = RefSnapshot(b, name);
    requirements.push_back({{"type", "assert-ref-snapshot-id"},
                            {"ref", name},
                            {"snapshot-id", at ? Json(*at) : Json(nullptr)}});
  }

  Json set = Json::object();
  Json removed = Json::array();
  for (const auto& [key, value] : updated.properties) {
    auto it = b.properties.find(key);
    if (it == b.properties.end() || it->second != value) set[key] = value;
  }
  for (const auto& [key, value] : b.properties) {
    if (!updated.properties.count(key)) removed.push_back(key);
  }
  if (!set.empty()) updates.push_back({{"action", "set-properties"}, {"updates", set}});
  if (!removed.empty()) updates.push_back({{"action", "remove-properties"}, {"removals", removed}});
  for (const iceberg::Snapshot& s : updated.snapshots) {
    if (b.FindSnapshot(s.snapshot_id) != nullptr) continue;
    FLOE_ASSIGN_OR_RAISE(Json snapshot,
                         ParseJson(iceberg::SnapshotToJson(s), JsonPath("snapshot")));
    updates.push_back({{"action", "add-snapshot"}, {"snapshot", std::move(snapshot)}});
  }
  for (const std::string& name : refs) {
    auto it = updated.refs.find(name);
    if (it == updated.refs.end()) {
      if (b.refs.count(name))
        updates.push_back({{"action", "remove-snapshot-ref"}, {"ref-name", name}});
    } else if (RefSnapshot(b, name) != it->second.snapshot_id) {
      // Iceberg's SetSnapshotRef replaces the ref whole: its retention goes along.
      FLOE_ASSIGN_OR_RAISE(Json set_ref,
                           ParseJson(iceberg::SnapshotRefToJson(it->second), JsonPath("ref")));
      set_ref["action"] = "set-snapshot-ref";
      set_ref["ref-name"] = name;
      updates.push_back(std::move(set_ref));
    }
  }
  Json gone = Json::array();
  for (const iceberg::Snapshot& s : b.snapshots) {
    if (updated.FindSnapshot(s.snapshot_id) == nullptr) gone.push_back(s.snapshot_id);
  }
  if (!gone.empty()) updates.push_back({{"action", "remove-snapshots"}, {"snapshot-ids", gone}});
  Json request = {{"identifier", {{"namespace", Json::array({id.ns})}, {"name", id.name}}},
                  {"requirements", std::move(requirements)},
                  {"updates", std::move(updates)}};
  return DumpJson(request);
}

Status CheckProperties(const std::map<std::string, std::string>& properties, size_t max_value_bytes,
                       std::string_view where) {
  if (properties.size() > kMaxPropertiesPerRequest) {
    return Status::InvalidArgument(std::string(where) + ": " + std::to_string(properties.size()) +
                                   " properties; at most " +
                                   std::to_string(kMaxPropertiesPerRequest) + " a request");
  }
  for (const auto& [key, value] : properties) {
    if (key.empty() || key.size() > kMaxPropertyKeyBytes) {
      return Status::InvalidArgument(std::string(where) + ": a property key of " +
                                     std::to_string(key.size()) + " bytes; keys have 1 to " +
                                     std::to_string(kMaxPropertyKeyBytes));
    }
    if (value.size() > max_value_bytes) {
      return Status::InvalidArgument(std::string(where) + ": property '" + key + "' has " +
                                     std::to_string(value.size()) + " bytes; at most " +
                                     std::to_string(max_value_bytes));
    }
  }
  return Status::OK();
}

namespace {

// How many properties (set or removed) and snapshot ids one update names; only counted here,
// checked fully when applied.
void CountUpdate(const Json& update, size_t* properties, size_t* snapshots) {
  if (!update.is_object()) return;
  for (const char* key : {"updates", "removals"}) {
    auto it = update.find(key);
    if (it != update.end() && (it->is_object() || it->is_array())) *properties += it->size();
  }
  auto ids = update.find("snapshot-ids");
  if (ids != update.end() && ids->is_array()) *snapshots += ids->size();
}

// Property keys and values of set-properties updates, within the bounds.
Status CheckSetProperties(const Json& update, const JsonPath& at) {
  if (!update.is_object()) return Status::OK();
  auto action = update.find("action");
  if (action == update.end() || *action != "set-properties") return Status::OK();
  std::map<std::string, std::string> updates;
  FLOE_RETURN_NOT_OK(JsonObject(update, at).Required("updates", &updates));
  Status st = CheckProperties(updates, kMaxPropertyValueBytes, "set-properties");
  return st.ok() ? st : at.Child("updates").Error(st.message());
}

}  // namespace

Result<Json> ParseCommitRequest(std::string_view body) {
  JsonPath at("commit request", StatusCode::kInvalidArgument);
  FLOE_ASSIGN_OR_RAISE(Json request, ParseJson(body, at));
  JsonObject o(request, at);
  const Json* requirements = nullptr;
  const Json* updates = nullptr;
  FLOE_RETURN_NOT_OK(o.RequiredArray("requirements", &requirements));
  FLOE_RETURN_NOT_OK(o.RequiredArray("updates", &updates));
  auto over = [](const char* what, size_t n, size_t limit) {
    return Status::InvalidArgument("commit request: " + std::to_string(n) + " " + what +
                                   "; at most " + std::to_string(limit) + " a commit");
  };
  if (requirements->size() > kMaxCommitRequirements) {
    return over("requirements", requirements->size(), kMaxCommitRequirements);
  }
  if (updates->size() > kMaxCommitUpdates) {
    return over("updates", updates->size(), kMaxCommitUpdates);
  }
  size_t properties = 0, snapshots = 0;
  for (size_t i = 0; i < updates->size(); ++i) {
    CountUpdate((*updates)[i], &properties, &snapshots);
    FLOE_RETURN_NOT_OK(CheckSetProperties((*updates)[i], at.Child("updates").Index(i)));
  }
  if (properties > kMaxPropertiesPerRequest) {
    return over("properties set or removed", properties, kMaxPropertiesPerRequest);
  }
  if (snapshots > kMaxRemovedSnapshots) {
    return over("snapshots removed", snapshots, kMaxRemovedSnapshots);
  }
  return request;
}

Result<TableMetadata> ApplyCommitRequest(std::string_view body,
                                         const iceberg::LoadedTable& current) {
  FLOE_ASSIGN_OR_RAISE(Json request, ParseCommitRequest(body));
  return ApplyCommitRequest(request, current);
}

Result<TableMetadata> ApplyCommitRequest(const Json& request, const iceberg::LoadedTable& current) {
  JsonPath at("commit request", StatusCode::kInvalidArgument);
  JsonObject o(request, at);
  const Json* requirements = nullptr;
  const Json* updates = nullptr;
  FLOE_RETURN_NOT_OK(o.RequiredArray("requirements", &requirements));
  FLOE_RETURN_NOT_OK(o.RequiredArray("updates", &updates));
  // Unknown requirement types are refused before any is judged (a 400, never a 409 the client
  // would retry); updates are applied only once every requirement holds, since a stale base's
  // snapshot would fail their checks with a 400 where the answer is a 409.
  Status conflict = Status::OK();
  for (size_t i = 0; i < requirements->size(); ++i) {
    JsonObject r((*requirements)[i], at.Child("requirements").Index(i));
    Status st = CheckRequirement(r, current.metadata);
    if (st.IsConflict()) {
      if (conflict.ok()) conflict = st;
      continue;
    }
    FLOE_RETURN_NOT_OK(st);
  }
  FLOE_RETURN_NOT_OK(conflict);
  TableMetadata updated = current.metadata;
  for (size_t i = 0; i < updates->size(); ++i) {
    FLOE_RETURN_NOT_OK(
        ApplyUpdate(JsonObject((*updates)[i], at.Child("updates").Index(i)), updated));
  }
  // Writing the metadata grows faster than linearly with the properties (50,000 took 9 s), so
  // a table may not grow past the bound; one that is past it already may still shrink.
  const size_t before = current.metadata.properties.size();
  const size_t after = updated.properties.size();
  if (after > kMaxTableProperties && after > before) {
    return Status::InvalidArgument("commit request: the table would have " + std::to_string(after) +
                                   " properties; a table keeps at most " +
                                   std::to_string(kMaxTableProperties));
  }
  return updated;
}

std::string LoadTableResult(const iceberg::LoadedTable& table) {
  return "{\"metadata-location\":" + DumpJson(Json(iceberg::PathToUri(table.metadata_location))) +
         ",\"metadata\":" + iceberg::TableMetadataToJson(table.metadata) + ",\"config\":{}}";
}

std::string ETagOf(const iceberg::LoadedTable& table) {
  std::string location = table.metadata_location;
  return "\"" + location.substr(location.rfind('/') + 1) + "\"";
}

std::string ErrorResponse(int code, std::string_view type, std::string_view message) {
  Json j = {{"error", {{"message", message}, {"type", type}, {"code", code}}}};
  return DumpJson(j);
}

}  // namespace floe::catalog::rest
