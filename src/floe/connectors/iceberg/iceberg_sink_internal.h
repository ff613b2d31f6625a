#pragma once

// Internals of the Iceberg sink shared by iceberg_sink.cc, the writer and committer operators
// and their tests. Not part of the connector API.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "floe/catalog/catalog_config.h"
#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/connectors/iceberg/iceberg_sink.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/commit_markers.h"
#include "floe/iceberg/data_writer.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/runtime/checkpoint.h"
#include "floe/runtime/ids.h"
#include "floe/runtime/state.h"

namespace floe::connectors::internal {

// Snapshot summary keys of floe's commit marker (iceberg/commit_markers.h).
using iceberg::kSummaryCheckpointId;
using iceberg::kSummaryJobId;
using iceberg::kSummaryPipeline;
using iceberg::kSummarySinkId;
using iceberg::kSummarySourceOffsets;
using iceberg::kSummaryWatermark;

// The sink's options after validation (PrepareIcebergTable's rules).
struct IcebergSinkOptions {
  catalog::CatalogConfig catalog;
  iceberg::TableIdentifier table;
  bool upsert = false;
  uint32_t parallelism = 1;  // writer subtasks ('sink.parallelism')
  std::string sink_id;       // effective sink id
  // Set by the 'sink-id' option: the sink continues that id's history only, never another id's
  // of the same pipeline (two jobs of one pipeline may write one table under their own ids).
  bool sink_id_explicit = false;
  std::string partition_by;  // floe extension 'partition-by', "" = unpartitioned
  // floe extension 'sink.commit.unavailable-timeout'
  std::chrono::milliseconds unavailable_timeout{std::chrono::minutes(2)};
  // floe extension 'sink.schema-evolution' = 'add-columns': at start, an existing table gains the
  // declared columns it lacks and widens the ones declared wider (iceberg::EvolveSchema).
  bool add_columns = false;
  // 'catalog-table' naming columns ("events_{kind}"): each row goes to the table its columns
  // name (routed_sink.h). Then `table` is the template with each reference read as "x" (its
  // namespace is the tables' namespace) and `route` holds the template; empty: one table.
  std::string route;
  // Table properties to set when the table is created: the write.*, commit.*, read.* and
  // history.* options.
  std::map<std::string, std::string> table_properties;
  // Those of them Iceberg does not define, let through by 'floe.allow-unknown-properties'.
  std::vector<std::string> unknown_properties;
};

// The sink option that lets table properties Iceberg does not define through (with a warning)
// instead of refusing them as misspellings.
inline constexpr std::string_view kAllowUnknownProperties = "floe.allow-unknown-properties";
// How long a commit retries while the catalog is unavailable before the task fails.
inline constexpr std::string_view kUnavailableTimeout = "sink.commit.unavailable-timeout";
inline constexpr std::string_view kSchemaEvolution = "sink.schema-evolution";

// Validates spec.table.options; errors name the option and the rule.
Result<IcebergSinkOptions> ParseIcebergSinkOptions(const IcebergSinkSpec& spec);

// 'sink-id' option, else spec.sink_id, else "<sql table name>-><ns>.<table>".
std::string EffectiveSinkId(const IcebergSinkSpec& spec, const iceberg::TableIdentifier& table);

// The newest snapshot in the main branch's ancestry (current snapshot, then parents) whose
// summary carries floe.sink-id == sink_id: floe's commit marker for that sink.
struct SinkCommit {
  std::string sink_id;
  int64_t snapshot_id = 0;
  uint64_t checkpoint_id = 0;
  std::string job_id;
  std::string pipeline;                                 // "" for commits without one
  std::map<std::string, std::string> source_positions;  // task -> position JSON
};

// InvalidArgument when `marker` was written by another job that reads another pipeline than
// `spec`'s (both fingerprints known): the two would hide each other's commits. Names both jobs,
// the table and option 'sink-id'. OK otherwise (a restart, a resubmission of the same
// pipeline, or an older table without fingerprints).
Status CheckSinkOwner(const SinkCommit& marker, const std::string& table,
                      const std::string& sink_id, const std::string& job_id,
                      const std::string& pipeline);
// nullopt when no snapshot of the ancestry carries the sink id. Corruption when the marker's
// floe.checkpoint-id or floe.source-offsets cannot be parsed.
Result<std::optional<SinkCommit>> FindSinkCommit(const iceberg::TableMetadata& metadata,
                                                 const std::string& sink_id);
// The sink's newest commit; without one, the newest commit of any sink id that carries
// `pipeline` (not empty; "" for a sink whose id was set explicitly): the same pipeline under a
// default id that changed with a cosmetic edit of the job file, such as renaming the sink table.
// Its `sink_id` says which it is.
Result<std::optional<SinkCommit>> FindSinkOrPipelineCommit(const iceberg::TableMetadata& metadata,
                                                           const std::string& sink_id,
                                                           const std::string& pipeline);

// JSON object text {"task": <position JSON>, ...}; a position that is not valid JSON is
// embedded as a JSON string.
std::string SourceOffsetsToJson(const std::map<std::string, std::string>& positions);
Result<std::map<std::string, std::string>> SourceOffsetsFromJson(const std::string& text);

// What one writer subtask hands the committer for one checkpoint.
struct WriterFiles {
  runtime::CheckpointId checkpoint;
  std::string writer_task;
  // The source split all rows of these files came from (IcebergWriterOptions::split_column);
  // empty when the writer does not split.
  std::string split;
  std::string table;  // the table the files belong to (namespace.name)
  std::vector<iceberg::DataFile> data_files;
  std::vector<iceberg::DataFile> delete_files;
  // iceberg::SchemaToJson of the schema the files were written with when the writer grew the
  // table's schema by its rows' undeclared fields (the commit adopts it); "" otherwise.
  std::string written_schema;
};

// The private schema of writer -> committer batches: one BINARY column "floe_iceberg_files",
// one row per WriterFiles (format version u32 first).
std::shared_ptr<const BatchSchema> WriterFilesSchema();
RecordBatch EncodeWriterFiles(const WriterFiles& files);
Result<std::vector<WriterFiles>> DecodeWriterFiles(const RecordBatch& batch);

// The committer's state blob (docs/exactly-once.md, "Committer"): every checkpoint staged and
// not yet committed, by id.
struct PendingCommit {
  std::map<std::string, std::string> positions;  // source task -> position JSON
  std::vector<iceberg::DataFile> data_files;
  std::vector<iceberg::DataFile> delete_files;
  // The split of each file, by index (WriterFiles::split; "" when the writers do not split).
  std::vector<std::string> data_splits;
  std::vector<std::string> delete_splits;
  // WriterFiles::written_schema of the newest files that carried one ("": none).
  std::string written_schema;
};
struct CommitterState {
  std::string sink_id;
  std::map<uint64_t, PendingCommit> pending;
};
void EncodeCommitterState(const std::string& sink_id,
                          const std::map<uint64_t, PendingCommit>& pending,
                          runtime::StateWriter& out);
Result<CommitterState> DecodeCommitterState(runtime::StateReader& in);
// A routed sink's committer state (RoutedIcebergCommitterOperator): this version, the sink id,
// then per table its name and its committer's state blob.
inline constexpr uint32_t kRoutedCommitterStateVersion = 1000;
// The states of a committer's blob: one, or one per table of a routed sink.
Result<std::vector<CommitterState>> DecodeCommitterStates(runtime::StateReader& in);

// <job> of the writers' file names: a floe job id (32 hex digits, random) by its first 8
// digits; any other id (`--job-id`) by up to 8 of its letters and digits, 'x' and 8 hex digits
// of a hash of the whole id, so ids sharing a prefix ("ingest-prod-1", "ingest-prod-2") never
// share a tag: RemoveFailedAttemptFiles deletes by tag. "job" for an empty id.
std::string FileJobTag(const std::string& job_id);

// A file name IcebergWriterOperator writes:
// <job>-<subtask>-<attempt>-<k>-<nnnnn>[-eq-deletes|-pos-deletes].parquet
// or the committer's compaction (TableMaintainer) writes: <job>-rw-<attempt>-<k>-<nnnnn>.parquet.
struct WriterFileName {
  std::string job_tag;
  bool compaction = false;  // "rw": never staged in a checkpoint, only a snapshot references it
  uint32_t subtask = 0;
  std::string attempt;      // 8 hex digits, drawn per writer subtask instance
  uint64_t checkpoint = 0;  // k: the checkpoint the writer expected next (<= the barrier's id)
};
// nullopt for any name not of that form.
std::optional<WriterFileName> ParseWriterFileName(std::string_view name);

// Where the files of a job's earlier attempts may still be referenced from.
struct FailedAttemptScope {
  std::string job_id;
  std::string checkpoint_dir;     // required: without it nothing is removed
  std::string savepoint_dir;      // "" = <checkpoint_dir>/savepoints
  io::FileIO checkpoint_file_io;  // what both are reached with
  // The checkpoint or savepoint the coming run restores (it may live anywhere).
  const runtime::CompletedCheckpoint* restored = nullptr;
};
// What RemoveFailedAttemptFiles did.
struct FailedAttemptCleanup {
  int64_t files = 0;
  int64_t bytes = 0;
  std::set<std::string> attempts;  // attempt tokens of the removed files
  // Unreferenced files kept because a savepoint moved out of the savepoint dir may hold them.
  int64_t kept_for_savepoints = 0;
};
// The files staged in the Iceberg committer states of the checkpoint `scope` restores, of the
// completed checkpoints in its checkpoint dir and of the savepoints in its savepoint dir
// (absolute local paths): files a restore may still commit. Nothing but `restored` without a
// checkpoint dir.
Result<std::set<std::string>> FilesHeldByCheckpoints(const FailedAttemptScope& scope);

// Before a run of `scope.job_id`, when no attempt of it runs: deletes every file under the
// table's data directory whose name is a writer's (ParseWriterFileName) with this job's tag and
// that nothing may reference: no snapshot of `metadata` (any branch or tag, data or delete
// file), no pending commit in the state of any Iceberg committer (every '*-iceberg-committer'
// task) of the restored checkpoint, of a completed checkpoint in the checkpoint dir, or of a
// savepoint in the savepoint dir, and whose k is above the highest savepoint id the job recorded
// (`_savepoint_ids`: a savepoint moved elsewhere holds files with k <= its id only). Any
// error while collecting references removes nothing and is returned.
// The table's files are reached with `table_file_io` (its catalog's).
Result<FailedAttemptCleanup> RemoveFailedAttemptFiles(const io::FileIO& table_file_io,
                                                      const iceberg::TableMetadata& metadata,
                                                      const FailedAttemptScope& scope);

// The table property a routed sink sets on the tables it creates: its sink id.
inline constexpr std::string_view kRoutedByProperty = "floe.routed-by";
// The spec of one table of a routed sink: 'catalog-table' = `table`, the routed sink's id.
IcebergSinkSpec RoutedTableSpec(const IcebergSinkSpec& spec, const std::string& table,
                                const std::string& sink_id);
// The tables of a routed sink's namespace whose names its template could give and that it
// created (kRoutedByProperty) or committed to (a marker of its sink id), by name, sorted.
// `catalog`: an open catalog to use (null: one is opened).
Result<std::vector<std::string>> DiscoverRoutedTables(const IcebergSinkOptions& o,
                                                      iceberg::Catalog* catalog = nullptr);
// PrepareIcebergTable through `catalog` when not null (a routed sink's task creates its tables
// through its one connection).
Status PrepareIcebergTableIn(const IcebergSinkSpec& spec, iceberg::Catalog* catalog);

// Hooks the tests use to observe the committer deterministically.
struct IcebergSinkHooks {
  // After the committer handled OnCheckpointComplete(id) (committed or skipped everything due).
  std::function<void(runtime::CheckpointId)> on_checkpoint_handled;
  // Row-kind column name for changelog input (see IcebergWriterOptions).
  std::string row_kind_column;
};

Status AddIcebergSinkWithHooks(runtime::JobGraph& graph, runtime::VertexId input,
                               const IcebergSinkSpec& spec, const JobContext& context,
                               IcebergSinkHooks hooks);

// Vertex names of the sink's writer and committer (their state keys).
std::string WriterVertexName(const IcebergSinkSpec& spec);
std::string CommitterVertexName(const IcebergSinkSpec& spec);

}  // namespace floe::connectors::internal
