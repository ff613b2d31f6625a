#include "floe/connectors/roster/roster_source.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/connectors/connector_options.h"
#include "floe/format/json/json_lines.h"

namespace floe::connectors {
namespace {

const std::vector<std::string> kRosterOptions = {"seed", "providers", "events", "sources",
                                                 "rows-per-second"};

constexpr uint32_t kStateVersion = 1;
constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();

}  // namespace

Result<RosterSourceConfig> MakeRosterSourceConfig(const TableDescriptor& table) {
  FLOE_RETURN_NOT_OK(CheckSupportedOptions(table, "roster", kRosterOptions));
  RosterSourceConfig config;
  FLOE_ASSIGN_OR_RAISE(int64_t seed, IntOption(table, "seed", 42, 0, kMaxInt));
  config.roster.seed = static_cast<uint64_t>(seed);
  FLOE_ASSIGN_OR_RAISE(config.roster.providers,
                       IntOption(table, "providers", 2000, 1, 1'000'000'000));
  FLOE_ASSIGN_OR_RAISE(config.roster.events, IntOption(table, "events", 12000, 0, kMaxInt - 1));
  FLOE_ASSIGN_OR_RAISE(config.roster.sources, IntOption(table, "sources", 4, 1, 1'000'000));
  FLOE_ASSIGN_OR_RAISE(config.rows_per_second,
                       IntOption(table, "rows-per-second", 0, 0, 1'000'000'000));
  if (config.rows_per_second > 0) {
    config.batch_rows =
        static_cast<size_t>(std::clamp<int64_t>(config.rows_per_second / 10, 1, 1000));
  }
  if (table.schema == nullptr || table.schema->fields.empty()) {
    return Status::InvalidArgument("table '" + table.name + "' declares no columns");
  }
  const BatchSchema& roster = *RosterGenerator::Schema();
  for (const Field& f : table.schema->fields) {
    int i = roster.FieldIndex(f.name);
    if (i < 0) {
      std::string names;
      for (const Field& r : roster.fields) names += (names.empty() ? "" : ", ") + r.name;
      return Status::InvalidArgument("table '" + table.name + "': column '" + f.name +
                                     "' is not a roster column; the roster feed has: " + names);
    }
    const Field& rf = roster.fields[static_cast<size_t>(i)];
    if (!(rf.type == f.type)) {
      return Status::InvalidArgument("table '" + table.name + "': column '" + f.name +
                                     "' is declared " + json::SqlTypeName(f.type) +
                                     " but the roster feed produces " + json::SqlTypeName(rf.type));
    }
    if (!f.nullable && rf.nullable) {
      return Status::InvalidArgument("table '" + table.name + "': column '" + f.name +
                                     "' is declared NOT NULL (or is a primary-key column) but "
                                     "the roster feed leaves it null in some rows");
    }
    config.projection.push_back(i);
  }
  config.schema = table.schema;
  return config;
}

RosterSource::RosterSource(RosterSourceConfig config,
                           std::shared_ptr<runtime::SourcePositionBoard> positions,
                           const runtime::Clock* clock)
    : config_(std::move(config)),
      start_("roster source", "seq 1", kStateVersion, kStateVersion, std::move(positions)),
      clock_(clock != nullptr ? clock : runtime::SteadyClock::Get()) {}

std::string RosterSource::PositionJson(int64_t next_seq) {
  return "{\"next_seq\":" + std::to_string(next_seq) + "}";
}

Result<int64_t> RosterSource::ParsePositionJson(const std::string& json) {
  JsonPath at("roster source position", StatusCode::kInvalidArgument);
  int64_t next_seq = 0;
  Result<Json> j = ParseJson(json, at);
  Status st = j.ok() ? JsonObject(*j, at).Required("next_seq", &next_seq) : j.status();
  if (!st.ok() || next_seq < 1) {
    return Status::InvalidArgument(
        "roster source position must look like {\"next_seq\":N} "
        "with N >= 1, got " +
        json);
  }
  return next_seq;
}

Status RosterSource::Open(const runtime::OperatorContext& ctx) {
  start_.SetTask(ctx.task.name());
  if (ctx.task.parallelism != 1) {
    return Status::InvalidArgument("the roster source runs with parallelism 1, got " +
                                   std::to_string(ctx.task.parallelism));
  }
  return Status::OK();
}

Status RosterSource::Restore(runtime::StateReader& state) {
  FLOE_RETURN_NOT_OK(start_.BeginRestore(state).status());
  FLOE_ASSIGN_OR_RAISE(next_seq_, state.GetI64());
  if (next_seq_ < 1) return Status::Corruption("roster source state: next seq < 1");
  FLOE_RETURN_NOT_OK(state.ExpectEnd());
  generator_.reset();
  return Status::OK();
}

Status RosterSource::EnsureStarted() {
  if (generator_.has_value()) return Status::OK();
  SourceStart::Start start = start_.Resolve();
  switch (start.origin) {
    case StartOrigin::kTable: {
      FLOE_ASSIGN_OR_RAISE(next_seq_, ParsePositionJson(start.table_position));
      break;
    }
    case StartOrigin::kCheckpoint:
      break;  // next_seq_ was restored
    case StartOrigin::kStartupMode:
      next_seq_ = 1;
      break;
  }
  generator_.emplace(config_.roster);
  generator_->SkipTo(next_seq_);
  next_seq_ = generator_->next_seq();
  start_.LogStart(start, PositionJson(next_seq_));
  throttle_start_ms_ = clock_->NowMillis();
  throttle_emitted_ = 0;
  return Status::OK();
}

Result<runtime::SourceStatus> RosterSource::Poll(runtime::Collector& out) {
  FLOE_RETURN_NOT_OK(EnsureStarted());
  if (generator_->done()) return runtime::SourceStatus::kEnd;
  size_t rows = config_.batch_rows;
  if (config_.rows_per_second > 0) {
    // Rows due by now, plus one batch of burst so the first Poll emits at once.
    int64_t elapsed_ms = std::max<int64_t>(0, clock_->NowMillis() - throttle_start_ms_);
    int64_t due =
        static_cast<int64_t>(static_cast<__int128>(config_.rows_per_second) * elapsed_ms / 1000) +
        static_cast<int64_t>(config_.batch_rows);
    int64_t budget = due - throttle_emitted_;
    if (budget <= 0) return runtime::SourceStatus::kIdle;
    rows = std::min(rows, static_cast<size_t>(budget));
  }
  RecordBatch generated = generator_->Next(rows);
  size_t n = generated.num_rows();
  std::vector<Column> columns;
  columns.reserve(config_.projection.size());
  for (int i : config_.projection) {
    columns.push_back(std::move(generated.mutable_column(static_cast<size_t>(i))));
  }
  next_seq_ = generator_->next_seq();
  throttle_emitted_ += static_cast<int64_t>(n);
  if (n > 0) FLOE_RETURN_NOT_OK(out.Emit(RecordBatch(config_.schema, std::move(columns))));
  return generator_->done() ? runtime::SourceStatus::kEnd : runtime::SourceStatus::kMore;
}

Status RosterSource::SnapshotPosition(runtime::CheckpointId id, runtime::StateWriter& state) {
  FLOE_RETURN_NOT_OK(EnsureStarted());
  start_.BeginSnapshot(state);
  state.PutI64(next_seq_);
  start_.Record(id, PositionJson(next_seq_));
  return Status::OK();
}

Result<runtime::VertexId> AddRosterSource(runtime::JobGraph& graph, const std::string& name,
                                          const TableDescriptor& table, const JobContext& context) {
  FLOE_ASSIGN_OR_RAISE(RosterSourceConfig config, MakeRosterSourceConfig(table));
  return AddSourceVertex<RosterSource>(graph, name, 1, std::move(config), context.positions);
}

Connector RosterConnector() {
  Connector c;
  c.name = "roster";
  c.options = kRosterOptions;
  // 'events' only bounds the feed (a longer run continues the same sequence).
  c.identity_options = {"seed", "providers", "sources"};
  c.add_source = [](const SourceRequest& r) {
    return AddRosterSource(*r.graph, r.vertex_name, *r.table, *r.context);
  };
  return c;
}

}  // namespace floe::connectors
