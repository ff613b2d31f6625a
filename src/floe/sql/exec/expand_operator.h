#pragma once

#include <memory>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/runtime/operator.h"

namespace floe::sql {

// GROUPING SETS, CUBE and ROLLUP before the aggregate (Flink's Expand): every row goes out once
// per grouping set, the key columns the set leaves out NULL, with the set's index appended as a
// BIGINT column, which the aggregate groups by too.
struct ExpandSpec {
  std::shared_ptr<const BatchSchema> input;
  std::vector<int> key_columns;                  // into input
  std::vector<std::vector<bool>> grouping_sets;  // per set, per key: grouped
};

// `spec.input` with the keys that some set leaves out nullable and the set's index column,
// kGroupingSetColumn, appended.
std::shared_ptr<const BatchSchema> ExpandOutput(const ExpandSpec& spec);

class ExpandOperator final : public runtime::Operator {
 public:
  explicit ExpandOperator(ExpandSpec spec);
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;

 private:
  ExpandSpec spec_;
  std::shared_ptr<const BatchSchema> output_;
};

}  // namespace floe::sql
