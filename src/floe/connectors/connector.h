#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/common/time_zone.h"
#include "floe/runtime/checkpoint.h"
#include "floe/runtime/checkpoint_config.h"
#include "floe/runtime/job_graph.h"
#include "floe/runtime/operator.h"
#include "floe/runtime/row_kind.h"
#include "floe/runtime/source_positions.h"

namespace floe::iceberg {
struct SourcePartition;
struct PartitionStart;
}  // namespace floe::iceberg

namespace floe::runtime {
class CheckpointPins;
}  // namespace floe::runtime

namespace floe::connectors {

// A table of a job file (CREATE TABLE ... WITH (...)) as a connector sees it.
// A table's WATERMARK FOR col AS col - INTERVAL ...: bounded out-of-orderness, watermark =
// max(event time seen) - delay_ms. The source generates it; 'scan.watermark.idle-timeout' in
// `options` overrides 'table.exec.source.idle-timeout' for the table.
// A computed time column (`ts AS TO_TIMESTAMP_LTZ(ms, 3)`) evaluated on the physical rows, so a
// source makes its watermarks per split from it, as from a physical column.
class EventTimeColumn {
 public:
  virtual ~EventTimeColumn() = default;
  // The time column (microseconds) for every row of `physical` (the table's physical columns).
  virtual Result<Column> Compute(const RecordBatch& physical) const = 0;
};

struct WatermarkSpec {
  // Index into TableDescriptor::schema (a TIMESTAMP or TIMESTAMP_LTZ column); -1 when the time
  // column is computed (`computed` says how).
  int column = -1;
  int64_t delay_ms = 0;
  std::shared_ptr<const EventTimeColumn> computed;
  bool operator==(const WatermarkSpec&) const = default;
};

struct TableDescriptor {
  std::string name;  // the SQL table name
  // The physical columns in declared order (computed columns are not stored or decoded);
  // field ids 1..n.
  std::shared_ptr<const BatchSchema> schema;
  std::vector<std::string> primary_key;        // PRIMARY KEY (...) NOT ENFORCED
  std::vector<std::string> partitioned_by;     // PARTITIONED BY (...)
  std::map<std::string, std::string> options;  // WITH options, keys as written
  std::optional<WatermarkSpec> watermark;      // the table's event time, if it declares one
  // Metadata columns (`name TYPE METADATA [FROM 'key'] [VIRTUAL]`): in `schema` in declared
  // order like the others, but given by the source per record, never decoded from the value.
  struct MetadataColumn {
    std::string column;
    std::string key;
    bool is_virtual = false;
  };
  std::vector<MetadataColumn> metadata;
  // Set by the planner on a source whose rows go to a sink that grows its table by their
  // undeclared fields (Connector::takes_undeclared_fields): the source appends
  // runtime::kUndeclaredFieldsColumn, each record's fields beyond the declared columns.
  bool undeclared_fields = false;
};

// What every connector of one job run shares.
// A job whose instances share a Kafka topic (SET 'floe.scale-out' = 'kafka-group';
// docs/architecture.md, "Scale-out across machines"): what its Kafka source, its keyed operator
// and its Iceberg sink share.
struct ScaleOut {
  // Set by the sink when the plan adds it; the source calls it when the group gives it a
  // partition: the next offset the table holds for it and, for a keyed job, the state that
  // reading produced, from one table metadata.
  std::function<Result<iceberg::PartitionStart>(const iceberg::SourcePartition&)> table_start;
  // A keyed job (docs/architecture.md, "Keyed jobs"): the keyed task whose state file each
  // commit names per partition, and the checkpoints retention must keep for that. Set by the
  // planner; "" and null for a job without keyed state.
  std::string keyed_task;
  std::shared_ptr<runtime::CheckpointPins> pins;
};

struct JobContext {
  std::string job_id;
  runtime::CheckpointingMode mode = runtime::CheckpointingMode::kExactlyOnce;
  std::map<std::string, std::string> config;  // SET 'key' = 'value' of the job file
  runtime::CheckpointConfig checkpointing;    // the job's checkpoint options, validated
  int64_t restart_delay_ms = 0;               // fixed-delay restart delay; 0 when restarts are off
  uint32_t default_parallelism = 1;           // 'parallelism.default'
  // 'pipeline.auto-watermark-interval': how often a rising watermark is emitted (0: always).
  std::chrono::milliseconds auto_watermark_interval{200};
  // Source positions per checkpoint (sources write, committers read) and start overrides.
  std::shared_ptr<runtime::SourcePositionBoard> positions;
  std::shared_ptr<ScaleOut> scale_out;  // null: one instance runs the job (the default)
  // 'table.local-time-zone': TIMESTAMP_LTZ's windows, casts and clock functions (null: UTC).
  std::shared_ptr<const TimeZone> session_zone;
};

// What `--on-stale-restore` chooses when a restore finds the table ahead of the restored
// checkpoint and keyed state sits between source and sink (fast-forwarding the sources would
// make state and table disagree).
enum class StaleRestorePolicy { kFail, kSkipToTable, kReplay };

// The outcome of comparing one sink's table with the checkpoint a run is about to restore.
struct SinkRestorePlan {
  // Highest floe.checkpoint-id the table holds for this sink id (0 = none).
  uint64_t table_checkpoint_id = 0;
  // The table is ahead of the restored checkpoint (or there is no checkpoint but the table
  // holds commits of this sink): sources must start from the table's positions.
  bool table_ahead = false;
  // floe.source-offsets of that commit: source task name -> position JSON.
  std::map<std::string, std::string> source_positions;
  // One line for the log: what was found and what the run will do.
  std::string message;
};

// Adds source vertex `name` whose subtasks are each a `Source(config, positions)` (the
// sources' common factory: a copy of the validated config and the job's position board).
template <typename Source, typename Config>
runtime::VertexId AddSourceVertex(runtime::JobGraph& graph, const std::string& name,
                                  uint32_t parallelism, Config config,
                                  std::shared_ptr<runtime::SourcePositionBoard> positions) {
  return graph.AddSource(
      name, parallelism,
      [config = std::move(config), positions = std::move(positions)](
          const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::SourceOperator>> {
        return std::unique_ptr<runtime::SourceOperator>(
            std::make_unique<Source>(config, positions));
      });
}

}  // namespace floe::connectors
