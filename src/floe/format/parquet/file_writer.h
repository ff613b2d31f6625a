#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/io/file_io.h"

namespace floe::parquet {

class ColumnWriter;
class PageCompressor;

enum class Compression { kUncompressed, kSnappy, kZstd };

// "zstd" | "snappy" | "uncompressed" | "none", case-insensitive.
Result<Compression> ParseCompression(std::string_view name);
std::string_view CompressionName(Compression c);

struct WriterOptions {
  Compression compression = Compression::kZstd;
  int zstd_level = 3;
  // A row group is closed once its estimated encoded (compressed) size reaches this.
  int64_t row_group_size_bytes = 128 << 20;
  // A data page is closed once its estimated encoded (uncompressed) size reaches this.
  int64_t page_size_bytes = 1 << 20;
  // ... or once it holds this many rows (Iceberg's write.parquet.page-row-limit, parquet-mr's page
  // row count limit): small pages keep the writer's page buffers small and reused.
  int64_t page_row_limit = 20000;
  bool dictionary_enabled = true;
  // A column chunk falls back from dictionary to PLAIN encoding once its dictionary would grow
  // past this many (PLAIN-encoded) bytes.
  int64_t dictionary_page_size_limit = 1 << 20;
  std::vector<std::pair<std::string, std::string>> key_value_metadata;
};

// Column statistics for one field, summed over the file's row groups: what Iceberg needs for a
// DataFile's metrics.
struct ColumnMetrics {
  int32_t field_id = 0;
  int64_t value_count = 0;  // including nulls
  int64_t null_count = 0;
  int64_t nan_count = 0;        // float/double only, else 0
  int64_t compressed_size = 0;  // bytes of this column's chunks in the file (headers included)
  // Parquet PLAIN encoding of the physical value: little-endian ints/floats, one byte for
  // booleans, raw bytes for strings/binary, big-endian two's complement of the type's fixed width
  // for FIXED_LEN_BYTE_ARRAY decimals. nullopt if the column has no non-null, non-NaN value.
  // Float zeros follow the Parquet rule: a zero min is written -0.0, a zero max +0.0.
  std::optional<std::string> min, max;
  bool operator==(const ColumnMetrics&) const = default;
};

struct WrittenFile {
  std::string path;
  int64_t file_size = 0;
  int64_t row_count = 0;
  std::vector<ColumnMetrics> columns;      // one per field, in schema order
  std::vector<int64_t> row_group_offsets;  // file offset of each row group's first page
};

// FileWriter writes one Parquet file (flat schema, data page v1, see README.md) from record
// batches. Lifecycle: Open -> Add* -> [Flush] -> Finish | Abandon. Columns of the current row
// group are buffered in memory, encoded and compressed, until the row group is closed (by size
// or Flush) and written out. Once any call fails the writer stays failed and every later call
// returns that error; Abandon is still allowed. Destroying a writer that was neither finished nor
// abandoned abandons it (the partial file is removed). Not thread-safe.
class FileWriter {
 public:
  // Creates `path` exclusively through `file_io` (AlreadyExists if it exists). InvalidArgument
  // for schemas floe cannot write (e.g. decimal precision outside 1..38).
  static Result<std::unique_ptr<FileWriter>> Open(const io::FileIO& file_io,
                                                  const std::string& path,
                                                  std::shared_ptr<const BatchSchema> schema,
                                                  const WriterOptions& options);
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  // REQUIRES: the batch's schema fields equal the writer's (InvalidArgument otherwise, also for
  // nulls in a non-nullable field or decimals that do not fit their precision's storage).
  Status Add(const RecordBatch& batch);
  // Ends the current row group (no-op if it is empty).
  Status Flush();
  // Flushes, writes the footer, fsyncs and closes the file.
  Result<WrittenFile> Finish();
  // Closes and unlinks the file. Idempotent.
  void Abandon();

  // Bytes written plus the estimated encoded size of the buffered row group: used to roll files.
  int64_t estimated_file_size() const;
  int64_t row_count() const { return row_count_; }
  const std::shared_ptr<const BatchSchema>& schema() const { return schema_; }

  // Use Open.
  FileWriter(io::FileIO file_io, std::string path, std::shared_ptr<const BatchSchema> schema,
             WriterOptions options);

 private:
  Status Fail(Status st);
  Status FlushRowGroup();
  int64_t BufferedSize() const;

  io::FileIO file_io_;
  std::string path_;
  std::shared_ptr<const BatchSchema> schema_;
  WriterOptions options_;
  std::unique_ptr<io::WritableFile> file_;
  std::unique_ptr<PageCompressor> compressor_;
  std::vector<std::unique_ptr<ColumnWriter>> columns_;
  struct Footer;
  std::unique_ptr<Footer> footer_;  // row groups written so far
  Status status_;
  bool done_ = false;  // finished or abandoned
  int64_t row_count_ = 0;
  int64_t row_group_rows_ = 0;
};

}  // namespace floe::parquet
