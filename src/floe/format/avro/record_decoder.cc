#include "floe/format/avro/record_decoder.h"

#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "floe/common/json.h"
#include "floe/format/avro/encoding.h"

namespace floe::avro {

namespace {

// How a writer's value becomes its column's value.
enum class Conv : uint8_t {
  kNull,  // the writer's type is null: the column reads null
  kBool,
  kIntToInt32,
  kIntToInt64,
  kIntToFloat,
  kIntToDouble,
  kDate,
  kTimeMillis,
  kLongToInt64,
  kLongToFloat,
  kLongToDouble,
  kTimeMicros,
  kTimestampMillis,
  kTimestampMicros,
  kFloatToFloat,
  kFloatToDouble,
  kDouble,
  kToString,  // string or bytes: checked to be UTF-8
  kToBinary,  // string or bytes
  kEnum,
  kDecimalBytes,
  kDecimalFixed,
  kFixedToBinary,
};

constexpr int64_t kMicrosPerDay = int64_t{86'400'000'000};
// Items a datum's skipped arrays and maps may hold in all: arrays of nulls take no bytes, so the
// input's size does not bound them.
constexpr int64_t kMaxSkippedItems = int64_t{1} << 24;

bool IsTimestamp(const std::string& logical, const char* unit) {
  return logical == std::string("timestamp-") + unit ||
         logical == std::string("local-timestamp-") + unit;
}

Result<Conv> Resolve(const Node& w, const Field& column) {
  const TypeId c = column.type.id;
  const std::string& lt = w.logical_type;
  switch (w.type) {
    case Type::kNull:
      return Conv::kNull;
    case Type::kBoolean:
      if (c == TypeId::kBoolean) return Conv::kBool;
      break;
    case Type::kInt:
      if (c == TypeId::kDate && lt == "date") return Conv::kDate;
      if (c == TypeId::kTime && lt == "time-millis") return Conv::kTimeMillis;
      if (c == TypeId::kInt32) return Conv::kIntToInt32;
      if (c == TypeId::kInt64) return Conv::kIntToInt64;
      if (c == TypeId::kFloat) return Conv::kIntToFloat;
      if (c == TypeId::kDouble) return Conv::kIntToDouble;
      break;
    case Type::kLong:
      if (c == TypeId::kTimestamp || c == TypeId::kTimestampTz) {
        if (IsTimestamp(lt, "millis")) return Conv::kTimestampMillis;
        if (IsTimestamp(lt, "micros")) return Conv::kTimestampMicros;
      }
      if (c == TypeId::kTime && lt == "time-micros") return Conv::kTimeMicros;
      if (c == TypeId::kInt64) return Conv::kLongToInt64;
      if (c == TypeId::kFloat) return Conv::kLongToFloat;
      if (c == TypeId::kDouble) return Conv::kLongToDouble;
      break;
    case Type::kFloat:
      if (c == TypeId::kFloat) return Conv::kFloatToFloat;
      if (c == TypeId::kDouble) return Conv::kFloatToDouble;
      break;
    case Type::kDouble:
      if (c == TypeId::kDouble) return Conv::kDouble;
      break;
    case Type::kBytes:
    case Type::kFixed:
      if (lt == "decimal") {
        if (c == TypeId::kDecimal && column.type.scale == w.scale &&
            column.type.precision >= w.precision) {
          return w.type == Type::kBytes ? Conv::kDecimalBytes : Conv::kDecimalFixed;
        }
        break;
      }
      if (c == TypeId::kBinary)
        return w.type == Type::kBytes ? Conv::kToBinary : Conv::kFixedToBinary;
      if (c == TypeId::kString && w.type == Type::kBytes) return Conv::kToString;
      break;
    case Type::kString:
      if (c == TypeId::kString) return Conv::kToString;
      if (c == TypeId::kBinary) return Conv::kToBinary;
      break;
    case Type::kEnum:
      if (c == TypeId::kString) return Conv::kEnum;
      break;
    default:
      break;
  }
  std::string what(TypeName(w.type));
  if (!lt.empty()) what += " (" + lt + ")";
  if (lt == "decimal") {
    what += " decimal(" + std::to_string(w.precision) + ", " + std::to_string(w.scale) + ")";
  }
  return Status::InvalidArgument("Avro field '" + column.name + "' of type " + what +
                                 " cannot be read into column '" + column.name + "' " +
                                 SqlTypeName(column.type));
}

Status Truncated(const std::string& field) {
  return Status::Corruption("field '" + field + "': the datum ends inside it");
}

Status ReadLength(std::string_view* data, const std::string& field, std::string_view* bytes) {
  int64_t n = 0;
  FLOE_RETURN_NOT_OK(ReadVarint(data, &n));
  if (n < 0 || static_cast<uint64_t>(n) > data->size()) {
    return Status::Corruption("field '" + field + "': length " + std::to_string(n) + " with " +
                              std::to_string(data->size()) + " bytes left");
  }
  *bytes = data->substr(0, static_cast<size_t>(n));
  data->remove_prefix(static_cast<size_t>(n));
  return Status::OK();
}

Status ReadInt(std::string_view* data, const std::string& field, int32_t* v) {
  int64_t x = 0;
  FLOE_RETURN_NOT_OK(ReadVarint(data, &x));
  if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
    return Status::Corruption("field '" + field + "': int " + std::to_string(x) +
                              " does not fit 32 bits");
  }
  *v = static_cast<int32_t>(x);
  return Status::OK();
}

template <typename T>
Status ReadFixedWidth(std::string_view* data, const std::string& field, T* v) {
  if (data->size() < sizeof(T)) return Truncated(field);
  std::memcpy(v, data->data(), sizeof(T));  // little-endian, as floe's hosts
  data->remove_prefix(sizeof(T));
  return Status::OK();
}

Int128 Pow10(int n) {
  Int128 p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// A big-endian two's-complement unscaled value, as Avro's decimal holds it.
Status AppendDecimal(std::string_view bytes, const Field& column, Column& out) {
  if (bytes.size() > 16) {
    return Status::InvalidArgument("field '" + column.name + "': a decimal of " +
                                   std::to_string(bytes.size()) + " bytes exceeds 38 digits");
  }
  Int128 v = 0;
  if (!bytes.empty() && (static_cast<uint8_t>(bytes[0]) & 0x80) != 0) v = -1;
  for (char b : bytes)
    v = static_cast<Int128>((static_cast<unsigned __int128>(v) << 8) | static_cast<uint8_t>(b));
  const Int128 limit = Pow10(column.type.precision);
  if (v >= limit || v <= -limit) {
    return Status::InvalidArgument("field '" + column.name + "': the value does not fit " +
                                   SqlTypeName(column.type));
  }
  out.Append<Int128>(v);
  return Status::OK();
}

Status AppendTime(int64_t micros, const Field& column, Column& out) {
  if (micros < 0 || micros >= kMicrosPerDay) {
    return Status::InvalidArgument("field '" + column.name + "': time of day " +
                                   std::to_string(micros) + " us is outside one day");
  }
  out.Append<int64_t>(micros);
  return Status::OK();
}

Status AppendTimestamp(int64_t v, int64_t scale, const Field& column, Column& out) {
  if (v > std::numeric_limits<int64_t>::max() / scale ||
      v < std::numeric_limits<int64_t>::min() / scale) {
    return Status::InvalidArgument("field '" + column.name + "': timestamp " + std::to_string(v) +
                                   " is out of range");
  }
  out.Append<int64_t>(v * scale);
  return Status::OK();
}

// Reads one value of writer type `w` with `conv` into `out` (the column `column`).
Status ReadInto(Conv conv, const Node& w, const Field& column, std::string_view* data,
                Column& out) {
  const std::string& name = column.name;
  switch (conv) {
    case Conv::kNull:
      return Status::Internal("null read as a value");
    case Conv::kBool: {
      if (data->empty()) return Truncated(name);
      auto b = static_cast<uint8_t>((*data)[0]);
      if (b > 1)
        return Status::Corruption("field '" + name + "': boolean byte " + std::to_string(b));
      data->remove_prefix(1);
      out.Append<uint8_t>(b);
      return Status::OK();
    }
    case Conv::kIntToInt32:
    case Conv::kIntToInt64:
    case Conv::kIntToFloat:
    case Conv::kIntToDouble:
    case Conv::kDate:
    case Conv::kTimeMillis: {
      int32_t v = 0;
      FLOE_RETURN_NOT_OK(ReadInt(data, name, &v));
      if (conv == Conv::kIntToInt32 || conv == Conv::kDate) out.Append<int32_t>(v);
      if (conv == Conv::kIntToInt64) out.Append<int64_t>(v);
      if (conv == Conv::kIntToFloat) out.Append<float>(static_cast<float>(v));
      if (conv == Conv::kIntToDouble) out.Append<double>(v);
      if (conv == Conv::kTimeMillis) return AppendTime(int64_t{v} * 1000, column, out);
      return Status::OK();
    }
    case Conv::kLongToInt64:
    case Conv::kLongToFloat:
    case Conv::kLongToDouble:
    case Conv::kTimeMicros:
    case Conv::kTimestampMillis:
    case Conv::kTimestampMicros: {
      int64_t v = 0;
      FLOE_RETURN_NOT_OK(ReadVarint(data, &v));
      if (conv == Conv::kLongToInt64) out.Append<int64_t>(v);
      if (conv == Conv::kLongToFloat) out.Append<float>(static_cast<float>(v));
      if (conv == Conv::kLongToDouble) out.Append<double>(static_cast<double>(v));
      if (conv == Conv::kTimeMicros) return AppendTime(v, column, out);
      if (conv == Conv::kTimestampMillis) return AppendTimestamp(v, 1000, column, out);
      if (conv == Conv::kTimestampMicros) return AppendTimestamp(v, 1, column, out);
      return Status::OK();
    }
    case Conv::kFloatToFloat:
    case Conv::kFloatToDouble: {
      float v = 0;
      FLOE_RETURN_NOT_OK(ReadFixedWidth(data, name, &v));
      if (conv == Conv::kFloatToFloat) out.Append<float>(v);
      if (conv == Conv::kFloatToDouble) out.Append<double>(v);
      return Status::OK();
    }
    case Conv::kDouble: {
      double v = 0;
      FLOE_RETURN_NOT_OK(ReadFixedWidth(data, name, &v));
      out.Append<double>(v);
      return Status::OK();
    }
    case Conv::kToString:
    case Conv::kToBinary:
    case Conv::kDecimalBytes: {
      std::string_view bytes;
      FLOE_RETURN_NOT_OK(ReadLength(data, name, &bytes));
      if (conv == Conv::kDecimalBytes) return AppendDecimal(bytes, column, out);
      if (conv == Conv::kToString && !IsValidUtf8(bytes)) {
        return Status::InvalidArgument("field '" + name + "': the string is not UTF-8");
      }
      out.AppendBytes(bytes);
      return Status::OK();
    }
    case Conv::kEnum: {
      int32_t i = 0;
      FLOE_RETURN_NOT_OK(ReadInt(data, name, &i));
      if (i < 0 || static_cast<size_t>(i) >= w.symbols.size()) {
        return Status::Corruption("field '" + name + "': enum index " + std::to_string(i) + " of " +
                                  std::to_string(w.symbols.size()) + " symbols");
      }
      out.AppendBytes(w.symbols[static_cast<size_t>(i)]);
      return Status::OK();
    }
    case Conv::kDecimalFixed:
    case Conv::kFixedToBinary: {
      const auto n = static_cast<size_t>(w.fixed_size);
      if (data->size() < n) return Truncated(name);
      std::string_view bytes = data->substr(0, n);
      data->remove_prefix(n);
      if (conv == Conv::kDecimalFixed) return AppendDecimal(bytes, column, out);
      out.AppendBytes(bytes);
      return Status::OK();
    }
  }
  return Status::Internal("unknown conversion");
}

// Skips one datum of `w`; `items` counts the array and map items skipped so far.
Status Skip(const Node& w, const std::string& field, std::string_view* data, int depth,
            int64_t* items) {
  if (depth > kMaxDepth) return Status::Corruption("field '" + field + "': nested too deep");
  int64_t v = 0;
  std::string_view bytes;
  switch (w.type) {
    case Type::kNull:
      return Status::OK();
    case Type::kBoolean:
      if (data->empty()) return Truncated(field);
      data->remove_prefix(1);
      return Status::OK();
    case Type::kInt:
    case Type::kLong:
    case Type::kEnum:
      return ReadVarint(data, &v);
    case Type::kFloat:
    case Type::kDouble: {
      size_t n = w.type == Type::kFloat ? 4 : 8;
      if (data->size() < n) return Truncated(field);
      data->remove_prefix(n);
      return Status::OK();
    }
    case Type::kBytes:
    case Type::kString:
      return ReadLength(data, field, &bytes);
    case Type::kFixed:
      if (data->size() < static_cast<size_t>(w.fixed_size)) return Truncated(field);
      data->remove_prefix(static_cast<size_t>(w.fixed_size));
      return Status::OK();
    case Type::kRecord:
      for (const FieldNode& f : w.fields) {
        FLOE_RETURN_NOT_OK(Skip(*f.type, field, data, depth + 1, items));
      }
      return Status::OK();
    case Type::kUnion:
      FLOE_RETURN_NOT_OK(ReadVarint(data, &v));
      if (v < 0 || static_cast<size_t>(v) >= w.branches.size()) {
        return Status::Corruption("field '" + field + "': union branch " + std::to_string(v));
      }
      return Skip(*w.branches[static_cast<size_t>(v)], field, data, depth + 1, items);
    case Type::kArray:
    case Type::kMap:
      while (true) {
        int64_t count = 0;
        FLOE_RETURN_NOT_OK(ReadVarint(data, &count));
        if (count == 0) return Status::OK();
        if (count < 0) {  // a block that gives its byte size: skipped whole
          if (count == std::numeric_limits<int64_t>::min()) return Truncated(field);
          int64_t size = 0;
          FLOE_RETURN_NOT_OK(ReadVarint(data, &size));
          if (size < 0 || static_cast<uint64_t>(size) > data->size()) return Truncated(field);
          data->remove_prefix(static_cast<size_t>(size));
          continue;
        }
        *items += count;
        if (*items > kMaxSkippedItems) {
          return Status::Corruption("field '" + field + "': more than " +
                                    std::to_string(kMaxSkippedItems) + " items");
        }
        for (int64_t i = 0; i < count; ++i) {
          if (w.type == Type::kMap) FLOE_RETURN_NOT_OK(ReadLength(data, field, &bytes));
          FLOE_RETURN_NOT_OK(Skip(*w.items, field, data, depth + 1, items));
        }
      }
  }
  return Status::Internal("unknown Avro type");
}

}  // namespace

// One step per writer field, in the writer's order; then the columns no field feeds read null.
namespace {

// The column type a writer's field of `type` is captured as (MakeCapturing), and whether it may
// be null; nullopt for the types not captured.
std::optional<Field> CapturedField(const std::string& name, const Node& type) {
  const Node* t = &type;
  bool nullable = false;
  if (t->type == Type::kUnion) {
    const Node* value = nullptr;
    for (const Node* b : t->branches) {
      if (b->type == Type::kNull) {
        nullable = true;
      } else if (value == nullptr) {
        value = b;
      } else {
        return std::nullopt;  // two value branches: no one column type
      }
    }
    if (value == nullptr) return std::nullopt;
    t = value;
  }
  const std::string& lt = t->logical_type;
  DataType d;
  switch (t->type) {
    case Type::kBoolean:
      d = DataType::Boolean();
      break;
    case Type::kInt:
      d = lt == "date"          ? DataType::Date()
          : lt == "time-millis" ? DataType::Time()
                                : DataType::Int32();
      break;
    case Type::kLong:
      d = lt == "time-micros" ? DataType::Time()
          : IsTimestamp(lt, "millis") || IsTimestamp(lt, "micros")
              ? (lt.starts_with("local-") ? DataType::Timestamp() : DataType::TimestampTz())
              : DataType::Int64();
      break;
    case Type::kFloat:
      d = DataType::Float();
      break;
    case Type::kDouble:
      d = DataType::Double();
      break;
    case Type::kString:
    case Type::kEnum:
      d = DataType::String();
      break;
    case Type::kBytes:
    case Type::kFixed:
      if (lt == "decimal") {
        if (t->precision < 1 || t->precision > 38 || t->scale < 0 || t->scale > t->precision) {
          return std::nullopt;
        }
        d = DataType::Decimal(t->precision, t->scale);
      } else {
        d = DataType::Binary();
      }
      break;
    default:
      return std::nullopt;
  }
  return Field{name, d, nullable, 0};
}

}  // namespace

struct RecordDecoder::Plan {
  struct Step {
    const Node* type = nullptr;
    const FieldNode* field = nullptr;
    bool captured = false;          // `column` is a column of the captured fields' scratch batch
    int column = -1;                // -1: skipped
    Conv conv = Conv::kNull;        // not a union
    std::vector<Conv> branch_conv;  // a union: per branch
  };
  std::vector<Step> steps;
  std::vector<int> null_columns;
  std::shared_ptr<const BatchSchema> columns;
  std::shared_ptr<const BatchSchema> captured;  // MakeCapturing: the captured fields, or null
};

RecordDecoder::RecordDecoder(std::shared_ptr<const Schema> writer, std::unique_ptr<Plan> plan)
    : writer_(std::move(writer)), plan_(std::move(plan)) {
  if (plan_->captured) scratch_ = RecordBatch(plan_->captured);
}

RecordDecoder::~RecordDecoder() = default;

Result<std::unique_ptr<RecordDecoder>> RecordDecoder::Make(
    std::shared_ptr<const Schema> writer, std::shared_ptr<const BatchSchema> columns) {
  const Node& root = writer->root();
  return Make(std::move(writer), root, std::move(columns));
}

Result<std::unique_ptr<RecordDecoder>> RecordDecoder::Make(
    std::shared_ptr<const Schema> writer, const Node& root,
    std::shared_ptr<const BatchSchema> columns) {
  return MakePlan(std::move(writer), root, std::move(columns), false);
}

Result<std::unique_ptr<RecordDecoder>> RecordDecoder::MakeCapturing(
    std::shared_ptr<const Schema> writer, std::shared_ptr<const BatchSchema> columns) {
  if (columns->fields.empty() || columns->fields.back().type.id != TypeId::kString ||
      !columns->fields.back().nullable) {
    return Status::InvalidArgument(
        "avro decoder: capturing undeclared fields needs a last nullable STRING column");
  }
  const Node& root = writer->root();
  return MakePlan(std::move(writer), root, std::move(columns), true);
}

Result<std::unique_ptr<RecordDecoder>> RecordDecoder::MakePlan(
    std::shared_ptr<const Schema> writer, const Node& root,
    std::shared_ptr<const BatchSchema> columns, bool capture) {
  if (root.type != Type::kRecord) {
    return Status::InvalidArgument("the writer's Avro schema is a " +
                                   std::string(TypeName(root.type)) + ", not a record");
  }
  auto plan = std::make_unique<Plan>();
  plan->columns = columns;
  // Captured: the last column is not a field's.
  const size_t declared = columns->fields.size() - (capture ? 1 : 0);
  std::vector<bool> fed(declared, false);
  auto captured = std::make_shared<BatchSchema>();
  for (const FieldNode& f : root.fields) {
    Plan::Step step;
    step.type = f.type;
    step.field = &f;
    for (size_t i = 0; i < declared; ++i) {
      if (columns->fields[i].name == f.name) step.column = static_cast<int>(i);
    }
    std::optional<Field> capturing;
    if (step.column < 0 && capture) capturing = CapturedField(f.name, *f.type);
    if (capturing) {
      step.captured = true;
      step.column = static_cast<int>(captured->fields.size());
      captured->fields.push_back(*capturing);
    }
    if (step.column >= 0) {
      const Field& column = step.captured ? captured->fields.back()
                                          : columns->fields[static_cast<size_t>(step.column)];
      if (!step.captured) fed[static_cast<size_t>(step.column)] = true;
      if (f.type->type == Type::kUnion) {
        for (const Node* b : f.type->branches) {
          FLOE_ASSIGN_OR_RAISE(Conv c, Resolve(*b, column));
          step.branch_conv.push_back(c);
        }
      } else {
        FLOE_ASSIGN_OR_RAISE(step.conv, Resolve(*f.type, column));
      }
    }
    plan->steps.push_back(std::move(step));
  }
  for (size_t i = 0; i < fed.size(); ++i) {
    if (fed[i]) continue;
    if (!columns->fields[i].nullable) {
      return Status::InvalidArgument("column '" + columns->fields[i].name +
                                     "' is NOT NULL, and the writer's Avro schema (" + root.name +
                                     ") has no field of that name");
    }
    plan->null_columns.push_back(static_cast<int>(i));
  }
  if (capture) plan->captured = std::move(captured);
  return std::unique_ptr<RecordDecoder>(new RecordDecoder(std::move(writer), std::move(plan)));
}

const BatchSchema* RecordDecoder::captured() const { return plan_->captured.get(); }

Status SkipDatum(const Node& type, const std::string& field, std::string_view* data) {
  int64_t items = 0;
  return Skip(type, field, data, 0, &items);
}

Status RecordDecoder::Decode(std::string_view datum, RecordBatch* out) const {
  const size_t rows = out->num_rows();
  FLOE_RETURN_NOT_OK(DecodeFrom(&datum, out));
  if (!datum.empty()) {
    out->Truncate(rows);
    return Status::Corruption(std::to_string(datum.size()) +
                              " bytes follow the record the writer's schema describes");
  }
  return Status::OK();
}

Status RecordDecoder::DecodeFrom(std::string_view* data, RecordBatch* out) const {
  std::string_view& datum = *data;
  const size_t rows = out->num_rows();
  int64_t skipped_items = 0;
  Status st;
  for (const Plan::Step& step : plan_->steps) {
    if (step.column < 0) {
      st = Skip(*step.type, step.field->name, &datum, 0, &skipped_items);
      if (!st.ok()) break;
      continue;
    }
    const Field& column = step.captured ? plan_->captured->fields[static_cast<size_t>(step.column)]
                                        : plan_->columns->fields[static_cast<size_t>(step.column)];
    Column& col = step.captured ? scratch_.mutable_column(static_cast<size_t>(step.column))
                                : out->mutable_column(static_cast<size_t>(step.column));
    const Node* type = step.type;
    Conv conv = step.conv;
    if (!step.branch_conv.empty()) {
      int64_t b = 0;
      st = ReadVarint(&datum, &b);
      if (!st.ok()) break;
      if (b < 0 || static_cast<size_t>(b) >= step.branch_conv.size()) {
        st = Status::Corruption("field '" + column.name + "': union branch " + std::to_string(b) +
                                " of " + std::to_string(step.branch_conv.size()));
        break;
      }
      type = type->branches[static_cast<size_t>(b)];
      conv = step.branch_conv[static_cast<size_t>(b)];
    }
    if (conv == Conv::kNull) {
      if (!column.nullable) {
        st = Status::InvalidArgument("field '" + column.name +
                                     "' is null, and its column is NOT NULL");
        break;
      }
      col.AppendNull();
      continue;
    }
    st = ReadInto(conv, *type, column, &datum, col);
    if (!st.ok()) break;
  }
  if (!st.ok()) {
    out->Truncate(rows);
    if (plan_->captured) scratch_.Truncate(0);
    return st;
  }
  for (int i : plan_->null_columns) out->mutable_column(static_cast<size_t>(i)).AppendNull();
  if (plan_->captured) {
    packed_.AppendRow(scratch_, 0, &out->mutable_column(out->num_columns() - 1));
    scratch_.Truncate(0);
  }
  return Status::OK();
}

}  // namespace floe::avro
