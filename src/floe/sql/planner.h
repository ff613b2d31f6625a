#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/runtime/checkpoint.h"
#include "floe/runtime/checkpoint_config.h"
#include "floe/runtime/job_graph.h"
#include "floe/runtime/monitoring_config.h"
#include "floe/runtime/restart_strategy.h"
#include "floe/sql/aggregate_plan.h"  // AggregatePlan: what an aggregating INSERT plans to

namespace floe::sql {

struct PlanOptions {
  std::string job_id;
  std::map<std::string, std::string> variables;  // ${NAME} substitution
  // Values that override the job file's SET statements (e.g. from the command line).
  std::map<std::string, std::string> config_overrides;
};

// A job file turned into something runnable: the operator graph and the settings of its run.
struct PlannedJob {
  runtime::JobGraph graph;
  runtime::CheckpointConfig checkpointing;  // from execution.checkpointing.* (validated)
  runtime::RestartStrategy restart;
  runtime::MonitoringConfig monitoring;  // metrics/UI ports, stall alarm (validated)
  connectors::JobContext context;        // shared by the graph's operators (positions board, ...)
  std::map<std::string, std::string> config;
  bool has_keyed_state = false;  // keyed state between source and sink (windows, aggregates)
  // 'pipeline.operator-chaining.enabled' (or the deprecated 'pipeline.operator-chaining'); off
  // unless set, unlike Flink (docs/connectors.md, "Job settings").
  bool operator_chaining = false;
  // `table.exec.window-agg.buffer-size-limit` (validated; DefaultWindowBufferLimit when unset).
  size_t window_buffer_limit = 0;
  // Source vertices whose table sends bad records to a dead-letter table, with the vertex of
  // its computed columns if it has any (their failed rows go there too): PlanJob adds each
  // dead-letter table's sink once every INSERT is planned.
  struct DeadLetterSource {
    std::string table;
    runtime::VertexId source;
    std::optional<runtime::VertexId> computed;
  };
  std::vector<DeadLetterSource> dead_letter_sources;
  // Before each run: reconcile every sink with the checkpoint about to be restored. Returns
  // the plans (for the log); sets source start overrides on context.positions when a table is
  // ahead; *min_checkpoint_id = the highest checkpoint id any sink's table holds.
  std::function<Result<std::vector<connectors::SinkRestorePlan>>(
      const std::optional<runtime::CompletedCheckpoint>& restored,
      connectors::StaleRestorePolicy policy, uint64_t* min_checkpoint_id)>
      prepare_restore;
};

// Parses, validates and plans a job file. Config errors (bad option values, unknown
// connector, unsupported statement) are reported here, before anything runs, with the rule
// and the numbers. An aggregating INSERT (window TVF + GROUP BY window_start, window_end, or a
// regular GROUP BY) is validated (PlanAggregate, its sink's types and changelog rule) and planned
// as source -> [computed columns] -> [watermark assigner] -> [WHERE] -> keyBy -> aggregate ->
// Calc -> sink.
Result<std::unique_ptr<PlannedJob>> PlanJob(std::string_view job_text, const PlanOptions& options);

}  // namespace floe::sql
