#include "floe/common/undeclared_fields.h"

#include <cstring>

namespace floe {

namespace {

template <typename T>
std::string_view Raw(const T& v) {
  return std::string_view(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <typename T>
T Load(std::string_view bytes) {
  T v{};
  std::memcpy(&v, bytes.data(), sizeof(T));
  return v;
}

}  // namespace

void UndeclaredFieldsWriter::Clear() {
  fields_ = ByteWriter(fields_.Finish());  // keeps the buffer
  count_ = 0;
}

void UndeclaredFieldsWriter::Head(std::string_view name, const DataType& type, bool is_null) {
  fields_.PutVarBytes(name);
  fields_.PutU8(static_cast<uint8_t>(type.id));
  if (type.id == TypeId::kDecimal) {
    fields_.PutU8(static_cast<uint8_t>(type.precision));
    fields_.PutU8(static_cast<uint8_t>(type.scale));
  }
  fields_.PutBool(is_null);
  ++count_;
}

void UndeclaredFieldsWriter::AddBool(std::string_view name, bool v) {
  Head(name, DataType::Boolean(), false);
  fields_.PutBool(v);
}

void UndeclaredFieldsWriter::AddInt64(std::string_view name, int64_t v) {
  Head(name, DataType::Int64(), false);
  fields_.PutRaw(Raw(v));
}

void UndeclaredFieldsWriter::AddDouble(std::string_view name, double v) {
  Head(name, DataType::Double(), false);
  fields_.PutRaw(Raw(v));
}

void UndeclaredFieldsWriter::AddString(std::string_view name, std::string_view v) {
  Head(name, DataType::String(), false);
  fields_.PutVarBytes(v);
}

void UndeclaredFieldsWriter::AddFrom(std::string_view name, const Column& column, size_t row) {
  const DataType& type = column.type();
  Head(name, type, column.IsNull(row));
  if (column.IsNull(row)) return;
  if (type.is_variable_width()) return fields_.PutVarBytes(column.GetBytes(row));
  switch (type.fixed_width()) {
    case 1:
      return fields_.PutBool(column.Get<uint8_t>(row) != 0);
    case 4:
      return fields_.PutRaw(Raw(column.Get<int32_t>(row)));
    case 8:
      return fields_.PutRaw(Raw(column.Get<int64_t>(row)));
    default:
      return fields_.PutRaw(Raw(column.Get<Int128>(row)));
  }
}

std::string_view UndeclaredFieldsWriter::Finish() {
  ByteWriter w(std::move(packed_));
  w.PutVarU64(count_);
  w.PutRaw(fields_.data());
  packed_ = w.Finish();
  return packed_;
}

void UndeclaredFieldsWriter::AppendRow(const RecordBatch& fields, size_t row, Column* into) {
  if (fields.num_columns() == 0) {
    into->AppendNull();
    return;
  }
  Clear();
  for (size_t c = 0; c < fields.num_columns(); ++c) {
    AddFrom(fields.schema()->fields[c].name, fields.column(c), row);
  }
  into->AppendBytes(Finish());
  Clear();
}

Result<bool> UndeclaredFieldsReader::Next(UndeclaredField* field) {
  if (!started_) {
    FLOE_ASSIGN_OR_RAISE(left_, in_.GetVarU64());
    started_ = true;
  }
  if (left_ == 0) {
    if (!in_.AtEnd()) return Status::Corruption("undeclared fields: bytes after the last field");
    return false;
  }
  --left_;
  FLOE_ASSIGN_OR_RAISE(field->name, in_.GetVarBytesView());
  FLOE_ASSIGN_OR_RAISE(uint8_t id, in_.GetU8());
  if (id > static_cast<uint8_t>(TypeId::kTime)) {
    return Status::Corruption("undeclared fields: type " + std::to_string(id));
  }
  field->type = DataType{static_cast<TypeId>(id)};
  if (field->type.id == TypeId::kDecimal) {
    FLOE_ASSIGN_OR_RAISE(uint8_t precision, in_.GetU8());
    FLOE_ASSIGN_OR_RAISE(uint8_t scale, in_.GetU8());
    if (precision < 1 || precision > 38 || scale > precision) {
      return Status::Corruption("undeclared fields: bad decimal type");
    }
    field->type.precision = precision;
    field->type.scale = scale;
  }
  FLOE_ASSIGN_OR_RAISE(field->is_null, in_.GetBool());
  field->value = {};
  if (field->is_null) return true;
  if (field->type.is_variable_width()) {
    FLOE_ASSIGN_OR_RAISE(field->value, in_.GetVarBytesView());
    return true;
  }
  FLOE_ASSIGN_OR_RAISE(field->value,
                       in_.GetRawView(static_cast<uint64_t>(field->type.fixed_width())));
  return true;
}

bool UndeclaredFitsColumn(const DataType& from, const DataType& to) {
  if (from == to) return true;
  if (from.id == TypeId::kInt32 && to.id == TypeId::kInt64) return true;
  if (from.id == TypeId::kFloat && to.id == TypeId::kDouble) return true;
  return from.id == TypeId::kDecimal && to.id == TypeId::kDecimal && from.scale == to.scale &&
         from.precision < to.precision;
}

void AppendUndeclared(const UndeclaredField& field, Column* column) {
  if (field.is_null) return column->AppendNull();
  const DataType& to = column->type();
  if (to.is_variable_width()) return column->AppendBytes(field.value);
  if (field.type.id == TypeId::kInt32 && to.id == TypeId::kInt64) {
    return column->Append<int64_t>(Load<int32_t>(field.value));
  }
  if (field.type.id == TypeId::kFloat && to.id == TypeId::kDouble) {
    return column->Append<double>(Load<float>(field.value));
  }
  switch (field.value.size()) {
    case 1:
      return column->Append<uint8_t>(field.value[0] != 0 ? 1 : 0);
    case 4:
      return column->Append<int32_t>(Load<int32_t>(field.value));
    case 8:
      return column->Append<int64_t>(Load<int64_t>(field.value));
    default:
      return column->Append<Int128>(Load<Int128>(field.value));
  }
}

}  // namespace floe
