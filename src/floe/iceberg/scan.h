#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/io/file_io.h"

namespace floe::iceberg {

// Every function here reads the table's files through `file_io` (its catalog's).

// A delete file that applies to a task's data file, with its data sequence number. Shared
// between the tasks it applies to (immutable).
struct ScanDeleteFile {
  std::shared_ptr<const DataFile> file;
  int64_t data_sequence_number = 0;
};

// One live data file of a snapshot and the delete files that apply to it (spec "Scan
// Planning"):
//   position deletes: same spec and partition, data seq <= delete seq, and the data file's path
//     within the delete file's file_path bounds when it has them;
//   equality deletes: data seq < delete seq, and the delete file's spec is unpartitioned (a
//     global delete) or it has the data file's spec and partition.
struct FileScanTask {
  DataFile file;
  int64_t data_sequence_number = 0;
  std::vector<ScanDeleteFile> position_deletes;
  std::vector<ScanDeleteFile> equality_deletes;
};

// Plans a scan of `snapshot_id` (default: the current snapshot) from its manifest list and
// manifests, skipping DELETED entries. Tasks come in manifest order. An empty table (no
// snapshot) plans no tasks; an unknown snapshot id is NotFound.
Result<std::vector<FileScanTask>> PlanScan(const io::FileIO& file_io, const TableMetadata& metadata,
                                           std::optional<int64_t> snapshot_id = std::nullopt);

// Reads one task: the data file's rows projected to the table's current schema by field id
// (columns the file lacks read as null; int/float/decimal columns promoted by evolution are
// widened), minus the rows its position deletes (exact file_path match) and equality deletes
// (every equality column equal, null equal to null) remove. Rows keep their file order.
// Errors name the file.
Result<RecordBatch> ReadTask(const io::FileIO& file_io, const FileScanTask& task,
                             const TableMetadata& metadata);

// Checks, cheaply, every data and delete file the tasks reference (each once): its size is the
// manifest entry's file_size_in_bytes, its Parquet footer parses and validates, its row count is
// the entry's record_count. Reads one footer per file, no pages: a caller that must not produce
// partial output (`floe table scan`) checks before reading, so that only damage inside pages is
// left to be found mid-read. Errors name the file.
Status CheckScanFiles(const io::FileIO& file_io, const std::vector<FileScanTask>& tasks);

// Calls fn with each task's rows, in the tasks' order; stops at fn's first error. Delete files
// shared by several tasks are read once.
Status ScanTasks(const io::FileIO& file_io, const TableMetadata& metadata,
                 const std::vector<FileScanTask>& tasks,
                 const std::function<Status(const RecordBatch&)>& fn);

// PlanScan, then ScanTasks.
Status ScanTable(const io::FileIO& file_io, const TableMetadata& metadata,
                 std::optional<int64_t> snapshot_id,
                 const std::function<Status(const RecordBatch&)>& fn);

}  // namespace floe::iceberg
