#include <charconv>
#include <cmath>

#include "floe/common/civil_time.h"
#include "floe/format/json/json_lines.h"
#include "floe/format/json/text_format_internal.h"

namespace floe::json {

namespace {

void AppendEscaped(std::string_view s, std::string* out) {
  static const char* kHex = "0123456789abcdef";
  out->push_back('"');
  size_t run = 0;  // start of the pending run of bytes that need no escaping
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
    }
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

template <typename T>
void AppendNumber(T v, std::string* out) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);  // shortest text that reads back exactly
  out->append(buf, r.ptr - buf);
}

template <typename T>
void AppendFloating(T v, std::string* out) {
  if (std::isnan(v)) {
    out->append("\"NaN\"");
  } else if (std::isinf(v)) {
    out->append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  } else {
    AppendNumber(v, out);
  }
}

}  // namespace

void AppendRowAsJson(const RecordBatch& batch, size_t row, std::string* out,
                     const EncodeOptions& options) {
  // Flink's JSON format: only the fraction digits needed ("12:13:14", "12:13:14.5").
  const TimestampFormat timestamps{
      options.timestamp_standard == TimestampStandard::kSql ? ' ' : 'T', /*always_micros=*/false,
      YearStyle::kIso8601, /*trim_zeros=*/true};
  const BatchSchema& schema = *batch.schema();
  out->push_back('{');
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendEscaped(schema.fields[i].name, out);
    out->push_back(':');
    const Column& col = batch.column(i);
    if (col.IsNull(row)) {
      out->append("null");
      continue;
    }
    switch (col.type().id) {
      case TypeId::kBoolean:
        out->append(col.Get<uint8_t>(row) ? "true" : "false");
        break;
      case TypeId::kInt32:
        AppendNumber(col.Get<int32_t>(row), out);
        break;
      case TypeId::kInt64:
        AppendNumber(col.Get<int64_t>(row), out);
        break;
      case TypeId::kFloat:
        AppendFloating(col.Get<float>(row), out);
        break;
      case TypeId::kDouble:
        AppendFloating(col.Get<double>(row), out);
        break;
      case TypeId::kString:
        AppendEscaped(col.GetBytes(row), out);
        break;
      case TypeId::kBinary:
        out->push_back('"');
        internal::AppendBase64(col.GetBytes(row), out);
        out->push_back('"');
        break;
      case TypeId::kDate:
        out->push_back('"');
        AppendDate(col.Get<int32_t>(row), YearStyle::kIso8601, out);
        out->push_back('"');
        break;
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
        out->push_back('"');
        AppendTimestamp(col.Get<int64_t>(row), timestamps, out);
        if (col.type().id == TypeId::kTimestampTz) out->push_back('Z');
        out->push_back('"');
        break;
      case TypeId::kTime: {  // Flink's "HH:mm:ss"; a fraction only where there is one
        TimestampFormat time;
        time.trim_zeros = true;
        out->push_back('"');
        AppendTime(col.Get<int64_t>(row), time, out);
        out->push_back('"');
        break;
      }
      case TypeId::kDecimal:
        // As a number it is still written plainly (never 1.2E+3) with all s digits: exact text
        // that Flink reads either way; only a reader parsing numbers as doubles loses digits.
        if (!options.decimal_as_number) out->push_back('"');
        internal::AppendDecimal(col.Get<Int128>(row), col.type().scale, out);
        if (!options.decimal_as_number) out->push_back('"');
        break;
    }
  }
  out->append("}\n");
}

}  // namespace floe::json
