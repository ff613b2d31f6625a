#pragma once

// Thrift compact protocol: only as much as the Parquet footer and page headers need (structs,
// lists, binary, bool, i8/i16/i32/i64, double; maps and sets are only skipped).
// Spec: https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe::parquet::thrift {

// Wire types of the compact protocol.
enum class CType : uint8_t {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

// CompactWriter appends compact-protocol bytes to a string it does not own. Callers write
// fields in increasing id order inside StructBegin/StructEnd, as generated Thrift code does.
class CompactWriter {
 public:
  explicit CompactWriter(std::string* out) : out_(out) {}

  void StructBegin() { last_ids_.push_back(last_id_), last_id_ = 0; }
  void StructEnd() {
    out_->push_back(0);  // field stop
    last_id_ = last_ids_.back();
    last_ids_.pop_back();
  }

  void FieldBool(int16_t id, bool v) { FieldHeader(id, v ? CType::kBoolTrue : CType::kBoolFalse); }
  void FieldI8(int16_t id, int8_t v) {
    FieldHeader(id, CType::kByte);
    out_->push_back(static_cast<char>(v));
  }
  void FieldI16(int16_t id, int16_t v) { FieldHeader(id, CType::kI16), WriteVarint(ZigZag(v)); }
  void FieldI32(int16_t id, int32_t v) { FieldHeader(id, CType::kI32), WriteVarint(ZigZag(v)); }
  void FieldI64(int16_t id, int64_t v) { FieldHeader(id, CType::kI64), WriteVarint(ZigZag(v)); }
  void FieldDouble(int16_t id, double v);
  void FieldBinary(int16_t id, std::string_view v) {
    FieldHeader(id, CType::kBinary), WriteBinary(v);
  }
  // Begins a struct-valued field; close it with StructEnd().
  void FieldStructBegin(int16_t id) { FieldHeader(id, CType::kStruct), StructBegin(); }
  // Begins a list-valued field; then write `size` elements with the element writers below.
  void FieldListBegin(int16_t id, CType elem, int32_t size) {
    FieldHeader(id, CType::kList), ListBegin(elem, size);
  }

  // Element writers (list elements carry no field header).
  void ListBegin(CType elem, int32_t size);
  void WriteI32(int32_t v) { WriteVarint(ZigZag(v)); }
  void WriteI64(int64_t v) { WriteVarint(ZigZag(v)); }
  void WriteBool(bool v) { out_->push_back(v ? 1 : 2); }
  void WriteBinary(std::string_view v) {
    WriteVarint(v.size());
    out_->append(v);
  }

 private:
  static uint64_t ZigZag(int64_t v) {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  }
  void FieldHeader(int16_t id, CType type);
  void WriteVarint(uint64_t v);

  std::string* out_;
  int16_t last_id_ = 0;
  std::vector<int16_t> last_ids_;
};

// CompactReader decodes compact-protocol bytes from a view it does not own. Every length and
// count is checked against the bytes that remain and nesting is bounded, so garbage input yields
// Corruption (never a crash, a hang or a huge allocation). Errors say what was wrong and at which
// byte; callers add the file name.
class CompactReader {
 public:
  explicit CompactReader(std::string_view data)
      : begin_(reinterpret_cast<const uint8_t*>(data.data())),
        pos_(begin_),
        end_(begin_ + data.size()) {}

  Status StructBegin();
  Status StructEnd();
  // Reads the next field header. At the end of the struct *type is kStop.
  Status FieldBegin(CType* type, int16_t* id);

  // Value readers. For a bool field the value came with the header (pass the header's type).
  Status ReadBool(CType field_type, bool* v);
  Status ReadListBool(bool* v);
  Status ReadI8(int8_t* v);
  Status ReadI16(int16_t* v);
  Status ReadI32(int32_t* v);
  Status ReadI64(int64_t* v);
  Status ReadDouble(double* v);
  Status ReadBinary(std::string* v);
  // Reads a list header. *size is at most the number of bytes left (every element takes at
  // least one byte), so callers may reserve *size elements.
  Status ListBegin(CType* elem, int32_t* size);
  // Skips a value of the given wire type (used for unknown fields).
  Status Skip(CType type);

  size_t position() const { return static_cast<size_t>(pos_ - begin_); }
  size_t remaining() const { return static_cast<size_t>(end_ - pos_); }

 private:
  static constexpr int kMaxDepth = 64;
  Status Error(std::string_view what) const;
  Status ReadVarint(uint64_t* v);
  Status ReadZigZag(int64_t* v);
  Status SkipDepth(CType type, int depth);

  const uint8_t* begin_;
  const uint8_t* pos_;
  const uint8_t* end_;
  int16_t last_id_ = 0;
  std::vector<int16_t> last_ids_;
};

}  // namespace floe::parquet::thrift
