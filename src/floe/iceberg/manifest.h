#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "floe/iceberg/partition_spec.h"

namespace floe::iceberg {

enum class FileContent : int32_t { kData = 0, kPositionDeletes = 1, kEqualityDeletes = 2 };

// A data or delete file as described in a manifest (spec "Manifests", data_file struct).
struct DataFile {
  FileContent content = FileContent::kData;
  std::string file_path;  // absolute file:// URI, byte-identical wherever written
  std::string file_format = "PARQUET";
  int32_t spec_id = 0;  // not stored in the entry: the manifest's spec
  PartitionTuple partition;
  int64_t record_count = 0;
  int64_t file_size_in_bytes = 0;
  std::map<int32_t, int64_t> column_sizes;
  std::map<int32_t, int64_t> value_counts;
  std::map<int32_t, int64_t> null_value_counts;
  std::map<int32_t, int64_t> nan_value_counts;
  std::map<int32_t, std::string> lower_bounds;  // single-value serialization
  std::map<int32_t, std::string> upper_bounds;
  std::vector<int64_t> split_offsets;
  std::vector<int32_t> equality_ids;  // equality delete files only
  std::optional<int32_t> sort_order_id;
  bool operator==(const DataFile&) const = default;
};

enum class EntryStatus : int32_t { kExisting = 0, kAdded = 1, kDeleted = 2 };

struct ManifestEntry {
  EntryStatus status = EntryStatus::kAdded;
  std::optional<int64_t> snapshot_id;           // null = inherit from the manifest list
  std::optional<int64_t> sequence_number;       // data sequence number; null = inherit
  std::optional<int64_t> file_sequence_number;  // null = inherit
  DataFile data_file;
  bool operator==(const ManifestEntry&) const = default;
};

enum class ManifestContent : int32_t { kData = 0, kDeletes = 1 };

struct PartitionFieldSummary {
  bool contains_null = false;
  std::optional<bool> contains_nan;
  std::optional<std::string> lower_bound;  // single-value serialization
  std::optional<std::string> upper_bound;
  bool operator==(const PartitionFieldSummary&) const = default;
};

// One row of a manifest list (spec "Manifest Lists").
struct ManifestFile {
  std::string manifest_path;
  int64_t manifest_length = 0;
  int32_t partition_spec_id = 0;
  ManifestContent content = ManifestContent::kData;
  int64_t sequence_number = 0;
  int64_t min_sequence_number = 0;
  int64_t added_snapshot_id = 0;
  int32_t added_files_count = 0;
  int32_t existing_files_count = 0;
  int32_t deleted_files_count = 0;
  int64_t added_rows_count = 0;
  int64_t existing_rows_count = 0;
  int64_t deleted_rows_count = 0;
  std::vector<PartitionFieldSummary> partitions;
  bool operator==(const ManifestFile&) const = default;
};

}  // namespace floe::iceberg
