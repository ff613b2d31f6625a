#pragma once
#include <memory>
#include <string_view>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/format/avro/schema.h"

namespace floe::connectors {

// DebeziumAvroDecoder turns one Debezium change event written in Avro (the datum of a
// 'debezium-avro-confluent' record, after the registry framing) into changelog rows, with the
// same rules as DebeziumJsonDecoder (debezium_json.h):
//   op "c" or "r" -> +I(after);  "u" -> -U(before), +U(after);  "d" -> -D(before).
// The writer's envelope is a record with fields "before" and "after" (each a union of null and
// the row record, as Debezium's Avro converter writes them) and "op" (a string); its other
// fields (source, ts_ms, transaction) are skipped. The row record is resolved against the
// table's columns with Avro's rules (avro::RecordDecoder). Errors name the field and the rule;
// on error nothing of the event is appended. Not thread-safe (one per writer schema and subtask).
class DebeziumAvroDecoder {
 public:
  // InvalidArgument naming what is missing when `envelope` is not a Debezium envelope or its row
  // record cannot feed `columns`.
  static Result<std::unique_ptr<DebeziumAvroDecoder>> Make(
      std::shared_ptr<const avro::Schema> envelope, std::shared_ptr<const BatchSchema> columns);
  ~DebeziumAvroDecoder();
  // Appends the event's rows to *rows (schema: `columns`) and their kinds to *kinds.
  Status Decode(std::string_view datum, RecordBatch* rows, Column* kinds);

  struct Impl;
  explicit DebeziumAvroDecoder(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace floe::connectors
