#include "floe/sql/exec/window_table_function_operator.h"

#include <string>
#include <utility>
#include <vector>

#include "floe/sql/exec/window_aggregate_operator.h"

namespace floe::sql {

std::shared_ptr<const BatchSchema> WindowTableFunctionOutput(const WindowTableFunctionSpec& spec) {
  auto schema = std::make_shared<BatchSchema>(*spec.input);
  const DataType time = spec.input->fields[static_cast<size_t>(spec.window.time_column)].type;
  schema->fields.push_back(Field{std::string(kWindowStart), DataType::Timestamp(), false, 0, 3});
  schema->fields.push_back(Field{std::string(kWindowEnd), DataType::Timestamp(), false, 0, 3});
  schema->fields.push_back(Field{std::string(kWindowTime), time, false, 0, 3});
  return schema;
}

WindowTableFunctionOperator::WindowTableFunctionOperator(WindowTableFunctionSpec spec)
    : spec_(std::move(spec)), output_(WindowTableFunctionOutput(spec_)) {}

Status WindowTableFunctionOperator::ProcessBatch(const RecordBatch& batch, int,
                                                 runtime::Collector& out) {
  const Column& time = batch.column(static_cast<size_t>(spec_.window.time_column));
  const WindowClock clock(spec_.zone);
  std::vector<uint32_t> rows;
  Column starts(DataType::Timestamp()), ends(DataType::Timestamp()), times(time.type());
  for (size_t row = 0; row < batch.num_rows(); ++row) {
    if (time.IsNull(row)) continue;
    for (const auto& [start, end] : WindowsOf(spec_.window, clock.Local(time.Get<int64_t>(row)))) {
      rows.push_back(static_cast<uint32_t>(row));
      starts.Append<int64_t>(start);
      ends.Append<int64_t>(end);
      times.Append<int64_t>(clock.WindowTime(end));
    }
  }
  if (rows.empty()) return Status::OK();
  RecordBatch windowed = batch.Take(rows);
  std::vector<Column> columns = windowed.columns();
  columns.push_back(std::move(starts));
  columns.push_back(std::move(ends));
  columns.push_back(std::move(times));
  return out.Emit(RecordBatch(output_, std::move(columns)));
}

}  // namespace floe::sql
