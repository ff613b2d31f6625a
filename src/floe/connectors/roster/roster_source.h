#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/connectors/registry.h"
#include "floe/connectors/roster/roster_generator.h"
#include "floe/connectors/source_start.h"
#include "floe/runtime/clock.h"
#include "floe/runtime/job_graph.h"
#include "floe/runtime/operator.h"
#include "floe/runtime/source_positions.h"

namespace floe::connectors {

// Settings of a 'connector' = 'roster' table, resolved against its declared columns.
struct RosterSourceConfig {
  RosterOptions roster;         // 'seed', 'providers', 'events', 'sources'
  int64_t rows_per_second = 0;  // 'rows-per-second'; 0 = unthrottled
  size_t batch_rows = 1000;     // 1000, or rows-per-second / 10 (>= 1) when throttled
  // The batches' schema (the declared table) and, per declared column, its index in
  // RosterGenerator::Schema().
  std::shared_ptr<const BatchSchema> schema;
  std::vector<int> projection;
};

// Validates a roster table: options (unknown ones refused), and that every declared column is a
// roster column of the same type (projected by name, any order, any subset). A declared
// NOT NULL column the feed can leave null is refused. Errors name the table and the column.
Result<RosterSourceConfig> MakeRosterSourceConfig(const TableDescriptor& table);

// RosterSource emits the roster feed (RosterGenerator) as batches of the declared columns.
// Position = the next seq. SnapshotPosition writes it to the state blob and records
// {"next_seq":N} on the position board under the task name. The start follows SourceStart's
// rule: the table's position, else the restored state, else seq 1. Starting at seq N regenerates
// exactly the events N.. (the generator is prefix-stable). With rows-per-second > 0, Poll returns
// kIdle while ahead of schedule (one batch of burst), so the task backs off instead of spinning.
// Parallelism 1 (the feed is one sequence). Single-threaded, like every operator.
class RosterSource final : public runtime::SourceOperator {
 public:
  // `positions` may be null (no board: nothing recorded, no overrides). `clock` may be null
  // (steady clock); it paces the throttle only.
  RosterSource(RosterSourceConfig config, std::shared_ptr<runtime::SourcePositionBoard> positions,
               const runtime::Clock* clock = nullptr);

  Status Open(const runtime::OperatorContext& ctx) override;
  Status Restore(runtime::StateReader& state) override;
  Result<runtime::SourceStatus> Poll(runtime::Collector& out) override;
  Status SnapshotPosition(runtime::CheckpointId id, runtime::StateWriter& state) override;

  // The next seq this source will emit (after the start position was resolved).
  int64_t next_seq() const { return next_seq_; }
  // {"next_seq":N}
  static std::string PositionJson(int64_t next_seq);
  // Parses PositionJson's format; InvalidArgument naming the text otherwise.
  static Result<int64_t> ParsePositionJson(const std::string& json);

 private:
  Status EnsureStarted();

  RosterSourceConfig config_;
  SourceStart start_;
  const runtime::Clock* clock_;
  int64_t next_seq_ = 1;
  std::optional<RosterGenerator> generator_;  // built at the resolved start position
  int64_t throttle_start_ms_ = 0;
  int64_t throttle_emitted_ = 0;
};

// Adds the roster source vertex `name` (parallelism 1) for `table` to `graph`.
Result<runtime::VertexId> AddRosterSource(runtime::JobGraph& graph, const std::string& name,
                                          const TableDescriptor& table, const JobContext& context);

// 'connector' = 'roster' for the registry.
Connector RosterConnector();

}  // namespace floe::connectors
