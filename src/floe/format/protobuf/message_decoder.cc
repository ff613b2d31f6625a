#include "floe/format/protobuf/message_decoder.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/json.h"  // IsValidUtf8

namespace floe::protobuf {

namespace {

enum class Wire : uint8_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

// Timestamp's valid range (0001-01-01 .. 9999-12-31), in seconds.
constexpr int64_t kMinSeconds = -62135596800;
constexpr int64_t kMaxSeconds = 253402300799;

Status ReadVarint(std::string_view* data, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (data->empty()) return Status::Corruption("a varint is cut short");
    const uint8_t b = static_cast<uint8_t>(data->front());
    data->remove_prefix(1);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return Status::OK();
    }
  }
  return Status::Corruption("a varint longer than 10 bytes");
}

uint64_t ReadLittleEndian(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  }
  return v;
}

int64_t Zigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

// What a field's value becomes in its column.
enum class Conv : uint8_t {
  kInt32,      // INT from int32 / sint32 / sfixed32 / an enum's number
  kInt64,      // BIGINT from any integer type
  kFloat,      // FLOAT from float
  kDouble,     // DOUBLE from float or double
  kBool,       // BOOLEAN
  kString,     // STRING from string
  kBytes,      // BYTES from bytes or string
  kEnumName,   // STRING: the enum value's name
  kTimestamp,  // TIMESTAMP / TIMESTAMP_LTZ from google.protobuf.Timestamp
};

Wire WireOf(const ProtoField& f) {
  if (f.message != nullptr) return Wire::kLength;
  if (f.enumeration != nullptr) return Wire::kVarint;
  switch (f.scalar) {
    case ScalarType::kDouble:
    case ScalarType::kFixed64:
    case ScalarType::kSfixed64:
      return Wire::kFixed64;
    case ScalarType::kFloat:
    case ScalarType::kFixed32:
    case ScalarType::kSfixed32:
      return Wire::kFixed32;
    case ScalarType::kString:
    case ScalarType::kBytes:
      return Wire::kLength;
    default:
      return Wire::kVarint;
  }
}

Result<Conv> Resolve(const ProtoField& f, const Field& column) {
  const TypeId t = column.type.id;
  const ScalarType s = f.scalar;
  const auto refuse = [&]() -> Status {
    return Status::InvalidArgument("field '" + f.name + "' (" +
                                   (f.message             ? f.message->full_name
                                    : f.enumeration       ? f.enumeration->full_name
                                    : f.type_name.empty() ? "a scalar"
                                                          : f.type_name) +
                                   ") cannot be read into column '" + column.name + "' " +
                                   SqlTypeName(column.type));
  };
  if (f.repeated) {
    return Status::InvalidArgument("field '" + f.name +
                                   "' is repeated (or a map): it cannot be a column");
  }
  if (f.message != nullptr) {
    if (f.message->full_name == "google.protobuf.Timestamp" &&
        (t == TypeId::kTimestamp || t == TypeId::kTimestampTz)) {
      return Conv::kTimestamp;
    }
    return refuse();
  }
  if (f.enumeration != nullptr) {
    if (t == TypeId::kString) return Conv::kEnumName;
    if (t == TypeId::kInt32) return Conv::kInt32;
    if (t == TypeId::kInt64) return Conv::kInt64;
    return refuse();
  }
  const bool int32 =
      s == ScalarType::kInt32 || s == ScalarType::kSint32 || s == ScalarType::kSfixed32;
  const bool integer = int32 || s == ScalarType::kUint32 || s == ScalarType::kFixed32 ||
                       s == ScalarType::kInt64 || s == ScalarType::kSint64 ||
                       s == ScalarType::kSfixed64 || s == ScalarType::kUint64 ||
                       s == ScalarType::kFixed64;
  if (t == TypeId::kInt32 && int32) return Conv::kInt32;
  if (t == TypeId::kInt64 && integer) return Conv::kInt64;
  if (t == TypeId::kFloat && s == ScalarType::kFloat) return Conv::kFloat;
  if (t == TypeId::kDouble && (s == ScalarType::kFloat || s == ScalarType::kDouble)) {
    return Conv::kDouble;
  }
  if (t == TypeId::kBoolean && s == ScalarType::kBool) return Conv::kBool;
  if (t == TypeId::kString && s == ScalarType::kString) return Conv::kString;
  if (t == TypeId::kBinary && (s == ScalarType::kBytes || s == ScalarType::kString)) {
    return Conv::kBytes;
  }
  return refuse();
}

// The column type a message field no column names is captured as (MakeCapturing); nullopt
// for the fields that cannot be a column.
std::optional<DataType> CapturedType(const ProtoField& f) {
  if (f.repeated) return std::nullopt;
  if (f.message != nullptr) {
    if (f.message->full_name == "google.protobuf.Timestamp") return DataType::TimestampTz();
    return std::nullopt;
  }
  if (f.enumeration != nullptr) return DataType::String();
  switch (f.scalar) {
    case ScalarType::kInt32:
    case ScalarType::kSint32:
    case ScalarType::kSfixed32:
      return DataType::Int32();
    case ScalarType::kUint32:
    case ScalarType::kFixed32:
    case ScalarType::kInt64:
    case ScalarType::kSint64:
    case ScalarType::kSfixed64:
    case ScalarType::kUint64:
    case ScalarType::kFixed64:
      return DataType::Int64();
    case ScalarType::kFloat:
      return DataType::Float();
    case ScalarType::kDouble:
      return DataType::Double();
    case ScalarType::kBool:
      return DataType::Boolean();
    case ScalarType::kString:
      return DataType::String();
    case ScalarType::kBytes:
      return DataType::Binary();
    case ScalarType::kNone:
      break;
  }
  return std::nullopt;
}

// The raw value of a field's last occurrence.
struct Seen {
  bool present = false;
  uint64_t bits = 0;         // varint / fixed values
  std::string_view payload;  // length-delimited values
};

}  // namespace

struct MessageDecoder::Plan {
  struct Step {
    int column = -1;
    bool captured = false;              // `column` is a column of the captured fields' scratch
    const ProtoField* field = nullptr;  // null: no field feeds the column
    Conv conv = Conv::kInt64;
    Wire wire = Wire::kVarint;
  };
  std::vector<Step> steps;  // one per column, in column order, then one per captured field
  std::map<int32_t, size_t> by_number;
  std::shared_ptr<const BatchSchema> columns;
  std::shared_ptr<const BatchSchema> captured;  // MakeCapturing: the captured fields, or null
  std::vector<Seen> seen;                       // per step, the message being decoded
};

MessageDecoder::MessageDecoder(std::shared_ptr<const ProtoSchema> schema,
                               std::unique_ptr<Plan> plan)
    : schema_(std::move(schema)), plan_(std::move(plan)) {
  if (plan_->captured) scratch_ = RecordBatch(plan_->captured);
}

const BatchSchema* MessageDecoder::captured() const { return plan_->captured.get(); }

MessageDecoder::~MessageDecoder() = default;

Result<std::unique_ptr<MessageDecoder>> MessageDecoder::Make(
    std::shared_ptr<const ProtoSchema> schema, const ProtoMessage& message,
    std::shared_ptr<const BatchSchema> columns) {
  return MakePlan(std::move(schema), message, std::move(columns), false);
}

Result<std::unique_ptr<MessageDecoder>> MessageDecoder::MakeCapturing(
    std::shared_ptr<const ProtoSchema> schema, const ProtoMessage& message,
    std::shared_ptr<const BatchSchema> columns) {
  if (columns->fields.empty() || columns->fields.back().type.id != TypeId::kString ||
      !columns->fields.back().nullable) {
    return Status::InvalidArgument(
        "protobuf decoder: capturing undeclared fields needs a last nullable STRING column");
  }
  return MakePlan(std::move(schema), message, std::move(columns), true);
}

Result<std::unique_ptr<MessageDecoder>> MessageDecoder::MakePlan(
    std::shared_ptr<const ProtoSchema> schema, const ProtoMessage& message,
    std::shared_ptr<const BatchSchema> columns, bool capture) {
  auto plan = std::make_unique<Plan>();
  plan->columns = columns;
  const size_t declared = columns->fields.size() - (capture ? 1 : 0);
  for (size_t i = 0; i < declared; ++i) {
    const Field& column = columns->fields[i];
    Plan::Step step;
    step.column = static_cast<int>(i);
    step.field = message.FindByName(column.name);
    if (step.field == nullptr) {
      if (!column.nullable) {
        return Status::InvalidArgument("column '" + column.name + "' is NOT NULL, and message " +
                                       message.full_name + " has no field of that name");
      }
    } else {
      FLOE_ASSIGN_OR_RAISE(step.conv, Resolve(*step.field, column));
      step.wire = WireOf(*step.field);
      plan->by_number[step.field->number] = plan->steps.size();
    }
    plan->steps.push_back(step);
  }
  if (capture) {
    auto captured = std::make_shared<BatchSchema>();
    for (const ProtoField& f : message.fields) {
      if (plan->by_number.count(f.number) != 0) continue;  // a column's
      std::optional<DataType> type = CapturedType(f);
      if (!type) continue;
      Plan::Step step;
      step.captured = true;
      step.column = static_cast<int>(captured->fields.size());
      step.field = &f;
      captured->fields.push_back(Field{f.name, *type, f.has_presence, 0});
      FLOE_ASSIGN_OR_RAISE(step.conv, Resolve(f, captured->fields.back()));
      step.wire = WireOf(f);
      plan->by_number[f.number] = plan->steps.size();
      plan->steps.push_back(step);
    }
    plan->captured = std::move(captured);
  }
  return std::unique_ptr<MessageDecoder>(new MessageDecoder(std::move(schema), std::move(plan)));
}

namespace {

// Skips a value of `wire` type; Corruption for groups and unknown wire types.
Status SkipValue(uint32_t wire, std::string_view* data, Seen* seen) {
  switch (wire) {
    case 0:
      return ReadVarint(data, &seen->bits);
    case 1:
    case 5: {
      const size_t n = wire == 1 ? 8 : 4;
      if (data->size() < n) return Status::Corruption("a fixed-size value is cut short");
      seen->bits = ReadLittleEndian(data->substr(0, n));
      data->remove_prefix(n);
      return Status::OK();
    }
    case 2: {
      uint64_t size = 0;
      FLOE_RETURN_NOT_OK(ReadVarint(data, &size));
      if (size > data->size()) {
        return Status::Corruption("a length of " + std::to_string(size) + " where " +
                                  std::to_string(data->size()) + " bytes are left");
      }
      seen->payload = data->substr(0, size);
      data->remove_prefix(size);
      return Status::OK();
    }
    default:
      return Status::Corruption("wire type " + std::to_string(wire) +
                                " (groups are not supported)");
  }
}

Result<int64_t> TimestampMicros(std::string_view bytes) {
  int64_t seconds = 0, nanos = 0;
  while (!bytes.empty()) {
    uint64_t key = 0;
    FLOE_RETURN_NOT_OK(ReadVarint(&bytes, &key));
    Seen v;
    FLOE_RETURN_NOT_OK(SkipValue(static_cast<uint32_t>(key & 7), &bytes, &v));
    if ((key >> 3) == 1 && (key & 7) == 0) seconds = static_cast<int64_t>(v.bits);
    if ((key >> 3) == 2 && (key & 7) == 0) nanos = static_cast<int32_t>(v.bits);
  }
  if (seconds < kMinSeconds || seconds > kMaxSeconds || nanos < 0 || nanos > 999999999) {
    return Status::InvalidArgument("a Timestamp of " + std::to_string(seconds) + " s and " +
                                   std::to_string(nanos) + " ns is outside its valid range");
  }
  return seconds * 1000000 + nanos / 1000;
}

std::string EnumName(const ProtoEnum& e, int32_t number) {
  for (const auto& [name, value] : e.values) {
    if (value == number) return name;
  }
  return std::to_string(number);
}

// Appends the field's value (or its default when absent) to `col`.
Status Append(Conv conv, const ProtoField& f, const Seen& v, Column& col) {
  switch (conv) {
    case Conv::kInt32: {
      int64_t x = static_cast<int32_t>(v.bits);
      if (f.scalar == ScalarType::kSint32) x = Zigzag(v.bits);
      col.Append<int32_t>(static_cast<int32_t>(x));
      return Status::OK();
    }
    case Conv::kInt64: {
      int64_t x = static_cast<int64_t>(v.bits);
      switch (f.scalar) {
        case ScalarType::kInt32:
        case ScalarType::kSfixed32:
          x = static_cast<int32_t>(v.bits);
          break;
        case ScalarType::kSint32:
        case ScalarType::kSint64:
          x = Zigzag(v.bits);
          break;
        case ScalarType::kUint32:
        case ScalarType::kFixed32:
          x = static_cast<uint32_t>(v.bits);
          break;
        case ScalarType::kUint64:
        case ScalarType::kFixed64:
          if (v.bits > static_cast<uint64_t>(INT64_MAX)) {
            return Status::InvalidArgument("field '" + f.name + "': " + std::to_string(v.bits) +
                                           " does not fit BIGINT");
          }
          break;
        default:
          if (f.enumeration != nullptr) x = static_cast<int32_t>(v.bits);
          break;
      }
      col.Append<int64_t>(x);
      return Status::OK();
    }
    case Conv::kFloat:
      col.Append<float>(std::bit_cast<float>(static_cast<uint32_t>(v.bits)));
      return Status::OK();
    case Conv::kDouble:
      col.Append<double>(f.scalar == ScalarType::kFloat ? static_cast<double>(std::bit_cast<float>(
                                                              static_cast<uint32_t>(v.bits)))
                                                        : std::bit_cast<double>(v.bits));
      return Status::OK();
    case Conv::kBool:
      col.Append<bool>(v.bits != 0);
      return Status::OK();
    case Conv::kString:
      if (!IsValidUtf8(v.payload)) {
        return Status::InvalidArgument("field '" + f.name + "' is not valid UTF-8");
      }
      col.AppendBytes(v.payload);
      return Status::OK();
    case Conv::kBytes:
      col.AppendBytes(v.payload);
      return Status::OK();
    case Conv::kEnumName:
      col.AppendBytes(EnumName(*f.enumeration, static_cast<int32_t>(v.bits)));
      return Status::OK();
    case Conv::kTimestamp: {
      Result<int64_t> micros = TimestampMicros(v.payload);
      if (!micros.ok()) {
        return Status(micros.status().code(),
                      "field '" + f.name + "': " + micros.status().message());
      }
      col.Append<int64_t>(*micros);
      return Status::OK();
    }
  }
  return Status::Internal("unknown conversion");
}

}  // namespace

Status MessageDecoder::Decode(std::string_view bytes, RecordBatch* out) const {
  std::vector<Seen>& seen = plan_->seen;
  seen.assign(plan_->steps.size(), Seen{});
  std::string_view data = bytes;
  while (!data.empty()) {
    uint64_t key = 0;
    FLOE_RETURN_NOT_OK(ReadVarint(&data, &key));
    const uint32_t wire = static_cast<uint32_t>(key & 7);
    const uint64_t number = key >> 3;
    if (number == 0 || number > 536870911) {
      return Status::Corruption("field number " + std::to_string(number));
    }
    Seen v;
    auto it = plan_->by_number.find(static_cast<int32_t>(number));
    Status st = SkipValue(wire, &data, &v);
    if (it == plan_->by_number.end()) {
      if (!st.ok())
        return Status::Corruption("field " + std::to_string(number) + ": " + st.message());
      continue;
    }
    const Plan::Step& step = plan_->steps[it->second];
    if (!st.ok()) return Status::Corruption("field '" + step.field->name + "': " + st.message());
    if (wire != static_cast<uint32_t>(step.wire)) {
      return Status::Corruption("field '" + step.field->name + "': wire type " +
                                std::to_string(wire) + ", its type is written as " +
                                std::to_string(static_cast<int>(step.wire)));
    }
    v.present = true;
    seen[it->second] = v;
  }
  const size_t rows = out->num_rows();
  Status st;
  for (size_t i = 0; i < plan_->steps.size() && st.ok(); ++i) {
    const Plan::Step& step = plan_->steps[i];
    const size_t index = static_cast<size_t>(step.column);
    const Field& column =
        step.captured ? plan_->captured->fields[index] : plan_->columns->fields[index];
    Column& col = step.captured ? scratch_.mutable_column(index) : out->mutable_column(index);
    const bool absent = step.field == nullptr || !seen[i].present;
    if (absent && (step.field == nullptr || step.field->has_presence)) {
      if (!column.nullable) {
        st = Status::InvalidArgument("field '" + column.name +
                                     "' is not set, and its column is "
                                     "NOT NULL");
        break;
      }
      col.AppendNull();
      continue;
    }
    Seen v = seen[i];  // absent without presence: the default (0, "", false, the first enum)
    if (absent && step.conv == Conv::kEnumName) {
      v.bits = static_cast<uint64_t>(static_cast<int64_t>(
          step.field->enumeration->values.empty() ? 0 : step.field->enumeration->values[0].second));
    }
    st = Append(step.conv, *step.field, v, col);
  }
  if (!st.ok()) {
    out->Truncate(rows);
    if (plan_->captured) scratch_.Truncate(0);
    return st;
  }
  if (plan_->captured) {
    packed_.AppendRow(scratch_, 0, &out->mutable_column(out->num_columns() - 1));
    scratch_.Truncate(0);
  }
  return st;
}

Status ReadMessageIndexes(std::string_view* data, std::vector<int64_t>* indexes) {
  indexes->clear();
  uint64_t raw = 0;
  FLOE_RETURN_NOT_OK(ReadVarint(data, &raw));
  const int64_t count = Zigzag(raw);
  if (count == 0) {
    indexes->push_back(0);
    return Status::OK();
  }
  if (count < 0 || count > 64) {
    return Status::Corruption("a message index list of " + std::to_string(count) + " entries");
  }
  for (int64_t i = 0; i < count; ++i) {
    FLOE_RETURN_NOT_OK(ReadVarint(data, &raw));
    indexes->push_back(Zigzag(raw));
  }
  return Status::OK();
}

}  // namespace floe::protobuf
