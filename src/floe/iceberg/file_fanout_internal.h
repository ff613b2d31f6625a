#pragma once

// FileFanout: the machinery under the writers of data_writer.h. Internal to floe_iceberg.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/format/parquet/file_writer.h"
#include "floe/iceberg/data_writer.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/partition_spec.h"
#include "floe/iceberg/schema.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::iceberg::internal {

// Rows of one file schema go to one open Parquet file per partition of the table's default
// spec; a file is closed once its estimated size reaches the target and described as a
// DataFile. Once an error happens, every later call returns it. Lifecycle: Make -> Add* |
// AddPartition* -> [Flush] -> Finish | Abandon (also on destruction: the files of an unfinished
// fanout are removed). Not thread-safe.
class FileFanout {
 public:
  struct Options {
    FileWriterConfig config;
    std::shared_ptr<const BatchSchema> file_schema;  // the columns written, with field ids
    FileContent content = FileContent::kData;
    std::vector<int32_t> equality_ids;
    std::optional<int32_t> sort_order_id;
    std::string name_suffix;  // "" for data, "-eq-deletes" / "-pos-deletes" for deletes
    // Field ids whose string bounds are kept whole (position deletes' file_path).
    std::vector<int32_t> untruncated_ids;
  };

  static Result<std::unique_ptr<FileFanout>> Make(const TableMetadata& metadata, Options options);

  FileFanout() = default;  // use Make
  ~FileFanout() { Abandon(); }
  FileFanout(const FileFanout&) = delete;
  FileFanout& operator=(const FileFanout&) = delete;

  const PartitionSpec& spec() const { return spec_; }
  const Schema& schema() const { return schema_; }
  const std::shared_ptr<const BatchSchema>& file_schema() const { return options_.file_schema; }
  const Status& status() const { return status_; }
  // Records the writer's first error; returns `st`.
  Status Fail(Status st) {
    if (!st.ok() && status_.ok()) status_ = st;
    return st;
  }
  int64_t row_count() const { return rows_; }
  WriterStats stats() const;
  // The <nnnnn> the next file opened gets.
  int64_t next_file_number() const { return next_file_; }

  // Writes `file_rows` (of file_schema) with each row's partition taken from the same row of
  // `source_rows` (which carries the partition source columns, by field id).
  Status Add(const RecordBatch& file_rows, const RecordBatch& source_rows);
  // Writes rows that all belong to `partition`.
  Status AddPartition(const PartitionTuple& partition, const RecordBatch& file_rows);
  Status Flush();
  Result<std::vector<DataFile>> Finish();
  void Abandon();

 private:
  struct PartitionState {
    PartitionTuple partition;
    std::string dir;
    std::unique_ptr<parquet::FileWriter> file;
    std::string path;
  };

  void OpenPartition(const PartitionTuple& partition);
  Status AddToPartition(size_t index, const RecordBatch& rows);
  Status WriteRows(PartitionState* p, const RecordBatch& rows);
  Status CloseFile(PartitionState* p);
  Result<DataFile> Describe(const PartitionState& p, const parquet::WrittenFile& written) const;

  Options options_;
  Schema schema_;
  PartitionSpec spec_;
  std::vector<DataType> source_types_;
  std::vector<PartitionState> partitions_;
  std::unordered_map<std::string, size_t> partition_index_;
  std::vector<std::vector<uint32_t>> group_rows_;
  std::vector<DataFile> finished_;
  std::vector<std::string> created_;
  int64_t next_file_ = 0;
  int64_t rows_ = 0;
  double size_ratio_ = 1.0;  // real / estimated size of the last file closed
  int64_t bytes_written_ = 0;
  bool finished_called_ = false;
  Status status_;
};

}  // namespace floe::iceberg::internal
