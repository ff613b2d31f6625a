#include "floe/sql/exec/expand_operator.h"

#include <string>
#include <utility>

#include "floe/sql/aggregate_plan.h"

namespace floe::sql {

std::shared_ptr<const BatchSchema> ExpandOutput(const ExpandSpec& spec) {
  auto schema = std::make_shared<BatchSchema>(*spec.input);
  for (size_t k = 0; k < spec.key_columns.size(); ++k) {
    for (const std::vector<bool>& set : spec.grouping_sets) {
      if (!set[k]) schema->fields[static_cast<size_t>(spec.key_columns[k])].nullable = true;
    }
  }
  schema->fields.push_back(Field{std::string(kGroupingSetColumn), DataType::Int64(), false, 0});
  return schema;
}

ExpandOperator::ExpandOperator(ExpandSpec spec)
    : spec_(std::move(spec)), output_(ExpandOutput(spec_)) {}

Status ExpandOperator::ProcessBatch(const RecordBatch& batch, int, runtime::Collector& out) {
  const size_t rows = batch.num_rows();
  if (rows == 0) return Status::OK();
  for (size_t s = 0; s < spec_.grouping_sets.size(); ++s) {
    std::vector<Column> columns = batch.columns();
    for (size_t k = 0; k < spec_.key_columns.size(); ++k) {
      if (spec_.grouping_sets[s][k]) continue;
      Column& key = columns[static_cast<size_t>(spec_.key_columns[k])];
      key = Column(key.type());
      key.Reserve(rows);
      for (size_t r = 0; r < rows; ++r) key.AppendNull();
    }
    Column index(DataType::Int64());
    index.Reserve(rows);
    for (size_t r = 0; r < rows; ++r) index.Append<int64_t>(static_cast<int64_t>(s));
    columns.push_back(std::move(index));
    FLOE_RETURN_NOT_OK(out.Emit(RecordBatch(output_, std::move(columns))));
  }
  return Status::OK();
}

}  // namespace floe::sql
