#include "floe/sql/planner.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <deque>
#include <functional>
#include <limits>
#include <set>

#include "floe/common/closest_match.h"
#include "floe/connectors/dead_letter.h"
#include "floe/connectors/registry.h"
#include "floe/runtime/checkpoint_storage.h"
#include "floe/runtime/keyed_state.h"
#include "floe/sql/aggregate_plan.h"
#include "floe/sql/exec/calc_operator.h"
#include "floe/sql/exec/computed_columns_operator.h"
#include "floe/sql/exec/expand_operator.h"
#include "floe/sql/exec/group_aggregate_operator.h"
#include "floe/sql/exec/rank_operator.h"
#include "floe/sql/exec/scalar_expr.h"
#include "floe/sql/exec/watermark_assigner_operator.h"
#include "floe/sql/exec/window_aggregate_operator.h"
#include "floe/sql/exec/window_table_function_operator.h"
#include "floe/sql/parser.h"
#include "floe/sql/scalar_types.h"

namespace floe::sql {
namespace {

std::string At(const SourcePos& pos) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": ";
}

// `status` with "line L, column C: " in front (keeps the code).
Status AtPos(const SourcePos& pos, const Status& status) {
  if (status.ok()) return status;
  return Status(status.code(), At(pos) + status.message());
}

// A Calc's program. Its expression errors carry their own position; the rest point at `pos`
// (the INSERT).
Result<std::shared_ptr<const CalcProgram>> CompileCalc(const CalcSpec& spec, const SourcePos& pos) {
  Result<std::shared_ptr<const CalcProgram>> program = CalcProgram::Compile(spec);
  if (program.ok() || program.status().message().rfind("line ", 0) == 0) return program;
  return AtPos(pos, program.status());
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Vertex names are stable operator ids (they key checkpoint state and source positions in the
// Iceberg table), so they derive from table names only; '/' is reserved in task names.
// A Calc vertex running `program`, fed by `upstream` one to one.
runtime::VertexId AddCalc(runtime::JobGraph& graph, const std::string& name, uint32_t parallelism,
                          std::shared_ptr<const CalcProgram> program, runtime::VertexId upstream) {
  runtime::VertexId calc = graph.AddOperator(
      name, parallelism,
      [program](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        return std::unique_ptr<runtime::Operator>(std::make_unique<CalcOperator>(program));
      });
  graph.Connect(upstream, calc, runtime::Partitioning::Forward());
  return calc;
}

// An aggregate vertex (window or GROUP BY) running `Op::Make(spec)` in each subtask, on keyed
// state the runtime owns; the spec is checked here first, so its errors come out at plan time.
template <typename Op, typename Spec>
Result<runtime::VertexId> AddAggregate(runtime::JobGraph& graph, const std::string& name,
                                       uint32_t parallelism, const Spec& spec) {
  FLOE_RETURN_NOT_OK(Op::Make(spec).status());
  FLOE_ASSIGN_OR_RAISE(runtime::KeyedStateOptions state, Op::KeyedStateOptionsFor(spec));
  state.from_claims = spec.split_column >= 0;  // scaled out by Kafka partition
  runtime::VertexId v = graph.AddOperator(
      name, parallelism,
      [spec](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        FLOE_ASSIGN_OR_RAISE(auto op, Op::Make(spec));
        return std::unique_ptr<runtime::Operator>(std::move(op));
      });
  graph.SetKeyedState(v, state);
  return v;
}

// A source table with computed columns: a vertex right after the source evaluates them, so the
// rows leave it with every column in declared order (`all_columns`).
// `changelog`: the rows carry the row-kind column after the table's, passed on after them.
Result<runtime::VertexId> AddComputedColumns(runtime::JobGraph& graph, const std::string& name,
                                             const CreateTable& table,
                                             const connectors::TableDescriptor& physical,
                                             std::shared_ptr<const BatchSchema> all_columns,
                                             runtime::VertexId source,
                                             std::shared_ptr<const TimeZone> zone, bool changelog,
                                             ComputedColumnsSpec::FailedRows failed_rows) {
  ComputedColumnsSpec spec;
  spec.failed_rows = failed_rows;
  spec.zone = std::move(zone);
  spec.table = table.name;
  spec.input = changelog ? runtime::WithRowKindColumn(*physical.schema) : physical.schema;
  spec.columns = table.columns;
  spec.output = changelog ? runtime::WithRowKindColumn(*all_columns) : std::move(all_columns);
  if (changelog) {
    ColumnDef kind;
    kind.name = runtime::kRowKindColumn;
    kind.type = DataType::String();
    spec.columns.push_back(std::move(kind));
  }
  FLOE_ASSIGN_OR_RAISE(std::shared_ptr<const ComputedColumnsProgram> program,
                       ComputedColumnsProgram::Compile(spec));
  runtime::VertexId computed = graph.AddOperator(
      name, graph.vertex(source).parallelism,
      [program](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        return std::unique_ptr<runtime::Operator>(
            std::make_unique<ComputedColumnsOperator>(program));
      });
  graph.Connect(source, computed, runtime::Partitioning::Forward());
  return computed;
}

std::string VertexName(std::string_view prefix, const std::string& table) {
  std::string name = std::string(prefix) + "-" + table;
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

// Refuses a declared column named like a reserved column (runtime/row_kind.h).
Status CheckReservedColumns(const CreateTable& table) {
  for (const ColumnDef& c : table.columns) {
    const char* what = c.name == runtime::kRowKindColumn       ? "floe's row-kind column"
                       : c.name == runtime::kSourceSplitColumn ? "floe's source-split column"
                       : c.name == runtime::kUndeclaredFieldsColumn
                           ? "floe's undeclared-fields column"
                           : nullptr;
    if (what != nullptr) {
      return Status::InvalidArgument(At(table.pos) + "table '" + table.name + "': column name '" +
                                     c.name + "' is reserved (" + what + ")");
    }
  }
  return Status::OK();
}

// A computed rowtime column as a source evaluates it (connectors::WatermarkSpec::computed).
class ComputedEventTime final : public connectors::EventTimeColumn {
 public:
  explicit ComputedEventTime(std::shared_ptr<const ComputedColumnsProgram> program)
      : program_(std::move(program)) {}
  Result<Column> Compute(const RecordBatch& physical) const override {
    FLOE_ASSIGN_OR_RAISE(RecordBatch time, program_->Apply(physical));
    return time.column(0);
  }

 private:
  std::shared_ptr<const ComputedColumnsProgram> program_;
};

// The table as its connector sees it: physical columns only (computed ones are evaluated after
// the source and never written), and its watermark.
// `zone`: the session zone a computed rowtime is evaluated in.
connectors::TableDescriptor Describe(const CreateTable& table,
                                     const std::shared_ptr<const TimeZone>& zone) {
  connectors::TableDescriptor d;
  d.name = table.name;
  auto schema = std::make_shared<BatchSchema>();
  int32_t id = 1;
  for (const ColumnDef& c : table.columns) {
    if (c.computed) continue;
    bool in_key = std::find(table.primary_key.begin(), table.primary_key.end(), c.name) !=
                  table.primary_key.end();
    // Flink: primary-key columns are NOT NULL whatever they say.
    Field& f = schema->fields.emplace_back(Field{c.name, c.type, !c.not_null && !in_key, id++});
    // Connectors that write by precision (avro-confluent's timestamp-millis) need it.
    if (c.type.id == TypeId::kTimestamp || c.type.id == TypeId::kTimestampTz) {
      f.precision = c.precision;
    }
    if (c.metadata) d.metadata.push_back({c.name, *c.metadata, c.is_virtual});
  }
  d.schema = std::move(schema);
  d.primary_key = table.primary_key;
  d.partitioned_by = table.partitioned_by;
  for (const auto& [k, v] : table.options) d.options[k] = v;
  if (table.watermark) {
    int column = d.schema->FieldIndex(table.watermark->column);
    if (column >= 0) {
      d.watermark = connectors::WatermarkSpec{column, table.watermark->delay_millis, nullptr};
    } else if (const ColumnDef* time = table.FindColumn(table.watermark->column);
               time != nullptr && time->computed) {
      // A computed rowtime: sources that make watermarks evaluate it on their physical rows
      // (a bad expression is reported where the computed columns are planned).
      ComputedColumnsSpec spec;
      spec.zone = zone;
      spec.table = table.name;
      spec.input = d.schema;
      spec.columns = {*time};
      spec.output = std::make_shared<BatchSchema>(
          BatchSchema{{Field{time->name, time->type, !time->not_null, 1}}});
      Result<std::shared_ptr<const ComputedColumnsProgram>> program =
          ComputedColumnsProgram::Compile(spec);
      if (program.ok()) {
        d.watermark = connectors::WatermarkSpec{-1, table.watermark->delay_millis,
                                                std::make_shared<ComputedEventTime>(*program)};
      }
    }
  }
  return d;
}

// Where a config key was set, for messages: "line L, column C: " or "".
struct ConfigOrigin {
  std::map<std::string, SourcePos> set_at;
  std::set<std::string> overridden;

  std::string Of(const std::string& key) const {
    if (overridden.count(key) != 0) return "(set by the command line) ";
    auto it = set_at.find(key);
    return it == set_at.end() ? "" : At(it->second);
  }
  // The origin of the first known key the message mentions.
  std::string ForMessage(const std::string& message) const {
    std::string best;
    size_t best_len = 0;
    for (const auto& [key, pos] : set_at) {
      if (key.size() > best_len && message.find(key) != std::string::npos) {
        best = key;
        best_len = key.size();
      }
    }
    for (const std::string& key : overridden) {
      if (key.size() > best_len && message.find(key) != std::string::npos) {
        best = key;
        best_len = key.size();
      }
    }
    return best.empty() ? "" : Of(best);
  }
};

// `meaning`, when set, follows the range in the message: what the number counts.
Result<int64_t> ConfigInt(const std::map<std::string, std::string>& config,
                          const ConfigOrigin& origin, const std::string& key, int64_t fallback,
                          int64_t min, int64_t max, const std::string& meaning = "") {
  auto it = config.find(key);
  if (it == config.end()) return fallback;
  const std::string& text = it->second;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
    return Status::InvalidArgument(origin.Of(key) + "'" + key + "' must be an integer in [" +
                                   std::to_string(min) + ", " + std::to_string(max) + "]" +
                                   (meaning.empty() ? "" : " (" + meaning + ")") + ", got '" +
                                   text + "'");
  }
  return v;
}

// `key`, or Flink's deprecated `old_key` when `key` is unset: "true" or "false" (any case).
Result<bool> ConfigBool(const std::map<std::string, std::string>& config,
                        const ConfigOrigin& origin, const std::string& key,
                        const std::string& old_key, bool fallback) {
  auto it = config.find(key);
  if (it == config.end()) it = config.find(old_key);
  if (it == config.end()) return fallback;
  const std::string value = Lower(it->second);
  if (value != "true" && value != "false") {
    return Status::InvalidArgument(origin.Of(it->first) + "'" + it->first +
                                   "' must be true or false, got '" + it->second + "'");
  }
  return value == "true";
}

Result<runtime::RestartStrategy> ParseRestartStrategy(
    const std::map<std::string, std::string>& config, const ConfigOrigin& origin) {
  runtime::RestartStrategy r;  // floe's default: fixed-delay, 3 attempts, 1 s
  std::string key = "restart-strategy.type";
  auto it = config.find(key);
  if (it == config.end()) {
    key = "restart-strategy";  // the pre-1.19 name
    it = config.find(key);
  }
  if (it != config.end()) {
    std::string type = Lower(it->second);
    if (type == "none" || type == "off" || type == "disable") {
      r.kind = runtime::RestartStrategy::Kind::kNone;
    } else if (type == "fixed-delay" || type == "fixeddelay") {
      r.kind = runtime::RestartStrategy::Kind::kFixedDelay;
    } else {
      return Status::InvalidArgument(origin.Of(key) + "'" + key + "' must be 'fixed-delay' or " +
                                     "'none' (failure-rate and exponential-delay are not " +
                                     "supported yet), got '" + it->second + "'");
    }
  }
  FLOE_ASSIGN_OR_RAISE(int64_t attempts,
                       ConfigInt(config, origin, "restart-strategy.fixed-delay.attempts",
                                 r.attempts, 0, std::numeric_limits<int32_t>::max()));
  r.attempts = static_cast<int>(attempts);
  const std::string delay_key = "restart-strategy.fixed-delay.delay";
  if (auto d = config.find(delay_key); d != config.end()) {
    Result<std::chrono::milliseconds> delay = runtime::ParseDuration(d->second);
    if (!delay.ok()) {
      return Status::InvalidArgument(origin.Of(delay_key) + "'" + delay_key +
                                     "' must be a duration such as '1 s' or '500 ms', got '" +
                                     d->second + "'");
    }
    r.delay_ms = delay->count();
  }
  return r;
}

enum class Role { kSource, kSink };

// The table's connector, checked against what `role` can use.
// The table's METADATA columns against what its connector gives: keys it knows, declared with
// their types; none on a table written to (floe writes no metadata yet).
Status CheckMetadataColumns(const CreateTable& table, const connectors::Connector& c, Role role) {
  for (const ColumnDef& column : table.columns) {
    if (!column.metadata) continue;
    const std::string where = At(column.pos) + "table '" + table.name + "', metadata column '" +
                              column.name + "' (key '" + *column.metadata + "'): ";
    if (role == Role::kSink) {
      return Status::InvalidArgument(where +
                                     "the table is written by an INSERT, and floe's sinks write "
                                     "no metadata; declare the column as a regular one");
    }
    std::string known;
    for (const auto& [key, type] : c.source_metadata) {
      known += (known.empty() ? "'" : ", '") + key + "' " + type;
      if (key != *column.metadata) continue;
      if (ToString(column.sql_type()) != type) {
        return Status::InvalidArgument(where + "connector '" + c.name + "' gives it as " + type +
                                       ", declared " + ToString(column.sql_type()) +
                                       "; declare it " + type);
      }
      known.clear();
      break;
    }
    if (!known.empty() || c.source_metadata.empty()) {
      return Status::InvalidArgument(
          where + "connector '" + c.name + "' has no such metadata key" +
          (c.source_metadata.empty() ? " (it gives none)" : "; it gives " + known));
    }
  }
  return Status::OK();
}

Result<const connectors::Connector*> ConnectorOf(const CreateTable& table, Role role) {
  const connectors::ConnectorRegistry& registry = connectors::BuiltinConnectors();
  auto it = std::find_if(table.options.begin(), table.options.end(),
                         [](const auto& kv) { return kv.first == "connector"; });
  if (it == table.options.end()) {
    return Status::InvalidArgument(
        At(table.pos) + "table '" + table.name +
        "' has no 'connector' option; known connectors: " + registry.Names());
  }
  const std::string& name = it->second;
  const connectors::Connector* c = registry.Find(name);
  if (c == nullptr) {
    return Status::InvalidArgument(At(table.pos) + "table '" + table.name +
                                   "': unknown connector '" + name +
                                   "'; known connectors: " + registry.Names());
  }
  if (role == Role::kSource && !c->add_source) {
    return Status::InvalidArgument(
        At(table.pos) + "table '" + table.name + "' is read by an INSERT, but connector '" + name +
        "' can only be written; readable connectors: " + registry.SourceNames());
  }
  if (role == Role::kSink && !c->add_sink) {
    return Status::InvalidArgument(
        At(table.pos) + "table '" + table.name + "' is written by an INSERT, but connector '" +
        name + "' can only be read; writable connectors: " + registry.SinkNames());
  }
  FLOE_RETURN_NOT_OK(CheckMetadataColumns(table, *c, role));
  if (!table.partitioned_by.empty() && !c->partitioned_by) {
    return Status::InvalidArgument(At(table.pos) + "table '" + table.name + "': connector '" +
                                   name +
                                   "' does not support PARTITIONED BY (only 'iceberg' does)");
  }
  return c;
}

// "<source task>=<connector>(k=v,...)" over the connector's identity options, in key order.
std::string Upstream(const std::string& source_task, const connectors::Connector& connector,
                     const connectors::TableDescriptor& table) {
  std::string out = source_task + "=" + connector.name + "(";
  std::vector<std::string> keys = connector.identity_options;
  std::sort(keys.begin(), keys.end());
  bool first = true;
  for (const std::string& key : keys) {
    auto it = table.options.find(key);
    if (it == table.options.end()) continue;
    out += (first ? "" : ",") + key + "=" + it->second;
    first = false;
  }
  return out + ")";
}

// A changelog (updates and deletes) may only go where it can be applied, as in Flink, which
// refuses an append-only sink for an updating input.
Status CheckChangelogSink(const std::string& why, const CreateTable& sink,
                          const connectors::Connector& sink_connector,
                          const connectors::TableDescriptor& sink_table) {
  if (!sink_connector.accepts_changelog) {
    return Status::InvalidArgument(
        At(sink.pos) + why + " but sink '" + sink.name + "' (connector '" + sink_connector.name +
        "') accepts inserts only; changelog sinks: " +
        connectors::BuiltinConnectors().ChangelogSinkNames() + " (iceberg with an upsert table)");
  }
  Status st = sink_connector.accepts_changelog(sink_table);
  if (st.ok()) return st;
  return Status(st.code(), At(sink.pos) + why + " but " + st.message());
}

// Types expressions over an aggregate's layout as the evaluator will compute them.
ExpressionTyper EvaluatorTyper() {
  return [](const Expr& e, const BatchSchema& layout) -> Result<SqlType> {
    FLOE_ASSIGN_OR_RAISE(ScalarExpr value,
                         ScalarExpr::Compile(e, layout, "in the select list or HAVING", nullptr));
    return value.type();
  };
}

// Validates an aggregating INSERT against its tables and connectors: the query itself
// (PlanAggregate), its output against the sink's columns (Flink's implicit widening, as the
// Calc applies it), and where a changelog may go.
Result<AggregatePlan> CheckAggregate(const Script& script, const Insert& insert,
                                     const CreateTable& sink,
                                     const connectors::Connector& sink_connector,
                                     const connectors::TableDescriptor& sink_table) {
  FLOE_ASSIGN_OR_RAISE(AggregatePlan plan, PlanAggregate(script, insert, EvaluatorTyper()));
  // The aggregate's output goes to the sink through a Calc that converts types.
  CalcSpec calc;
  calc.input = plan.output;
  for (size_t i = 0; i < insert.select.size(); ++i) {
    Expr column = Expr::Column(plan.output->fields[i].name);
    column.pos = insert.select[i].expr.pos;
    calc.select.push_back({std::move(column), insert.select[i].alias});
  }
  calc.output = sink_table.schema;
  calc.sink_name = sink.name;
  FLOE_RETURN_NOT_OK(CompileCalc(calc, insert.pos).status());
  if (plan.emits_changelog()) {
    FLOE_RETURN_NOT_OK(CheckChangelogSink(
        "the GROUP BY aggregation (no window) emits a changelog: every input row updates its "
        "group's result (-U/+U)",
        sink, sink_connector, sink_table));
  }
  return plan;
}

// ---- the job's settings --------------------------------------------------------------------

// 'table.local-time-zone' as Flink takes it (common/time_zone.h): a zone of the system's tz
// database or an offset; 'default' (Flink's default) is the machine's zone.
Result<std::shared_ptr<const TimeZone>> SessionZone(
    const std::map<std::string, std::string>& config, const ConfigOrigin& origin) {
  auto it = config.find("table.local-time-zone");
  if (it == config.end()) return TimeZone::Load("default");
  Result<std::shared_ptr<const TimeZone>> zone = TimeZone::Load(it->second);
  if (!zone.ok()) {
    return Status(zone.status().code(), origin.Of(it->first) + "'table.local-time-zone' = '" +
                                            it->second + "': " + zone.status().message());
  }
  return zone;
}

// The session zone windows over a `time` column are laid out in: TIMESTAMP_LTZ's (WindowClock).
std::shared_ptr<const TimeZone> WindowZone(const PlannedJob& job, const DataType& time) {
  return time.id == TypeId::kTimestampTz ? job.context.session_zone : nullptr;
}

// The SETs in order (the last one of a key wins), then the overrides, and what they configure:
// checkpointing, restarts, monitoring, parallelism and the context the operators share.
// Whether the query calls CURRENT_WATERMARK, each call checked as Flink checks it: its one
// argument is the table's rowtime attribute (its WATERMARK column).
Result<bool> UsesCurrentWatermark(const Insert& query, const CreateTable& source) {
  bool uses = false;
  std::function<Status(const Expr&)> visit = [&](const Expr& e) -> Status {
    if (e.kind == ExprKind::kCall && e.name == "CURRENT_WATERMARK") {
      uses = true;
      const bool rowtime = e.children.size() == 1 && e.children[0].kind == ExprKind::kColumn &&
                           source.watermark && e.children[0].name == source.watermark->column;
      if (!rowtime) {
        return Status::InvalidArgument(
            At(e.pos) + "invalid call " + ToString(e) +
            ": CURRENT_WATERMARK takes the table's rowtime attribute" +
            (source.watermark ? " ('" + source.watermark->column + "', its WATERMARK column)"
                              : ", and table '" + source.name + "' declares no WATERMARK"));
      }
    }
    for (const Expr& child : e.children) FLOE_RETURN_NOT_OK(visit(child));
    return Status::OK();
  };
  for (const SelectItem& item : query.select) FLOE_RETURN_NOT_OK(visit(item.expr));
  for (const Expr& key : query.group_by) FLOE_RETURN_NOT_OK(visit(key));
  if (query.where) FLOE_RETURN_NOT_OK(visit(*query.where));
  if (query.having) FLOE_RETURN_NOT_OK(visit(*query.having));
  return uses;
}

// Every job setting floe reads (docs/connectors.md, "Job settings"), by the module that reads
// it; a key not here, nor under kRocksDbPrefix (the state module refuses the ones it does not
// read), is refused rather than ignored.
const std::vector<std::string> kJobOptions = {
    // runtime::CheckpointConfig
    "execution.checkpointing.interval", "execution.checkpointing.min-pause",
    "execution.checkpointing.timeout", "execution.checkpointing.max-concurrent-checkpoints",
    "execution.checkpointing.tolerable-failed-checkpoints", "execution.checkpointing.num-retained",
    "state.checkpoints.num-retained", "execution.checkpointing.incremental",
    "state.backend.incremental", "execution.savepoint.ignore-unclaimed-state",
    "execution.checkpointing.mode", "execution.checkpointing.externalized-checkpoint-retention",
    "execution.checkpointing.unaligned.enabled", "execution.checkpointing.unaligned",
    "execution.checkpointing.dir", "state.checkpoints.dir", "execution.checkpointing.savepoint-dir",
    "state.savepoints.dir",
    // io::kFlinkS3Options, for s3:// checkpoint and savepoint directories
    "s3.endpoint", "s3.path.style.access", "s3.access-key", "s3.secret-key", "s3.session-token",
    "s3.region",
    // runtime::ParseMonitoringConfig
    "floe.monitoring.enabled", "metrics.reporter.prom.port", "rest.port", "rest.bind-address",
    "floe.stall-alarm.threshold", "floe.stall-alarm.action",
    // runtime::KeyedStateOptions
    "state.backend.type", "state.backend", "table.exec.state.ttl",
    // the Kafka source
    "table.exec.source.idle-timeout",
    // PlanSettings
    "restart-strategy.type", "restart-strategy", "restart-strategy.fixed-delay.attempts",
    "restart-strategy.fixed-delay.delay", "pipeline.max-parallelism", "parallelism.default",
    "pipeline.operator-chaining.enabled", "pipeline.operator-chaining",
    "table.exec.window-agg.buffer-size-limit", "table.local-time-zone", "floe.scale-out",
    "pipeline.auto-watermark-interval",
    // the coordinator: the job's name in job.json, `floe list`, `floe status` and the web UI
    "pipeline.name"};
const std::vector<std::pair<std::string, std::string>> kJobOptionsWithOneValue = {
    {"table.exec.deduplicate.mini-batch.compact-changes-enabled", "false"},
    {"execution.runtime-mode", "streaming"},
    {"table.exec.mini-batch.enabled", "false"}};
constexpr std::string_view kRocksDbPrefix = "state.backend.rocksdb.";

// Flink accepts any key and ignores the ones nothing reads; a misspelt or unsupported setting
// would then silently run the job some other way than its author wrote.
Status RefuseOptionsNotHonoured(const std::map<std::string, std::string>& config,
                                const ConfigOrigin& origin) {
  for (const auto& entry : config) {
    const std::string& key = entry.first;  // a name, not a binding: the lambda below reads it
    if (std::find(kJobOptions.begin(), kJobOptions.end(), key) != kJobOptions.end() ||
        key.starts_with(kRocksDbPrefix)) {
      continue;
    }
    bool one_value = std::any_of(kJobOptionsWithOneValue.begin(), kJobOptionsWithOneValue.end(),
                                 [&](const auto& kv) { return kv.first == key; });
    if (one_value) continue;
    return Status::InvalidArgument(origin.Of(key) + "'" + key + "' is not a setting floe honours" +
                                   DidYouMean(key, kJobOptions) +
                                   "; refused rather than ignored (docs/connectors.md, \"Job "
                                   "settings\", lists what floe reads)");
  }
  return Status::OK();
}

Status PlanSettings(const Script& script, const PlanOptions& options, PlannedJob* job) {
  ConfigOrigin origin;
  for (const SetStatement& s : script.sets) {
    job->config[s.key] = s.value;
    origin.set_at[s.key] = s.pos;
  }
  for (const auto& [k, v] : options.config_overrides) {
    job->config[k] = v;
    origin.overridden.insert(k);
  }
  Result<runtime::CheckpointConfig> checkpointing =
      runtime::CheckpointConfig::FromOptions(job->config);
  if (!checkpointing.ok()) {
    const Status& st = checkpointing.status();
    return Status(st.code(), origin.ForMessage(st.message()) + st.message());
  }
  job->checkpointing = std::move(checkpointing).value();
  job->checkpointing.ScopeToJob(options.job_id);
  FLOE_ASSIGN_OR_RAISE(job->restart, ParseRestartStrategy(job->config, origin));
  FLOE_ASSIGN_OR_RAISE(
      job->monitoring,
      runtime::ParseMonitoringConfig(job->config, job->checkpointing.interval,
                                     [&](const std::string& key) { return origin.Of(key); }));
  FLOE_ASSIGN_OR_RAISE(int64_t max_parallelism,
                       ConfigInt(job->config, origin, "pipeline.max-parallelism", 128, 1, 32768));
  FLOE_ASSIGN_OR_RAISE(int64_t parallelism, ConfigInt(job->config, origin, "parallelism.default", 1,
                                                      1, max_parallelism));
  job->graph.set_max_parallelism(static_cast<uint32_t>(max_parallelism));
  FLOE_ASSIGN_OR_RAISE(job->operator_chaining,
                       ConfigBool(job->config, origin, "pipeline.operator-chaining.enabled",
                                  "pipeline.operator-chaining", false));
  // Read again where an aggregate opens its state; checked here so a backend floe lacks or a
  // bad TTL is refused before a worker starts, also by a job without state.
  Result<runtime::KeyedStateOptions> state =
      runtime::KeyedStateOptions::FromOptions(job->config, runtime::TaskInfo{});
  if (!state.ok()) {
    const Status& st = state.status();
    return Status(st.code(), origin.ForMessage(st.message()) + st.message());
  }
  FLOE_ASSIGN_OR_RAISE(
      int64_t window_buffer,
      ConfigInt(job->config, origin, "table.exec.window-agg.buffer-size-limit",
                static_cast<int64_t>(DefaultWindowBufferLimit(state->backend)), 0, INT32_MAX,
                "windows held in memory before they are written to the keyed state"));
  job->window_buffer_limit = static_cast<size_t>(window_buffer);

  job->context.job_id = options.job_id;
  job->context.mode = job->checkpointing.mode;
  job->context.config = job->config;
  job->context.positions = std::make_shared<runtime::SourcePositionBoard>();
  job->context.checkpointing = job->checkpointing;
  job->context.restart_delay_ms =
      job->restart.kind == runtime::RestartStrategy::Kind::kNone ? 0 : job->restart.delay_ms;
  job->context.default_parallelism = static_cast<uint32_t>(parallelism);
  FLOE_ASSIGN_OR_RAISE(job->context.session_zone, SessionZone(job->config, origin));
  // Flink keys floe takes only with the value it runs by: another would change results (the
  // compaction) or ask for what floe does not do (batch, buffering rows).
  for (const auto& [key, honoured] : kJobOptionsWithOneValue) {
    auto it = job->config.find(key);
    if (it == job->config.end() || Lower(it->second) == honoured) continue;
    return Status::InvalidArgument(origin.Of(key) + "'" + key + "' = '" + it->second +
                                   "' is not supported: floe runs it as '" + honoured + "'");
  }
  if (auto it = job->config.find("floe.scale-out"); it != job->config.end()) {
    if (it->second == "kafka-group") {
      job->context.scale_out = std::make_shared<connectors::ScaleOut>();
    } else if (it->second != "none") {
      return Status::InvalidArgument(origin.Of(it->first) +
                                     "'floe.scale-out' must be 'none' (one instance runs the "
                                     "job) or 'kafka-group' (instances share the Kafka topic "
                                     "through its consumer group), got '" +
                                     it->second + "'");
    }
  }
  if (auto it = job->config.find("pipeline.auto-watermark-interval"); it != job->config.end()) {
    Result<std::chrono::milliseconds> interval = runtime::ParseDuration(it->second);
    if (!interval.ok()) {
      return Status::InvalidArgument(origin.Of(it->first) + "'" + it->first +
                                     "' must be a duration such as '200 ms' (0 emits every "
                                     "rising watermark), got '" +
                                     it->second + "'");
    }
    job->context.auto_watermark_interval = *interval;
  }
  return RefuseOptionsNotHonoured(job->config, origin);
}

// ---- one INSERT, stage by stage ------------------------------------------------------------

// What the stages planning one INSERT share, filled in as they run: ResolveInsert sets the
// tables and names, PlanSource and PlanComputedColumns the source side, DescribeSink the sink's.
struct InsertPlan {
  const Insert* insert = nullptr;
  const CreateTable* source = nullptr;
  const CreateTable* sink = nullptr;
  // "-<ordinal of the INSERT>" when several INSERTs read the source (write the sink), else "".
  std::string source_suffix;
  std::string sink_suffix;
  std::string source_name;  // the source vertex

  const connectors::Connector* source_connector = nullptr;
  connectors::TableDescriptor source_table;
  // A changelog source (debezium-json) emits updates and deletes: its rows carry the reserved
  // row-kind column through the Calc to the sink, which must be able to apply them.
  bool changelog = false;
  // The rows carry their records' undeclared fields (runtime::kUndeclaredFieldsColumn) from the
  // source through the Calc to the sink, which grows its table by them (CarriesUndeclaredFields).
  bool undeclared = false;
  // The source is an aggregating view (PlanViewSource): watermarks arrive with its rows.
  bool watermarks_from_view = false;
  // The source is a window aggregation's view: the names of its window_start and window_end
  // columns (a window Top-N over it partitions by them).
  std::pair<std::string, std::string> view_window;
  std::shared_ptr<const TimeZone> view_window_zone;  // its windows' (WindowZone)
  // What the sink's input reads (PlanSink's upstream), when it is not `source`: a UNION ALL
  // view's sources.
  std::string upstream;
  // What the rest of the graph reads: every column once computed ones are evaluated.
  runtime::VertexId out;
  std::shared_ptr<const BatchSchema> row_schema;

  const connectors::Connector* sink_connector = nullptr;
  connectors::TableDescriptor sink_table;
  // Aggregate arguments that are expressions, as hidden computed columns `$arg<k>` appended to
  // the rows right before the aggregate (RewriteAggregateArguments).
  std::vector<ColumnDef> aggregate_arguments;

  // The name of a vertex of this INSERT that belongs to its sink table ("calc", "where", ...).
  std::string SinkSide(std::string_view prefix) const {
    return VertexName(prefix, sink->name) + sink_suffix;
  }
  // The same for the source table ("computed", "watermarks").
  std::string SourceSide(std::string_view prefix) const {
    return VertexName(prefix, source->name) + source_suffix;
  }
};

// How many INSERTs read and write each table.
struct TableUses {
  std::map<std::string, int> as_source, as_sink;

  static bool Several(const std::map<std::string, int>& uses, const std::string& table) {
    auto it = uses.find(table);
    return it != uses.end() && it->second > 1;
  }
};

// The tables of `query`, the `ordinal`-th INSERT (0-based) or its `branch`-th query after UNION
// ALL (each its own source vertex), their reserved columns checked, and the names its vertices
// get.
Result<InsertPlan> ResolveQuery(const Script& script, const Insert& query, size_t ordinal,
                                size_t branch, const TableUses& uses) {
  InsertPlan p;
  p.insert = &query;
  p.source = script.FindTable(p.insert->source);  // none for a view: PlanViewSource
  p.sink = script.FindTable(p.insert->sink);
  if ((p.source == nullptr && p.insert->from_view.empty()) || p.sink == nullptr) {
    return Status::Internal(At(p.insert->pos) + "INSERT names a table the parser did not check");
  }
  std::string suffix = "-" + std::to_string(ordinal + 1);
  p.source_suffix = TableUses::Several(uses.as_source, p.insert->source)
                        ? suffix + (branch > 0 ? "-" + std::to_string(branch + 1) : "")
                        : "";
  p.sink_suffix = TableUses::Several(uses.as_sink, p.sink->name) ? suffix : "";
  if (p.source != nullptr) {
    p.source_name = p.SourceSide("source");
    FLOE_RETURN_NOT_OK(CheckReservedColumns(*p.source));
  }
  FLOE_RETURN_NOT_OK(CheckReservedColumns(*p.sink));
  return p;
}

// The tables of the `ordinal`-th INSERT (0-based), their reserved columns checked, and the
// names its vertices get. A table read (or written) by several INSERTs gets one vertex per
// INSERT, told apart by the INSERT's ordinal; otherwise names carry only the table name, so
// editing one INSERT does not rename another's operators.
Result<InsertPlan> ResolveInsert(const Script& script, size_t ordinal, const TableUses& uses) {
  return ResolveQuery(script, script.inserts[ordinal], ordinal, 0, uses);
}

// Whether the INSERT's rows carry their records' undeclared fields to its sink: the sink grows
// its table by them (Iceberg with 'sink.schema-evolution' = 'add-columns'), the source can give
// them (Kafka json), and the query copies every column as it is (SELECT *; no aggregate, window,
// rank or computed column between). docs/connectors.md, "Schema evolution".
bool CarriesUndeclaredFields(const PlannedJob& job, const InsertPlan& p) {
  const Insert& q = *p.insert;
  if (p.source == nullptr || p.sink == nullptr || !q.from_view.empty() || !q.union_all.empty() ||
      !q.select.empty() || q.window || q.row_number || IsAggregateQuery(q) ||
      p.source->has_computed_columns() || job.context.scale_out) {
    return false;
  }
  Result<const connectors::Connector*> source = ConnectorOf(*p.source, Role::kSource);
  Result<const connectors::Connector*> sink = ConnectorOf(*p.sink, Role::kSink);
  if (!source.ok() || !sink.ok() || !(*source)->gives_undeclared_fields ||
      !(*sink)->takes_undeclared_fields) {
    return false;
  }
  return (*source)->gives_undeclared_fields(Describe(*p.source, nullptr)) &&
         (*sink)->takes_undeclared_fields(Describe(*p.sink, nullptr));
}

// The source vertex, added by the table's connector.
Status PlanSource(PlannedJob& job, InsertPlan& p) {
  FLOE_ASSIGN_OR_RAISE(p.source_connector, ConnectorOf(*p.source, Role::kSource));
  p.source_table = Describe(*p.source, job.context.session_zone);
  p.undeclared = CarriesUndeclaredFields(job, p);
  p.source_table.undeclared_fields = p.undeclared;
  Result<runtime::VertexId> source_vertex = p.source_connector->add_source(
      connectors::SourceRequest{&job.graph, p.source_name, &p.source_table, &job.context});
  if (!source_vertex.ok()) return AtPos(p.source->pos, source_vertex.status());
  p.changelog =
      p.source_connector->emits_changelog && p.source_connector->emits_changelog(p.source_table);
  p.out = *source_vertex;
  if (p.source_table.options.count(std::string(connectors::kBadRecordsTableOption)) != 0) {
    job.dead_letter_sources.push_back({p.source->name, *source_vertex, std::nullopt});
  }
  p.row_schema = p.source_table.schema;
  return Status::OK();
}

// The vertex evaluating the source table's computed columns, if it has any.
Status PlanComputedColumns(PlannedJob& job, InsertPlan& p) {
  if (!p.source->has_computed_columns()) return Status::OK();
  if (job.context.scale_out) {
    return Status::NotImplemented(At(p.source->pos) + "not implemented yet: computed columns " +
                                  "with 'floe.scale-out' = 'kafka-group' ('" + p.source->name +
                                  "')");
  }
  p.row_schema = RowSchemaOf(*p.source);
  PlannedJob::DeadLetterSource* dead = nullptr;
  for (auto& d : job.dead_letter_sources) {
    if (d.source.value == p.out.value) dead = &d;
  }
  // Rows whose computed columns fail follow the source's 'scan.bad-records' (Kafka's option).
  using FailedRows = ComputedColumnsSpec::FailedRows;
  auto policy = p.source_table.options.find(std::string(connectors::kBadRecordsOption));
  const FailedRows failed_rows =
      dead != nullptr                                                      ? FailedRows::kSideOutput
      : policy != p.source_table.options.end() && policy->second == "skip" ? FailedRows::kSkip
                                                                           : FailedRows::kFail;
  Result<runtime::VertexId> computed =
      AddComputedColumns(job.graph, p.SourceSide("computed"), *p.source, p.source_table,
                         p.row_schema, p.out, job.context.session_zone, p.changelog, failed_rows);
  if (!computed.ok()) return computed.status();
  if (dead != nullptr) dead->computed = *computed;
  p.out = *computed;
  return Status::OK();
}

// An aggregating INSERT whose aggregates take expressions (SUM(price * qty), COUNT(1)) or
// whose GROUP BY has expressions (GROUP BY a % 10), as PlanAggregate sees it: each such
// expression a hidden column of the source (`$arg<k>`, `$key<k>`), computed right before the
// aggregate (after WHERE, so a row WHERE drops cannot fail it, as in Flink's Calc); COUNT of a
// literal is COUNT(*). A select item or HAVING term equal to a GROUP BY expression reads its
// hidden key column.
struct AggregateArguments {
  Script script;  // the source table with the hidden columns, when there are any
  Insert insert;  // the arguments rewritten
  std::vector<ColumnDef> hidden;
};

class AggregateArgumentRewriter {
 public:
  AggregateArgumentRewriter(const InsertPlan& p, bool scale_out, AggregateArguments* out)
      : p_(p), scale_out_(scale_out), out_(out) {}

  // GROUP BY expressions into hidden key columns.
  Status RewriteGroupBy() {
    for (Expr& item : out_->insert.group_by) {
      if (item.kind == ExprKind::kColumn || ContainsAggregateCall(item)) continue;
      const Expr grouped = item;
      FLOE_ASSIGN_OR_RAISE(item, Hide(item, "$key"));
      keys_.emplace_back(grouped, item);
    }
    return Status::OK();
  }

  // VAR_POP(x) and its kin as Calcite reduces them (AggregateReduceFunctionsRule), over SUM(x *
  // x), SUM(x) and COUNT(x) in x's arithmetic, cast to x's type:
  //   VAR_POP  (SUM(x * x) - SUM(x) * SUM(x) / COUNT(x)) / COUNT(x)
  //   VAR_SAMP the same over CASE WHEN COUNT(x) = 1 THEN NULL ELSE COUNT(x) - 1 END
  //   STDDEV_* POWER(VAR_*, 0.5)
  Status Reduce(Expr& e) {
    const std::string name = e.name == "STDDEV"     ? "STDDEV_SAMP"
                             : e.name == "VARIANCE" ? "VAR_SAMP"
                                                    : e.name;
    if (e.children.size() != 1 || e.distinct || e.star) {
      return Status::InvalidArgument(At(e.pos) + e.name + " takes one argument (no DISTINCT)");
    }
    const Expr x = e.children[0];
    FLOE_ASSIGN_OR_RAISE(
        ScalarExpr typed,
        ScalarExpr::Compile(x, *p_.row_schema, "in an aggregate's argument", nullptr));
    const SqlType type = typed.type();
    const TypeId id = type.type.id;
    if (id != TypeId::kInt32 && id != TypeId::kInt64 && id != TypeId::kFloat &&
        id != TypeId::kDouble) {
      return Status::NotImplemented(At(e.pos) + "not implemented yet: " + e.name + " of " +
                                    SqlTypeName(type.type) + " (INT, BIGINT, FLOAT, DOUBLE)");
    }
    const auto at = [&](Expr node) {
      node.pos = e.pos;
      return node;
    };
    const Expr sum = at(Expr::Call("SUM", {x}));
    const Expr count = at(Expr::Call("COUNT", {x}));
    const Expr squares = at(Expr::Call("SUM", {at(Expr::Arith(ArithOp::kMul, x, x))}));
    const Expr spread = at(Expr::Arith(
        ArithOp::kSub, squares,
        at(Expr::Arith(ArithOp::kDiv, at(Expr::Arith(ArithOp::kMul, sum, sum)), count))));
    const bool sample = name == "VAR_SAMP" || name == "STDDEV_SAMP";
    Expr divisor = count;
    if (sample) {
      divisor =
          at(Expr::Case({at(Expr::Compare(CompareOp::kEq, count, Expr::Lit(Literal::Integer(1)))),
                         Expr::Lit(Literal::Null()),
                         at(Expr::Arith(ArithOp::kSub, count, Expr::Lit(Literal::Integer(1))))}));
    }
    Expr value = at(Expr::Arith(ArithOp::kDiv, spread, divisor));
    if (name == "STDDEV_POP" || name == "STDDEV_SAMP") {
      value = at(Expr::Call("POWER", {value, Expr::Lit(Literal::Decimal("0.5"))}));
    }
    e = at(Expr::Cast(std::move(value), type));
    return Status::OK();
  }

  // The aggregates anywhere in `e` (not inside another: PlanAggregate refuses that), and the
  // terms equal to a GROUP BY expression.
  Status Rewrite(Expr& e) {
    if (e.kind == ExprKind::kCall && IsReducedAggregate(e.name)) FLOE_RETURN_NOT_OK(Reduce(e));
    for (const auto& [grouped, column] : keys_) {
      if (e == grouped) {
        e = column;
        return Status::OK();
      }
    }
    if (e.kind != ExprKind::kCall || !IsAggregateFunction(e.name)) {
      for (Expr& child : e.children) FLOE_RETURN_NOT_OK(Rewrite(child));
      return Status::OK();
    }
    // LISTAGG(x, 'separator'): x may be an expression too.
    const size_t arguments = e.name == "LISTAGG" && e.children.size() == 2 ? 2 : 1;
    if (e.star || e.children.size() != arguments) return Status::OK();  // PlanAggregate judges
    Expr& arg = e.children[0];
    if (arg.kind == ExprKind::kColumn || ContainsAggregateCall(arg)) return Status::OK();
    if (e.name == "COUNT" && !e.distinct && arg.kind == ExprKind::kLiteral) {
      e.star = true;  // a literal is never NULL: COUNT(1) counts rows
      e.children.clear();
      return Status::OK();
    }
    FLOE_ASSIGN_OR_RAISE(Expr column, Hide(arg, "$arg"));
    const TypeId type = out_->hidden.back().type.id;
    if ((e.name == "SUM" || e.name == "AVG") && !IsNumericType(type)) {
      return Status::InvalidArgument(At(e.pos) + e.name + " needs a numeric argument, but " +
                                     ToString(arg) + " is " +
                                     SqlTypeName(out_->hidden.back().type));
    }
    arg = std::move(column);
    return Status::OK();
  }

 private:
  // `e` as a hidden computed column named `prefix<k>`; the column reference that reads it.
  Result<Expr> Hide(const Expr& e, const std::string& prefix) {
    if (scale_out_) {
      return Status::NotImplemented(At(e.pos) + "not implemented yet: " +
                                    (prefix == "$key"
                                         ? "GROUP BY an expression"
                                         : "an expression as an aggregate's argument") +
                                    " with 'floe.scale-out' = 'kafka-group'");
    }
    FLOE_ASSIGN_OR_RAISE(
        ScalarExpr value,
        ScalarExpr::Compile(e, *p_.row_schema,
                            prefix == "$key" ? "in GROUP BY" : "in an aggregate's argument",
                            nullptr));
    ColumnDef hidden;
    hidden.name = prefix + std::to_string(out_->hidden.size());
    hidden.type = value.type().type;
    hidden.precision = value.type().precision;
    hidden.pos = e.pos;
    hidden.computed = e;
    out_->hidden.push_back(hidden);
    Expr column = Expr::Column(hidden.name);
    column.pos = e.pos;
    return column;
  }

  const InsertPlan& p_;
  const bool scale_out_;
  AggregateArguments* out_;
  std::vector<std::pair<Expr, Expr>> keys_;  // a GROUP BY expression, its hidden column
};

Result<AggregateArguments> RewriteAggregateArguments(const Script& script, const InsertPlan& p,
                                                     bool scale_out) {
  AggregateArguments out;
  out.insert = *p.insert;
  AggregateArgumentRewriter rewriter(p, scale_out, &out);
  FLOE_RETURN_NOT_OK(rewriter.RewriteGroupBy());
  for (size_t i = 0; i < out.insert.select.size(); ++i) {
    SelectItem& item = out.insert.select[i];
    const bool whole_key = item.expr.kind != ExprKind::kColumn;
    FLOE_RETURN_NOT_OK(rewriter.Rewrite(item.expr));
    // A select item that is a GROUP BY expression keeps Flink's name for it.
    if (whole_key && item.expr.kind == ExprKind::kColumn && item.alias.empty()) {
      item.alias = "EXPR$" + std::to_string(i);
    }
  }
  if (out.insert.having) FLOE_RETURN_NOT_OK(rewriter.Rewrite(*out.insert.having));
  if (out.hidden.empty()) return out;
  out.script = script;
  for (CreateTable& t : out.script.tables) {
    if (t.name != p.source->name) continue;
    t.columns.insert(t.columns.end(), out.hidden.begin(), out.hidden.end());
  }
  return out;
}

// The hidden aggregate arguments, appended to the rows by a vertex before the aggregate.
Result<runtime::VertexId> PlanAggregateArguments(PlannedJob& job, const InsertPlan& p,
                                                 const AggregatePlan& plan, uint32_t parallelism,
                                                 runtime::VertexId upstream) {
  ComputedColumnsSpec spec;
  spec.zone = job.context.session_zone;
  spec.table = p.source->name;
  spec.input = p.row_schema;
  for (const Field& f : p.row_schema->fields) {
    ColumnDef column;
    column.name = f.name;
    column.type = f.type;
    spec.columns.push_back(std::move(column));
  }
  spec.columns.insert(spec.columns.end(), p.aggregate_arguments.begin(),
                      p.aggregate_arguments.end());
  spec.output = plan.input;
  if (p.changelog) {  // the row kinds travel on to the aggregate, last
    spec.input = runtime::WithRowKindColumn(*spec.input);
    ColumnDef kind;
    kind.name = runtime::kRowKindColumn;
    kind.type = DataType::String();
    spec.columns.push_back(std::move(kind));
    spec.output = runtime::WithRowKindColumn(*spec.output);
  }
  FLOE_ASSIGN_OR_RAISE(std::shared_ptr<const ComputedColumnsProgram> program,
                       ComputedColumnsProgram::Compile(spec));
  runtime::VertexId v = job.graph.AddOperator(
      p.SinkSide("arguments"), parallelism,
      [program](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        return std::unique_ptr<runtime::Operator>(
            std::make_unique<ComputedColumnsOperator>(program));
      });
  job.graph.Connect(upstream, v, runtime::Partitioning::Forward());
  return v;
}

// The sink table, checked before the Calc so its errors point at the table.
Status DescribeSink(InsertPlan& p) {
  FLOE_ASSIGN_OR_RAISE(p.sink_connector, ConnectorOf(*p.sink, Role::kSink));
  p.sink_table = Describe(*p.sink, nullptr);
  // The Iceberg sink names its writer and committer after the table alone (its sink id and
  // commit markers are per table), so a second INSERT would collide with the first.
  if (!p.sink_suffix.empty() && p.sink_connector->name == "iceberg") {
    return Status::InvalidArgument(
        At(p.insert->pos) + "table '" + p.sink->name +
        "' is written by more than one INSERT, but floe writes an Iceberg table from one INSERT "
        "per job (its writer, committer and sink id belong to the table)");
  }
  return Status::OK();
}

// The sink vertex after `input`, added by the sink table's connector.
// `upstream`: what the sink's input reads (SinkRequest::upstream); empty: p's source.
Result<connectors::AddedSink> PlanSink(PlannedJob& job, const InsertPlan& p,
                                       runtime::VertexId input, bool changelog,
                                       std::string upstream = "") {
  if (upstream.empty()) upstream = p.upstream;
  if (upstream.empty()) upstream = Upstream(p.source_name, *p.source_connector, p.source_table);
  Result<connectors::AddedSink> added = p.sink_connector->add_sink(
      connectors::SinkRequest{&job.graph, input, p.SinkSide("sink"), &p.sink_table, &job.context,
                              std::move(upstream), changelog, p.undeclared});
  if (!added.ok()) return AtPos(p.sink->pos, added.status());
  return added;
}

Result<std::shared_ptr<const BatchSchema>> PlanWindowTableFunction(PlannedJob& job,
                                                                   const InsertPlan& p,
                                                                   runtime::VertexId* upstream);
runtime::VertexId PlanWatermarkAssigner(PlannedJob& job, const InsertPlan& p,
                                        const WatermarkDef& watermark, uint32_t parallelism,
                                        runtime::VertexId upstream);
Result<runtime::VertexId> PlanWhere(PlannedJob& job, const InsertPlan& p, const Expr& condition,
                                    std::shared_ptr<const BatchSchema> rows, uint32_t parallelism,
                                    runtime::VertexId upstream);

// The Calc of an INSERT without aggregates (`branch`: its query's number in a UNION ALL, from 1;
// 0 for an INSERT of one query).
Result<runtime::VertexId> PlanCalc(PlannedJob& job, const InsertPlan& p, size_t branch = 0) {
  runtime::VertexId upstream = p.out;
  std::shared_ptr<const BatchSchema> rows = p.row_schema;
  FLOE_ASSIGN_OR_RAISE(const bool current_watermark, UsesCurrentWatermark(*p.insert, *p.source));
  if (p.insert->window) {
    FLOE_ASSIGN_OR_RAISE(rows, PlanWindowTableFunction(job, p, &upstream));
  } else if (current_watermark && !p.source_connector->generates_watermarks &&
             !p.watermarks_from_view) {
    const WatermarkDef watermark{p.source->ColumnIndex(p.source->watermark->column),
                                 p.source->watermark->delay_millis};
    upstream =
        PlanWatermarkAssigner(job, p, watermark, job.graph.vertex(upstream).parallelism, upstream);
  }
  CalcSpec calc;
  calc.zone = job.context.session_zone;
  calc.input = p.changelog ? runtime::WithRowKindColumn(*rows) : rows;
  if (job.context.scale_out) calc.input = runtime::WithSourceSplitColumn(*calc.input);
  if (p.undeclared) calc.input = runtime::WithUndeclaredFieldsColumn(*calc.input);
  calc.where = p.insert->where;
  calc.select = p.insert->select;
  calc.output = p.sink_table.schema;
  calc.sink_name = p.sink->name;
  FLOE_ASSIGN_OR_RAISE(std::shared_ptr<const CalcProgram> program,
                       CompileCalc(calc, p.insert->pos));
  uint32_t source_parallelism = job.graph.vertex(upstream).parallelism;
  const std::string name =
      p.SinkSide("calc") + (branch > 0 ? "-" + std::to_string(branch) : std::string());
  return AddCalc(job.graph, name, source_parallelism, program, upstream);
}

// An INSERT without aggregates: source -> [computed columns] -> Calc -> sink. The Calc (filter
// + projection into the sink's columns) is always there, even for a plain SELECT *, so the
// graph, and the checkpoints that name its vertices, does not change shape when a WHERE is
// added or removed.
Result<connectors::AddedSink> PlanCalcInsert(PlannedJob& job, const InsertPlan& p) {
  FLOE_ASSIGN_OR_RAISE(runtime::VertexId calc_vertex, PlanCalc(job, p));
  if (p.changelog) {
    FLOE_RETURN_NOT_OK(CheckChangelogSink(
        "table '" + p.source->name +
            "' is a changelog ('format' = 'debezium-json': inserts, updates and deletes)",
        *p.sink, *p.sink_connector, p.sink_table));
  }
  return PlanSink(job, p, calc_vertex, p.changelog);
}

// The `union` vertex of a UNION ALL: a Calc passing `rows` on, which every query's Calc in
// `calcs` feeds (FORWARD where parallelisms match).
Result<runtime::VertexId> AddUnion(PlannedJob& job, const std::string& name,
                                   std::shared_ptr<const BatchSchema> rows, const std::string& into,
                                   const SourcePos& pos,
                                   const std::vector<runtime::VertexId>& calcs) {
  CalcSpec pass;
  pass.input = rows;
  pass.output = rows;
  pass.sink_name = into;
  FLOE_ASSIGN_OR_RAISE(std::shared_ptr<const CalcProgram> program, CompileCalc(pass, pos));
  const uint32_t parallelism = job.graph.vertex(calcs.front()).parallelism;
  const runtime::VertexId merged = AddCalc(job.graph, name, parallelism, program, calcs.front());
  for (size_t b = 1; b < calcs.size(); ++b) {
    job.graph.Connect(calcs[b], merged,
                      job.graph.vertex(calcs[b]).parallelism == parallelism
                          ? runtime::Partitioning::Forward()
                          : runtime::Partitioning::Rebalance());
  }
  return merged;
}

// INSERT INTO t query UNION ALL query ...: each query source -> [computed columns] -> Calc into
// the sink's columns, as PlanCalcInsert plans one; a `union` vertex (a Calc passing the sink's
// columns on) takes every Calc's rows, and the sink reads it. Each source checkpoints its own
// positions; the sink's commits carry them all, as they carry one source's.
Result<connectors::AddedSink> PlanUnionInsert(PlannedJob& job, const Script& script,
                                              const TableUses& uses, size_t ordinal) {
  const Insert& first = script.inserts[ordinal];
  std::vector<const Insert*> queries{&first};
  for (const Insert& q : first.union_all) queries.push_back(&q);
  std::vector<runtime::VertexId> calcs;
  std::string upstream;
  InsertPlan sink_side;
  for (size_t b = 0; b < queries.size(); ++b) {
    const Insert& q = *queries[b];
    if (!q.from_view.empty() || q.row_number || IsAggregateQuery(q) || job.context.scale_out) {
      return Status::NotImplemented(At(q.pos) + "not implemented yet: UNION ALL " +
                                    (job.context.scale_out
                                         ? std::string("with 'floe.scale-out'")
                                         : "of a query that aggregates, ranks or reads a view") +
                                    "; each query of a UNION ALL selects from a table");
    }
    FLOE_ASSIGN_OR_RAISE(InsertPlan p, ResolveQuery(script, q, ordinal, b, uses));
    FLOE_RETURN_NOT_OK(PlanSource(job, p));
    FLOE_RETURN_NOT_OK(PlanComputedColumns(job, p));
    FLOE_RETURN_NOT_OK(DescribeSink(p));
    if (p.changelog) {
      return Status::NotImplemented(At(q.pos) + "not implemented yet: UNION ALL of changelog '" +
                                    p.source->name + "'");
    }
    FLOE_ASSIGN_OR_RAISE(runtime::VertexId calc, PlanCalc(job, p, b + 1));
    calcs.push_back(calc);
    upstream += (b > 0 ? ";" : "") + Upstream(p.source_name, *p.source_connector, p.source_table);
    if (b == 0) sink_side = std::move(p);
  }
  FLOE_ASSIGN_OR_RAISE(runtime::VertexId merged,
                       AddUnion(job, sink_side.SinkSide("union"), sink_side.sink_table.schema,
                                sink_side.sink->name, first.pos, calcs));
  return PlanSink(job, sink_side, merged, false, upstream);
}

// `e` with the row number's column replaced by `number` (the literal 1 where the operator keeps
// one row per partition and emits no number, as Flink's RankNumberColumnRemoveRule).
Expr WithRowNumber(const Expr& e, const Expr& number) {
  if (e.kind == ExprKind::kColumn && e.name == kRowNumberColumn) {
    Expr replaced = number;
    replaced.pos = e.pos;
    return replaced;
  }
  Expr out = e;
  for (Expr& child : out.children) child = WithRowNumber(child, number);
  return out;
}

// The rank's spec from the INSERT's ROW_NUMBER over `rows`: columns into the rows, keep-last
// deduplication on the table's rowtime; a window rank when it partitions by the rows'
// window_start and window_end (`window` names them: a window TVF's or a window aggregation's).
Result<RankSpec> RankSpecOf(const InsertPlan& p, std::shared_ptr<const BatchSchema> rows,
                            const std::pair<std::string, std::string>& window,
                            const std::map<std::string, std::string>& config) {
  const RowNumber& rn = *p.insert->row_number;
  RankSpec spec;
  spec.input = rows;
  const auto index = [&](const std::string& column) -> Result<int> {
    const int i = rows->FieldIndex(column);
    if (i < 0) {
      return Status::InvalidArgument(At(rn.pos) + "ROW_NUMBER's column '" + column +
                                     "' is not a column of table '" + p.source->name + "'");
    }
    return i;
  };
  const auto has = [&](const std::string& c) {
    return !c.empty() &&
           std::find(rn.partition_by.begin(), rn.partition_by.end(), c) != rn.partition_by.end();
  };
  const bool windowed = has(window.first) && has(window.second);
  for (const std::string& column : rn.partition_by) {
    FLOE_ASSIGN_OR_RAISE(int i, index(column));
    if (windowed && column == window.first) {
      spec.window_start_column = i;
    } else if (windowed && column == window.second) {
      spec.window_end_column = i;
    } else {
      spec.partition_columns.push_back(i);
    }
  }
  // ORDER BY a processing-time attribute: the order rows arrive in (Flink's proctime
  // deduplication), which the rank keeps without an order.
  const auto on_arrival = [&](const RowNumber::Order& o) {
    const ColumnDef* c = o.proctime ? nullptr : p.source->FindColumn(o.column);
    return o.proctime || (c != nullptr && c->is_proctime());
  };
  const bool arrival = std::any_of(rn.order_by.begin(), rn.order_by.end(), on_arrival);
  if (arrival && (rn.order_by.size() != 1 || rn.last != 1 || windowed)) {
    return Status::NotImplemented(
        At(rn.pos) + "not implemented yet: ROW_NUMBER ordered by a processing-time attribute " +
        "other than deduplication (ORDER BY proctime [DESC] alone, rn = 1, not per window)");
  }
  for (const RowNumber::Order& o : rn.order_by) {
    if (arrival) break;
    FLOE_ASSIGN_OR_RAISE(int i, index(o.column));
    spec.order.push_back({i, o.descending, o.nulls_first});
  }
  spec.first = rn.first;
  spec.limit = rn.last;
  if (!windowed && rn.first > 1) {
    return Status::NotImplemented(At(rn.pos) + "not implemented yet: ROW_NUMBER keeping ranks " +
                                  "that do not start at 1, except per window (PARTITION BY " +
                                  "window_start, window_end, ...)");
  }
  const bool on_rowtime =
      p.source->watermark && p.source->watermark->column == rn.order_by[0].column;
  spec.ties_replace = rn.last == 1 && rn.order_by.size() == 1 && rn.order_by[0].descending &&
                      (on_rowtime || arrival);
  spec.insert_only = arrival && !rn.order_by[0].descending;
  spec.output_number = rn.selected && rn.last > 1;
  spec.job_config = config;
  return spec;
}

// A window TVF read without an aggregation: [watermark assigner] -> window table function
// (`windows-<sink>`) after *upstream, which it becomes; the rows then carry window_start,
// window_end and window_time after the table's columns, the schema returned.
Result<std::shared_ptr<const BatchSchema>> PlanWindowTableFunction(PlannedJob& job,
                                                                   const InsertPlan& p,
                                                                   runtime::VertexId* upstream) {
  const WindowTvf& w = *p.insert->window;
  if (p.changelog || w.kind == WindowKind::kSession) {
    return Status::NotImplemented(
        At(w.pos) + "not implemented yet: " +
        (p.changelog ? "a window TVF over changelog '" + p.source->name + "'"
                     : std::string("a SESSION window TVF without an aggregation")));
  }
  FLOE_ASSIGN_OR_RAISE(WindowSpec window, PlanWindowTvf(w, *p.source));
  const uint32_t parallelism = job.graph.vertex(*upstream).parallelism;
  if (!p.source_connector->generates_watermarks && !p.watermarks_from_view) {
    const WatermarkDef watermark{p.source->ColumnIndex(p.source->watermark->column),
                                 p.source->watermark->delay_millis};
    *upstream = PlanWatermarkAssigner(job, p, watermark, parallelism, *upstream);
  }
  const WindowTableFunctionSpec spec{
      p.row_schema, window,
      WindowZone(job, p.row_schema->fields[static_cast<size_t>(window.time_column)].type)};
  runtime::VertexId v = job.graph.AddOperator(
      p.SinkSide("windows"), parallelism,
      [spec](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        return std::unique_ptr<runtime::Operator>(
            std::make_unique<WindowTableFunctionOperator>(spec));
      });
  job.graph.Connect(*upstream, v, runtime::Partitioning::Forward());
  *upstream = v;
  return WindowTableFunctionOutput(spec);
}

// A rank pipeline's last vertex and whether it emits a changelog (a window rank emits inserts).
struct RankVertex {
  runtime::VertexId calc;
  bool changelog = true;
};

// An INSERT over a view (or subquery) with ROW_NUMBER, Flink's deduplication and Top-N: source
// -> [computed columns] -> [window table function] -> [WHERE, the view's] -> keyBy(PARTITION BY
// other than the window; none: one subtask) -> rank -> Calc (the select list; the number as
// kRowNumberColumn).
Result<RankVertex> PlanRankPipeline(PlannedJob& job, const InsertPlan& p) {
  const RowNumber& rn = *p.insert->row_number;
  if (rn.last == 0) {
    return Status::InvalidArgument(
        At(rn.pos) +
        "ROW_NUMBER() OVER (...) must be read by a query that keeps a range of it "
        "(SELECT ... FROM (SELECT *, ROW_NUMBER() OVER (...) AS rn FROM t) WHERE rn "
        "<= N): Flink's deduplication and Top-N; OVER aggregations are not "
        "supported yet");
  }
  FLOE_ASSIGN_OR_RAISE(const bool current_watermark, UsesCurrentWatermark(*p.insert, *p.source));
  if (current_watermark) {
    return Status::NotImplemented(At(rn.pos) +
                                  "not implemented yet: CURRENT_WATERMARK beside "
                                  "ROW_NUMBER (deduplication, Top-N)");
  }
  if (job.context.scale_out || p.changelog) {
    return Status::NotImplemented(
        At(rn.pos) + "not implemented yet: ROW_NUMBER (deduplication, Top-N) " +
        (p.changelog ? "over a changelog source ('" + p.source->name + "')"
                     : std::string("with 'floe.scale-out'")));
  }
  runtime::VertexId upstream = p.out;
  std::shared_ptr<const BatchSchema> rows = p.row_schema;
  std::pair<std::string, std::string> window = p.view_window;
  std::shared_ptr<const TimeZone> window_zone = p.view_window_zone;
  if (p.insert->window) {
    FLOE_ASSIGN_OR_RAISE(rows, PlanWindowTableFunction(job, p, &upstream));
    window = {std::string(kWindowStart), std::string(kWindowEnd)};
    window_zone = WindowZone(job, rows->fields[rows->FieldIndex(kWindowTime)].type);
  }
  FLOE_ASSIGN_OR_RAISE(RankSpec spec, RankSpecOf(p, rows, window, job.config));
  spec.zone = std::move(window_zone);
  const uint32_t source_parallelism = job.graph.vertex(upstream).parallelism;
  if (p.insert->where) {
    FLOE_ASSIGN_OR_RAISE(upstream,
                         PlanWhere(job, p, *p.insert->where, rows, source_parallelism, upstream));
  }
  FLOE_RETURN_NOT_OK(RankOperator::Make(spec).status());
  FLOE_ASSIGN_OR_RAISE(runtime::KeyedStateOptions state, RankOperator::KeyedStateOptionsFor(spec));
  const uint32_t parallelism = spec.partition_columns.empty() ? 1 : job.context.default_parallelism;
  runtime::VertexId rank = job.graph.AddOperator(
      p.SinkSide("rank"), parallelism,
      [spec](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        FLOE_ASSIGN_OR_RAISE(auto op, RankOperator::Make(spec));
        return std::unique_ptr<runtime::Operator>(std::move(op));
      });
  job.graph.SetKeyedState(rank, state);
  std::vector<std::string> keys;
  for (int c : spec.partition_columns) keys.push_back(rows->fields[static_cast<size_t>(c)].name);
  job.graph.Connect(upstream, rank,
                    keys.empty() ? runtime::Partitioning::Global()
                                 : runtime::Partitioning::Hash(std::move(keys)));

  CalcSpec project;
  project.zone = job.context.session_zone;
  project.input = RankOutput(spec);
  Expr one = Expr::Cast(Expr::Lit(Literal::Integer(1)), SqlType{DataType::Int64(), 0});
  for (const SelectItem& item : p.insert->select) {
    project.select.push_back(
        {spec.output_number ? item.expr : WithRowNumber(item.expr, one), item.alias});
  }
  project.output = p.sink_table.schema;
  project.sink_name = p.sink->name;
  FLOE_ASSIGN_OR_RAISE(std::shared_ptr<const CalcProgram> program,
                       CompileCalc(project, p.insert->pos));
  return RankVertex{AddCalc(job.graph, p.SinkSide("calc"), parallelism, program, rank),
                    spec.window_end_column < 0 && !spec.insert_only};
}

// The same into the INSERT's sink, which must take a changelog unless the rank is per window.
Result<connectors::AddedSink> PlanRankInsert(PlannedJob& job, const InsertPlan& p) {
  FLOE_ASSIGN_OR_RAISE(RankVertex rank, PlanRankPipeline(job, p));
  if (rank.changelog) {
    FLOE_RETURN_NOT_OK(CheckChangelogSink(
        "ROW_NUMBER (deduplication, Top-N) emits a changelog: a better row replaces a kept one "
        "(-U/+U, or -D/+I)",
        *p.sink, *p.sink_connector, p.sink_table));
  }
  return PlanSink(job, p, rank.calc, rank.changelog);
}

// A watermark assigner after `upstream`, for a window over a source that makes no watermarks.
runtime::VertexId PlanWatermarkAssigner(PlannedJob& job, const InsertPlan& p,
                                        const WatermarkDef& watermark, uint32_t parallelism,
                                        runtime::VertexId upstream) {
  const int time_column = watermark.column;
  const int64_t delay = watermark.delay_ms * 1000;
  const std::chrono::milliseconds interval = job.context.auto_watermark_interval;
  runtime::VertexId assigner = job.graph.AddOperator(
      p.SourceSide("watermarks"), parallelism,
      [time_column, delay,
       interval](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        return std::unique_ptr<runtime::Operator>(
            std::make_unique<WatermarkAssignerOperator>(time_column, delay, interval));
      });
  job.graph.Connect(upstream, assigner, runtime::Partitioning::Forward());
  return assigner;
}

// An aggregate's or a rank's WHERE over `rows`, a Calc that keeps rows (all columns) before they
// are keyed.
Result<runtime::VertexId> PlanWhere(PlannedJob& job, const InsertPlan& p, const Expr& condition,
                                    std::shared_ptr<const BatchSchema> rows, uint32_t parallelism,
                                    runtime::VertexId upstream) {
  CalcSpec where;
  where.zone = job.context.session_zone;
  // Scaled out, the rows' claim travels on to the aggregate (a reserved column the Calc passes),
  // as a changelog's row kinds do.
  where.input = job.context.scale_out ? runtime::WithSourceSplitColumn(*rows)
                : p.changelog         ? runtime::WithRowKindColumn(*rows)
                                      : rows;
  where.where = condition;
  where.output = rows;
  where.sink_name = p.sink->name;
  Result<std::shared_ptr<const CalcProgram>> program = CalcProgram::Compile(where);
  if (!program.ok()) return AtPos(p.insert->pos, program.status());
  return AddCalc(job.graph, p.SinkSide("where"), parallelism, *program, upstream);
}

// An aggregate vertex as PlanAggregateOperator adds it.
struct AggregateVertex {
  runtime::VertexId vertex;
  uint32_t parallelism = 1;
  std::shared_ptr<const BatchSchema> output;  // the operator's fixed layout
};

// The window or GROUP BY aggregate, fed from `upstream` by its keys.
Result<AggregateVertex> PlanAggregateOperator(PlannedJob& job, const InsertPlan& p,
                                              const AggregatePlan& plan,
                                              runtime::VertexId upstream) {
  std::vector<std::string> keys;
  for (int k : plan.key_columns) keys.push_back(plan.input->fields[k].name);
  AggregateVertex agg;
  // No GROUP BY key: one subtask holds the single group (Flink's global aggregate).
  agg.parallelism =
      keys.empty() && plan.grouping_sets.empty() ? 1 : job.context.default_parallelism;
  // Scaled out by Kafka partition, a row's key group is its claim's partition
  // (docs/architecture.md, "Keyed jobs"): the aggregate reads the claim from the rows.
  // The rows as they reach it: with the hidden aggregate arguments, if any.
  std::shared_ptr<const BatchSchema> input =
      p.aggregate_arguments.empty() ? p.row_schema : plan.input;
  if (p.changelog) {
    if (job.context.scale_out) {
      return Status::NotImplemented(At(p.insert->pos) +
                                    "not implemented yet: aggregating changelog table '" +
                                    p.source->name + "' with 'floe.scale-out'");
    }
    input = runtime::WithRowKindColumn(*input);
  }
  int split_column = -1;
  if (job.context.scale_out) {
    input = runtime::WithSourceSplitColumn(*p.row_schema);
    split_column = static_cast<int>(p.row_schema->fields.size());
  }
  std::vector<int> key_columns = plan.key_columns;
  if (!plan.grouping_sets.empty()) {
    if (job.context.scale_out) {
      return Status::NotImplemented(At(p.insert->group_by_pos) +
                                    "not implemented yet: GROUPING SETS, CUBE and ROLLUP with "
                                    "'floe.scale-out' = 'kafka-group'");
    }
    ExpandSpec expand{input, plan.key_columns, plan.grouping_sets};
    input = ExpandOutput(expand);
    runtime::VertexId v = job.graph.AddOperator(
        p.SinkSide("expand"), job.graph.vertex(upstream).parallelism,
        [expand](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
          return std::unique_ptr<runtime::Operator>(std::make_unique<ExpandOperator>(expand));
        });
    job.graph.Connect(upstream, v, runtime::Partitioning::Forward());
    upstream = v;
    key_columns.push_back(static_cast<int>(input->fields.size()) - 1);
    keys.emplace_back(kGroupingSetColumn);
  }
  if (plan.window) {
    WindowAggregateSpec spec;
    spec.input = input;
    spec.split_column = split_column;
    spec.key_columns = key_columns;
    spec.window = *plan.window;
    spec.zone = WindowZone(job, input->fields[static_cast<size_t>(plan.window->time_column)].type);
    spec.aggregates = plan.aggregates;
    spec.job_config = job.config;
    spec.changelog = p.changelog;
    spec.max_cached_windows = job.window_buffer_limit;
    Result<runtime::VertexId> added = AddAggregate<WindowAggregateOperator>(
        job.graph, p.SinkSide("window"), agg.parallelism, spec);
    if (!added.ok()) return AtPos(p.insert->pos, added.status());
    agg.vertex = *added;
    agg.output = WindowAggregateOutput(spec);
  } else {
    GroupAggregateSpec spec;
    spec.input = input;
    spec.split_column = split_column;
    spec.changelog = p.changelog;
    spec.key_columns = key_columns;
    spec.aggregates = plan.aggregates;
    spec.job_config = job.config;
    Result<runtime::VertexId> added = AddAggregate<GroupAggregateOperator>(
        job.graph, p.SinkSide("aggregate"), agg.parallelism, spec);
    if (!added.ok()) return AtPos(p.insert->pos, added.status());
    agg.vertex = *added;
    agg.output = GroupAggregateOutput(spec);
  }
  job.graph.Connect(upstream, agg.vertex,
                    keys.empty() ? runtime::Partitioning::Global()
                                 : runtime::Partitioning::Hash(std::move(keys)));
  if (job.context.scale_out) {
    // Each commit names this task's state file per partition; those checkpoints stay.
    job.context.scale_out->keyed_task =
        runtime::TaskName(job.graph.vertex(agg.vertex).name, runtime::SubtaskIndex(0));
    job.context.scale_out->pins = std::make_shared<runtime::CheckpointPins>();
  }
  return agg;
}

// The Calc after the aggregate: HAVING, then the select list, in order, from the operator's
// fixed layout (its aggregates named by their SQL, as in AggregateLayout), into the sink's
// columns.
Result<runtime::VertexId> PlanAggregateCalc(PlannedJob& job, const InsertPlan& p,
                                            const AggregatePlan& plan, const AggregateVertex& agg) {
  CalcSpec project;
  project.zone = job.context.session_zone;
  // The operator's aggregates are agg0, agg1, ... after its keys (and window columns).
  auto input = std::make_shared<BatchSchema>(*agg.output);
  for (size_t f = plan.key_columns.size(); f < input->fields.size(); ++f) {
    for (size_t k = 0; k < plan.aggregate_names.size(); ++k) {
      if (input->fields[f].name == "agg" + std::to_string(k)) {
        input->fields[f].name = plan.aggregate_names[k];
      }
    }
  }
  project.input = std::move(input);
  project.where = plan.having;
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    const AggregateOutput& from = plan.outputs[o];
    const SourcePos pos = p.insert->select[o].expr.pos;
    std::string name;
    switch (from.kind) {
      case AggregateOutput::Kind::kKey:
        name = plan.input->fields[plan.key_columns[from.index]].name;
        break;
      case AggregateOutput::Kind::kWindowStart:
        name = "window_start";
        break;
      case AggregateOutput::Kind::kWindowEnd:
        name = "window_end";
        break;
      case AggregateOutput::Kind::kWindowTime:
        name = "window_time";
        break;
      case AggregateOutput::Kind::kAggregate:
        name = plan.aggregate_names[static_cast<size_t>(from.index)];
        break;
      case AggregateOutput::Kind::kExpression:
        project.select.push_back({*from.expr, p.insert->select[o].alias});
        continue;
    }
    Expr column = Expr::Column(name);
    column.pos = pos;
    project.select.push_back({std::move(column), p.insert->select[o].alias});
  }
  project.output = p.sink_table.schema;
  project.sink_name = p.sink->name;
  Result<std::shared_ptr<const CalcProgram>> program = CalcProgram::Compile(project);
  if (!program.ok()) return AtPos(p.insert->pos, program.status());
  return AddCalc(job.graph, p.SinkSide("calc"), agg.parallelism, *program, agg.vertex);
}

// An aggregating INSERT (validated by CheckAggregate): source -> [computed columns] ->
// [watermark assigner] -> [WHERE] -> keyBy(keys) -> window aggregate or GROUP BY aggregate ->
// Calc (select list into the sink's columns) -> sink.
Result<runtime::VertexId> PlanAggregatePipeline(PlannedJob& job, const InsertPlan& p,
                                                const AggregatePlan& plan) {
  runtime::VertexId upstream = p.out;
  const uint32_t source_parallelism = job.graph.vertex(upstream).parallelism;
  FLOE_ASSIGN_OR_RAISE(const bool current_watermark, UsesCurrentWatermark(*p.insert, *p.source));
  if ((plan.window || current_watermark) && !p.source_connector->generates_watermarks &&
      !p.watermarks_from_view) {
    upstream = PlanWatermarkAssigner(job, p, *plan.watermark, source_parallelism, upstream);
  }
  if (plan.where) {
    FLOE_ASSIGN_OR_RAISE(
        upstream, PlanWhere(job, p, *plan.where, p.row_schema, source_parallelism, upstream));
  }
  if (!p.aggregate_arguments.empty()) {
    FLOE_ASSIGN_OR_RAISE(upstream,
                         PlanAggregateArguments(job, p, plan, source_parallelism, upstream));
  }
  FLOE_ASSIGN_OR_RAISE(AggregateVertex agg, PlanAggregateOperator(job, p, plan, upstream));
  return PlanAggregateCalc(job, p, plan, agg);
}

Result<connectors::AddedSink> PlanAggregateInsert(PlannedJob& job, const InsertPlan& p,
                                                  const AggregatePlan& plan) {
  FLOE_ASSIGN_OR_RAISE(runtime::VertexId calc, PlanAggregatePipeline(job, p, plan));
  return PlanSink(job, p, calc, /*changelog=*/!plan.window);
}

// An INSERT that reads a view (or a subquery) that aggregates: the view's window aggregation is
// planned up to its Calc, and the INSERT reads that as its source table, whose rowtime is the
// view's window_time column. Watermarks arrive from the view's window operator, as in Flink's
// cascaded window aggregations, so no assigner is added for it.
// A query over a UNION ALL view (or subquery): each of its queries source -> [computed columns]
// -> [watermarks] -> Calc into the view's columns, and a `union` Calc merging them, which the
// query reads as an append-only table. A column's type is the common type of the queries'
// (Flink's LogicalTypeMerging); the view has a rowtime when every query selects its table's
// WATERMARK column at the same place, and each assigns its watermarks before the merge, whose
// watermark is the lowest of theirs.
struct UnionBranches {
  std::vector<const Insert*> queries;
  std::vector<InsertPlan> plans;            // each query's source, up to its computed columns
  std::vector<std::vector<SqlType>> types;  // per query, per column
};

// The sources of the queries of the UNION ALL `outer` reads, and the types of their columns.
Result<UnionBranches> PlanUnionBranches(PlannedJob& job, const Script& script,
                                        const TableUses& uses, size_t ordinal,
                                        const std::string& what, const Insert& outer) {
  UnionBranches u;
  std::vector<const Insert*>& queries = u.queries;
  queries.push_back(&outer.from_view.at(0));
  for (const Insert& q : queries[0]->union_all) queries.push_back(&q);
  for (size_t b = 0; b < queries.size(); ++b) {
    const Insert& q = *queries[b];
    const CreateTable* table = script.FindTable(q.source);
    bool current_watermark = false;
    if (table != nullptr) {
      FLOE_ASSIGN_OR_RAISE(current_watermark, UsesCurrentWatermark(q, *table));
    }
    if (!q.from_view.empty() || q.row_number || IsAggregateQuery(q) || q.window ||
        current_watermark) {
      return Status::NotImplemented(At(q.pos) + "not implemented yet: in " + what +
                                    ", a UNION ALL of a query that aggregates, ranks, reads a " +
                                    "window TVF or another view, or calls CURRENT_WATERMARK; " +
                                    "each query selects from a table");
    }
    if (table == nullptr) return Status::Internal("a view reads a table the parser did not check");
    InsertPlan& inner = u.plans.emplace_back();
    inner.insert = &q;
    inner.source = table;
    inner.source_suffix = TableUses::Several(uses.as_source, inner.source->name)
                              ? "-" + std::to_string(ordinal + 1) +
                                    (b > 0 ? "-" + std::to_string(b + 1) : std::string())
                              : "";
    inner.source_name = inner.SourceSide("source");
    FLOE_RETURN_NOT_OK(CheckReservedColumns(*inner.source));
    FLOE_RETURN_NOT_OK(PlanSource(job, inner));
    FLOE_RETURN_NOT_OK(PlanComputedColumns(job, inner));
    if (inner.changelog) {
      return Status::NotImplemented(At(q.pos) + "not implemented yet: a UNION ALL of changelog '" +
                                    inner.source->name + "'");
    }
    std::vector<SqlType>& typed = u.types.emplace_back();
    std::vector<Expr> items;
    for (const SelectItem& item : q.select) items.push_back(item.expr);
    if (items.empty()) {
      for (const Field& f : inner.row_schema->fields) items.push_back(Expr::Column(f.name));
    }
    for (const Expr& e : items) {
      FLOE_ASSIGN_OR_RAISE(ScalarExpr value,
                           ScalarExpr::Compile(e, *inner.row_schema, "in the select list",
                                               job.context.session_zone));
      typed.push_back(value.type());
    }
  }
  return u;
}

// The view column every query of `u` fills with its table's WATERMARK column, if there is one.
std::optional<size_t> UnionRowtime(const UnionBranches& u, size_t columns) {
  std::optional<size_t> rowtime;
  for (size_t b = 0; b < u.plans.size(); ++b) {
    const CreateTable& t = *u.plans[b].source;
    const Insert& q = *u.queries[b];
    std::optional<size_t> at;
    for (size_t i = 0; t.watermark && i < columns; ++i) {
      const Expr e =
          q.select.empty() ? Expr::Column(u.plans[b].row_schema->fields[i].name) : q.select[i].expr;
      if (e.kind == ExprKind::kColumn && e.name == t.watermark->column) at = i;
    }
    if (!at || (b > 0 && at != rowtime)) return std::nullopt;
    rowtime = at;
  }
  return rowtime;
}

Status PlanUnionViewSource(PlannedJob& job, const Script& script, const TableUses& uses,
                           size_t ordinal, const std::string& what, InsertPlan& p,
                           std::deque<CreateTable>& views) {
  const Insert& outer = *p.insert;
  FLOE_ASSIGN_OR_RAISE(UnionBranches u, PlanUnionBranches(job, script, uses, ordinal, what, outer));
  std::vector<InsertPlan>& branches = u.plans;
  CreateTable& view = views.emplace_back();
  view.name = outer.source;
  view.pos = outer.from_pos;
  for (size_t i = 0; i < outer.from_view_columns.size(); ++i) {
    std::vector<DataType> column_types;
    int precision = 0;
    for (const std::vector<SqlType>& t : u.types) {
      column_types.push_back(t.at(i).type);
      precision = std::max(precision, t.at(i).precision);
    }
    Result<DataType> common = CommonType(column_types);
    if (!common.ok()) {
      return Status::InvalidArgument(At(view.pos) + "column " + std::to_string(i + 1) + " '" +
                                     outer.from_view_columns[i] + "' of the UNION ALL in " + what +
                                     ": " + common.status().message());
    }
    ColumnDef c;
    c.name = outer.from_view_columns[i];
    c.type = *common;
    c.precision =
        c.type.id == TypeId::kTimestamp || c.type.id == TypeId::kTimestampTz ? precision : 0;
    c.pos = view.pos;
    view.columns.push_back(std::move(c));
  }
  const std::optional<size_t> rowtime = UnionRowtime(u, view.columns.size());
  if (rowtime) view.watermark = Watermark{view.columns[*rowtime].name, 0, view.pos};
  const connectors::TableDescriptor shape = Describe(view, nullptr);
  std::vector<runtime::VertexId> calcs;
  for (size_t b = 0; b < branches.size(); ++b) {
    InsertPlan& inner = branches[b];
    runtime::VertexId upstream = inner.out;
    const uint32_t parallelism = job.graph.vertex(upstream).parallelism;
    if (rowtime && !inner.source_connector->generates_watermarks) {
      const WatermarkDef watermark{inner.source->ColumnIndex(inner.source->watermark->column),
                                   inner.source->watermark->delay_millis};
      upstream = PlanWatermarkAssigner(job, inner, watermark, parallelism, upstream);
    }
    CalcSpec calc;
    calc.zone = job.context.session_zone;
    calc.input = inner.row_schema;
    calc.where = u.queries[b]->where;
    calc.select = u.queries[b]->select;
    calc.output = shape.schema;
    calc.sink_name = outer.source;
    FLOE_ASSIGN_OR_RAISE(std::shared_ptr<const CalcProgram> program,
                         CompileCalc(calc, u.queries[b]->pos));
    calcs.push_back(AddCalc(
        job.graph,
        VertexName("calc", inner.source->name) + inner.source_suffix + "-" + std::to_string(b + 1),
        parallelism, program, upstream));
    p.upstream += (b > 0 ? ";" : "") +
                  Upstream(inner.source_name, *inner.source_connector, inner.source_table);
  }
  FLOE_ASSIGN_OR_RAISE(
      const runtime::VertexId merged,
      AddUnion(job, VertexName("union", outer.source) + "-" + std::to_string(ordinal + 1),
               shape.schema, outer.source, outer.from_pos, calcs));
  p.source = &view;
  p.source_name = branches[0].source_name;
  p.source_connector = branches[0].source_connector;
  p.source_table = branches[0].source_table;
  p.watermarks_from_view = rowtime.has_value();
  p.changelog = false;
  p.out = merged;
  p.row_schema = RowSchemaOf(view);
  return Status::OK();
}

Status PlanViewSource(PlannedJob& job, const Script& script, const TableUses& uses, size_t ordinal,
                      InsertPlan& p, std::deque<CreateTable>& views) {
  const Insert& outer = *p.insert;
  const Insert& query = outer.from_view.at(0);
  const std::string what = outer.source.rfind("$subquery", 0) == 0 ? std::string("a subquery")
                                                                   : "view '" + outer.source + "'";
  if (!query.union_all.empty()) {
    if (job.context.scale_out) {
      return Status::NotImplemented(At(outer.from_pos) + "not implemented yet: a query over " +
                                    what + ", a UNION ALL, with 'floe.scale-out'");
    }
    return PlanUnionViewSource(job, script, uses, ordinal, what, p, views);
  }
  if (job.context.scale_out) {
    return Status::NotImplemented(At(outer.from_pos) + "not implemented yet: a query over " + what +
                                  ", which aggregates, with 'floe.scale-out'");
  }
  InsertPlan inner;
  inner.insert = &query;
  inner.source = script.FindTable(query.source);
  if (inner.source == nullptr)
    return Status::Internal("a view reads a table the parser did not check");
  const std::string suffix = "-" + std::to_string(ordinal + 1);
  inner.source_suffix = TableUses::Several(uses.as_source, inner.source->name) ? suffix : "";
  inner.sink_suffix = TableUses::Several(uses.as_source, outer.source) ? suffix : "";
  inner.source_name = inner.SourceSide("source");
  FLOE_RETURN_NOT_OK(CheckReservedColumns(*inner.source));
  FLOE_RETURN_NOT_OK(PlanSource(job, inner));
  FLOE_RETURN_NOT_OK(PlanComputedColumns(job, inner));
  CreateTable& view = views.emplace_back();
  view.name = outer.source;
  view.pos = outer.from_pos;
  // The view as a table: its columns typed by its query (into `view`), then its operators.
  const auto add_column = [&](size_t i, const DataType& type, bool nullable) -> ColumnDef& {
    ColumnDef c;
    c.name = outer.from_view_columns.at(i);
    c.type = type;
    c.not_null = !nullable;
    c.precision = type.id == TypeId::kTimestamp || type.id == TypeId::kTimestampTz ? 3 : 0;
    c.pos = view.pos;
    return view.columns.emplace_back(std::move(c));
  };
  runtime::VertexId out;
  if (query.row_number) {  // deduplication or Top-N: a changelog
    if (inner.changelog) {
      return Status::NotImplemented(At(outer.from_pos) + "not implemented yet: ROW_NUMBER over " +
                                    "changelog table '" + inner.source->name + "'");
    }
    auto visible = std::make_shared<BatchSchema>(*inner.row_schema);
    visible->fields.push_back(Field{std::string(kRowNumberColumn), DataType::Int64(), false, 0});
    for (size_t i = 0; i < query.select.size(); ++i) {
      FLOE_ASSIGN_OR_RAISE(ScalarExpr value, ScalarExpr::Compile(query.select[i].expr, *visible,
                                                                 "in the select list", nullptr));
      add_column(i, value.type().type, true);
    }
    inner.sink = &view;
    inner.sink_table = Describe(view, nullptr);
    FLOE_ASSIGN_OR_RAISE(RankVertex rank, PlanRankPipeline(job, inner));
    out = rank.calc;
    p.changelog = rank.changelog;
  } else {
    FLOE_ASSIGN_OR_RAISE(AggregateArguments args, RewriteAggregateArguments(script, inner, false));
    const Script& planned = args.hidden.empty() ? script : args.script;
    inner.aggregate_arguments = args.hidden;
    FLOE_ASSIGN_OR_RAISE(AggregatePlan plan, PlanAggregate(planned, args.insert, EvaluatorTyper()));
    if (plan.window && !plan.watermark) {
      return Status::NotImplemented(At(outer.from_pos) + "not implemented yet: a query over " +
                                    what + ", a window aggregation without a watermark");
    }
    for (size_t i = 0; i < plan.output->fields.size(); ++i) {
      const Field& f = plan.output->fields[i];
      ColumnDef& c = add_column(i, f.type, f.nullable);
      // A window aggregation's window_time is the rowtime of the query that reads it.
      if (plan.outputs[i].kind == AggregateOutput::Kind::kWindowTime) {
        view.watermark = Watermark{c.name, 0, view.pos};
        p.view_window_zone = WindowZone(job, f.type);
      } else if (plan.outputs[i].kind == AggregateOutput::Kind::kWindowStart) {
        p.view_window.first = c.name;
      } else if (plan.outputs[i].kind == AggregateOutput::Kind::kWindowEnd) {
        p.view_window.second = c.name;
      }
    }
    inner.sink = &view;
    inner.sink_table = Describe(view, nullptr);
    FLOE_ASSIGN_OR_RAISE(out, PlanAggregatePipeline(job, inner, plan));
    p.watermarks_from_view = plan.window.has_value();
    p.changelog = !plan.window.has_value();  // a GROUP BY's result: +I / -U / +U
  }
  p.source = &view;
  p.source_name = inner.source_name;
  p.source_connector = inner.source_connector;
  p.source_table = inner.source_table;
  p.out = out;
  p.row_schema = RowSchemaOf(view);
  return Status::OK();
}

// ---- restore -------------------------------------------------------------------------------

// PlannedJob::prepare_restore over the sinks that commit to an external system: each checks its
// table against the checkpoint about to be restored; the positions of tables that are ahead
// become the sources' start overrides.
decltype(PlannedJob::prepare_restore) PlanRestore(
    std::vector<connectors::AddedSink> committing_sinks,
    std::shared_ptr<runtime::SourcePositionBoard> positions, bool keyed) {
  return [sinks = std::move(committing_sinks), positions = std::move(positions), keyed](
             const std::optional<runtime::CompletedCheckpoint>& restored,
             connectors::StaleRestorePolicy policy,
             uint64_t* min_checkpoint_id) -> Result<std::vector<connectors::SinkRestorePlan>> {
    std::vector<connectors::SinkRestorePlan> plans;
    std::map<std::string, std::string> overrides;
    std::map<std::string, std::string> override_sink;  // task -> sink id that set it
    uint64_t max_id = 0;
    for (const connectors::AddedSink& sink : sinks) {
      FLOE_ASSIGN_OR_RAISE(connectors::SinkRestorePlan plan,
                           sink.plan_restore(restored, policy, keyed));
      max_id = std::max(max_id, plan.table_checkpoint_id);
      if (plan.table_ahead) {
        for (const auto& [task, position] : plan.source_positions) {
          auto [it, inserted] = overrides.emplace(task, position);
          if (!inserted && it->second != position) {
            return Status::InvalidArgument(
                "sinks '" + override_sink[task] + "' and '" + sink.sink_id +
                "' are both ahead of the restored checkpoint but hold different positions for "
                "source task '" +
                task + "' (" + it->second + " vs " + position +
                "); starting from either would duplicate or lose rows in the other table. A "
                "job stopped between the two tables' commits (a dead-letter table and its "
                "source's table, say) resumes with `floe run --from latest`: the checkpoint "
                "holds the commit the other table lacks");
          }
          override_sink.emplace(task, sink.sink_id);
        }
      }
      plans.push_back(std::move(plan));
    }
    // Always replace: overrides of an earlier run must not outlive the table state they came
    // from.
    positions->SetStartOverrides(std::move(overrides));
    if (min_checkpoint_id != nullptr) *min_checkpoint_id = max_id;
    return plans;
  };
}

// The value of option `key` of a table ("" when absent).
std::string TableOption(const CreateTable& t, std::string_view key) {
  for (const auto& [k, v] : t.options) {
    if (k == key) return v;
  }
  return "";
}

// The option that declares which columns decide a scaled-out keyed job's Kafka partition.
constexpr const char* kPartitionKeyOption = "floe.partition-key";

// "a, b" -> {"a", "b"}: a comma-separated list, blanks around names dropped.
std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    size_t b = start, e = comma;
    while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
    out.push_back(text.substr(b, e - b));
    start = comma + 1;
  }
  return out;
}

// A window or GROUP BY aggregate scaled out by Kafka partition (docs/architecture.md, "Keyed
// jobs"): every key's state must belong to one partition, so the source table declares the
// columns its producer partitions by, and the GROUP BY holds each of them as read.
Status CheckKeyedScaleOut(const Insert& insert, const CreateTable& source, const PlannedJob& job,
                          const AggregatePlan& plan) {
  const std::string why = "a keyed job with 'floe.scale-out' = 'kafka-group' ";
  const std::string declared = TableOption(source, kPartitionKeyOption);
  if (declared.empty()) {
    return Status::InvalidArgument(
        At(source.pos) + why +
        "keeps each key's state with the Kafka partition that holds the "
        "key: declare the columns the producer partitions by on table '" +
        source.name + "' with '" + kPartitionKeyOption +
        "' = '<column>[, ...]', and group by them");
  }
  std::set<std::string> grouped;
  for (int k : plan.key_columns) grouped.insert(plan.input->fields[k].name);
  for (const std::string& column : SplitList(declared)) {
    const bool physical = std::any_of(
        source.columns.begin(), source.columns.end(),
        [&](const ColumnDef& c) { return c.name == column && !c.computed.has_value(); });
    if (!physical) {
      return Status::InvalidArgument(At(source.pos) + "'" + kPartitionKeyOption + "' of table '" +
                                     source.name + "' names '" + column +
                                     "', which is not one of its physical columns");
    }
    if (grouped.count(column) == 0) {
      return Status::InvalidArgument(
          At(insert.pos) + why +
          "keeps each key's state with its Kafka partition: the GROUP BY "
          "of INSERT INTO " +
          insert.sink + " must hold partition-key column '" + column + "' (table '" + source.name +
          "', '" + kPartitionKeyOption + "')");
    }
  }
  if (TableOption(source, "topic").find(';') != std::string::npos) {
    return Status::InvalidArgument(At(source.pos) + why +
                                   "reads one topic: a partition number is its key group");
  }
  if (job.context.checkpointing.incremental) {
    return Status::InvalidArgument(
        At(insert.pos) + why +
        "moves a partition's state in the canonical layout: set "
        "'execution.checkpointing.incremental' = 'false' (an incremental checkpoint's files hold "
        "every partition)");
  }
  return Status::OK();
}

// What instances sharing a Kafka topic can run today: one INSERT from a Kafka table into an
// Iceberg table, one source subtask per instance (the group spreads the partitions over
// instances), and keyed state only as CheckKeyedScaleOut allows.
Status CheckScaleOut(const Script& script, const PlannedJob& job,
                     const std::optional<AggregatePlan>& keyed) {
  const std::string why = "'floe.scale-out' = 'kafka-group' runs ";
  if (script.inserts.size() != 1) {
    return Status::InvalidArgument(At(script.inserts[1].pos) + why +
                                   "one INSERT per job, from a Kafka table into an Iceberg table");
  }
  const Insert& insert = script.inserts[0];
  const CreateTable* source = script.FindTable(insert.source);
  const CreateTable* sink = script.FindTable(insert.sink);
  auto connector = [](const CreateTable* t) { return TableOption(*t, "connector"); };
  if (connector(source) != "kafka" || connector(sink) != "iceberg") {
    return Status::InvalidArgument(At(insert.pos) + why +
                                   "an INSERT from a Kafka table into an Iceberg table, not '" +
                                   connector(source) + "' into '" + connector(sink) + "'");
  }
  if (keyed) FLOE_RETURN_NOT_OK(CheckKeyedScaleOut(insert, *source, job, *keyed));
  for (const runtime::Vertex& v : job.graph.vertices()) {
    if (v.parallelism != 1) {
      return Status::InvalidArgument(
          At(insert.pos) + why + "one subtask per vertex in each instance ('" + v.name + "' has " +
          std::to_string(v.parallelism) +
          "): start more instances instead ('parallelism.default', 'scan.parallelism' and the "
          "sink's 'sink.parallelism' must be 1)");
    }
  }
  return Status::OK();
}

// A sink that holds something only one sink may use (AddedSink::exclusive) noted in `users`;
// a second user of it is refused.
Status NoteExclusive(const connectors::AddedSink& added, const CreateTable& sink,
                     std::map<std::string, std::string>* users) {
  if (added.exclusive.empty()) return Status::OK();
  auto [it, fresh] = users->emplace(added.exclusive, sink.name);
  if (fresh) return Status::OK();
  return Status::InvalidArgument(At(sink.pos) + "table '" + sink.name + "' and table '" +
                                 it->second + "' both use " + added.exclusive +
                                 ": their transactions would fence each other; give each sink "
                                 "its own 'sink.transactional-id-prefix'");
}

// The sink of each dead-letter table a source names ('scan.bad-records.table'), fed from the
// source's side output 1 through a projection into the table's declared columns. The table takes
// one source's bad records and nothing else (an Iceberg table has one writer per job).
Status PlanDeadLetterSinks(PlannedJob& job, const Script& script, const TableUses& uses,
                           std::vector<connectors::AddedSink>* committing) {
  std::map<std::string, std::string> taken;  // dead-letter table -> the source table it serves
  for (const PlannedJob::DeadLetterSource& d : job.dead_letter_sources) {
    const std::string& source_name = d.table;
    const runtime::VertexId vertex = d.source;
    const CreateTable* source = script.FindTable(source_name);
    const std::string name = TableOption(*source, std::string(connectors::kBadRecordsTableOption));
    const std::string where = At(source->pos) + "table '" + source_name + "': '" +
                              std::string(connectors::kBadRecordsTableOption) + "' = '" + name +
                              "'";
    const CreateTable* dead = script.FindTable(name);
    if (dead == nullptr) {
      return Status::InvalidArgument(
          where + " is not a table of this job file; declare it: CREATE TABLE " + name + " (" +
          connectors::kDeadLetterColumnsDdl + ") WITH ('connector' = 'iceberg', ...)");
    }
    FLOE_ASSIGN_OR_RAISE(const connectors::Connector* connector, ConnectorOf(*dead, Role::kSink));
    if (connector->name != "iceberg") {
      return Status::InvalidArgument(where + " has 'connector' = '" + connector->name +
                                     "'; a dead-letter table is an Iceberg table");
    }
    if (uses.as_sink.count(name) != 0 || uses.as_source.count(name) != 0) {
      return Status::InvalidArgument(where +
                                     " is also read or written by an INSERT; a "
                                     "dead-letter table takes bad records only");
    }
    if (job.context.scale_out) {
      return Status::NotImplemented(where + ": not implemented yet with 'floe.scale-out'");
    }
    auto [it, fresh] = taken.emplace(name, source_name);
    if (!fresh) {
      return Status::InvalidArgument(where + " also takes the bad records of " +
                                     (it->second == source_name ? "another INSERT's read of it"
                                                                : "table '" + it->second + "'") +
                                     "; give each source read its own dead-letter table");
    }
    const connectors::TableDescriptor table = Describe(*dead, nullptr);
    Status shape = connectors::CheckDeadLetterTable(table, source_name);
    if (!shape.ok()) return AtPos(dead->pos, shape);
    const runtime::VertexId projection = job.graph.AddOperator(
        VertexName("dead-letters", source_name), job.graph.vertex(vertex).parallelism,
        [declared = table.schema,
         source_name](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
          return std::unique_ptr<runtime::Operator>(
              std::make_unique<connectors::DeadLetterProjection>(declared, source_name));
        });
    job.graph.Connect(vertex, projection, runtime::Partitioning::Forward(), /*output=*/1);
    if (d.computed) {
      job.graph.Connect(*d.computed, projection, runtime::Partitioning::Forward(), /*output=*/1);
    }
    FLOE_ASSIGN_OR_RAISE(const connectors::Connector* source_connector,
                         ConnectorOf(*source, Role::kSource));
    const std::string upstream = Upstream(job.graph.vertex(vertex).name, *source_connector,
                                          Describe(*source, job.context.session_zone)) +
                                 " bad records";
    Result<connectors::AddedSink> added = connector->add_sink(connectors::SinkRequest{
        &job.graph, projection, VertexName("sink", name), &table, &job.context, upstream, false});
    if (!added.ok()) return AtPos(dead->pos, added.status());
    if (added->plan_restore) committing->push_back(std::move(added).value());
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<PlannedJob>> PlanJob(std::string_view job_text, const PlanOptions& options) {
  FLOE_ASSIGN_OR_RAISE(Script script, ParseScript(job_text, options.variables));
  auto job = std::make_unique<PlannedJob>();
  FLOE_RETURN_NOT_OK(PlanSettings(script, options, job.get()));
  if (script.inserts.empty()) {
    return Status::InvalidArgument(
        "the job file has no INSERT INTO ... SELECT statement: there is nothing to run");
  }
  TableUses uses;
  for (const Insert& insert : script.inserts) {
    ++uses.as_source[insert.source];
    ++uses.as_sink[insert.sink];
    for (const Insert& view : insert.from_view) {
      ++uses.as_source[view.source];
      for (const Insert& query : view.union_all) ++uses.as_source[query.source];
    }
    for (const Insert& query : insert.union_all) ++uses.as_source[query.source];
  }
  std::deque<CreateTable> views;  // aggregating views read by INSERTs, as tables

  // Sinks that commit to an external system check it against the restored checkpoint.
  std::vector<connectors::AddedSink> committing_sinks;
  std::map<std::string, std::string> exclusive_users;  // AddedSink::exclusive -> sink table
  // What the runtime cannot run yet; refused after every INSERT is validated.
  std::vector<std::pair<SourcePos, AggregatePlan>> aggregates;
  bool graph_keyed_state = false;
  std::optional<AggregatePlan> keyed_plan;  // the aggregate holding keyed state, if any
  for (size_t i = 0; i < script.inserts.size(); ++i) {
    if (!script.inserts[i].union_all.empty()) {
      FLOE_ASSIGN_OR_RAISE(connectors::AddedSink added, PlanUnionInsert(*job, script, uses, i));
      FLOE_RETURN_NOT_OK(
          NoteExclusive(added, *script.FindTable(script.inserts[i].sink), &exclusive_users));
      if (added.plan_restore) committing_sinks.push_back(std::move(added));
      continue;
    }
    FLOE_ASSIGN_OR_RAISE(InsertPlan p, ResolveInsert(script, i, uses));
    // Over an aggregating view, the script the query is checked against holds the view too.
    Script with_view;
    if (p.insert->from_view.empty()) {
      FLOE_RETURN_NOT_OK(PlanSource(*job, p));
      FLOE_RETURN_NOT_OK(PlanComputedColumns(*job, p));
    } else {
      FLOE_RETURN_NOT_OK(PlanViewSource(*job, script, uses, i, p, views));
      with_view = script;
      with_view.tables.push_back(*p.source);
    }
    const Script& base = p.insert->from_view.empty() ? script : with_view;
    FLOE_RETURN_NOT_OK(DescribeSink(p));
    std::optional<AggregatePlan> aggregate;
    if (IsAggregateQuery(*p.insert)) {
      FLOE_ASSIGN_OR_RAISE(AggregateArguments args,
                           RewriteAggregateArguments(base, p, job->context.scale_out != nullptr));
      const Script& planned = args.hidden.empty() ? base : args.script;
      p.aggregate_arguments = args.hidden;
      FLOE_ASSIGN_OR_RAISE(aggregate, CheckAggregate(planned, args.insert, *p.sink,
                                                     *p.sink_connector, p.sink_table));
      if (aggregate->window && !aggregate->watermark) {
        aggregates.emplace_back(p.insert->pos, std::move(*aggregate));
        continue;
      }
      graph_keyed_state = true;
      keyed_plan = aggregate;
    }
    if (p.insert->row_number) graph_keyed_state = true;
    Result<connectors::AddedSink> added = aggregate ? PlanAggregateInsert(*job, p, *aggregate)
                                          : p.insert->row_number ? PlanRankInsert(*job, p)
                                                                 : PlanCalcInsert(*job, p);
    if (!added.ok()) return added.status();
    FLOE_RETURN_NOT_OK(NoteExclusive(*added, *p.sink, &exclusive_users));
    if (added->plan_restore) committing_sinks.push_back(std::move(added).value());
  }
  FLOE_RETURN_NOT_OK(PlanDeadLetterSinks(*job, script, uses, &committing_sinks));
  if (!aggregates.empty()) {
    const auto& [pos, first] = aggregates.front();
    return Status::NotImplemented(
        At(pos) + "not implemented yet: " +
        std::string(first.window ? "window aggregation" : "GROUP BY aggregation") +
        " runs in a later step (INSERT INTO " + first.sink + ": " + ToString(first) +
        "); the query is valid");
  }
  if (job->context.scale_out) {
    FLOE_RETURN_NOT_OK(CheckScaleOut(script, *job, keyed_plan));
  } else {
    for (const CreateTable& t : script.tables) {
      if (TableOption(t, kPartitionKeyOption).empty()) continue;
      return Status::InvalidArgument(
          At(t.pos) + "table '" + t.name + "': '" + kPartitionKeyOption +
          "' declares how a scaled-out keyed job's topic is partitioned; it needs SET "
          "'floe.scale-out' = 'kafka-group'");
    }
  }
  FLOE_RETURN_NOT_OK(job->graph.Validate());

  job->has_keyed_state = graph_keyed_state;  // window aggregates hold keyed state
  job->prepare_restore =
      PlanRestore(std::move(committing_sinks), job->context.positions, job->has_keyed_state);
  return job;
}

}  // namespace floe::sql
