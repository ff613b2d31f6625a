#include "floe/runtime/row_kind.h"

namespace floe::runtime {

std::shared_ptr<const BatchSchema> WithRowKindColumn(const BatchSchema& columns) {
  auto schema = std::make_shared<BatchSchema>(columns);
  schema->fields.push_back(Field{kRowKindColumn, DataType::String(), false, 0});
  return schema;
}

int RowKindIndex(const BatchSchema& schema) { return schema.FieldIndex(kRowKindColumn); }

std::shared_ptr<const BatchSchema> WithSourceSplitColumn(const BatchSchema& columns) {
  auto out = std::make_shared<BatchSchema>(columns);
  out->fields.push_back(Field{kSourceSplitColumn, DataType::String(), false, 0});
  return out;
}

std::shared_ptr<const BatchSchema> WithUndeclaredFieldsColumn(const BatchSchema& columns) {
  auto out = std::make_shared<BatchSchema>(columns);
  out->fields.push_back(Field{kUndeclaredFieldsColumn, DataType::String(), true, 0});
  return out;
}

size_t TrailingReservedColumns(const BatchSchema& schema) {
  size_t n = 0;
  while (n < schema.fields.size()) {
    const std::string& name = schema.fields[schema.fields.size() - 1 - n].name;
    if (name != kRowKindColumn && name != kSourceSplitColumn && name != kUndeclaredFieldsColumn) {
      break;
    }
    ++n;
  }
  return n;
}

}  // namespace floe::runtime
