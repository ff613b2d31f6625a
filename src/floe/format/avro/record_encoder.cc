#include "floe/format/avro/record_encoder.h"

#include <cstring>

#include <nlohmann/json.hpp>

#include "floe/format/avro/encoding.h"

namespace floe::avro {

namespace {

bool TimestampMillis(const Field& f) { return f.precision >= 0 && f.precision <= 3; }

Result<nlohmann::ordered_json> ValueType(const Field& f) {
  using J = nlohmann::ordered_json;
  switch (f.type.id) {
    case TypeId::kBoolean:
      return J("boolean");
    case TypeId::kInt32:
      return J("int");
    case TypeId::kInt64:
      return J("long");
    case TypeId::kFloat:
      return J("float");
    case TypeId::kDouble:
      return J("double");
    case TypeId::kString:
      return J("string");
    case TypeId::kBinary:
      return J("bytes");
    case TypeId::kDate:
      return J{{"type", "int"}, {"logicalType", "date"}};
    case TypeId::kTime:
      return J{{"type", "int"}, {"logicalType", "time-millis"}};
    case TypeId::kTimestamp:
      return J{{"type", "long"},
               {"logicalType", TimestampMillis(f) ? "timestamp-millis" : "timestamp-micros"}};
    case TypeId::kDecimal:
      return J{{"type", "bytes"},
               {"logicalType", "decimal"},
               {"precision", f.type.precision},
               {"scale", f.type.scale}};
    case TypeId::kTimestampTz:
      break;
  }
  return Status::InvalidArgument("column '" + f.name + "' " + SqlTypeName(f.type) +
                                 " has no Avro type in Flink's avro-confluent format (its legacy "
                                 "timestamp mapping has none for TIMESTAMP_LTZ)");
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Java's BigInteger.toByteArray(): the fewest big-endian two's-complement bytes.
void AppendDecimalBytes(Int128 v, std::string* out) {
  unsigned char bytes[16];
  auto u = static_cast<unsigned __int128>(v);
  for (int i = 15; i >= 0; --i) {
    bytes[i] = static_cast<unsigned char>(u & 0xff);
    u >>= 8;
  }
  int start = 0;
  while (start < 15 && ((bytes[start] == 0x00 && (bytes[start + 1] & 0x80) == 0) ||
                        (bytes[start] == 0xff && (bytes[start + 1] & 0x80) != 0))) {
    ++start;
  }
  AppendVarint(16 - start, out);
  out->append(reinterpret_cast<const char*>(bytes + start), static_cast<size_t>(16 - start));
}

template <typename T>
void AppendLittleEndian(T v, std::string* out) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // floe's hosts are little-endian, as Avro's floats
  out->append(b, sizeof(T));
}

}  // namespace

Result<std::string> AvroSchemaForColumns(const BatchSchema& columns) {
  nlohmann::ordered_json fields = nlohmann::ordered_json::array();
  for (const Field& f : columns.fields) {
    FLOE_ASSIGN_OR_RAISE(nlohmann::ordered_json type, ValueType(f));
    if (f.nullable) {
      fields.push_back({{"name", f.name}, {"type", {"null", type}}, {"default", nullptr}});
    } else {
      fields.push_back({{"name", f.name}, {"type", type}});
    }
  }
  nlohmann::ordered_json schema = {{"type", "record"},
                                   {"name", "record"},
                                   {"namespace", "org.apache.flink.avro.generated"},
                                   {"fields", fields}};
  std::string text = schema.dump();
  // The names must be Avro names: ParseSchema checks them as any reader would.
  FLOE_RETURN_NOT_OK(ParseSchema(text).status());
  return text;
}

void AppendRowAsAvro(const RecordBatch& batch, size_t row, std::string* out) {
  const BatchSchema& schema = *batch.schema();
  for (size_t c = 0; c < schema.fields.size(); ++c) {
    const Field& f = schema.fields[c];
    const Column& col = batch.column(c);
    if (f.nullable) {
      const bool null = col.IsNull(row);
      AppendVarint(null ? 0 : 1, out);
      if (null) continue;
    }
    switch (f.type.id) {
      case TypeId::kBoolean:
        out->push_back(col.values<uint8_t>()[row] != 0 ? 1 : 0);
        break;
      case TypeId::kInt32:
      case TypeId::kDate:
        AppendVarint(col.values<int32_t>()[row], out);
        break;
      case TypeId::kInt64:
        AppendVarint(col.values<int64_t>()[row], out);
        break;
      case TypeId::kTime:
        AppendVarint(col.values<int64_t>()[row] / 1000, out);
        break;
      case TypeId::kTimestamp: {
        const int64_t micros = col.values<int64_t>()[row];
        AppendVarint(TimestampMillis(f) ? FloorDiv(micros, 1000) : micros, out);
        break;
      }
      case TypeId::kFloat:
        AppendLittleEndian(col.values<float>()[row], out);
        break;
      case TypeId::kDouble:
        AppendLittleEndian(col.values<double>()[row], out);
        break;
      case TypeId::kString:
      case TypeId::kBinary: {
        std::string_view v = col.GetBytes(row);
        AppendVarint(static_cast<int64_t>(v.size()), out);
        out->append(v);
        break;
      }
      case TypeId::kDecimal:
        AppendDecimalBytes(col.values<Int128>()[row], out);
        break;
      case TypeId::kTimestampTz:
        break;  // refused by AvroSchemaForColumns
    }
  }
}

}  // namespace floe::avro
