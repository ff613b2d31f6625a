#pragma once

// Helpers shared by the parquet tests: temp files, random schemas and data, metrics computed
// straight from the data, and the interop dump read by tests/interop (hyparquet, parquet-wasm).

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/format/parquet/file_writer.h"

namespace floe::parquet::testing {

// A fresh empty directory for one test.
std::string MakeTempDir(const std::string& name);

std::string ReadAllBytes(const std::string& path);

// Builds a batch from one column-filling lambda per field.
RecordBatch Concat(const std::shared_ptr<const BatchSchema>& schema,
                   const std::vector<RecordBatch>& batches);

struct RandomColumnProfile {
  double null_fraction = 0;
  int pool = 0;  // > 0: values drawn from this many distinct ones (dictionary friendly)
  int switch_to_random_at = -1;  // row after which values become high-cardinality
};

DataType RandomType(std::mt19937_64& rng);
std::shared_ptr<const BatchSchema> RandomSchema(std::mt19937_64& rng, int max_fields);
// Random rows for `schema`, including edge values (INT64_MIN/MAX, NaN, +-Inf, -0.0, empty and
// long strings, extreme decimals). Strings are valid UTF-8.
RecordBatch RandomBatch(const std::shared_ptr<const BatchSchema>& schema, size_t rows,
                        std::mt19937_64& rng, const std::vector<RandomColumnProfile>& profiles);

// Metrics computed directly from the data, the way FileWriter documents them (compressed_size
// left 0).
std::vector<ColumnMetrics> ExpectedMetrics(const RecordBatch& batch);

// When FLOE_INTEROP_DIR is set, copies `parquet_path` to $FLOE_INTEROP_DIR/parquet/<name>.parquet
// and writes <name>.expected.jsonl and <name>.schema.json beside it.
void DumpInterop(const std::string& name, const std::string& parquet_path,
                 const RecordBatch& expected);

// The JSON line for one row, as DumpInterop writes it.
std::string RowToJson(const RecordBatch& batch, size_t row);

}  // namespace floe::parquet::testing
