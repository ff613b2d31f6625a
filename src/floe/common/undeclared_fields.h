#pragma once

// The fields a record carries beyond its table's declared columns, packed into one value per row
// (the reserved column runtime::kUndeclaredFieldsColumn), so a sink can grow its table by them.

#include <cstdint>
#include <string>
#include <string_view>

#include "floe/common/byte_codec.h"
#include "floe/common/record_batch.h"
#include "floe/common/status.h"

namespace floe {

// One undeclared field of one row. `value` holds the field's storage bytes as a Column keeps them
// (fixed-width little-endian, or the string's bytes); empty when `is_null`.
struct UndeclaredField {
  std::string_view name;
  DataType type;
  bool is_null = false;
  std::string_view value;
};

// Packs a row's undeclared fields. Reuse one per decoder: Clear between rows.
class UndeclaredFieldsWriter {
 public:
  void Clear();
  bool empty() const { return count_ == 0; }
  // A JSON value's kinds (the JSON decoder's; Avro and Protobuf fields come through AddFrom).
  void AddBool(std::string_view name, bool v);
  void AddInt64(std::string_view name, int64_t v);  // BIGINT
  void AddDouble(std::string_view name, double v);
  void AddString(std::string_view name, std::string_view v);
  // Row `row` of `column` as field `name` of the column's type (null as null).
  void AddFrom(std::string_view name, const Column& column, size_t row);
  // The packed row (valid until the next call).
  std::string_view Finish();
  // Appends to `into` row `row` of `fields` packed, each column a field of its name and type
  // (null when `fields` has no columns), and clears the writer: a decoder that decodes a
  // record's undeclared fields into a scratch batch first.
  void AppendRow(const RecordBatch& fields, size_t row, Column* into);

 private:
  void Head(std::string_view name, const DataType& type, bool is_null);
  ByteWriter fields_;   // the fields added since Clear
  std::string packed_;  // Finish's: the count, then fields_
  uint32_t count_ = 0;
};

// Reads what UndeclaredFieldsWriter packed; every read is bounds-checked (Corruption).
class UndeclaredFieldsReader {
 public:
  explicit UndeclaredFieldsReader(std::string_view packed) : in_(packed) {}
  // Sets *field to the next field; false at the end.
  Result<bool> Next(UndeclaredField* field);

 private:
  ByteReader in_;
  bool started_ = false;
  uint64_t left_ = 0;
};

// Whether a column of type `to` holds every value of `from` as is or widened the way Iceberg
// widens a column (INT -> BIGINT, FLOAT -> DOUBLE, DECIMAL precision up at the same scale).
bool UndeclaredFitsColumn(const DataType& from, const DataType& to);
// Appends `field`'s value to `column`, widened to its type. REQUIRES:
// UndeclaredFitsColumn(field.type, column->type()).
void AppendUndeclared(const UndeclaredField& field, Column* column);

}  // namespace floe
