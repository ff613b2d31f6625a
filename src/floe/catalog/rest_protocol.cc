#include "floe/catalog/rest_protocol.h"

#include <set>

#include <nlohmann/json.hpp>

namespace floe::catalog::rest {

namespace {

using iceberg::TableMetadata;
using nlohmann::json;

std::optional<int64_t> RefSnapshot(const TableMetadata& m, const std::string& ref) {
  auto it = m.refs.find(ref);
  if (it == m.refs.end()) return std::nullopt;
  return it->second.snapshot_id;
}

Status Malformed(const std::string& what) {
  return Status::InvalidArgument("malformed commit request: " + what);
}

// Type-checked members of a hostile JSON object.
Result<const json*> Member(const json& obj, const char* key, const char* where) {
  auto it = obj.find(key);
  if (it == obj.end()) return Malformed(std::string(where) + " has no '" + key + "'");
  return &*it;
}
Result<std::string> StringMember(const json& obj, const char* key, const char* where) {
  FLOE_ASSIGN_OR_RAISE(const json* v, Member(obj, key, where));
  if (!v->is_string()) return Malformed(std::string(where) + " '" + key + "' is not a string");
  return v->get<std::string>();
}
Result<int64_t> IntMember(const json& obj, const char* key, const char* where) {
  FLOE_ASSIGN_OR_RAISE(const json* v, Member(obj, key, where));
  if (!v->is_number_integer()) {
    return Malformed(std::string(where) + " '" + key + "' is not an integer");
  }
  return v->get<int64_t>();
}

Status CheckRequirement(const json& r, const TableMetadata& m) {
  if (!r.is_object()) return Malformed("a requirement is not an object");
  FLOE_ASSIGN_OR_RAISE(std::string type, StringMember(r, "type", "requirement"));
  auto failed = [&](const std::string& what) {
    return Status::Conflict("requirement " + type + " failed: " + what);
  };
  auto int_equals = [&](const char* key, int64_t actual) -> Status {
    FLOE_ASSIGN_OR_RAISE(int64_t want, IntMember(r, key, type.c_str()));
    if (want != actual) {
      return failed(std::string(key) + " is " + std::to_string(actual) + ", not " +
                    std::to_string(want));
    }
    return Status::OK();
  };
  if (type == "assert-create") return failed("the table exists");
  if (type == "assert-table-uuid") {
    FLOE_ASSIGN_OR_RAISE(std::string uuid, StringMember(r, "uuid", "assert-table-uuid"));
    if (uuid != m.table_uuid) return failed("the table's uuid is " + m.table_uuid);
    return Status::OK();
  }
  if (type == "assert-ref-snapshot-id") {
    FLOE_ASSIGN_OR_RAISE(std::string ref, StringMember(r, "ref", "assert-ref-snapshot-id"));
    FLOE_ASSIGN_OR_RAISE(const json* id, Member(r, "snapshot-id", "assert-ref-snapshot-id"));
    if (!id->is_null() && !id->is_number_integer()) {
      return Malformed("assert-ref-snapshot-id 'snapshot-id' is not an integer or null");
    }
    std::optional<int64_t> want;
    if (!id->is_null()) want = id->get<int64_t>();
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

// Stays long: one short branch per REST update action, in the spec's order, read as a table.
Status ApplyUpdate(const json& u, TableMetadata& m) {
  if (!u.is_object()) return Malformed("an update is not an object");
  FLOE_ASSIGN_OR_RAISE(std::string action, StringMember(u, "action", "update"));
  const char* where = action.c_str();
  if (action == "add-snapshot") {
    FLOE_ASSIGN_OR_RAISE(const json* s, Member(u, "snapshot", where));
    Result<iceberg::Snapshot> parsed = iceberg::SnapshotFromJson(s->dump(), "add-snapshot");
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
    FLOE_ASSIGN_OR_RAISE(std::string name, StringMember(u, "ref-name", where));
    FLOE_ASSIGN_OR_RAISE(std::string type, StringMember(u, "type", where));
    FLOE_ASSIGN_OR_RAISE(int64_t id, IntMember(u, "snapshot-id", where));
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
    m.refs[name] = iceberg::SnapshotRef{id, type};
    return Status::OK();
  }
  if (action == "remove-snapshot-ref") {
    FLOE_ASSIGN_OR_RAISE(std::string name, StringMember(u, "ref-name", where));
    m.refs.erase(name);
    if (name == "main") m.current_snapshot_id.reset();
    return Status::OK();
  }
  if (action == "remove-snapshots") {
    FLOE_ASSIGN_OR_RAISE(const json* ids, Member(u, "snapshot-ids", where));
    if (!ids->is_array()) return Malformed("remove-snapshots 'snapshot-ids' is not an array");
    std::set<int64_t> gone;
    for (const json& id : *ids) {
      if (!id.is_number_integer()) return Malformed("remove-snapshots: an id is not an integer");
      gone.insert(id.get<int64_t>());
    }
    for (const auto& [name, ref] : m.refs) {
      if (gone.count(ref.snapshot_id)) {
        return Status::InvalidArgument("remove-snapshots: snapshot " +
                                       std::to_string(ref.snapshot_id) + " is ref '" + name + "'");
      }
    }
    std::erase_if(m.snapshots,
                  [&](const iceberg::Snapshot& s) { return gone.count(s.snapshot_id); });
    std::erase_if(m.snapshot_log,
                  [&](const iceberg::SnapshotLogEntry& e) { return gone.count(e.snapshot_id); });
    return Status::OK();
  }
  if (action == "set-properties") {
    FLOE_ASSIGN_OR_RAISE(const json* updates, Member(u, "updates", where));
    if (!updates->is_object()) return Malformed("set-properties 'updates' is not an object");
    for (auto it = updates->begin(); it != updates->end(); ++it) {
      if (!it.value().is_string()) return Malformed("set-properties: a value is not a string");
      m.properties[it.key()] = it.value().get<std::string>();
    }
    return Status::OK();
  }
  if (action == "remove-properties") {
    FLOE_ASSIGN_OR_RAISE(const json* removals, Member(u, "removals", where));
    if (!removals->is_array()) return Malformed("remove-properties 'removals' is not an array");
    for (const json& key : *removals) {
      if (!key.is_string()) return Malformed("remove-properties: a key is not a string");
      m.properties.erase(key.get<std::string>());
    }
    return Status::OK();
  }
  if (action == "assign-uuid") {
    FLOE_ASSIGN_OR_RAISE(std::string uuid, StringMember(u, "uuid", where));
    if (uuid != m.table_uuid) return Status::InvalidArgument("assign-uuid: the uuid is fixed");
    return Status::OK();
  }
  if (action == "upgrade-format-version") {
    FLOE_ASSIGN_OR_RAISE(int64_t version, IntMember(u, "format-version", where));
    if (version != m.format_version) {
      return Status::InvalidArgument("upgrade-format-version: floe's catalog keeps format " +
                                     std::to_string(m.format_version) + " tables");
    }
    return Status::OK();
  }
  static const std::set<std::string> kKnownButUnsupported = {"add-schema",
                                                             "set-current-schema",
                                                             "add-spec",
                                                             "set-default-spec",
                                                             "add-sort-order",
                                                             "set-default-sort-order",
                                                             "set-location",
                                                             "set-statistics",
                                                             "remove-statistics",
                                                             "set-partition-statistics",
                                                             "remove-partition-statistics",
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
  if (updated.schemas != b.schemas || updated.current_schema_id != b.current_schema_id ||
      updated.partition_specs != b.partition_specs ||
      updated.default_spec_id != b.default_spec_id || updated.location != b.location ||
      updated.format_version != b.format_version || updated.table_uuid != b.table_uuid) {
    return Status::NotImplemented(
        "committing schema, partition spec, location or format changes through a REST catalog");
  }
  json requirements = json::array();
  requirements.push_back({{"type", "assert-table-uuid"}, {"uuid", b.table_uuid}});
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
                            {"snapshot-id", at ? json(*at) : json(nullptr)}});
  }

  json updates = json::array();
  json set = json::object();
  json removed = json::array();
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
    json snapshot = json::parse(iceberg::SnapshotToJson(s), nullptr, /*allow_exceptions=*/false);
    updates.push_back({{"action", "add-snapshot"}, {"snapshot", std::move(snapshot)}});
  }
  for (const std::string& name : refs) {
    auto it = updated.refs.find(name);
    if (it == updated.refs.end()) {
      if (b.refs.count(name))
        updates.push_back({{"action", "remove-snapshot-ref"}, {"ref-name", name}});
    } else if (RefSnapshot(b, name) != it->second.snapshot_id) {
      updates.push_back({{"action", "set-snapshot-ref"},
                         {"ref-name", name},
                         {"type", it->second.type},
                         {"snapshot-id", it->second.snapshot_id}});
    }
  }
  json gone = json::array();
  for (const iceberg::Snapshot& s : b.snapshots) {
    if (updated.FindSnapshot(s.snapshot_id) == nullptr) gone.push_back(s.snapshot_id);
  }
  if (!gone.empty()) updates.push_back({{"action", "remove-snapshots"}, {"snapshot-ids", gone}});
  json request = {{"identifier", {{"namespace", json::array({id.ns})}, {"name", id.name}}},
                  {"requirements", std::move(requirements)},
                  {"updates", std::move(updates)}};
  return request.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<TableMetadata> ApplyCommitRequest(std::string_view body,
                                         const iceberg::LoadedTable& current) {
  json request = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object()) return Malformed("not a JSON object");
  FLOE_ASSIGN_OR_RAISE(const json* requirements, Member(request, "requirements", "the request"));
  FLOE_ASSIGN_OR_RAISE(const json* updates, Member(request, "updates", "the request"));
  if (!requirements->is_array() || !updates->is_array()) {
    return Malformed("'requirements' and 'updates' must be arrays");
  }
  // Unknown requirement types are refused before any is judged (a 400, never a 409 the client
  // would retry); updates are applied only once every requirement holds, since a stale base's
  // snapshot would fail their checks with a 400 where the answer is a 409.
  Status conflict = Status::OK();
  for (const json& r : *requirements) {
    Status st = CheckRequirement(r, current.metadata);
    if (st.IsConflict()) {
      if (conflict.ok()) conflict = st;
      continue;
    }
    FLOE_RETURN_NOT_OK(st);
  }
  FLOE_RETURN_NOT_OK(conflict);
  TableMetadata updated = current.metadata;
  for (const json& u : *updates) FLOE_RETURN_NOT_OK(ApplyUpdate(u, updated));
  return updated;
}

std::string LoadTableResult(const iceberg::LoadedTable& table) {
  return "{\"metadata-location\":" +
         json(iceberg::PathToUri(table.metadata_location))
             .dump(-1, ' ', false, json::error_handler_t::replace) +
         ",\"metadata\":" + iceberg::TableMetadataToJson(table.metadata) + ",\"config\":{}}";
}

std::string ETagOf(const iceberg::LoadedTable& table) {
  std::string location = table.metadata_location;
  return "\"" + location.substr(location.rfind('/') + 1) + "\"";
}

std::string ErrorResponse(int code, std::string_view type, std::string_view message) {
  json j = {{"error", {{"message", message}, {"type", type}, {"code", code}}}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace floe::catalog::rest
