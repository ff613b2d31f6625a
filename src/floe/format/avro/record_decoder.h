#pragma once

// Avro binary datums of a writer's record schema decoded straight into a batch's columns.

#include <memory>
#include <string_view>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/common/undeclared_fields.h"
#include "floe/format/avro/schema.h"

namespace floe::avro {

// RecordDecoder resolves a writer's record schema against the columns of a table, as Avro's
// schema resolution does against a reader schema made from them: fields are matched by name (in
// any order), a writer field with no column is skipped, a column with no writer field reads null,
// a union with null reads null where the datum holds null, and values widen as Avro promotes them
// (int -> long / float / double, long -> float / double, float -> double, string <-> bytes).
// Besides: an enum reads as its symbol into STRING; decimals (bytes or fixed) into DECIMAL of the
// same scale and at least the precision; date into DATE; time-millis / time-micros into TIME;
// timestamp-* and local-timestamp-* (millis or micros) into TIMESTAMP and TIMESTAMP_LTZ. Nested
// records, arrays and maps are read only to skip them.
class RecordDecoder {
 public:
  // InvalidArgument naming the field when `writer` cannot feed `columns`: its root is not a
  // record, a NOT NULL column has no field, or a field's type cannot become its column's type.
  static Result<std::unique_ptr<RecordDecoder>> Make(std::shared_ptr<const Schema> writer,
                                                     std::shared_ptr<const BatchSchema> columns);
  // The same for `record`, a record node inside `writer` (a Debezium envelope's row).
  static Result<std::unique_ptr<RecordDecoder>> Make(std::shared_ptr<const Schema> writer,
                                                     const Node& record,
                                                     std::shared_ptr<const BatchSchema> columns);
  // As Make, with `columns`' last field (a nullable STRING: runtime::kUndeclaredFieldsColumn)
  // receiving, per row, the writer's fields no other column names, packed
  // (floe/common/undeclared_fields.h) with the type each becomes: boolean BOOLEAN, int INT, long
  // BIGINT, float FLOAT, double DOUBLE, string and enum STRING, bytes and fixed BYTES; date DATE,
  // time-* TIME, timestamp-* TIMESTAMP_LTZ, local-timestamp-* TIMESTAMP, decimal DECIMAL(P, S);
  // a union of null and one of those the same, null where the datum holds null. Fields of other
  // types (records, arrays, maps, wider unions) are skipped as before. Null when none.
  static Result<std::unique_ptr<RecordDecoder>> MakeCapturing(
      std::shared_ptr<const Schema> writer, std::shared_ptr<const BatchSchema> columns);
  ~RecordDecoder();
  RecordDecoder(const RecordDecoder&) = delete;
  RecordDecoder& operator=(const RecordDecoder&) = delete;

  // Appends the row `datum` holds (all of it: trailing bytes are an error) to `out`, whose schema
  // is `columns`. On error `out` is as before and the Status names the field: Corruption for
  // malformed bytes, InvalidArgument for a value its column cannot hold (a null in a NOT NULL
  // column, a decimal beyond its precision, a string that is not UTF-8).
  Status Decode(std::string_view datum, RecordBatch* out) const;
  // Decodes one record from the front of *data (advancing past it), as Decode does otherwise.
  Status DecodeFrom(std::string_view* data, RecordBatch* out) const;
  // MakeCapturing: the fields captured and their types (null otherwise).
  const BatchSchema* captured() const;

 private:
  struct Plan;
  RecordDecoder(std::shared_ptr<const Schema> writer, std::unique_ptr<Plan> plan);
  static Result<std::unique_ptr<RecordDecoder>> MakePlan(std::shared_ptr<const Schema> writer,
                                                         const Node& record,
                                                         std::shared_ptr<const BatchSchema> columns,
                                                         bool capture);
  std::shared_ptr<const Schema> writer_;  // owns the nodes the plan's steps point at
  std::unique_ptr<Plan> plan_;
  mutable RecordBatch scratch_;  // MakeCapturing: one row of the captured fields' values
  mutable UndeclaredFieldsWriter packed_;
};

// Skips one datum of `type` at the front of *data; errors (Corruption) name `field`.
Status SkipDatum(const Node& type, const std::string& field, std::string_view* data);

}  // namespace floe::avro
