#pragma once

// Connectors by name: what the planner looks up for a table's 'connector' option. Each
// connector's folder defines one Connector (roster/, filesystem/, kafka/, print/, iceberg/);
// registry.cc lists them. Adding a connector touches its own folder and that one list.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/runtime/checkpoint.h"
#include "floe/runtime/job_graph.h"

namespace floe::connectors {

// What the planner hands a connector to add a source vertex.
struct SourceRequest {
  runtime::JobGraph* graph = nullptr;
  std::string vertex_name;  // stable: it keys checkpoint state and table positions
  const TableDescriptor* table = nullptr;
  const JobContext* context = nullptr;
};

// What the planner hands a connector to add a sink after `input`.
struct SinkRequest {
  runtime::JobGraph* graph = nullptr;
  runtime::VertexId input{};
  std::string vertex_name;
  const TableDescriptor* table = nullptr;
  const JobContext* context = nullptr;
  // What the sink's input reads: "<source task>=<connector>(<identity options>)" (see
  // Connector::identity_options). A committing sink records a fingerprint of it with its
  // commits, so a different pipeline that shares its sink id is told apart from a restart.
  std::string upstream;
  // The input is a changelog: batches carry runtime::kRowKindColumn after the table's columns.
  bool changelog_input = false;
  // The input carries runtime::kUndeclaredFieldsColumn after the table's columns.
  bool undeclared_input = false;
};

// Before a run starts, a sink that commits to an external system compares it with the
// checkpoint the run restores (nullopt: none) and may ask sources to start elsewhere.
using SinkRestorePlanner = std::function<Result<SinkRestorePlan>(
    const std::optional<runtime::CompletedCheckpoint>& restored, StaleRestorePolicy policy,
    bool has_keyed_state)>;

// What adding a sink leaves for the run: its identity and, for committing sinks, the restore
// check (empty for print, blackhole and Kafka).
struct AddedSink {
  std::string sink_id;
  SinkRestorePlanner plan_restore;
  // Something only one sink of a job may use (an exactly-once Kafka sink's transactional id
  // prefix: two would fence each other's transactions); "" = nothing.
  std::string exclusive;
};

// One connector. A function left empty means the connector cannot play that role.
struct Connector {
  std::string name;
  // The WITH options it reads, exactly or as prefixes ending in '.' (for docs and messages;
  // each connector refuses unknown options itself, with the table named).
  std::vector<std::string> options;
  // For a source: the options that say WHAT it reads (topic, path, seed), as opposed to how
  // (rates, parallelism, addresses). A job that changes one of them reads another stream.
  std::vector<std::string> identity_options;
  std::function<Result<runtime::VertexId>(const SourceRequest&)> add_source;
  // Whether a table of this connector, read as a source, emits a changelog (updates, deletes).
  std::function<bool(const TableDescriptor&)> emits_changelog;
  // A source that makes the table's WATERMARK itself (per split, like Kafka's per-partition
  // watermarks); otherwise the planner puts a watermark assigner after it.
  bool generates_watermarks = false;
  std::function<Result<AddedSink>(const SinkRequest&)> add_sink;
  // OK when the sink table can apply a changelog; InvalidArgument saying why not (and what to
  // change) otherwise. Empty: the sink accepts inserts only.
  std::function<Status(const TableDescriptor&)> accepts_changelog;
  // Whether the connector honours PARTITIONED BY (...); the planner refuses it otherwise.
  bool partitioned_by = false;
  // The metadata keys its source gives (METADATA columns) and the SQL type each has (what a
  // column must declare); the planner refuses other keys, and any metadata column on a sink.
  std::vector<std::pair<std::string, std::string>> source_metadata;
  // Schema evolution by the records (docs/connectors.md, "Schema evolution"): whether its source
  // can carry a table's undeclared fields (TableDescriptor::undeclared_fields) ...
  std::function<bool(const TableDescriptor&)> gives_undeclared_fields;
  // ... and whether its sink table grows by them. The planner joins the two for an INSERT that
  // copies every column (SELECT *) with nothing computed in between.
  std::function<bool(const TableDescriptor&)> takes_undeclared_fields;
};

class ConnectorRegistry {
 public:
  // AlreadyExists for a second connector of the same name.
  Status Register(Connector connector);
  // nullptr when no connector has that name.
  const Connector* Find(std::string_view name) const;
  // "'a', 'b', 'c'" (sorted): every name, or the sources' / sinks' only.
  std::string Names() const;
  std::string SourceNames() const;
  std::string SinkNames() const;
  std::string ChangelogSinkNames() const;

 private:
  std::string NamesWhere(bool (*keep)(const Connector&)) const;

  std::vector<Connector> connectors_;
};

// The connectors built into floe (roster, filesystem, kafka, print, blackhole, iceberg).
const ConnectorRegistry& BuiltinConnectors();

}  // namespace floe::connectors
