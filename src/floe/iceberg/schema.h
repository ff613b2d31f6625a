#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"

namespace floe::iceberg {

// A single value of a primitive Iceberg type; the type travels separately (a DataType).
// monostate = null. Storage follows floe::Column: date int32 days, timestamps int64 micros,
// decimal Int128 unscaled, string and binary std::string.
using Value =
    std::variant<std::monostate, bool, int32_t, int64_t, float, double, std::string, Int128>;

// An Iceberg schema. Flat for now (primitive fields only); field ids are stable across
// evolution. Fields reuse floe::Field: name, type, nullable (= !required), field_id.
struct Schema {
  int32_t schema_id = 0;
  std::vector<Field> fields;
  std::vector<int32_t> identifier_field_ids;  // the primary key (upsert), may be empty

  const Field* FindById(int32_t id) const;
  const Field* FindByName(std::string_view name) const;
  int32_t HighestFieldId() const;
  // The batch schema records of this table travel in (same names, types, ids).
  std::shared_ptr<const BatchSchema> ToBatchSchema() const;
  bool operator==(const Schema&) const = default;
};

// The Flink SQL spelling of a type ("BIGINT", "TIMESTAMP(6)", "DECIMAL(10, 2)"). Flink type
// names are parsed by the sql module (sql::ParseDataType), which iceberg does not depend on.
std::string FlinkTypeName(const DataType& type);
// The fields of a new table from its columns in order (name, type, nullable; field_id ignored):
// ids 1..n. Rejects empty names and names equal ignoring case (most Iceberg engines resolve names
// that way), naming the column and its position.
Result<std::vector<Field>> AssignFreshFieldIds(std::vector<Field> columns);

// Iceberg JSON (spec "Schemas"): {"type":"struct","schema-id":..,"identifier-field-ids":[..],
// "fields":[{"id":1,"name":"seq","required":true,"type":"long"},...]}
std::string SchemaToJson(const Schema& schema);  // compact JSON text
Result<Schema> SchemaFromJson(std::string_view json);
// Iceberg type string <-> DataType ("long", "decimal(10, 2)", "timestamptz", ...).
Result<DataType> ParseIcebergType(std::string_view text);

// Iceberg single-value binary serialization (spec Appendix D), used for manifest bounds and
// partition summaries: little-endian ints/longs/floats/doubles, 0/1 byte for booleans, UTF-8
// for strings, unscaled big-endian two's complement with the fewest bytes for decimals.
std::string SerializeValue(const DataType& type, const Value& value);
Result<Value> DeserializeValue(const DataType& type, std::string_view bytes);
// Converts a Parquet min/max statistic (PLAIN encoding of the physical type) to the Iceberg
// single-value serialization of `type`.
Result<std::string> ParquetStatToIcebergBound(const DataType& type, std::string_view stat);
// Total order used for bounds and partition summaries (strings/binary: unsigned bytes).
// REQUIRES: both non-null and of `type`'s storage kind.
int CompareValues(const DataType& type, const Value& a, const Value& b);
// Reads row `row` of `column` as a Value.
Value ValueAt(const Column& column, size_t row);
// Appends `value` to `column`. REQUIRES: value's storage kind matches column.type() or null.
void AppendValue(Column* column, const Value& value);
// Human-readable form for partition paths and errors ("2024-01-02", "42", "abc").
std::string ValueToString(const DataType& type, const Value& value);

}  // namespace floe::iceberg
