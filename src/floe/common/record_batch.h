#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe {

// Logical column types shared by the codecs, Iceberg and the runtime. Storage per type:
//   kBoolean                      uint8_t (0 or 1)
//   kInt32, kDate                 int32_t (date: days since 1970-01-01)
//   kInt64, kTimestamp(Tz)        int64_t (timestamps: microseconds since epoch; Tz = UTC-adjusted)
//   kTime                         int64_t (microseconds since midnight, 0 .. 86'399'999'999)
//   kFloat / kDouble              float / double
//   kDecimal                      Int128, the unscaled value (precision <= 38)
//   kString / kBinary             offsets + bytes (strings are UTF-8)
enum class TypeId : uint8_t {
  kBoolean,
  kInt32,
  kInt64,
  kFloat,
  kDouble,
  kString,
  kBinary,
  kDate,
  kTimestamp,
  kTimestampTz,
  kDecimal,
  kTime,  // last: the values above are written in state and files
};

using Int128 = __int128;

struct DataType {
  TypeId id = TypeId::kInt64;
  int precision = 0;  // decimal only
  int scale = 0;      // decimal only

  static DataType Boolean() { return {TypeId::kBoolean}; }
  static DataType Int32() { return {TypeId::kInt32}; }
  static DataType Int64() { return {TypeId::kInt64}; }
  static DataType Float() { return {TypeId::kFloat}; }
  static DataType Double() { return {TypeId::kDouble}; }
  static DataType String() { return {TypeId::kString}; }
  static DataType Binary() { return {TypeId::kBinary}; }
  static DataType Date() { return {TypeId::kDate}; }
  static DataType Timestamp() { return {TypeId::kTimestamp}; }
  static DataType TimestampTz() { return {TypeId::kTimestampTz}; }
  static DataType Decimal(int precision, int scale) { return {TypeId::kDecimal, precision, scale}; }
  static DataType Time() { return {TypeId::kTime}; }

  bool is_variable_width() const { return id == TypeId::kString || id == TypeId::kBinary; }
  // Bytes per value for fixed-width types, 0 for variable-width ones.
  int fixed_width() const;
  // "boolean", "int", "long", "float", "double", "string", "binary", "date", "time",
  // "timestamp", "timestamptz", "decimal(P, S)" (Iceberg's spelling).
  std::string ToString() const;
  bool operator==(const DataType&) const = default;
};

// Flink SQL's name of a type, as errors show it: "INT", "BIGINT", "TIMESTAMP", "TIMESTAMP_LTZ",
// "DECIMAL(10, 2)", ...
std::string SqlTypeName(const DataType& type);

// A named, typed column of a batch. field_id is the Iceberg field id (0 when not bound).
struct Field {
  std::string name;
  DataType type;
  bool nullable = true;
  int32_t field_id = 0;
  // TIMESTAMP / TIMESTAMP_LTZ / TIME: the SQL precision declared (0..6), -1 when not known
  // (values hold microseconds either way). Formatting only (CAST to STRING); not compared by ==.
  int precision = -1;
  bool operator==(const Field& o) const {
    return name == o.name && type == o.type && nullable == o.nullable && field_id == o.field_id;
  }
};

struct BatchSchema {
  std::vector<Field> fields;
  // Index of the field called `name`, or -1.
  int FieldIndex(std::string_view name) const;
  bool operator==(const BatchSchema&) const = default;
};

namespace internal {

// A growable byte buffer that never zero-fills: appends write into uninitialized capacity that
// grows geometrically. Copies copy the contents only. Storage is aligned for any scalar
// (operator new[] alignment, >= 16 bytes on the supported targets).
class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(const ByteBuffer& other) { Append(other.data_.get(), other.size_); }
  ByteBuffer& operator=(const ByteBuffer& other) {
    if (this != &other) {
      size_ = 0;
      Append(other.data_.get(), other.size_);
    }
    return *this;
  }
  ByteBuffer(ByteBuffer&& other) noexcept
      : data_(std::move(other.data_)), size_(other.size_), capacity_(other.capacity_) {
    other.size_ = other.capacity_ = 0;
  }
  ByteBuffer& operator=(ByteBuffer&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.size_ = other.capacity_ = 0;
    return *this;
  }

  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  void Reserve(size_t n) {
    if (n > capacity_) Reallocate(n);
  }
  // Grows the size by n and returns the (uninitialized) first new byte.
  uint8_t* Extend(size_t n) {
    if (n > capacity_ - size_) Reallocate(std::max(size_ + n, capacity_ * 2));
    uint8_t* p = data_.get() + size_;
    size_ += n;
    return p;
  }
  void Append(const void* p, size_t n) {
    if (n != 0) std::memcpy(Extend(n), p, n);
  }
  // REQUIRES: n <= size().
  void Shrink(size_t n) { size_ = n; }

 private:
  void Reallocate(size_t capacity);

  std::unique_ptr<uint8_t[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace internal

// Column is a growable vector of values of one DataType plus a null mask.
// Not thread-safe; owned by value. Null slots hold zero / empty values.
class Column {
 public:
  explicit Column(DataType type) : type_(type) {
    if (type_.is_variable_width()) offsets_.push_back(0);
  }

  const DataType& type() const { return type_; }
  size_t size() const { return size_; }
  size_t null_count() const { return null_count_; }
  bool IsNull(size_t i) const { return null_count_ != 0 && nulls_[i] != 0; }

  void Reserve(size_t n);
  void AppendNull();
  // REQUIRES: T is the storage type of type().
  template <typename T>
  void Append(T v) {
    std::memcpy(fixed_.Extend(sizeof(T)), &v, sizeof(T));
    PushValid();
  }
  // REQUIRES: type() is kString or kBinary.
  void AppendBytes(std::string_view v) {
    bytes_.append(v);
    offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
    PushValid();
  }
  // Appends row `i` of `other`. REQUIRES: other.type() == type().
  void AppendFrom(const Column& other, size_t i);
  // Appends rows [begin, end) of `other` (same type): one copy per buffer when none is null.
  void AppendRange(const Column& other, size_t begin, size_t end);
  // Drops every row from `rows` on (no-op if rows >= size()); capacity is kept, so a column
  // truncated to 0 can be refilled without reallocating.
  void Truncate(size_t rows);

  // REQUIRES: T is the storage type of type().
  template <typename T>
  T Get(size_t i) const {
    T v;
    std::memcpy(&v, fixed_.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  template <typename T>
  const T* values() const {
    return reinterpret_cast<const T*>(fixed_.data());
  }
  std::string_view GetBytes(size_t i) const {
    return std::string_view(bytes_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]);
  }
  const std::vector<uint32_t>& offsets() const { return offsets_; }
  const std::string& bytes() const { return bytes_; }
  // One byte per row, 1 = null. Empty when null_count() == 0.
  const std::vector<uint8_t>& null_mask() const { return nulls_; }

  // Equality of type and values, nulls compared as nulls.
  bool Equals(const Column& other) const;
  // Approximate in-memory bytes, used to size batches and files.
  size_t ByteSize() const { return fixed_.size() + bytes_.size() + offsets_.size() * 4; }
  // Reserves room for `rows` more rows and `bytes` more string/binary bytes.
  void ReserveMore(size_t rows, size_t bytes);

 private:
  void PushValid() {
    if (null_count_ != 0) nulls_.push_back(0);
    ++size_;
  }

  DataType type_;
  size_t size_ = 0;
  size_t null_count_ = 0;
  std::vector<uint8_t> nulls_;
  internal::ByteBuffer fixed_;
  std::vector<uint32_t> offsets_;
  std::string bytes_;
};

// RecordBatch is a schema plus one Column per field, all of num_rows() rows.
// The unit records move in through codecs, operators and sinks.
class RecordBatch {
 public:
  RecordBatch() = default;
  // Makes an empty batch with one empty column per field.
  explicit RecordBatch(std::shared_ptr<const BatchSchema> schema);
  RecordBatch(std::shared_ptr<const BatchSchema> schema, std::vector<Column> columns);

  const std::shared_ptr<const BatchSchema>& schema() const { return schema_; }
  size_t num_rows() const { return columns_.empty() ? 0 : columns_[0].size(); }
  size_t num_columns() const { return columns_.size(); }
  const Column& column(size_t i) const { return columns_[i]; }
  Column& mutable_column(size_t i) { return columns_[i]; }
  const std::vector<Column>& columns() const { return columns_; }

  // Checks that every column has the schema's type and the same length.
  Status Validate() const;
  // A new batch holding the given rows, in the given order.
  RecordBatch Take(const std::vector<uint32_t>& rows) const;
  // Rows [begin, end), copied. REQUIRES: begin <= end <= num_rows().
  RecordBatch Slice(size_t begin, size_t end) const;
  bool Equals(const RecordBatch& other) const;
  size_t ByteSize() const;
  // Drops every row from `rows` on, keeping the columns' capacity (Truncate(0) empties the
  // batch for reuse).
  void Truncate(size_t rows);

 private:
  std::shared_ptr<const BatchSchema> schema_;
  std::vector<Column> columns_;
};

}  // namespace floe
