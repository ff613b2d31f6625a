#pragma once

#include <memory>

#include "floe/common/record_batch.h"
#include "floe/common/time_zone.h"
#include "floe/runtime/operator.h"
#include "floe/sql/aggregate_plan.h"

namespace floe::sql {

// A window table-valued function read without an aggregation (TUMBLE, HOP, CUMULATE; Flink's
// WindowTableFunction): each row goes out once per window holding its time, with
// window_start, window_end (TIMESTAMP(3)) and window_time (the time column's type, the end minus
// 1 ms) after its columns. Stateless and at once, as Flink's: a late row is not dropped; a row
// without a time is.
struct WindowTableFunctionSpec {
  std::shared_ptr<const BatchSchema> input;
  WindowSpec window;  // not SESSION
  // The session zone when the time column is TIMESTAMP_LTZ (WindowClock); else null.
  std::shared_ptr<const TimeZone> zone;
};

std::shared_ptr<const BatchSchema> WindowTableFunctionOutput(const WindowTableFunctionSpec& spec);

class WindowTableFunctionOperator final : public runtime::Operator {
 public:
  explicit WindowTableFunctionOperator(WindowTableFunctionSpec spec);
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;

 private:
  WindowTableFunctionSpec spec_;
  std::shared_ptr<const BatchSchema> output_;
};

}  // namespace floe::sql
