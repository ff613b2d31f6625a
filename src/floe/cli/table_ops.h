#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "floe/common/status.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/data_writer.h"

namespace floe::cli {

struct WriteReport {
  int64_t rows_read = 0;
  int64_t snapshot_id = 0;
  int64_t data_files = 0;
  int64_t delete_files = 0;
  int64_t delete_records = 0;
};

// Loads a JSON-lines file into a table as ONE snapshot: append adds the rows; upsert keeps the
// last row per primary key and retires earlier rows of those keys with equality deletes;
// delete turns each line's key values into equality deletes. Any bad line stops the load
// before anything is committed (the files written so far are removed). With `progress`, a
// ProgressLine shows rows and bytes read (on a terminal, or with FLOE_PROGRESS=always).
Status WriteJsonFile(iceberg::Catalog& catalog, const iceberg::TableIdentifier& id,
                     const std::string& path, iceberg::WriteMode mode, bool progress,
                     WriteReport* report);

// Upsert tables: every partition source column must be part of the primary key, or an
// update that moves a row to another partition would leave the old row alive.
Status ValidateUpsertPartitioning(const iceberg::Schema& schema,
                                  const iceberg::PartitionSpec& spec);

// Checks write.* properties (sizes, codec) before a table is created with them.
Status ValidateWriteProperties(const iceberg::Schema& schema, const iceberg::PartitionSpec& spec,
                               const std::map<std::string, std::string>& properties);

// `floe table describe` output: schema, primary key, partition spec, properties, current
// snapshot, every snapshot with its summary, live data/delete file counts and bytes (manifests
// read with `file_io`, the table's catalog's).
Result<std::string> DescribeTable(const io::FileIO& file_io, const iceberg::LoadedTable& table);

// Iceberg's metadata tables as JSON lines, a row a line, with the columns Trino's and Spark's
// `$snapshots`, `$history`, `$files` and `$partitions` have:
//   snapshots   committed_at, snapshot_id, parent_id, operation, manifest_list, summary, and
//               floe's commit markers from the summary: floe_sink, floe_job, floe_checkpoint,
//               floe_watermark (the job's watermark at the checkpoint, ISO-8601)
//   history     made_current_at, snapshot_id, parent_id, is_current_ancestor
//   files       content (0 data, 1 position deletes, 2 equality deletes), file_path,
//               file_format, spec_id, partition, record_count, file_size_in_bytes
//               (the current snapshot's live files)
//   partitions  partition, spec_id, record_count, file_count, total_data_file_size_in_bytes,
//               position_delete_record_count, position_delete_file_count,
//               equality_delete_record_count, equality_delete_file_count
//   positions   floe's: per sink, topic and partition a scaled-out job committed
//               ('floe.scale-out'), next_offset (the table's position), committed_by_job,
//               committed_at and snapshot_id of the commit that set it
// Times are ISO-8601 UTC; a partition is its path ("ts_day=2024-01-01", "" unpartitioned).
// InvalidArgument for any other `view`. Manifests are read with `file_io`.
Result<std::string> MetadataTableRows(const io::FileIO& file_io, const iceberg::LoadedTable& table,
                                      const std::string& view);

}  // namespace floe::cli
