#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"

namespace floe::json {

struct DecodeOptions {
  // Skip lines that fail to decode (counted in skipped_lines()) instead of failing Decode.
  bool ignore_parse_errors = false;
  // The schema's last field (a nullable STRING: runtime::kUndeclaredFieldsColumn) receives, per
  // row, the fields no other field names, packed (floe/common/undeclared_fields.h), null when
  // there are none. Types come from the JSON: integral numbers BIGINT, other numbers DOUBLE,
  // strings STRING, true / false BOOLEAN, objects and arrays STRING holding their JSON text;
  // nulls are left out (they say nothing of a type). A line fails, naming the field, when a field
  // holds another kind than an earlier line gave it (an integral number where DOUBLE was seen
  // reads as DOUBLE), when its name is empty, longer than 128 bytes or holds a control character
  // or '.', or when it would be the 1,001st distinct name.
  bool capture_undeclared = false;
};

// JsonLinesDecoder turns JSON-lines text (one JSON object per line) into rows of a RecordBatch,
// writing straight into the typed columns (simdjson On Demand; no DOM, no per-row allocation).
// Fields are matched to schema fields by exact name; unknown fields are ignored; a missing
// nullable field is null. Value formats follow Flink's JSON format (see README.md).
// Lifecycle: Make -> Decode*. Not thread-safe (it owns a parser and scratch buffers); use one
// decoder per thread.
class JsonLinesDecoder {
 public:
  static Result<std::unique_ptr<JsonLinesDecoder>> Make(std::shared_ptr<const BatchSchema> schema,
                                                        DecodeOptions options = {});
  ~JsonLinesDecoder();

  // Appends one row per non-blank line of `data` to *out. `source` (file path, topic/partition)
  // and `first_line` (1-based line number of data's first line) only go into error messages.
  // A line that cannot be decoded gives InvalidArgument, e.g.
  //   roster.jsonl:17: field 'revision': expected INT, got string "x"
  // and Decode stops there: rows of earlier lines stay appended, nothing of the bad line does.
  // With ignore_parse_errors the line is skipped and counted instead.
  // REQUIRES: out's schema equals the decoder's schema.
  Status Decode(std::string_view data, std::string_view source, int64_t first_line,
                RecordBatch* out);
  // Decode for `data` followed by `padding` bytes that may be read (their content does not
  // matter). With padding >= kPadding the text is parsed in place instead of being copied
  // into a padded buffer first (io::LineChunkReader chunks come with such padding).
  static constexpr size_t kPadding = 64;
  Status DecodePadded(std::string_view data, size_t padding, std::string_view source,
                      int64_t first_line, RecordBatch* out);

  // Lines skipped so far because of ignore_parse_errors.
  int64_t skipped_lines() const;

  struct Impl;
  explicit JsonLinesDecoder(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// Flink's 'json.timestamp-format.standard': how TIMESTAMP / TIMESTAMP_LTZ text separates the
// date from the time. kSql: "2020-12-30 12:13:14.123456" (Flink's default); kIso8601:
// "2020-12-30T12:13:14.123456". TIMESTAMP_LTZ adds 'Z' in both.
enum class TimestampStandard { kSql, kIso8601 };

// How AppendRowAsJson writes the types that have more than one usual JSON form. The defaults
// are floe's own text form (`floe table scan`, the print sink, tests); the Kafka sink uses
// Flink's json format instead: {TimestampStandard::kSql (or as configured), true}.
struct EncodeOptions {
  TimestampStandard timestamp_standard = TimestampStandard::kIso8601;
  // DECIMAL as a JSON number (Flink's json format) instead of a JSON string (exact for readers
  // that parse every JSON number as a double).
  bool decimal_as_number = false;
};

// Appends row `row` of `batch` as one JSON object line (with '\n') to *out, in the format the
// decoder accepts, so `floe table scan` output can be appended again: every field in schema
// order, nulls written as null, BIGINT as numbers, BYTES as base64, DATE as "YYYY-MM-DD",
// TIMESTAMP as "YYYY-MM-DDTHH:MM:SS.ffffff" (a space instead of 'T' with TimestampStandard::kSql;
// always 6 fractional digits), TIMESTAMP_LTZ the same with 'Z', DECIMAL(p, s) as a string with
// exactly s fractional digits (the same text unquoted with decimal_as_number), non-finite
// FLOAT/DOUBLE as "NaN" / "Infinity" / "-Infinity". REQUIRES: row < batch.num_rows().
void AppendRowAsJson(const RecordBatch& batch, size_t row, std::string* out,
                     const EncodeOptions& options = {});

// SQL's JSON_VALUE(json, path) as Flink runs it by default (NULL ON EMPTY, NULL ON ERROR): the
// scalar at `path` as text (a string without its quotes, a number as written, true / false);
// nullopt for a null, an object, an array, a missing value, text that is no JSON, or a path
// outside the subset floe reads: `$` followed by `.name`, `['name']` and `[index]` steps.
std::optional<std::string> JsonValue(std::string_view json, std::string_view path);

// Flink SQL spelling of a type, used in error messages (defined in floe/common).
using ::floe::SqlTypeName;

}  // namespace floe::json
