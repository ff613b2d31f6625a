#include "floe/format/parquet/schema.h"

namespace floe::parquet {

using format::ConvertedType;
using format::LogicalType;
using format::SchemaElement;
using format::Type;

int DecimalFixedBytes(int precision) {
  // Smallest n with 2^(8n-1) > 10^precision - 1.
  unsigned __int128 max = 1;
  for (int i = 0; i < precision; ++i) max *= 10;
  max -= 1;
  for (int n = 1; n < 16; ++n) {
    if ((static_cast<unsigned __int128>(1) << (8 * n - 1)) > max) return n;
  }
  return 16;
}

Result<std::vector<ColumnDescriptor>> DescribeColumns(const BatchSchema& schema) {
  std::vector<ColumnDescriptor> out;
  out.reserve(schema.fields.size());
  for (const Field& f : schema.fields) {
    ColumnDescriptor d;
    d.field = f;
    d.path = {f.name};
    d.max_definition_level = f.nullable ? 1 : 0;
    switch (f.type.id) {
      case TypeId::kBoolean:
        d.physical_type = Type::kBoolean;
        break;
      case TypeId::kInt32:
      case TypeId::kDate:
        d.physical_type = Type::kInt32;
        break;
      case TypeId::kInt64:
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
      case TypeId::kTime:
        d.physical_type = Type::kInt64;
        break;
      case TypeId::kFloat:
        d.physical_type = Type::kFloat;
        break;
      case TypeId::kDouble:
        d.physical_type = Type::kDouble;
        break;
      case TypeId::kString:
      case TypeId::kBinary:
        d.physical_type = Type::kByteArray;
        break;
      case TypeId::kDecimal: {
        int p = f.type.precision, s = f.type.scale;
        if (p < 1 || p > 38 || s < 0 || s > p) {
          return Status::InvalidArgument("parquet: field '" + f.name + "' has unsupported type " +
                                         f.type.ToString());
        }
        d.conversion = Conversion::kDecimal;
        if (p <= 9) {
          d.physical_type = Type::kInt32;
        } else if (p <= 18) {
          d.physical_type = Type::kInt64;
        } else {
          d.physical_type = Type::kFixedLenByteArray;
          d.type_length = DecimalFixedBytes(p);
        }
        break;
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<SchemaElement> ToParquetSchema(const std::vector<ColumnDescriptor>& columns) {
  std::vector<SchemaElement> out;
  out.reserve(columns.size() + 1);
  SchemaElement root;
  root.name = "schema";
  root.num_children = static_cast<int32_t>(columns.size());
  out.push_back(std::move(root));
  for (const ColumnDescriptor& c : columns) {
    SchemaElement e;
    e.name = c.field.name;
    e.type = c.physical_type;
    e.repetition_type =
        c.field.nullable ? format::Repetition::kOptional : format::Repetition::kRequired;
    e.field_id = c.field.field_id;
    if (c.physical_type == Type::kFixedLenByteArray) e.type_length = c.type_length;
    LogicalType lt;
    switch (c.field.type.id) {
      case TypeId::kString:
        lt.kind = LogicalType::kString;
        e.converted_type = ConvertedType::kUtf8;
        break;
      case TypeId::kDate:
        lt.kind = LogicalType::kDate;
        e.converted_type = ConvertedType::kDate;
        break;
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
        lt.kind = LogicalType::kTimestamp;
        lt.unit = format::TimeUnit::kMicros;
        lt.is_adjusted_to_utc = c.field.type.id == TypeId::kTimestampTz;
        // parquet.thrift: TIMESTAMP_MICROS for TIMESTAMP(isAdjustedToUTC = *, unit = MICROS).
        e.converted_type = ConvertedType::kTimestampMicros;
        break;
      case TypeId::kTime:  // Iceberg's time: TIME(isAdjustedToUTC = false, MICROS)
        lt.kind = LogicalType::kTime;
        lt.unit = format::TimeUnit::kMicros;
        lt.is_adjusted_to_utc = false;
        e.converted_type = ConvertedType::kTimeMicros;
        break;
      case TypeId::kDecimal:
        lt.kind = LogicalType::kDecimal;
        lt.scale = c.field.type.scale;
        lt.precision = c.field.type.precision;
        e.converted_type = ConvertedType::kDecimal;
        e.scale = lt.scale;
        e.precision = lt.precision;
        break;
      default:
        break;
    }
    if (lt.kind != LogicalType::kNone) e.logical_type = lt;
    out.push_back(std::move(e));
  }
  return out;
}

namespace {

// The ConvertedType a writer must pair with `lt`, or nullopt if there is none.
std::optional<ConvertedType> ExpectedConverted(const LogicalType& lt) {
  switch (lt.kind) {
    case LogicalType::kString:
      return ConvertedType::kUtf8;
    case LogicalType::kEnum:
      return ConvertedType::kEnum;
    case LogicalType::kDecimal:
      return ConvertedType::kDecimal;
    case LogicalType::kDate:
      return ConvertedType::kDate;
    case LogicalType::kJson:
      return ConvertedType::kJson;
    case LogicalType::kBson:
      return ConvertedType::kBson;
    case LogicalType::kTimestamp:
      if (lt.unit == format::TimeUnit::kMillis) return ConvertedType::kTimestampMillis;
      if (lt.unit == format::TimeUnit::kMicros) return ConvertedType::kTimestampMicros;
      return std::nullopt;
    case LogicalType::kTime:
      if (lt.unit == format::TimeUnit::kMillis) return ConvertedType::kTimeMillis;
      if (lt.unit == format::TimeUnit::kMicros) return ConvertedType::kTimeMicros;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

Status Unsupported(const SchemaElement& e, const std::string& what) {
  return Status::NotImplemented("column '" + e.name + "': " + what + " is not supported");
}

Status Bad(const SchemaElement& e, const std::string& what) {
  return Status::Corruption("column '" + e.name + "': " + what);
}

// Stays long: one case per physical type, each with its annotations, as the format's table lists.
Status MapLeaf(const SchemaElement& e, ColumnDescriptor* d) {
  const std::optional<LogicalType>& lt = e.logical_type;
  int16_t kind = lt ? lt->kind : static_cast<int16_t>(LogicalType::kNone);
  std::optional<ConvertedType> ct = e.converted_type;
  if (lt && ct) {
    std::optional<ConvertedType> want = ExpectedConverted(*lt);
    bool ok = want ? *ct == *want : false;
    if (lt->kind == LogicalType::kInteger) {
      int c = static_cast<int>(*ct);
      ok = (c >= static_cast<int>(ConvertedType::kUint8) &&
            c <= static_cast<int>(ConvertedType::kInt64));
    }
    if (!ok) return Bad(e, "logical type and converted type disagree");
  }
  // Decimal parameters: the logical type wins; the legacy fields must agree with it.
  bool is_decimal = kind == LogicalType::kDecimal ||
                    (kind == LogicalType::kNone && ct == ConvertedType::kDecimal);
  int precision = 0, scale = 0;
  if (is_decimal) {
    if (kind == LogicalType::kDecimal) {
      precision = lt->precision;
      scale = lt->scale;
      if ((e.precision && *e.precision != precision) || (e.scale && *e.scale != scale)) {
        return Bad(e, "decimal scale/precision disagree with the logical type");
      }
    } else {
      if (!e.precision) return Bad(e, "decimal without precision");
      precision = *e.precision;
      scale = e.scale.value_or(0);
    }
    if (precision < 1 || precision > 38 || scale < 0 || scale > precision) {
      return Unsupported(
          e, "decimal(" + std::to_string(precision) + ", " + std::to_string(scale) + ")");
    }
    d->field.type = DataType::Decimal(precision, scale);
    d->conversion = Conversion::kDecimal;
    if (*e.type != Type::kInt32 && *e.type != Type::kInt64 && *e.type != Type::kByteArray &&
        *e.type != Type::kFixedLenByteArray) {
      return Bad(e, "decimal annotation on a non-integer physical type");
    }
  }
  bool is_string =
      kind == LogicalType::kString || kind == LogicalType::kEnum || kind == LogicalType::kJson ||
      (kind == LogicalType::kNone &&
       (ct == ConvertedType::kUtf8 || ct == ConvertedType::kEnum || ct == ConvertedType::kJson));
  switch (*e.type) {
    case Type::kBoolean:
      d->field.type = DataType::Boolean();
      return Status::OK();
    case Type::kInt32:
      if (is_decimal) {
        if (precision > 18) return Bad(e, "INT32 decimal with precision > 18");
        return Status::OK();
      }
      if (kind == LogicalType::kDate ||
          (kind == LogicalType::kNone && ct == ConvertedType::kDate)) {
        d->field.type = DataType::Date();
        return Status::OK();
      }
      if (kind == LogicalType::kTime ||
          (kind == LogicalType::kNone && ct == ConvertedType::kTimeMillis)) {
        return Unsupported(e, "TIME");
      }
      if ((kind == LogicalType::kInteger && !lt->is_signed && lt->bit_width == 32) ||
          (kind == LogicalType::kNone && ct == ConvertedType::kUint32)) {
        d->field.type = DataType::Int64();
        d->conversion = Conversion::kUnsigned32;
        return Status::OK();
      }
      d->field.type = DataType::Int32();
      return Status::OK();
    case Type::kInt64:
      if (is_decimal) return Status::OK();
      if (kind == LogicalType::kTimestamp) {
        d->field.type = lt->is_adjusted_to_utc ? DataType::TimestampTz() : DataType::Timestamp();
        switch (lt->unit) {
          case format::TimeUnit::kMicros:
            break;
          case format::TimeUnit::kMillis:
            d->conversion = Conversion::kMillisToMicros;
            break;
          case format::TimeUnit::kNanos:
            d->conversion = Conversion::kNanosToMicros;
            break;
          default:
            return Bad(e, "bad timestamp unit");
        }
        return Status::OK();
      }
      if (kind == LogicalType::kNone &&
          (ct == ConvertedType::kTimestampMicros || ct == ConvertedType::kTimestampMillis)) {
        // Legacy converted types imply isAdjustedToUTC = true.
        d->field.type = DataType::TimestampTz();
        if (ct == ConvertedType::kTimestampMillis) d->conversion = Conversion::kMillisToMicros;
        return Status::OK();
      }
      if ((kind == LogicalType::kTime && lt->unit == format::TimeUnit::kMicros) ||
          (kind == LogicalType::kNone && ct == ConvertedType::kTimeMicros)) {
        d->field.type = DataType::Time();
        return Status::OK();
      }
      if (kind == LogicalType::kTime) return Unsupported(e, "TIME in nanoseconds");
      if ((kind == LogicalType::kInteger && !lt->is_signed) ||
          (kind == LogicalType::kNone && ct == ConvertedType::kUint64)) {
        return Unsupported(e, "unsigned 64-bit integer");
      }
      d->field.type = DataType::Int64();
      return Status::OK();
    case Type::kInt96:
      return Unsupported(e, "INT96");
    case Type::kFloat:
      d->field.type = DataType::Float();
      return Status::OK();
    case Type::kDouble:
      d->field.type = DataType::Double();
      return Status::OK();
    case Type::kByteArray:
      if (is_decimal) return Status::OK();
      d->field.type = is_string ? DataType::String() : DataType::Binary();
      return Status::OK();
    case Type::kFixedLenByteArray:
      if (!e.type_length || *e.type_length <= 0 || *e.type_length > (1 << 20)) {
        return Bad(e, "FIXED_LEN_BYTE_ARRAY without a valid type_length");
      }
      d->type_length = *e.type_length;
      if (is_decimal) {
        if (d->type_length > 16) return Unsupported(e, "decimal wider than 16 bytes");
        return Status::OK();
      }
      d->field.type = DataType::Binary();
      return Status::OK();
  }
  return Bad(e, "unknown physical type " + std::to_string(static_cast<int>(*e.type)));
}

}  // namespace

Status FromParquetSchema(const std::vector<SchemaElement>& elements, BatchSchema* schema,
                         std::vector<ColumnDescriptor>* columns) {
  if (elements.empty()) return Status::Corruption("empty schema");
  const SchemaElement& root = elements[0];
  if (root.type) return Status::Corruption("schema root is not a group");
  int64_t n = root.num_children.value_or(0);
  if (n != static_cast<int64_t>(elements.size()) - 1) {
    for (size_t i = 1; i < elements.size(); ++i) {
      if (elements[i].num_children) {
        return Status::NotImplemented("column '" + elements[i].name +
                                      "': nested types are not supported");
      }
    }
    return Status::Corruption("schema root has " + std::to_string(n) + " children but " +
                              std::to_string(elements.size() - 1) + " elements follow");
  }
  schema->fields.clear();
  columns->clear();
  for (size_t i = 1; i < elements.size(); ++i) {
    const SchemaElement& e = elements[i];
    if (e.num_children || !e.type) return Unsupported(e, "nested type");
    ColumnDescriptor d;
    d.field.name = e.name;
    d.path = {e.name};
    d.physical_type = *e.type;
    format::Repetition rep = e.repetition_type.value_or(format::Repetition::kOptional);
    if (rep == format::Repetition::kRepeated) return Unsupported(e, "repeated field");
    if (rep != format::Repetition::kRequired && rep != format::Repetition::kOptional) {
      return Bad(e, "bad repetition type");
    }
    d.field.nullable = rep == format::Repetition::kOptional;
    d.max_definition_level = d.field.nullable ? 1 : 0;
    d.field.field_id = e.field_id.value_or(0);
    FLOE_RETURN_NOT_OK(MapLeaf(e, &d));
    schema->fields.push_back(d.field);
    columns->push_back(std::move(d));
  }
  return Status::OK();
}

}  // namespace floe::parquet
