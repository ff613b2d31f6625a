#include "floe/format/avro/value.h"

namespace floe::avro {

Value Value::Array(std::vector<Value> items) {
  Value out;
  out.kind_ = Kind::kArray;
  out.items_ = std::move(items);
  return out;
}

Value Value::Record(std::vector<Value> fields) {
  Value out;
  out.kind_ = Kind::kRecord;
  out.items_ = std::move(fields);
  return out;
}

Value Value::Map(MapEntries entries) {
  Value out;
  out.kind_ = Kind::kMap;
  out.entries_ = std::move(entries);
  return out;
}

const Value* Value::FieldByName(const Node& record_schema, std::string_view name) const {
  if (kind_ != Kind::kRecord || record_schema.type != Type::kRecord ||
      record_schema.fields.size() != items_.size()) {
    return nullptr;
  }
  int i = record_schema.FieldIndex(name);
  return i < 0 ? nullptr : &items_[i];
}

bool Value::operator==(const Value& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::kNull:
      return true;
    case Kind::kBoolean:
    case Kind::kInt:
    case Kind::kLong:
    case Kind::kFloat:
    case Kind::kDouble:
    case Kind::kEnum:
      return int_ == other.int_;
    case Kind::kString:
    case Kind::kBytes:
    case Kind::kFixed:
      return bytes_ == other.bytes_;
    case Kind::kArray:
    case Kind::kRecord:
      return items_ == other.items_;
    case Kind::kMap:
      return entries_ == other.entries_;
  }
  return false;
}

std::string_view KindName(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kNull:
      return "null";
    case Value::Kind::kBoolean:
      return "boolean";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kLong:
      return "long";
    case Value::Kind::kFloat:
      return "float";
    case Value::Kind::kDouble:
      return "double";
    case Value::Kind::kString:
      return "string";
    case Value::Kind::kBytes:
      return "bytes";
    case Value::Kind::kFixed:
      return "fixed";
    case Value::Kind::kEnum:
      return "enum";
    case Value::Kind::kArray:
      return "array";
    case Value::Kind::kMap:
      return "map";
    case Value::Kind::kRecord:
      return "record";
  }
  return "unknown";
}

}  // namespace floe::avro
