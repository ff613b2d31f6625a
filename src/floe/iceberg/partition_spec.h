#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "floe/iceberg/schema.h"

namespace floe::iceberg {

enum class TransformKind { kIdentity, kBucket, kTruncate, kYear, kMonth, kDay, kHour, kVoid };

// A partition transform (spec "Partition Transforms"). param is N for bucket[N], W for
// truncate[W], else 0.
struct Transform {
  TransformKind kind = TransformKind::kIdentity;
  int32_t param = 0;

  // "identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void".
  std::string ToString() const;
  static Result<Transform> Parse(std::string_view text);
  // Whether this transform applies to a source column of `type` (spec table).
  bool CanTransform(const DataType& type) const;
  // year/month/hour/bucket -> int, day -> date (as the spec says; the value is int32 days
  // either way), identity/truncate/void -> the source type.
  DataType ResultType(const DataType& source) const;
  // Applies the transform to one value (null -> null). bucket uses the spec's 32-bit Murmur3
  // x86 hash of the value's hash encoding; truncate per the spec (ints: v - ((v % W) + W) % W,
  // strings: first W code points, binary: first W bytes, decimal: on the unscaled value).
  Value Apply(const DataType& source, const Value& value) const;
  bool operator==(const Transform&) const = default;
};

// Murmur3 x86 32-bit (seed 0) as the spec's bucket transform uses it.
uint32_t Murmur3Hash32(std::string_view bytes);

struct PartitionField {
  int32_t source_id = 0;
  int32_t field_id = 0;  // partition field ids start at 1000
  std::string name;      // e.g. "event_time_day", "npi_bucket"
  Transform transform;
  bool operator==(const PartitionField&) const = default;
};

// Values of a file's partition, one per PartitionSpec field, in spec order.
using PartitionTuple = std::vector<Value>;

struct PartitionSpec {
  int32_t spec_id = 0;
  std::vector<PartitionField> fields;

  bool unpartitioned() const { return fields.empty(); }
  // Result types of the partition fields, given the table schema.
  Result<std::vector<DataType>> PartitionTypes(const Schema& schema) const;
  // The partition of row `row` of `batch` (whose schema carries the table's field ids).
  Result<PartitionTuple> PartitionOf(const RecordBatch& batch, size_t row) const;
  // "event_time_day=2024-01-02/npi_bucket=3" (Hive-style, values URL-escaped), "" if
  // unpartitioned.
  std::string PartitionPath(const Schema& schema, const PartitionTuple& partition) const;
  bool operator==(const PartitionSpec&) const = default;
};

// Parses a Flink-style partition clause against a schema: "day(event_time), bucket(16, npi),
// truncate(4, city), state, year(ts), month(ts), hour(ts)". Field ids from 1000, names per
// Iceberg's defaults (col, col_bucket, col_trunc, col_year, col_month, col_day, col_hour).
Result<PartitionSpec> ParsePartitionClause(std::string_view text, const Schema& schema);

// Iceberg JSON: {"spec-id":0,"fields":[{"source-id":..,"field-id":1000,"name":..,
// "transform":"day"}]}
std::string PartitionSpecToJson(const PartitionSpec& spec);
Result<PartitionSpec> PartitionSpecFromJson(std::string_view json);

}  // namespace floe::iceberg
