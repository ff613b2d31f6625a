#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"

namespace floe::connectors {

// Options of 'format' = 'debezium-json' (Flink's names, without the 'debezium-json.' prefix).
struct DebeziumJsonOptions {
  bool schema_include = false;       // 'debezium-json.schema-include': {"schema":..,"payload":..}
  bool ignore_parse_errors = false;  // 'debezium-json.ignore-parse-errors'
};

// DebeziumJsonDecoder turns one Debezium change event (a Kafka record's value) into changelog
// rows, as Flink's debezium-json format does:
//   op "c" (create) or "r" (snapshot read)  -> +I(after)
//   op "u" (update)                         -> -U(before), +U(after)
//   op "d" (delete)                         -> -D(before)
// The envelope is {"before":{..}|null,"after":{..}|null,"op":"..",...} (other fields such as
// "source" and "ts_ms" are ignored), or with schema_include {"schema":{..},"payload":{<that>}}.
// "before" and "after" are decoded into the declared columns by json::JsonLinesDecoder (Flink's
// JSON value rules, unknown fields ignored). Errors (InvalidArgument) name the envelope field and
// the rule: invalid JSON, not an object, a missing or unknown "op", a null "after" for c/r/u, a
// null "before" for u/d (Debezium omits it unless the table's replica identity is FULL; Flink
// refuses the same events), or a column that does not decode ("field 'after': <decoder
// message>"). On error nothing of the event is appended; with ignore_parse_errors the event is
// skipped and counted instead.
// Lifecycle: Make -> Decode*. Not thread-safe (one per subtask).
class DebeziumJsonDecoder {
 public:
  // REQUIRES: `columns` has no field named kRowKindColumn.
  static Result<std::unique_ptr<DebeziumJsonDecoder>> Make(
      std::shared_ptr<const BatchSchema> columns, DebeziumJsonOptions options);
  ~DebeziumJsonDecoder();

  // Appends the event's rows to *rows (schema: `columns`) and their kinds ("+I", "-U", "+U",
  // "-D") to *kinds (a STRING column), keeping both the same length. The caller adds where
  // the event came from (topic, partition, offset) to errors.
  Status Decode(std::string_view value, RecordBatch* rows, Column* kinds);

  // Events skipped so far because of ignore_parse_errors.
  int64_t skipped() const;

  struct Impl;
  explicit DebeziumJsonDecoder(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace floe::connectors
