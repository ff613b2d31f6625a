#pragma once

// Mapping between floe's BatchSchema and the Parquet schema (a depth-first list of
// SchemaElements). Flat schemas only for now: a root group with one primitive leaf per field.
// ColumnDescriptor carries the per-leaf facts (path, levels) the column writers and readers use,
// so nested types can later add repeated/group levels without changing them.

#include <cstdint>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/format/parquet/metadata.h"

namespace floe::parquet {

// How a reader turns a leaf's physical values into floe storage.
enum class Conversion : uint8_t {
  kNone,            // same representation
  kDecimal,         // INT32 / INT64 / big-endian bytes -> Int128
  kMillisToMicros,  // INT64 timestamp millis -> micros
  kNanosToMicros,   // INT64 timestamp nanos -> micros (floor)
  kUnsigned32,      // INT32 holding uint32 -> int64
};

struct ColumnDescriptor {
  Field field;                    // the floe field this leaf stores
  std::vector<std::string> path;  // path_in_schema
  format::Type physical_type = format::Type::kInt32;
  int32_t type_length = 0;  // FIXED_LEN_BYTE_ARRAY only
  int16_t max_definition_level = 0;
  int16_t max_repetition_level = 0;
  Conversion conversion = Conversion::kNone;
};

// Minimum bytes of a big-endian two's complement integer holding any unscaled decimal of
// `precision` digits (1..38).
int DecimalFixedBytes(int precision);

// Physical layout floe writes for each field. InvalidArgument for fields floe cannot write.
Result<std::vector<ColumnDescriptor>> DescribeColumns(const BatchSchema& schema);

// The SchemaElement list floe writes: root group named "schema", then one leaf per column.
std::vector<format::SchemaElement> ToParquetSchema(const std::vector<ColumnDescriptor>& columns);

// Reads a Parquet schema. NotImplemented for nested or repeated fields and physical/logical types
// floe has no DataType for; Corruption for inconsistent schemas.
Status FromParquetSchema(const std::vector<format::SchemaElement>& elements, BatchSchema* schema,
                         std::vector<ColumnDescriptor>* columns);

}  // namespace floe::parquet
