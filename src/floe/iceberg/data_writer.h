#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/format/parquet/file_writer.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/io/file_io.h"

namespace floe::iceberg {

namespace internal {
class FileFanout;
}  // namespace internal

// Where and how a writer puts its Parquet files.
struct FileWriterConfig {
  // What the files are written with (the table's catalog's).
  io::FileIO file_io;
  // Absolute local directory or s3:// location, normally <table>/data. Partitioned files go to
  // <data_dir>/<partition path>/.
  std::string data_dir;
  // Unique per job, subtask, attempt and checkpoint (e.g. "00000-0-<uuid>"): files are named
  // <file_prefix>-<nnnnn>.parquet (delete files: ...-eq-deletes / -pos-deletes.parquet) and
  // created exclusively, so a reused prefix fails with AlreadyExists instead of overwriting.
  std::string file_prefix;
  // write.target-file-size-bytes: a file is closed and a new one opened once its estimated size
  // reaches this.
  int64_t target_file_size_bytes = 512LL << 20;
  // Real / estimated size of files written before with the same settings (WriterStats::
  // size_ratio of an earlier writer): without it a writer's first file rolls well below the
  // target, since the estimate counts pages before compression.
  double initial_size_ratio = 1.0;
  // <nnnnn> of the first file: writers sharing a prefix take disjoint ranges.
  int64_t first_file_number = 0;
  parquet::WriterOptions parquet;
};

// The table's writer settings, the files written through `file_io`. Reads the table's write
// properties: write.data.path (default <location>/data),
// write.target-file-size-bytes, write.parquet.compression-codec (default zstd),
// write.parquet.row-group-size-bytes, write.parquet.page-size-bytes,
// write.parquet.page-row-limit (default 20,000), write.parquet.dict-size-bytes,
// write.parquet.compression-level (zstd). Errors name the property and the bad value.
Result<FileWriterConfig> ConfigFromTableProperties(const io::FileIO& file_io,
                                                   const TableMetadata& metadata,
                                                   std::string file_prefix);

// Counts shared by the writers below.
struct WriterStats {
  int64_t rows = 0;           // rows accepted by Add
  int64_t files = 0;          // files finished so far
  int64_t bytes_written = 0;  // bytes of finished files
  int64_t open_bytes = 0;     // estimated bytes of the files still open
  double size_ratio = 1.0;    // real / estimated size of the last file closed (or the initial)
};

// DataFileWriter writes rows of the table's current schema into Parquet data files: one open
// file per partition of the default spec, each rolled at the target size. Finish closes and
// fsyncs every file and describes each as a DataFile (partition, record and value counts,
// column sizes, bounds truncated to 16 characters as write.metadata.metrics.default=truncate(16),
// split offsets = row group starts), ready for a commit.
// Lifecycle: Make -> Add* -> [Flush] -> Finish | Abandon. A failed writer stays failed (every
// later call returns the first error); Abandon removes the files written so far.
// Memory: one buffered row group per open partition, so a writer touching many partitions at
// once holds many. Not thread-safe; one writer per task.
class DataFileWriter {
 public:
  ~DataFileWriter();
  DataFileWriter(const DataFileWriter&) = delete;
  DataFileWriter& operator=(const DataFileWriter&) = delete;

  static Result<std::unique_ptr<DataFileWriter>> Make(const TableMetadata& metadata,
                                                      FileWriterConfig config);

  // REQUIRES: batch's fields carry the table's current schema, in order (names, types, ids),
  // e.g. Schema::ToBatchSchema(). Required columns must hold no nulls.
  Status Add(const RecordBatch& batch);
  // Ends the current row group of every open file (no file is closed).
  Status Flush();
  // Closes and fsyncs all files. The writer is spent afterwards.
  Result<std::vector<DataFile>> Finish();
  // Closes and removes every file this writer created (after a successful Finish the files
  // belong to the caller and are left alone). Idempotent.
  void Abandon();

  int64_t row_count() const;
  WriterStats stats() const;
  // The <nnnnn> the next file opened gets (a writer after this one with the same prefix starts
  // there).
  int64_t next_file_number() const;

  // Use Make.
  explicit DataFileWriter(std::unique_ptr<internal::FileFanout> fanout);

 private:
  std::unique_ptr<internal::FileFanout> fanout_;
};

// EqualityDeleteWriter writes equality delete files holding ONLY the equality columns (some
// readers compare every column of a delete row), with equality_ids set and content
// kEqualityDeletes. Each delete row is filed under the partition of the rows it deletes, so
// the files are partitioned like the data; the partition source columns must then be present
// in the rows given to Add. Same lifecycle and thread-safety as DataFileWriter.
class EqualityDeleteWriter {
 public:
  ~EqualityDeleteWriter();
  EqualityDeleteWriter(const EqualityDeleteWriter&) = delete;
  EqualityDeleteWriter& operator=(const EqualityDeleteWriter&) = delete;

  // REQUIRES: equality_field_ids name primitive fields of the current schema.
  static Result<std::unique_ptr<EqualityDeleteWriter>> Make(const TableMetadata& metadata,
                                                            std::vector<int32_t> equality_field_ids,
                                                            FileWriterConfig config);

  // `rows` holds at least the equality columns (and the partition source columns of a
  // partitioned table), found by field id; other columns are ignored. Every row becomes one
  // delete row (no deduplication here).
  Status Add(const RecordBatch& rows);
  Status Flush();
  Result<std::vector<DataFile>> Finish();
  void Abandon();

  int64_t row_count() const;
  WriterStats stats() const;
  // The schema of the delete files: the equality fields with their ids, in the order given.
  const std::shared_ptr<const BatchSchema>& delete_schema() const;

  // Use Make.
  explicit EqualityDeleteWriter(std::unique_ptr<internal::FileFanout> fanout);

 private:
  std::unique_ptr<internal::FileFanout> fanout_;
};

// Field ids and names of the position delete file columns (spec "Position Delete Files").
inline constexpr int32_t kDeleteFilePathFieldId = 2147483546;
inline constexpr int32_t kDeletePosFieldId = 2147483545;

// PositionDeleteWriter writes position delete files: columns file_path (string, required) and
// pos (long, required), sorted by file_path then pos, with bounds on both, content
// kPositionDeletes, one file per partition (a position delete applies only within the data
// file's partition). Deletes are buffered in memory and written by Finish. Same lifecycle.
class PositionDeleteWriter {
 public:
  ~PositionDeleteWriter();
  PositionDeleteWriter(const PositionDeleteWriter&) = delete;
  PositionDeleteWriter& operator=(const PositionDeleteWriter&) = delete;

  static Result<std::unique_ptr<PositionDeleteWriter>> Make(const TableMetadata& metadata,
                                                            FileWriterConfig config);

  // Deletes row `pos` (0-based) of the data file `file_path` (its exact manifest URI), whose
  // partition in the table's default spec is `partition` (empty when unpartitioned).
  Status Add(std::string_view file_path, int64_t pos, const PartitionTuple& partition = {});
  // Deletes row `pos` of `data_file` (its path and partition).
  Status Add(const DataFile& data_file, int64_t pos);
  Result<std::vector<DataFile>> Finish();
  void Abandon();

  int64_t row_count() const { return row_count_; }
  // file_path (2147483546, string, required), pos (2147483545, long, required).
  static std::shared_ptr<const BatchSchema> DeleteSchema();

  struct Pending;
  // Use Make.
  PositionDeleteWriter(std::unique_ptr<internal::FileFanout> fanout,
                       std::unique_ptr<Pending> pending);

 private:
  std::unique_ptr<internal::FileFanout> fanout_;
  std::unique_ptr<Pending> pending_;
  int64_t row_count_ = 0;
  Status status_;
};

// What a commit adds.
struct WriteResult {
  std::vector<DataFile> data_files;
  std::vector<DataFile> delete_files;
  double data_size_ratio = 1.0;  // initial_size_ratio for the next writer of this table
};

enum class WriteMode {
  kAppend,  // rows are appended as they are
  kUpsert,  // rows replace earlier rows with the same key
  kDelete,  // rows' keys are deleted; only the key columns matter
};

// DeltaWriter turns the rows of ONE commit into data and delete files.
//   kAppend: rows go straight to a DataFileWriter.
//   kUpsert: rows are buffered; per key (the table's identifier fields, null equal to null) the
//     last row wins, so no key is written twice in the commit, and one equality delete (key
//     columns only) is written per distinct key. The delete gets the commit's sequence number and
//     therefore retires only rows of EARLIER commits, never the row written beside it.
//   kDelete: one equality delete per distinct key; no data.
// Delete() retires keys in upsert mode too (a changelog's -D rows): a key's last operation in
// the commit decides whether a row is written.
// In a partitioned table the partition source columns must be identifier fields (a key must
// map to one partition, or a partition-scoped delete could miss the old row).
// Memory: kUpsert / kDelete hold the commit's rows (and one hash entry per key) until Finish.
// Lifecycle: Make -> (Add | Delete)* -> Finish | Abandon. Not thread-safe.
class DeltaWriter {
 public:
  ~DeltaWriter();
  DeltaWriter(const DeltaWriter&) = delete;
  DeltaWriter& operator=(const DeltaWriter&) = delete;

  // InvalidArgument if mode needs a key and the table has no identifier fields.
  static Result<std::unique_ptr<DeltaWriter>> Make(const TableMetadata& metadata, WriteMode mode,
                                                   FileWriterConfig config);

  // REQUIRES: batch has the table's current schema (kDelete: at least the key columns).
  Status Add(const RecordBatch& batch);
  // REQUIRES: mode is kUpsert or kDelete; batch holds at least the key columns (by field id).
  Status Delete(const RecordBatch& batch);
  // Rows added from now on have `evolved`'s current schema, which holds the old one's fields (by
  // id; new ones, wider types). Append: the files written so far are finished (Finish returns
  // them too) and new ones are numbered after them. Upsert: the rows buffered for this commit
  // are carried over (new columns null, widened ones widened), so a key is still written once.
  // REQUIRES: the key columns and partition spec do not change.
  Status EvolveSchema(const TableMetadata& evolved);
  Result<WriteResult> Finish();
  void Abandon();

  // Rows passed to Add and Delete.
  int64_t row_count() const { return row_count_; }
  // Distinct keys buffered (kUpsert / kDelete).
  int64_t key_count() const;

  struct State;
  // Use Make.
  DeltaWriter(WriteMode mode, std::unique_ptr<State> state);

 private:
  WriteMode mode_;
  std::unique_ptr<State> state_;
  int64_t row_count_ = 0;
  Status status_;
};

// Iceberg's truncate(L) metric mode for string bounds: the first `length` code points; the upper
// bound has its last code point incremented (nullopt when impossible). Binary: bytes.
std::string TruncateLowerBound(const DataType& type, std::string_view bound, int length);
std::optional<std::string> TruncateUpperBound(const DataType& type, std::string_view bound,
                                              int length);

}  // namespace floe::iceberg
