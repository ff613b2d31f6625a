#pragma once

#include <optional>
#include <set>
#include <string>

#include "floe/connectors/connector.h"
#include "floe/connectors/registry.h"

namespace floe::connectors {

// 'connector' = 'iceberg': the exactly-once Iceberg sink (docs/architecture.md, "The
// exactly-once commit protocol"; docs/exactly-once.md).
struct IcebergSinkSpec {
  TableDescriptor table;  // options: catalog-type=hadoop, warehouse, catalog-database,
                          // catalog-table, write.upsert.enabled, format-version,
                          // write.target-file-size-bytes, write.parquet.compression-codec
  // Stable identity of this pipeline's sink into this table: survives restarts, savepoints and
  // resubmission of the same job file. The one rule (EffectiveSinkId): option 'sink-id', else
  // this field (tests), else "<SQL table name>-><catalog-database>.<catalog-table>".
  std::string sink_id;
  // The running job's id and a fingerprint of what the pipeline reads (PipelineFingerprint of
  // SinkRequest::upstream; empty = unknown). A table whose newest commit of this sink id comes
  // from another job reading something else is refused (docs/exactly-once.md, "One pipeline per
  // sink id").
  std::string job_id;
  std::string pipeline;
  // Where the job keeps its checkpoints and savepoints (JobContext::checkpointing; empty
  // savepoint dir = <checkpoint dir>/savepoints). Before a run, files that earlier attempts of
  // this job id left and none of them references are removed (docs/exactly-once.md, "Files of
  // failed attempts"); without a checkpoint dir nothing is removed.
  std::string checkpoint_dir;
  std::string savepoint_dir;
  io::FileIO checkpoint_file_io;  // what they are reached with (CheckpointConfig::file_io)
  // The input is a changelog whose row kinds are in this STRING column (kRowKindColumn from a
  // debezium-json source; see IcebergWriterOptions::row_kind_column). Empty: every row inserts.
  std::string row_kind_column;
  // One table of a routed sink ('catalog-table' naming columns): the routed sink's id, stored
  // in the table property floe.routed-by when the table is created. Empty otherwise.
  std::string routed_by;
};

// Validates the options (unknown catalog type, missing warehouse, upsert without primary key,
// bad sizes or codec: errors name the option and the rule) and creates the table if missing.
Status PrepareIcebergTable(const IcebergSinkSpec& spec);

// Adds the sink to `graph` after `input`: writer subtasks (parallelism from option
// 'sink.parallelism', default 1; in upsert mode fed through a HASH partitioning on the primary
// key so all rows of a key reach one writer) and ONE committer subtask. Writers write and
// fsync files and hand their descriptions to the committer on each barrier; the committer keeps
// pending[N] in its state and, on checkpoint N complete, commits one snapshot per pending
// checkpoint, in order, with floe.sink-id / floe.job-id / floe.checkpoint-id /
// floe.source-offsets in the summary.
Status AddIcebergSink(runtime::JobGraph& graph, runtime::VertexId input,
                      const IcebergSinkSpec& spec, const JobContext& context);

// The data and delete files the Iceberg sinks staged in the completed checkpoints of
// `checkpoint_dir` and the savepoints of `savepoint_dir` ("" = <checkpoint_dir>/savepoints),
// both read with `file_io`: files a restore may still commit, so never orphans (absolute local
// paths).
Result<std::set<std::string>> IcebergFilesHeldByCheckpoints(const io::FileIO& file_io,
                                                            const std::string& checkpoint_dir,
                                                            const std::string& savepoint_dir);

// Before a run starts (fresh, restarted or restored): removes the files of this job's failed
// attempts that nothing references (internal::RemoveFailedAttemptFiles; logged, and only
// warned about when it cannot decide), then reads the newest snapshot of this sink id in the
// table and compares it with `restored` (nullopt for a job without checkpoint). When the table
// is ahead and `has_keyed_state`, policy kFail returns an InvalidArgument naming
// --on-stale-restore=fail|skip-to-table|replay.
Result<SinkRestorePlan> PlanIcebergSinkRestore(
    const IcebergSinkSpec& spec, const std::optional<runtime::CompletedCheckpoint>& restored,
    StaleRestorePolicy policy, bool has_keyed_state);

// A short stable fingerprint (16 hex digits, FNV-1a 64) of a pipeline's upstream description.
std::string PipelineFingerprint(std::string_view upstream);

// 'connector' = 'iceberg' for the registry: PrepareIcebergTable + AddIcebergSink, and the
// restore check PlanIcebergSinkRestore.
Connector IcebergConnector();

}  // namespace floe::connectors
