#include "floe/common/record_batch.h"

namespace floe {

int DataType::fixed_width() const {
  switch (id) {
    case TypeId::kBoolean:
      return 1;
    case TypeId::kInt32:
    case TypeId::kDate:
    case TypeId::kFloat:
      return 4;
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTime:
    case TypeId::kDouble:
      return 8;
    case TypeId::kDecimal:
      return 16;
    case TypeId::kString:
    case TypeId::kBinary:
      return 0;
  }
  return 0;
}

std::string DataType::ToString() const {
  switch (id) {
    case TypeId::kBoolean:
      return "boolean";
    case TypeId::kInt32:
      return "int";
    case TypeId::kInt64:
      return "long";
    case TypeId::kFloat:
      return "float";
    case TypeId::kDouble:
      return "double";
    case TypeId::kString:
      return "string";
    case TypeId::kBinary:
      return "binary";
    case TypeId::kDate:
      return "date";
    case TypeId::kTimestamp:
      return "timestamp";
    case TypeId::kTimestampTz:
      return "timestamptz";
    case TypeId::kTime:
      return "time";
    case TypeId::kDecimal:
      return "decimal(" + std::to_string(precision) + ", " + std::to_string(scale) + ")";
  }
  return "unknown";
}

std::string SqlTypeName(const DataType& type) {
  switch (type.id) {
    case TypeId::kBoolean:
      return "BOOLEAN";
    case TypeId::kInt32:
      return "INT";
    case TypeId::kInt64:
      return "BIGINT";
    case TypeId::kFloat:
      return "FLOAT";
    case TypeId::kDouble:
      return "DOUBLE";
    case TypeId::kString:
      return "STRING";
    case TypeId::kBinary:
      return "BYTES";
    case TypeId::kDate:
      return "DATE";
    case TypeId::kTimestamp:
      return "TIMESTAMP";
    case TypeId::kTimestampTz:
      return "TIMESTAMP_LTZ";
    case TypeId::kTime:
      return "TIME";
    case TypeId::kDecimal:
      return "DECIMAL(" + std::to_string(type.precision) + ", " + std::to_string(type.scale) + ")";
  }
  return "UNKNOWN";
}

int BatchSchema::FieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

namespace internal {

void ByteBuffer::Reallocate(size_t capacity) {
  capacity = std::max<size_t>(capacity, 64);
  auto grown = std::make_unique_for_overwrite<uint8_t[]>(capacity);
  if (size_ != 0) std::memcpy(grown.get(), data_.get(), size_);
  data_ = std::move(grown);
  capacity_ = capacity;
}

}  // namespace internal

void Column::Reserve(size_t n) {
  if (type_.is_variable_width()) {
    offsets_.reserve(n + 1);
  } else {
    fixed_.Reserve(n * type_.fixed_width());
  }
}

void Column::ReserveMore(size_t rows, size_t bytes) {
  if (type_.is_variable_width()) {
    offsets_.reserve(offsets_.size() + rows);
    bytes_.reserve(bytes_.size() + bytes);
  } else {
    fixed_.Reserve(fixed_.size() + rows * type_.fixed_width());
  }
  if (null_count_ != 0) nulls_.reserve(size_ + rows);
}

void Column::AppendNull() {
  if (null_count_ == 0) nulls_.assign(size_, 0);
  nulls_.push_back(1);
  ++null_count_;
  if (type_.is_variable_width()) {
    offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
  } else {
    size_t w = type_.fixed_width();
    std::memset(fixed_.Extend(w), 0, w);
  }
  ++size_;
}

void Column::Truncate(size_t rows) {
  if (rows >= size_) return;
  if (null_count_ != 0) {
    size_t removed = 0;
    for (size_t i = rows; i < size_; ++i) removed += nulls_[i];
    null_count_ -= removed;
    if (null_count_ == 0) {
      nulls_.clear();
    } else {
      nulls_.resize(rows);
    }
  }
  if (type_.is_variable_width()) {
    offsets_.resize(rows + 1);
    bytes_.resize(offsets_[rows]);
  } else {
    fixed_.Shrink(rows * type_.fixed_width());
  }
  size_ = rows;
}

void Column::AppendFrom(const Column& other, size_t i) {
  if (other.IsNull(i)) {
    AppendNull();
  } else if (type_.is_variable_width()) {
    AppendBytes(other.GetBytes(i));
  } else {
    size_t w = type_.fixed_width();
    fixed_.Append(other.fixed_.data() + i * w, w);
    PushValid();
  }
}

void Column::AppendRange(const Column& other, size_t begin, size_t end) {
  if (other.null_count_ != 0) {  // row by row keeps the null mask's bookkeeping in one place
    for (size_t i = begin; i < end; ++i) AppendFrom(other, i);
    return;
  }
  const size_t n = end - begin;
  if (type_.is_variable_width()) {
    const uint32_t from = other.offsets_[begin];
    const uint32_t base = static_cast<uint32_t>(bytes_.size());
    bytes_.append(other.bytes_, from, other.offsets_[end] - from);
    offsets_.reserve(offsets_.size() + n);
    for (size_t i = begin + 1; i <= end; ++i) offsets_.push_back(base + (other.offsets_[i] - from));
  } else {
    const size_t w = type_.fixed_width();
    fixed_.Append(other.fixed_.data() + begin * w, n * w);
  }
  if (null_count_ != 0) nulls_.insert(nulls_.end(), n, 0);
  size_ += n;
}

bool Column::Equals(const Column& other) const {
  if (type_ != other.type_ || size_ != other.size_) return false;
  size_t w = type_.fixed_width();
  for (size_t i = 0; i < size_; ++i) {
    bool n = IsNull(i);
    if (n != other.IsNull(i)) return false;
    if (n) continue;
    if (type_.is_variable_width()) {
      if (GetBytes(i) != other.GetBytes(i)) return false;
    } else if (std::memcmp(fixed_.data() + i * w, other.fixed_.data() + i * w, w) != 0) {
      return false;
    }
  }
  return true;
}

RecordBatch::RecordBatch(std::shared_ptr<const BatchSchema> schema) : schema_(std::move(schema)) {
  columns_.reserve(schema_->fields.size());
  for (const auto& f : schema_->fields) columns_.emplace_back(f.type);
}

RecordBatch::RecordBatch(std::shared_ptr<const BatchSchema> schema, std::vector<Column> columns)
    : schema_(std::move(schema)), columns_(std::move(columns)) {}

Status RecordBatch::Validate() const {
  if (!schema_) return Status::Internal("record batch without schema");
  if (columns_.size() != schema_->fields.size()) {
    return Status::Internal("record batch has " + std::to_string(columns_.size()) +
                            " columns, schema has " + std::to_string(schema_->fields.size()));
  }
  for (size_t i = 0; i < columns_.size(); ++i) {
    const Field& f = schema_->fields[i];
    if (columns_[i].type() != f.type) {
      return Status::Internal("column '" + f.name + "' has type " + columns_[i].type().ToString() +
                              ", schema says " + f.type.ToString());
    }
    if (columns_[i].size() != columns_[0].size()) {
      return Status::Internal("column '" + f.name + "' has a different length");
    }
    if (!f.nullable && columns_[i].null_count() != 0) {
      return Status::InvalidArgument("required column '" + f.name + "' holds nulls");
    }
  }
  return Status::OK();
}

RecordBatch RecordBatch::Take(const std::vector<uint32_t>& rows) const {
  RecordBatch out(schema_);
  for (size_t c = 0; c < columns_.size(); ++c) {
    Column& dst = out.columns_[c];
    dst.Reserve(rows.size());
    for (uint32_t r : rows) dst.AppendFrom(columns_[c], r);
  }
  return out;
}

RecordBatch RecordBatch::Slice(size_t begin, size_t end) const {
  RecordBatch out(schema_);
  for (size_t c = 0; c < columns_.size(); ++c) out.columns_[c].AppendRange(columns_[c], begin, end);
  return out;
}

bool RecordBatch::Equals(const RecordBatch& other) const {
  if (columns_.size() != other.columns_.size()) return false;
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (!columns_[i].Equals(other.columns_[i])) return false;
  }
  return true;
}

void RecordBatch::Truncate(size_t rows) {
  for (auto& c : columns_) c.Truncate(rows);
}

size_t RecordBatch::ByteSize() const {
  size_t n = 0;
  for (const auto& c : columns_) n += c.ByteSize();
  return n;
}

}  // namespace floe
