#include "floe/runtime/row_kind.h"

namespace floe::runtime {

std::shared_ptr<const BatchSchema> WithRowKindColumn(const BatchSchema& columns) {
  auto schema = std::make_shared<BatchSchema>(columns);
  schema->fields.push_back(Field{kRowKindColumn, DataType::String(), false, 0});
  return schema;
}

int RowKindIndex(const BatchSchema& schema) { return schema.FieldIndex(kRowKindColumn); }

}  // namespace floe::runtime
