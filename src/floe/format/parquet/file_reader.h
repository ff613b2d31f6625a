#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/io/file_io.h"

namespace floe::parquet {

// Footer facts about one column chunk (for tests and tools).
struct ColumnChunkInfo {
  std::string physical_type;           // "INT32", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY", ...
  std::string codec;                   // "zstd", "snappy", "uncompressed", or "codec N"
  std::vector<std::string> encodings;  // "PLAIN", "RLE", "RLE_DICTIONARY", ...
  int64_t num_values = 0;
  int64_t total_compressed_size = 0;
  int64_t total_uncompressed_size = 0;
  int64_t file_offset = 0;
  int64_t data_page_offset = 0;
  std::optional<int64_t> dictionary_page_offset;
  std::optional<int64_t> null_count;
  std::optional<int64_t> nan_count;
  std::optional<std::string> min_value, max_value;  // Statistics fields 6 / 5
};

// One page header of a column chunk (for tests and tools).
struct PageInfo {
  std::string type;      // "DATA_PAGE", "DATA_PAGE_V2", "DICTIONARY_PAGE", "INDEX_PAGE"
  std::string encoding;  // of the values ("" for index pages)
  int32_t num_values = 0;
  int32_t compressed_size = 0;
  int32_t uncompressed_size = 0;
  bool has_crc = false;
};

// FileReader reads flat Parquet files: floe's own and ordinary ones from other writers (PLAIN and
// dictionary encodings, data page v1 and v2, zstd / snappy / uncompressed). Open reads and
// validates the footer; ReadRowGroup reads one row group's column chunks. Malformed input gives
// Corruption naming the file and the problem, never a crash or an unbounded allocation; files
// using features floe lacks (nested types, INT96, DELTA encodings, gzip...) give NotImplemented.
// Not thread-safe.
class FileReader {
 public:
  // Reads `path` through `file_io` (ranged reads: the footer, then each chunk when asked).
  static Result<std::unique_ptr<FileReader>> Open(const io::FileIO& file_io,
                                                  const std::string& path);
  // Reads a file held in memory; `name` is used in error messages.
  static Result<std::unique_ptr<FileReader>> OpenBuffer(std::string contents, std::string name);
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  // Names, DataTypes, nullability and field ids of the columns.
  const std::shared_ptr<const BatchSchema>& schema() const;
  int64_t num_rows() const;
  int num_row_groups() const;
  int64_t row_group_num_rows(int index) const;  // REQUIRES: 0 <= index < num_row_groups()
  const std::vector<std::pair<std::string, std::string>>& key_value_metadata() const;
  const std::string& created_by() const;
  int64_t file_size() const;

  Result<RecordBatch> ReadRowGroup(int index);
  Result<RecordBatch> ReadAll();

  Result<ColumnChunkInfo> column_chunk(int row_group, int column) const;
  Result<std::vector<PageInfo>> ReadPageInfos(int row_group, int column);

  struct Impl;
  explicit FileReader(std::unique_ptr<Impl> impl);

 private:
  Status ReadChunkInto(int row_group, int column, Column* out);
  Result<std::string_view> ReadChunkBytes(int row_group, int column, int64_t* start);
  Status Error(const Status& st) const;

  std::unique_ptr<Impl> impl_;
};

}  // namespace floe::parquet
