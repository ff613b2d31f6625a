#include "floe/connectors/iceberg/iceberg_sink.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/common/log.h"
#include "floe/common/mutex.h"
#include "floe/connectors/connector_options.h"
#include "floe/connectors/iceberg/iceberg_committer_operator.h"
#include "floe/connectors/iceberg/iceberg_sink_internal.h"
#include "floe/connectors/iceberg/iceberg_writer_operator.h"
#include "floe/connectors/iceberg/routed_sink.h"
#include "floe/iceberg/data_file_codec.h"
#include "floe/iceberg/partition_positions.h"
#include "floe/iceberg/partition_spec.h"
#include "floe/iceberg/schema.h"
#include "floe/iceberg/table_properties.h"
#include "floe/io/file.h"
#include "floe/runtime/checkpoint_config.h"

namespace floe::connectors {

namespace internal {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string OptionOr(const TableDescriptor& t, const std::string& key, const std::string& def) {
  auto it = t.options.find(key);
  return it == t.options.end() ? def : it->second;
}

bool ParseU64(std::string_view s, uint64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// Options the sink understands besides the table properties it passes through (the write.*,
// commit.*, read.* and history.* keys Iceberg defines, iceberg/table_properties.h).
const std::set<std::string>& KnownOptions() {
  static const std::set<std::string> kKnown = {"connector",
                                               "catalog-database",
                                               "catalog-table",
                                               "format-version",
                                               "sink.parallelism",
                                               "sink-id",
                                               "partition-by",
                                               "write.upsert.enabled",
                                               std::string(kAllowUnknownProperties),
                                               std::string(kUnavailableTimeout),
                                               std::string(kSchemaEvolution)};
  static const std::set<std::string> kWithCatalog = [] {
    std::set<std::string> all = kKnown;
    for (const std::string& key : catalog::CatalogOptionKeys()) all.insert(key);
    return all;
  }();
  return kWithCatalog;
}

constexpr uint32_t kWriterFilesVersion = 4;

}  // namespace

std::shared_ptr<const BatchSchema> WriterFilesSchema() {
  static const std::shared_ptr<const BatchSchema> kSchema = [] {
    auto s = std::make_shared<BatchSchema>();
    s->fields.push_back(Field{"floe_iceberg_files", DataType::Binary(), false, 0});
    return s;
  }();
  return kSchema;
}

RecordBatch EncodeWriterFiles(const WriterFiles& files) {
  runtime::StateWriter w;
  w.PutU32(kWriterFilesVersion);
  w.PutU64(files.checkpoint.value);
  w.PutString(files.writer_task);
  w.PutString(files.split);
  w.PutString(files.table);
  w.PutString(files.written_schema);
  iceberg::EncodeDataFiles(files.data_files, w);
  iceberg::EncodeDataFiles(files.delete_files, w);
  RecordBatch batch(WriterFilesSchema());
  batch.mutable_column(0).AppendBytes(w.data());
  return batch;
}

Result<std::vector<WriterFiles>> DecodeWriterFiles(const RecordBatch& batch) {
  if (!batch.schema() || !(*batch.schema() == *WriterFilesSchema())) {
    return Status::Internal(
        "iceberg committer: input is not the writers' file descriptions (one BINARY column "
        "floe_iceberg_files)");
  }
  std::vector<WriterFiles> out;
  for (size_t row = 0; row < batch.num_rows(); ++row) {
    runtime::StateReader r(batch.column(0).GetBytes(row));
    FLOE_ASSIGN_OR_RAISE(uint32_t version, r.GetU32());
    if (version != kWriterFilesVersion) {
      return Status::Corruption("iceberg committer: unknown file message version " +
                                std::to_string(version));
    }
    WriterFiles files;
    FLOE_ASSIGN_OR_RAISE(uint64_t id, r.GetU64());
    files.checkpoint = runtime::CheckpointId(id);
    FLOE_ASSIGN_OR_RAISE(files.writer_task, r.GetString());
    FLOE_ASSIGN_OR_RAISE(files.split, r.GetString());
    FLOE_ASSIGN_OR_RAISE(files.table, r.GetString());
    FLOE_ASSIGN_OR_RAISE(files.written_schema, r.GetString());
    FLOE_ASSIGN_OR_RAISE(files.data_files, iceberg::DecodeDataFiles(r));
    FLOE_ASSIGN_OR_RAISE(files.delete_files, iceberg::DecodeDataFiles(r));
    FLOE_RETURN_NOT_OK(r.ExpectEnd());
    out.push_back(std::move(files));
  }
  return out;
}

std::string SourceOffsetsToJson(const std::map<std::string, std::string>& positions) {
  Json obj = Json::object();
  for (const auto& [task, position] : positions) {
    Result<Json> parsed = ParseJson(position, JsonPath("source position"));
    obj[task] = parsed.ok() ? std::move(parsed).value() : Json(position);
  }
  return DumpJson(obj);
}

Result<std::map<std::string, std::string>> SourceOffsetsFromJson(const std::string& text) {
  Result<Json> parsed = ParseJson(text, JsonPath("snapshot summary"));
  if (!parsed.ok() || !parsed->is_object()) {
    return Status::Corruption("snapshot summary " + std::string(kSummarySourceOffsets) +
                              " is not a JSON object: " + text.substr(0, 200));
  }
  std::map<std::string, std::string> out;
  for (auto it = parsed->begin(); it != parsed->end(); ++it) out[it.key()] = DumpJson(it.value());
  return out;
}

namespace {

std::string SummaryValue(const iceberg::Snapshot& snapshot, const char* key) {
  auto it = snapshot.summary.find(key);
  return it == snapshot.summary.end() ? std::string() : it->second;
}

Result<SinkCommit> ReadSinkCommit(const iceberg::Snapshot& snapshot) {
  SinkCommit commit;
  commit.sink_id = SummaryValue(snapshot, kSummarySinkId);
  commit.snapshot_id = snapshot.snapshot_id;
  if (!ParseU64(SummaryValue(snapshot, kSummaryCheckpointId), &commit.checkpoint_id)) {
    return Status::Corruption("snapshot " + std::to_string(snapshot.snapshot_id) + " of sink '" +
                              commit.sink_id + "' has no valid " + kSummaryCheckpointId);
  }
  commit.job_id = SummaryValue(snapshot, kSummaryJobId);
  commit.pipeline = SummaryValue(snapshot, kSummaryPipeline);
  auto offsets = snapshot.summary.find(kSummarySourceOffsets);
  if (offsets != snapshot.summary.end()) {
    FLOE_ASSIGN_OR_RAISE(commit.source_positions, SourceOffsetsFromJson(offsets->second));
  }
  return commit;
}

// The newest snapshot of the main ancestry that carries a sink id and satisfies `matches`.
template <typename Matches>
Result<std::optional<SinkCommit>> FindCommit(const iceberg::TableMetadata& metadata,
                                             Matches matches) {
  const iceberg::Snapshot* snapshot = metadata.current_snapshot();
  size_t guard = 0;
  while (snapshot != nullptr && guard++ <= metadata.snapshots.size()) {
    if (snapshot->summary.count(kSummarySinkId) != 0 && matches(*snapshot)) {
      FLOE_ASSIGN_OR_RAISE(SinkCommit commit, ReadSinkCommit(*snapshot));
      return std::optional<SinkCommit>(std::move(commit));
    }
    if (!snapshot->parent_snapshot_id) break;
    snapshot = metadata.FindSnapshot(*snapshot->parent_snapshot_id);
  }
  return std::optional<SinkCommit>();
}

}  // namespace

Result<std::optional<SinkCommit>> FindSinkCommit(const iceberg::TableMetadata& metadata,
                                                 const std::string& sink_id) {
  return FindCommit(metadata, [&](const iceberg::Snapshot& s) {
    return SummaryValue(s, kSummarySinkId) == sink_id;
  });
}

Result<std::optional<SinkCommit>> FindSinkOrPipelineCommit(const iceberg::TableMetadata& metadata,
                                                           const std::string& sink_id,
                                                           const std::string& pipeline) {
  FLOE_ASSIGN_OR_RAISE(std::optional<SinkCommit> own, FindSinkCommit(metadata, sink_id));
  if (own || pipeline.empty()) return own;
  return FindCommit(metadata, [&](const iceberg::Snapshot& s) {
    return SummaryValue(s, kSummaryPipeline) == pipeline;
  });
}

Status CheckSinkOwner(const SinkCommit& marker, const std::string& table,
                      const std::string& sink_id, const std::string& job_id,
                      const std::string& pipeline) {
  if (marker.pipeline.empty() || pipeline.empty() || marker.pipeline == pipeline ||
      marker.job_id == job_id) {
    return Status::OK();
  }
  return Status::InvalidArgument(
      "table " + table + ": sink id '" + sink_id + "' was last committed by job " + marker.job_id +
      " (checkpoint " + std::to_string(marker.checkpoint_id) + ", pipeline " + marker.pipeline +
      "), which reads other sources than this job " + job_id + " (pipeline " + pipeline +
      "). Two pipelines with one sink id hide each other's commits and lose rows: give " +
      "one of them its own sink id with the table option 'sink-id'");
}

std::string EffectiveSinkId(const IcebergSinkSpec& spec, const iceberg::TableIdentifier& table) {
  auto it = spec.table.options.find("sink-id");
  if (it != spec.table.options.end()) return it->second;
  if (!spec.sink_id.empty()) return spec.sink_id;
  return spec.table.name + "->" + table.ToString();
}

std::string WriterVertexName(const IcebergSinkSpec& spec) {
  return spec.table.name + "-iceberg-writer";
}
std::string CommitterVertexName(const IcebergSinkSpec& spec) {
  return spec.table.name + "-iceberg-committer";
}

namespace {

// 'catalog-database' and 'catalog-table' into o->table, and a routed name into o->route.
Status ParseTableName(const TableDescriptor& t, const std::string& where, IcebergSinkOptions* o) {
  std::string database = OptionOr(t, "catalog-database", "default_database");  // Flink's default
  std::string table = OptionOr(t, "catalog-table", t.name);
  Result<TableRoute> route = ParseTableRoute(table);
  if (!route.ok()) {
    return Status::InvalidArgument(where + "option 'catalog-table' = " + route.status().message());
  }
  if (!route->columns.empty()) {
    o->route = table;
    table = route->NameFor(std::vector<std::string_view>(route->columns.size(), "x"));
  }
  Result<iceberg::TableIdentifier> id = iceberg::TableIdentifier::Parse(database + "." + table);
  if (!id.ok()) {
    return Status::InvalidArgument(where + "'catalog-database'.'catalog-table' = '" + database +
                                   "." + table +
                                   "' is not a valid table name (letters, digits and _ only)");
  }
  o->table = *id;
  return Status::OK();
}

}  // namespace

Result<IcebergSinkOptions> ParseIcebergSinkOptions(const IcebergSinkSpec& spec) {
  const TableDescriptor& t = spec.table;
  auto where = [&] { return "iceberg table '" + t.name + "': "; };
  IcebergSinkOptions o;
  std::string allow_unknown = Lower(OptionOr(t, std::string(kAllowUnknownProperties), "false"));
  if (allow_unknown != "true" && allow_unknown != "false") {
    return Status::InvalidArgument(where() + "option '" + std::string(kAllowUnknownProperties) +
                                   "' must be 'true' or 'false', not '" + allow_unknown + "'");
  }
  for (const auto& [key, value] : t.options) {
    if (KnownOptions().count(key)) continue;
    if (key.rfind(kMaintenancePrefix, 0) == 0) continue;  // ParseMaintenanceOptions checks them
    if (iceberg::InTablePropertyNamespace(key)) {
      // Iceberg stores any key and ignores the ones it does not know: a misspelled
      // 'write.upsert.enabld' would quietly leave the table in append mode.
      if (iceberg::IsKnownTableProperty(key)) continue;
      if (allow_unknown == "true") {
        o.unknown_properties.push_back(key);
        continue;
      }
      return Status::InvalidArgument(
          where() + "option '" + key + "' is not a table property Iceberg defines" +
          DidYouMean(key, iceberg::TablePropertySuggestions(key)) + "; set '" +
          std::string(kAllowUnknownProperties) + "' = 'true' to store it anyway");
    }
    std::vector<std::string> known(KnownOptions().begin(), KnownOptions().end());
    return Status::InvalidArgument(
        where() + "unsupported option '" + key + "'" + DidYouMean(key, known) +
        " (supported: connector, catalog-type, catalog-impl, catalog-name, uri, warehouse, "
        "jdbc.user, jdbc.password, catalog-database, catalog-table, format-version, "
        "write.upsert.enabled, sink.parallelism, sink-id, "
        "partition-by, sink.commit.unavailable-timeout, sink.schema-evolution, " +
        std::string(kAllowUnknownProperties) +
        ", the flink-maintenance.* options, and the write.* / commit.* / read.* / history.* "
        "table properties Iceberg defines)");
  }
  Result<catalog::CatalogConfig> catalog = catalog::ParseCatalogOptions(t.options);
  if (!catalog.ok()) return Status::InvalidArgument(where() + catalog.status().message());
  o.catalog = std::move(catalog).value();

  FLOE_RETURN_NOT_OK(ParseTableName(t, where(), &o));

  std::string format_version = OptionOr(t, "format-version", "2");
  if (format_version != "2") {
    return Status::InvalidArgument(where() + "option 'format-version' = '" + format_version +
                                   "': floe writes format version 2 only");
  }
  std::string upsert = Lower(OptionOr(t, "write.upsert.enabled", "false"));
  if (upsert != "true" && upsert != "false") {
    return Status::InvalidArgument(where() + "option 'write.upsert.enabled' must be 'true' or " +
                                   "'false', not '" + upsert + "'");
  }
  o.upsert = upsert == "true";
  if (o.upsert && t.primary_key.empty()) {
    return Status::InvalidArgument(
        where() +
        "'write.upsert.enabled' = 'true' needs a PRIMARY KEY (...) NOT ENFORCED: "
        "upserts replace rows by key");
  }
  std::string parallelism = OptionOr(t, "sink.parallelism", "1");
  uint64_t p = 0;
  if (!ParseU64(parallelism, &p) || p < 1 || p > 128) {
    return Status::InvalidArgument(where() + "option 'sink.parallelism' = '" + parallelism +
                                   "' must be an integer in 1..128");
  }
  o.parallelism = static_cast<uint32_t>(p);
  o.partition_by = OptionOr(t, "partition-by", "");
  if (!t.partitioned_by.empty()) {
    // Flink's Iceberg connector: PARTITIONED BY columns are identity partitions.
    if (!o.partition_by.empty()) {
      return Status::InvalidArgument(where() +
                                     "PARTITIONED BY and option 'partition-by' both set: use "
                                     "one ('partition-by' also takes transforms such as "
                                     "day(ts) or bucket(16, id))");
    }
    for (const std::string& column : t.partitioned_by) {
      o.partition_by += (o.partition_by.empty() ? "" : ", ") + column;
    }
  }
  if (auto it = t.options.find(std::string(kUnavailableTimeout)); it != t.options.end()) {
    Result<std::chrono::milliseconds> d = runtime::ParseDuration(it->second);
    if (!d.ok() || d->count() < 0) {
      return Status::InvalidArgument(where() + "option '" + std::string(kUnavailableTimeout) +
                                     "' = '" + it->second +
                                     "' must be a duration such as '2 min' or '0 s'");
    }
    o.unavailable_timeout = *d;
  }
  const std::string evolution = OptionOr(t, std::string(kSchemaEvolution), "none");
  if (evolution != "none" && evolution != "add-columns") {
    return Status::InvalidArgument(where() + "option '" + std::string(kSchemaEvolution) + "' = '" +
                                   evolution + "' must be none or add-columns");
  }
  o.add_columns = evolution == "add-columns";
  for (const auto& [key, value] : t.options) {
    if (iceberg::InTablePropertyNamespace(key)) o.table_properties[key] = value;
  }
  o.sink_id = EffectiveSinkId(
      spec, o.route.empty() ? o.table : iceberg::TableIdentifier{o.table.ns, o.route});
  o.sink_id_explicit = t.options.count("sink-id") != 0;
  if (o.sink_id.empty())
    return Status::InvalidArgument(where() + "option 'sink-id' must not be empty");
  return o;
}

namespace {

// The operators' options for one table of the sink (`o` parsed from `spec`).
struct TableOperatorOptions {
  IcebergWriterOptions writer;
  IcebergCommitterOptions committer;
};

Result<TableOperatorOptions> OperatorOptions(const IcebergSinkSpec& spec,
                                             const IcebergSinkOptions& o, const JobContext& context,
                                             const IcebergSinkHooks& hooks,
                                             std::shared_ptr<iceberg::TableLease> lease) {
  TableOperatorOptions out;
  IcebergWriterOptions& writer = out.writer;
  writer.catalog = o.catalog;
  writer.table = o.table;
  writer.mode = o.upsert ? iceberg::WriteMode::kUpsert : iceberg::WriteMode::kAppend;
  writer.job_id = context.job_id;
  writer.row_kind_column = hooks.row_kind_column;
  writer.add_columns = o.add_columns;
  if (context.scale_out) {
    if (o.catalog.type == catalog::CatalogConfig::Type::kHadoop) {
      return Status::InvalidArgument(
          "iceberg table '" + spec.table.name +
          "': 'floe.scale-out' = 'kafka-group' needs a catalog whose commits are an atomic "
          "compare-and-swap shared by every instance ('catalog-type' = 'jdbc' or 'rest'); a "
          "'hadoop' catalog on one machine's disk cannot order the commits of several");
    }
    writer.split_column = runtime::kSourceSplitColumn;
    context.scale_out->table_start =
        [config = o.catalog, table = o.table, sink_id = o.sink_id](
            const iceberg::SourcePartition& p) -> Result<iceberg::PartitionStart> {
      FLOE_ASSIGN_OR_RAISE(std::unique_ptr<iceberg::Catalog> catalog, catalog::OpenCatalog(config));
      FLOE_ASSIGN_OR_RAISE(iceberg::LoadedTable loaded, catalog->LoadTable(table));
      return iceberg::TablePartitionStart(loaded.metadata, sink_id, p);
    };
  }
  writer.lease = std::move(lease);
  if (o.unavailable_timeout >= context.checkpointing.timeout) {
    // The commit runs when a checkpoint completes; the next checkpoints wait for it.
    return Status::InvalidArgument(
        "iceberg table '" + spec.table.name + "': option '" + std::string(kUnavailableTimeout) +
        "' = " + runtime::FormatDuration(o.unavailable_timeout) +
        " must be shorter than execution.checkpointing.timeout = " +
        runtime::FormatDuration(context.checkpointing.timeout) +
        ": checkpoints taken while a commit waits for the catalog would time out");
  }
  IcebergCommitterOptions& committer = out.committer;
  committer.unavailable_timeout = o.unavailable_timeout;
  FLOE_ASSIGN_OR_RAISE(committer.maintenance,
                       ParseMaintenanceOptions(spec.table, context.checkpointing));
  committer.catalog = o.catalog;
  committer.checkpoint_dir = spec.checkpoint_dir;
  committer.savepoint_dir = spec.savepoint_dir;
  committer.checkpoint_file_io = spec.checkpoint_file_io;
  committer.table = o.table;
  committer.sink_id = o.sink_id;
  committer.job_id = context.job_id;
  committer.pipeline = spec.pipeline;
  committer.continue_pipeline = !o.sink_id_explicit;
  committer.positions = context.positions;
  committer.on_checkpoint_handled = hooks.on_checkpoint_handled;
  committer.lease = writer.lease;
  committer.partition_positions = context.scale_out != nullptr;
  committer.scale_out = context.scale_out;  // names a keyed task once the plan has one
  committer.upsert = o.upsert;
  return out;
}

// One lease per sink and worker: the writers' and the committer's claims in one file.
std::shared_ptr<iceberg::TableLease> SinkLease(const JobContext& context) {
  return std::make_shared<iceberg::TableLease>("sink-" + FileJobTag(context.job_id));
}

// The writer vertex and its input edge, and the committer vertex after it.
Status AddSinkVertices(runtime::JobGraph& graph, runtime::VertexId input,
                       const IcebergSinkSpec& spec, const IcebergSinkOptions& o,
                       runtime::OperatorFactory writer_factory,
                       runtime::OperatorFactory committer_factory) {
  runtime::VertexId writers =
      graph.AddOperator(WriterVertexName(spec), o.parallelism, std::move(writer_factory));
  if (o.upsert) {
    graph.Connect(input, writers, runtime::Partitioning::Hash(spec.table.primary_key));
  } else if (graph.vertex(input).parallelism == o.parallelism) {
    graph.Connect(input, writers, runtime::Partitioning::Forward());
  } else {
    graph.Connect(input, writers, runtime::Partitioning::Rebalance());
  }
  runtime::VertexId commit =
      graph.AddOperator(CommitterVertexName(spec), 1, std::move(committer_factory));
  graph.Connect(writers, commit, runtime::Partitioning::Global());
  return Status::OK();
}

}  // namespace

IcebergSinkSpec RoutedTableSpec(const IcebergSinkSpec& spec, const std::string& table,
                                const std::string& sink_id) {
  IcebergSinkSpec one = spec;
  one.table.options["catalog-table"] = table;
  one.sink_id = sink_id;
  one.routed_by = sink_id;
  return one;
}

Result<std::vector<std::string>> DiscoverRoutedTables(const IcebergSinkOptions& o,
                                                      iceberg::Catalog* open_catalog) {
  FLOE_ASSIGN_OR_RAISE(TableRoute route, ParseTableRoute(o.route));
  std::unique_ptr<iceberg::Catalog> owned;
  if (open_catalog == nullptr) {
    FLOE_ASSIGN_OR_RAISE(owned, catalog::OpenCatalog(o.catalog));
  }
  iceberg::Catalog* catalog = owned ? owned.get() : open_catalog;
  Result<std::vector<iceberg::TableIdentifier>> listed = catalog->ListTables(o.table.ns);
  if (listed.status().IsNotFound()) return std::vector<std::string>();
  if (!listed.ok()) return listed.status();
  std::vector<std::string> out;
  for (const iceberg::TableIdentifier& id : *listed) {
    if (!route.Matches(id.name)) continue;
    Result<iceberg::LoadedTable> loaded = catalog->LoadTable(id);
    if (loaded.status().IsNotFound()) continue;  // dropped meanwhile
    if (!loaded.ok()) return loaded.status();
    const auto& properties = loaded->metadata.properties;
    auto by = properties.find(std::string(kRoutedByProperty));
    bool ours = by != properties.end() && by->second == o.sink_id;
    if (!ours) {
      FLOE_ASSIGN_OR_RAISE(std::optional<SinkCommit> marker,
                           FindSinkCommit(loaded->metadata, o.sink_id));
      ours = marker.has_value();
    }
    if (ours) out.push_back(id.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// A sink whose 'catalog-table' names columns: one writer and one committer task that open a
// table's plain operators on first sight (routed_sink.h).
Status AddRoutedSink(runtime::JobGraph& graph, runtime::VertexId input, const IcebergSinkSpec& spec,
                     const IcebergSinkOptions& o, const JobContext& context,
                     const IcebergSinkHooks& hooks) {
  std::string where = "iceberg table '" + spec.table.name + "': 'catalog-table' = '" + o.route;
  if (context.scale_out) {
    return Status::InvalidArgument(where +
                                   "' routes rows to many tables; a job scaled out with "
                                   "'floe.scale-out' writes one table per sink");
  }
  // The rules of the options, checked once before any table exists.
  FLOE_RETURN_NOT_OK(OperatorOptions(spec, o, context, hooks, nullptr).status());
  auto tables = std::make_shared<RoutedTables>();
  tables->sink_id = o.sink_id;
  tables->ns = o.table.ns;
  FLOE_ASSIGN_OR_RAISE(tables->route, ParseTableRoute(o.route));
  // A table's writers and committer share its lease.
  struct Leases {
    Mutex mu;
    std::map<std::string, std::shared_ptr<iceberg::TableLease>> by_table FLOE_GUARDED_BY(mu);
  };
  auto leases = std::make_shared<Leases>();
  auto options_for = [spec, context, hooks, leases, sink_id = o.sink_id](
                         const std::string& table,
                         iceberg::Catalog* create_in) -> Result<TableOperatorOptions> {
    IcebergSinkSpec one = RoutedTableSpec(spec, table, sink_id);
    if (create_in != nullptr) FLOE_RETURN_NOT_OK(PrepareIcebergTableIn(one, create_in));
    FLOE_ASSIGN_OR_RAISE(IcebergSinkOptions to, ParseIcebergSinkOptions(one));
    std::shared_ptr<iceberg::TableLease> lease;
    {
      MutexLock lock(leases->mu);
      auto& held = leases->by_table[table];
      if (!held) held = SinkLease(context);
      lease = held;
    }
    return OperatorOptions(one, to, context, hooks, std::move(lease));
  };
  tables->writer_options = [options_for](
                               const std::string& table,
                               iceberg::Catalog& catalog) -> Result<IcebergWriterOptions> {
    FLOE_ASSIGN_OR_RAISE(TableOperatorOptions ops, options_for(table, &catalog));
    return std::move(ops.writer);
  };
  tables->committer_options =
      [options_for](const std::string& table) -> Result<IcebergCommitterOptions> {
    FLOE_ASSIGN_OR_RAISE(TableOperatorOptions ops, options_for(table, nullptr));
    return std::move(ops.committer);
  };
  tables->catalog = o.catalog;
  tables->discover = [o](iceberg::Catalog& catalog) { return DiscoverRoutedTables(o, &catalog); };
  std::shared_ptr<const RoutedTables> shared = tables;
  return AddSinkVertices(
      graph, input, spec, o,
      [shared](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        return std::unique_ptr<runtime::Operator>(
            std::make_unique<RoutedIcebergWriterOperator>(shared));
      },
      [shared](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        return std::unique_ptr<runtime::Operator>(
            std::make_unique<RoutedIcebergCommitterOperator>(shared));
      });
}

}  // namespace

Status AddIcebergSinkWithHooks(runtime::JobGraph& graph, runtime::VertexId input,
                               const IcebergSinkSpec& spec, const JobContext& context,
                               IcebergSinkHooks hooks) {
  FLOE_ASSIGN_OR_RAISE(IcebergSinkOptions o, ParseIcebergSinkOptions(spec));
  if (input.value >= graph.vertices().size()) {
    return Status::InvalidArgument("AddIcebergSink: input vertex does not exist");
  }
  if (!o.route.empty()) return AddRoutedSink(graph, input, spec, o, context, hooks);
  FLOE_ASSIGN_OR_RAISE(TableOperatorOptions ops,
                       OperatorOptions(spec, o, context, hooks, SinkLease(context)));
  return AddSinkVertices(
      graph, input, spec, o,
      [writer = std::move(ops.writer)](
          const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        // Each subtask instance draws its own attempt token.
        FLOE_ASSIGN_OR_RAISE(auto op, IcebergWriterOperator::Make(writer));
        return std::unique_ptr<runtime::Operator>(std::move(op));
      },
      [committer = std::move(ops.committer)](
          const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        return std::unique_ptr<runtime::Operator>(
            std::make_unique<IcebergCommitterOperator>(committer));
      });
}

}  // namespace internal

namespace {

// The Iceberg schema the declaration asks for: ids 1..n, PK columns required identifier fields.
Result<iceberg::Schema> DeclaredSchema(const TableDescriptor& t) {
  if (!t.schema || t.schema->fields.empty()) {
    return Status::InvalidArgument("iceberg table '" + t.name + "' declares no columns");
  }
  iceberg::Schema schema;
  int32_t next_id = 1;
  for (const Field& f : t.schema->fields) {
    Field field = f;
    field.field_id = next_id++;
    schema.fields.push_back(field);
  }
  for (const std::string& key : t.primary_key) {
    auto it = std::find_if(schema.fields.begin(), schema.fields.end(),
                           [&](const Field& f) { return f.name == key; });
    if (it == schema.fields.end()) {
      return Status::InvalidArgument("iceberg table '" + t.name + "': PRIMARY KEY column '" + key +
                                     "' is not a declared column");
    }
    it->nullable = false;
    schema.identifier_field_ids.push_back(it->field_id);
  }
  return schema;
}

Status CheckUpsertPartitioning(const std::string& where, const iceberg::Schema& schema,
                               const iceberg::PartitionSpec& spec) {
  for (const auto& pf : spec.fields) {
    if (std::find(schema.identifier_field_ids.begin(), schema.identifier_field_ids.end(),
                  pf.source_id) == schema.identifier_field_ids.end()) {
      const Field* f = schema.FindById(pf.source_id);
      return Status::InvalidArgument(
          where + "partition field '" + pf.name + "' comes from column '" + (f ? f->name : "?") +
          "', which is not in the primary key: in upsert mode every partition column must be "
          "part of it (an update that moved a row to another partition would leave the old row "
          "alive)");
    }
  }
  return Status::OK();
}

bool SameSpecFields(const iceberg::PartitionSpec& a, const iceberg::PartitionSpec& b) {
  if (a.fields.size() != b.fields.size()) return false;
  for (size_t i = 0; i < a.fields.size(); ++i) {
    if (a.fields[i].source_id != b.fields[i].source_id ||
        !(a.fields[i].transform == b.fields[i].transform)) {
      return false;
    }
  }
  return true;
}

// An existing table must have exactly the declared columns (by name, same types).
// `add_columns`: the table may hold optional columns the declaration lacks (added by an earlier
// declaration or by records' undeclared fields); the writers write them null or from those fields.
Status CheckExistingTable(const std::string& where, const iceberg::Schema& declared,
                          const iceberg::TableMetadata& metadata, bool upsert,
                          const std::string& partition_by, bool add_columns) {
  const iceberg::Schema& actual = metadata.current_schema();
  for (const Field& d : declared.fields) {
    const Field* a = actual.FindByName(d.name);
    if (a == nullptr) {
      return Status::InvalidArgument(where + "column '" + d.name +
                                     "' is declared but the table has no such column");
    }
    if (!(a->type == d.type)) {
      return Status::InvalidArgument(where + "column '" + d.name + "' is declared " +
                                     iceberg::FlinkTypeName(d.type) + " but the table has " +
                                     iceberg::FlinkTypeName(a->type));
    }
    if (!a->nullable && d.nullable) {
      return Status::InvalidArgument(where + "column '" + d.name +
                                     "' is required in the table; declare it NOT NULL");
    }
  }
  for (const Field& a : actual.fields) {
    if (declared.FindByName(a.name) == nullptr && !(add_columns && a.nullable)) {
      return Status::InvalidArgument(where + "the table has column '" + a.name +
                                     "' that the declaration lacks");
    }
  }
  if (upsert) {
    std::set<std::string> want, have;
    for (int32_t id : declared.identifier_field_ids) want.insert(declared.FindById(id)->name);
    for (int32_t id : actual.identifier_field_ids) {
      if (const Field* f = actual.FindById(id)) have.insert(f->name);
    }
    if (want != have) {
      std::string list;
      for (const auto& n : have) list += (list.empty() ? "" : ", ") + n;
      return Status::InvalidArgument(where + "the declared PRIMARY KEY differs from the table's " +
                                     "identifier fields (" + (list.empty() ? "none" : list) + ")");
    }
    FLOE_RETURN_NOT_OK(CheckUpsertPartitioning(where, actual, metadata.default_spec()));
  }
  if (!partition_by.empty()) {
    FLOE_ASSIGN_OR_RAISE(iceberg::PartitionSpec spec,
                         iceberg::ParsePartitionClause(partition_by, actual));
    if (!SameSpecFields(spec, metadata.default_spec())) {
      return Status::InvalidArgument(where + "option 'partition-by' = '" + partition_by +
                                     "' differs from the table's partition spec " +
                                     iceberg::PartitionSpecToJson(metadata.default_spec()));
    }
  }
  return Status::OK();
}

// 'sink.schema-evolution' = 'add-columns': the table's schema evolved to the declared columns in
// a commit of its own (a compare-and-swap, retried against a table that moved meanwhile).
Status EvolveTableSchema(const std::string& where, const iceberg::Schema& declared,
                         iceberg::Catalog& catalog, iceberg::LoadedTable* table) {
  for (int attempt = 0;; ++attempt) {
    std::vector<std::string> changes;
    Result<iceberg::TableMetadata> evolved = iceberg::EvolveSchema(
        table->metadata, declared.fields, &changes, /*keep_other_columns=*/true);
    if (!evolved.ok()) return evolved.status().WithContext(where + "schema evolution");
    if (changes.empty()) return Status::OK();
    Result<iceberg::LoadedTable> committed = catalog.CommitTable(*table, std::move(*evolved));
    if (committed.ok()) {
      std::string list;
      for (const std::string& c : changes) list += (list.empty() ? "" : ", ") + c;
      LogInfo("%sschema evolved to schema id %d: %s", where.c_str(),
              committed->metadata.current_schema_id, list.c_str());
      *table = std::move(committed).value();
      return Status::OK();
    }
    if (committed.status().code() != StatusCode::kConflict || attempt == 4) {
      return committed.status().WithContext(where + "committing the evolved schema");
    }
    FLOE_ASSIGN_OR_RAISE(*table, catalog.LoadTable(table->id));
  }
}

// Each column a routed 'catalog-table' names is a declared STRING column.
Status CheckRouteColumns(const TableDescriptor& t, const std::string& route_text) {
  FLOE_ASSIGN_OR_RAISE(internal::TableRoute route, internal::ParseTableRoute(route_text));
  for (const std::string& name : route.columns) {
    int index = t.schema->FieldIndex(name);
    if (index < 0 || t.schema->fields[index].type.id != TypeId::kString) {
      return Status::InvalidArgument(
          "iceberg table '" + t.name + "': 'catalog-table' = '" + route_text + "' names " +
          (index < 0 ? "column '" + name + "', which is not declared"
                     : "column '" + name + "', which is not a STRING") +
          ": a route column must be a declared STRING column of the sink");
    }
  }
  return Status::OK();
}

}  // namespace

Status PrepareIcebergTable(const IcebergSinkSpec& spec) {
  return internal::PrepareIcebergTableIn(spec, nullptr);
}

namespace internal {

Status PrepareIcebergTableIn(const IcebergSinkSpec& spec, iceberg::Catalog* open_catalog) {
  FLOE_ASSIGN_OR_RAISE(internal::IcebergSinkOptions o, internal::ParseIcebergSinkOptions(spec));
  std::string where = "iceberg table " + o.table.ToString() + " (sink '" + spec.table.name + "'): ";
  FLOE_ASSIGN_OR_RAISE(iceberg::Schema schema, DeclaredSchema(spec.table));
  iceberg::PartitionSpec partition_spec;
  if (!o.partition_by.empty()) {
    Result<iceberg::PartitionSpec> parsed = iceberg::ParsePartitionClause(o.partition_by, schema);
    if (!parsed.ok()) {
      return parsed.status().WithContext(where + "option 'partition-by'");
    }
    partition_spec = std::move(parsed).value();
  }
  if (o.upsert) FLOE_RETURN_NOT_OK(CheckUpsertPartitioning(where, schema, partition_spec));
  if (!o.unknown_properties.empty()) {
    std::string keys;
    for (const std::string& key : o.unknown_properties) {
      keys += (keys.empty() ? "'" : ", '") + key + "'" +
              DidYouMean(key, iceberg::TablePropertySuggestions(key));
    }
    LogWarn(
        "iceberg table '%s': storing table properties Iceberg does not define ('%s' is set): %s",
        spec.table.name.c_str(), std::string(internal::kAllowUnknownProperties).c_str(),
        keys.c_str());
  }
  {
    // Sizes and codec: the same rules the writers apply.
    Result<iceberg::TableMetadata> probe =
        iceberg::NewTableMetadata(schema, partition_spec, "file:///validate", o.table_properties);
    if (!probe.ok()) return probe.status().WithContext(where);
    Status st = iceberg::ConfigFromTableProperties(io::FileIO(), *probe, "validate").status();
    if (!st.ok()) return st.WithContext(where);
  }
  std::unique_ptr<iceberg::Catalog> owned;
  if (open_catalog == nullptr) {
    Result<std::unique_ptr<iceberg::Catalog>> opened = catalog::OpenCatalog(o.catalog);
    if (!opened.ok()) return opened.status().WithContext(where + o.catalog.Describe());
    owned = std::move(opened).value();
  }
  iceberg::Catalog* catalog = owned ? owned.get() : open_catalog;
  if (!o.route.empty()) {
    // Routed: the tables are created on first sight; their columns are checked now.
    FLOE_RETURN_NOT_OK(CheckRouteColumns(spec.table, o.route));
    Status ns = iceberg::EnsureNamespace(*catalog, o.table.ns);
    return ns.ok() ? ns : ns.WithContext(where + "creating namespace " + o.table.ns);
  }
  Result<iceberg::LoadedTable> loaded = catalog->LoadTable(o.table);
  if (loaded.status().IsNotFound()) {
    // A streaming sink commits every checkpoint: without these, every commit would keep its
    // metadata file forever (docs/connectors.md, "Tables floe creates"). Explicit options win.
    std::map<std::string, std::string> properties = o.table_properties;
    properties.emplace("write.metadata.delete-after-commit.enabled", "true");
    properties.emplace("write.metadata.previous-versions-max", "20");
    properties.emplace("history.expire.max-snapshot-age-ms", "3600000");  // one hour
    if (!spec.routed_by.empty()) {
      properties[std::string(internal::kRoutedByProperty)] = spec.routed_by;
    }
    Status ns = iceberg::EnsureNamespace(*catalog, o.table.ns);
    if (!ns.ok()) return ns.WithContext(where + "creating namespace " + o.table.ns);
    Result<iceberg::LoadedTable> created =
        catalog->CreateTable(o.table, schema, partition_spec, properties);
    if (created.ok()) return Status::OK();
    if (!created.status().IsAlreadyExists()) return created.status().WithContext(where);
    loaded = catalog->LoadTable(o.table);  // created concurrently: check it like any other
  }
  if (!loaded.ok()) return loaded.status().WithContext(where);
  if (o.add_columns) FLOE_RETURN_NOT_OK(EvolveTableSchema(where, schema, *catalog, &*loaded));
  Status st =
      CheckExistingTable(where, schema, loaded->metadata, o.upsert, o.partition_by, o.add_columns);
  if (!st.ok() && !o.add_columns && st.message().find("column '") != std::string::npos) {
    return Status(st.code(), st.message() + " (option '" + std::string(internal::kSchemaEvolution) +
                                 "' = 'add-columns' adds new columns and widens types)");
  }
  return st;
}

}  // namespace internal

Result<std::set<std::string>> IcebergFilesHeldByCheckpoints(const io::FileIO& file_io,
                                                            const std::string& checkpoint_dir,
                                                            const std::string& savepoint_dir) {
  // `checkpoint_dir` is a job's checkpoint directory or, usually, the configured one that holds
  // a directory per job (<dir>/<job id>/chk-N): both are searched.
  std::vector<std::string> dirs = {checkpoint_dir};
  Result<std::vector<std::string>> entries = file_io.ListDir(checkpoint_dir);
  if (entries.ok()) {
    for (const std::string& e : *entries) {
      if (e.rfind("chk-", 0) == 0 || e == "savepoints" || e[0] == '_') continue;
      std::string sub = io::JoinPath(checkpoint_dir, e);
      if (file_io.ListDir(sub).ok()) dirs.push_back(std::move(sub));
    }
  }
  std::set<std::string> held;
  for (const std::string& dir : dirs) {
    internal::FailedAttemptScope scope;
    scope.checkpoint_dir = dir;
    scope.savepoint_dir = dir == checkpoint_dir ? savepoint_dir : "";
    scope.checkpoint_file_io = file_io;
    FLOE_ASSIGN_OR_RAISE(std::set<std::string> files, internal::FilesHeldByCheckpoints(scope));
    held.merge(files);
  }
  return held;
}

Status AddIcebergSink(runtime::JobGraph& graph, runtime::VertexId input,
                      const IcebergSinkSpec& spec, const JobContext& context) {
  internal::IcebergSinkHooks hooks;
  hooks.row_kind_column = spec.row_kind_column;
  return internal::AddIcebergSinkWithHooks(graph, input, spec, context, std::move(hooks));
}

namespace {

// No attempt of the job runs now (the worker runs this before its LocalJob starts, after the
// previous worker exited), so files of this job id that nothing references are leftovers.
void RemoveFilesOfFailedAttempts(const IcebergSinkSpec& spec, const internal::IcebergSinkOptions& o,
                                 const io::FileIO& table_file_io,
                                 const iceberg::TableMetadata& metadata,
                                 const std::optional<runtime::CompletedCheckpoint>& restored) {
  internal::FailedAttemptScope scope;
  scope.job_id = spec.job_id;
  scope.checkpoint_dir = spec.checkpoint_dir;
  scope.savepoint_dir = spec.savepoint_dir;
  scope.checkpoint_file_io = spec.checkpoint_file_io;
  scope.restored = restored ? &*restored : nullptr;
  Result<internal::FailedAttemptCleanup> done =
      internal::RemoveFailedAttemptFiles(table_file_io, metadata, scope);
  if (!done.ok()) {
    LogWarn("iceberg sink '%s': files of failed attempts of job %s kept: %s", o.sink_id.c_str(),
            spec.job_id.c_str(), done.status().ToString().c_str());
    return;
  }
  if (done->files == 0) return;
  std::string attempts;
  for (const std::string& a : done->attempts) attempts += (attempts.empty() ? "" : ", ") + a;
  LogInfo(
      "iceberg sink '%s': removed %lld files (%lld bytes) from %s that earlier attempts (%s) "
      "of job %s left and no snapshot, checkpoint or savepoint references",
      o.sink_id.c_str(), static_cast<long long>(done->files), static_cast<long long>(done->bytes),
      o.table.ToString().c_str(), attempts.c_str(), spec.job_id.c_str());
}

}  // namespace

namespace {

// A routed sink's plan: each of its tables planned as a plain sink's; when any is ahead of the
// restored checkpoint, all must hold the same checkpoint (one cut to start the sources from).
Result<SinkRestorePlan> PlanRoutedSinkRestore(
    const IcebergSinkSpec& spec, const internal::IcebergSinkOptions& o,
    const std::optional<runtime::CompletedCheckpoint>& restored, StaleRestorePolicy policy,
    bool has_keyed_state) {
  FLOE_ASSIGN_OR_RAISE(std::vector<std::string> tables, internal::DiscoverRoutedTables(o));
  SinkRestorePlan combined;
  std::vector<std::pair<std::string, uint64_t>> held;  // table -> its checkpoint (0: none)
  for (const std::string& table : tables) {
    FLOE_ASSIGN_OR_RAISE(SinkRestorePlan plan,
                         PlanIcebergSinkRestore(internal::RoutedTableSpec(spec, table, o.sink_id),
                                                restored, policy, has_keyed_state));
    held.emplace_back(table, plan.table_checkpoint_id);
    combined.table_checkpoint_id = std::max(combined.table_checkpoint_id, plan.table_checkpoint_id);
    if (plan.table_ahead) {
      combined.table_ahead = true;
      combined.source_positions = std::move(plan.source_positions);
    }
  }
  std::string sink = "routed iceberg sink '" + o.sink_id + "'";
  if (combined.table_ahead) {
    for (const auto& [table, id] : held) {
      if (id == combined.table_checkpoint_id) continue;
      return Status::InvalidArgument(
          sink + ": table " + o.table.ns + "." + table + " holds " +
          (id == 0 ? std::string("no checkpoint") : "checkpoint " + std::to_string(id)) +
          " of it while another of its tables holds checkpoint " +
          std::to_string(combined.table_checkpoint_id) +
          ": starting the sources from the newer one would lose the rows the older table lacks. "
          "A job stopped between two tables' commits resumes with `floe run --from latest`: the "
          "checkpoint holds the commits the older table lacks");
    }
  }
  combined.message =
      sink + ": " + std::to_string(tables.size()) + " table(s) in " + o.table.ns +
      (held.empty() ? "" : " (" + held.front().first + ", ...)") +
      (combined.table_ahead ? "; sources start from the tables' positions (checkpoint " +
                                  std::to_string(combined.table_checkpoint_id) + ")"
                            : "; none ahead of the restored checkpoint");
  return combined;
}

}  // namespace

Result<SinkRestorePlan> PlanIcebergSinkRestore(
    const IcebergSinkSpec& spec, const std::optional<runtime::CompletedCheckpoint>& restored,
    StaleRestorePolicy policy, bool has_keyed_state) {
  FLOE_ASSIGN_OR_RAISE(internal::IcebergSinkOptions o, internal::ParseIcebergSinkOptions(spec));
  if (!o.route.empty()) return PlanRoutedSinkRestore(spec, o, restored, policy, has_keyed_state);
  SinkRestorePlan plan;
  std::string restoring = restored
                              ? std::string(restored->is_savepoint ? "savepoint" : "checkpoint") +
                                    " " + restored->id.ToString() +
                                    (restored->dir.empty() ? "" : " (" + restored->dir + ")")
                              : std::string("no checkpoint (fresh start)");
  FLOE_ASSIGN_OR_RAISE(auto catalog, catalog::OpenCatalog(o.catalog));
  Result<iceberg::LoadedTable> loaded = catalog->LoadTable(o.table);
  if (loaded.status().IsNotFound()) {
    plan.message = "table " + o.table.ToString() + " does not exist yet; restoring " + restoring +
                   ": nothing to reconcile";
    return plan;
  }
  if (!loaded.ok()) return loaded.status();
  RemoveFilesOfFailedAttempts(spec, o, catalog->file_io(), loaded->metadata, restored);
  FLOE_ASSIGN_OR_RAISE(std::optional<internal::SinkCommit> marker,
                       internal::FindSinkOrPipelineCommit(loaded->metadata, o.sink_id,
                                                          o.sink_id_explicit ? "" : spec.pipeline));
  if (!marker) {
    plan.message = "table " + o.table.ToString() + " holds no commit of sink '" + o.sink_id +
                   "'; restoring " + restoring;
    return plan;
  }
  if (marker->sink_id != o.sink_id) {
    // Before: a renamed sink table started the sources from their startup mode and doubled it.
    LogInfo(
        "iceberg sink '%s': table %s holds no commit of this sink id but one of this pipeline "
        "(%s) under sink id '%s' (checkpoint %llu): continuing from it; set the table option "
        "'sink-id' = '%s' to keep the old id",
        o.sink_id.c_str(), o.table.ToString().c_str(), spec.pipeline.c_str(),
        marker->sink_id.c_str(), static_cast<unsigned long long>(marker->checkpoint_id),
        marker->sink_id.c_str());
  }
  FLOE_RETURN_NOT_OK(
      internal::CheckSinkOwner(*marker, o.table.ToString(), o.sink_id, spec.job_id, spec.pipeline));
  plan.table_checkpoint_id = marker->checkpoint_id;
  plan.source_positions = marker->source_positions;
  uint64_t restored_id = restored ? restored->id.value : 0;
  plan.table_ahead = marker->checkpoint_id > restored_id;
  std::string holds = "table " + o.table.ToString() + " holds checkpoint " +
                      std::to_string(marker->checkpoint_id) + " of sink '" + o.sink_id + "'";
  // The run's first id is decided later, above every sink's and the checkpoint directory's.
  std::string next = "checkpoint ids continue above " + std::to_string(marker->checkpoint_id);
  if (!plan.table_ahead) {
    plan.message = holds + "; restoring " + restoring +
                   ": pending commits above the table's are committed, sources start from the "
                   "restored positions";
    return plan;
  }
  if (has_keyed_state) {
    switch (policy) {
      case StaleRestorePolicy::kFail:
        return Status::InvalidArgument(
            holds + " but this run restores " + restoring +
            ", which is older, and the pipeline keeps keyed state between source and sink: "
            "starting the sources from the table's positions would make that state disagree "
            "with the table. Choose --on-stale-restore=fail|skip-to-table|replay: "
            "skip-to-table starts the sources at the table's positions (checkpoint " +
            std::to_string(marker->checkpoint_id) + ") with the state of checkpoint " +
            std::to_string(restored_id) + "; replay re-processes from checkpoint " +
            std::to_string(restored_id) + " and commits the replayed rows again (at-least-once)");
      case StaleRestorePolicy::kSkipToTable:
        break;
      case StaleRestorePolicy::kReplay:
        plan.table_ahead = false;
        plan.message = holds + "; restoring " + restoring +
                       " with --on-stale-restore=replay: sources replay from the restored "
                       "positions and rows after checkpoint " +
                       std::to_string(restored_id) + " may be committed twice; " + next;
        return plan;
    }
  }
  plan.message =
      holds + "; restoring " + restoring + ": sources start from the table's positions, " + next;
  return plan;
}

std::string PipelineFingerprint(std::string_view upstream) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : upstream) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {

// A changelog needs an upsert table: PRIMARY KEY and 'write.upsert.enabled' = 'true' (Flink
// refuses an append-only sink for an updating input the same way).
Status IcebergAcceptsChangelog(const TableDescriptor& t) {
  bool upsert = internal::Lower(internal::OptionOr(t, "write.upsert.enabled", "false")) == "true";
  if (!t.primary_key.empty() && upsert) return Status::OK();
  return Status::InvalidArgument(
      "iceberg table '" + t.name +
      "' is append-only: an updating input needs an upsert sink. Declare PRIMARY KEY (...) NOT "
      "ENFORCED on '" +
      t.name + "' and set 'write.upsert.enabled' = 'true' (Flink refuses an append-only " +
      "sink for an updating input the same way)");
}

Result<AddedSink> AddIcebergConnectorSink(const SinkRequest& r) {
  IcebergSinkSpec spec;
  spec.table = *r.table;
  spec.job_id = r.context->job_id;
  spec.pipeline = PipelineFingerprint(r.upstream);
  spec.checkpoint_dir = r.context->checkpointing.dir;
  spec.savepoint_dir = r.context->checkpointing.savepoint_dir;
  spec.checkpoint_file_io = r.context->checkpointing.file_io;
  if (r.changelog_input) spec.row_kind_column = runtime::kRowKindColumn;
  FLOE_ASSIGN_OR_RAISE(internal::IcebergSinkOptions options,
                       internal::ParseIcebergSinkOptions(spec));
  if (r.undeclared_input && options.parallelism > 1) {
    // Each writer would number the columns it adds on its own.
    return Status::InvalidArgument(
        "iceberg table '" + r.table->name + "': 'sink.parallelism' = " +
        std::to_string(options.parallelism) + " with '" + std::string(internal::kSchemaEvolution) +
        "' = 'add-columns' over SELECT *: one writer grows the table by the records' undeclared "
        "fields (it numbers the new columns); set 'sink.parallelism' = '1'");
  }
  FLOE_RETURN_NOT_OK(PrepareIcebergTable(spec));
  FLOE_RETURN_NOT_OK(AddIcebergSink(*r.graph, r.input, spec, *r.context));
  AddedSink added;
  added.sink_id = options.sink_id;
  // Scaled out, the table's positions decide where reading starts, never a checkpoint.
  if (r.context->scale_out) return added;
  added.plan_restore = [spec](const std::optional<runtime::CompletedCheckpoint>& restored,
                              StaleRestorePolicy policy, bool has_keyed_state) {
    return PlanIcebergSinkRestore(spec, restored, policy, has_keyed_state);
  };
  return added;
}

}  // namespace

Connector IcebergConnector() {
  Connector c;
  c.name = "iceberg";
  for (const std::string& o : internal::KnownOptions()) {
    if (o != "connector") c.options.push_back(o);
  }
  c.options.push_back("write.");
  c.options.push_back("commit.");
  c.options.push_back("read.");
  c.options.push_back("history.");
  c.options.push_back(std::string(internal::kMaintenancePrefix));
  c.add_sink = AddIcebergConnectorSink;
  c.accepts_changelog = IcebergAcceptsChangelog;
  c.takes_undeclared_fields = [](const TableDescriptor& t) {
    // A routed sink's tables grow from their declaration only (for now).
    return internal::OptionOr(t, std::string(internal::kSchemaEvolution), "") == "add-columns" &&
           internal::OptionOr(t, "catalog-table", "").find('{') == std::string::npos;
  };
  c.partitioned_by = true;
  return c;
}

}  // namespace floe::connectors
