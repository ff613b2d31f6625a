#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/format/avro/schema.h"

namespace floe::avro {

// Value is a generic Avro datum. It does not know its schema: records hold their fields in
// schema order, enums hold the symbol index, and a union value is just the value of the branch
// (the encoder picks the branch from the value's kind, see EncodeValue). A plain value type;
// copyable, not thread-safe to mutate.
class Value {
 public:
  enum class Kind : uint8_t {
    kNull,
    kBoolean,
    kInt,
    kLong,
    kFloat,
    kDouble,
    kString,
    kBytes,
    kFixed,
    kEnum,
    kArray,
    kMap,
    kRecord,
  };
  using MapEntries = std::vector<std::pair<std::string, Value>>;

  Value() = default;  // null

  static Value Null() { return Value(); }
  static Value Boolean(bool v) { return Scalar(Kind::kBoolean, v ? 1 : 0); }
  static Value Int(int32_t v) { return Scalar(Kind::kInt, v); }
  static Value Long(int64_t v) { return Scalar(Kind::kLong, v); }
  static Value Float(float v) { return Scalar(Kind::kFloat, std::bit_cast<uint32_t>(v)); }
  static Value Double(double v) { return Scalar(Kind::kDouble, std::bit_cast<int64_t>(v)); }
  static Value String(std::string v) { return Blob(Kind::kString, std::move(v)); }
  static Value Bytes(std::string v) { return Blob(Kind::kBytes, std::move(v)); }
  static Value Fixed(std::string v) { return Blob(Kind::kFixed, std::move(v)); }
  // `index` is the position of the symbol in the enum's symbol list.
  static Value Enum(int32_t index) { return Scalar(Kind::kEnum, index); }
  static Value Array(std::vector<Value> items);
  static Value Map(MapEntries entries);
  // Fields in the order of the record schema's fields.
  static Value Record(std::vector<Value> fields);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }

  // Accessors. REQUIRES: kind() is the one named.
  bool boolean_value() const { return int_ != 0; }
  int32_t int_value() const { return static_cast<int32_t>(int_); }
  int64_t long_value() const { return int_; }
  float float_value() const { return std::bit_cast<float>(static_cast<uint32_t>(int_)); }
  double double_value() const { return std::bit_cast<double>(int_); }
  int32_t enum_index() const { return static_cast<int32_t>(int_); }
  // kString, kBytes or kFixed.
  const std::string& bytes_value() const { return bytes_; }
  const std::string& string_value() const { return bytes_; }
  // kArray items or kRecord fields.
  const std::vector<Value>& items() const { return items_; }
  std::vector<Value>& mutable_items() { return items_; }
  const std::vector<Value>& fields() const { return items_; }
  const MapEntries& entries() const { return entries_; }
  MapEntries& mutable_entries() { return entries_; }

  // The field called `name` of this record value according to `record_schema`, or nullptr when
  // the schema has no such field (or this is not a record matching the schema's field count).
  const Value* FieldByName(const Node& record_schema, std::string_view name) const;

  // Deep equality. Floats and doubles compare by bit pattern, so NaN equals itself: the point is
  // "decodes to exactly what was encoded".
  bool operator==(const Value& other) const;

 private:
  static Value Scalar(Kind k, int64_t v) {
    Value out;
    out.kind_ = k;
    out.int_ = v;
    return out;
  }
  static Value Blob(Kind k, std::string v) {
    Value out;
    out.kind_ = k;
    out.bytes_ = std::move(v);
    return out;
  }

  Kind kind_ = Kind::kNull;
  // boolean, int, long, enum; float and double as their bit patterns so that equality and
  // round trips are exact even for NaN payloads.
  int64_t int_ = 0;
  std::string bytes_;         // string, bytes, fixed
  std::vector<Value> items_;  // array items, record fields
  MapEntries entries_;        // map
};

std::string_view KindName(Value::Kind kind);

}  // namespace floe::avro
