#include "floe/sql/exec/group_aggregate_operator.h"

#include <gtest/gtest.h>

#include "floe/connectors/connectors_test_util.h"

namespace floe::sql {
namespace {

using connectors::testing::CollectingCollector;
using connectors::testing::JsonRows;

std::shared_ptr<const BatchSchema> Schema() {
  auto s = std::make_shared<BatchSchema>();
  s->fields = {Field{"k", DataType::String(), true, 0}, Field{"v", DataType::Int64(), true, 0}};
  return s;
}

RecordBatch Rows(const std::vector<std::pair<std::string, int64_t>>& rows) {
  RecordBatch b(Schema());
  for (const auto& [k, v] : rows) {
    b.mutable_column(0).AppendBytes(k);
    b.mutable_column(1).Append<int64_t>(v);
  }
  return b;
}

GroupAggregateSpec Spec() {
  GroupAggregateSpec spec;
  spec.input = Schema();
  spec.key_columns = {0};
  AggregateCall count;
  count.function = AggregateFunction::kCount;
  count.output_type = DataType::Int64();
  count.nullable = false;
  AggregateCall sum;
  sum.function = AggregateFunction::kSum;
  sum.input_column = 1;
  sum.output_type = DataType::Int64();
  spec.aggregates = {count, sum};
  return spec;
}

std::unique_ptr<GroupAggregateOperator> Open() {
  auto op = GroupAggregateOperator::Make(Spec());
  EXPECT_TRUE(op.ok()) << op.status().ToString();
  runtime::OperatorContext ctx;
  ctx.task.vertex = "aggregate";
  ctx.task.key_groups = runtime::KeyGroupRange{0, 128};
  EXPECT_TRUE((*op)->Open(ctx).ok());
  return std::move(op).value();
}

// A key's first batch inserts (+I); a later batch retracts the old row (-U) and adds the new
// one (+U); several rows of a key in one batch make one change. The state survives a restore.
TEST(GroupAggregate, EmitsAChangelogPerKeyAndBatch) {
  auto op = Open();
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(Rows({{"a", 1}, {"b", 5}, {"a", 2}}), 0, out).ok());
  EXPECT_EQ(JsonRows(out.batches),
            (std::vector<std::string>{R"({"k":"a","agg0":2,"agg1":3,"$row_kind":"+I"}
)",
                                      R"({"k":"b","agg0":1,"agg1":5,"$row_kind":"+I"}
)"}));
  runtime::StateWriter state;
  ASSERT_TRUE(op->OnBarrier(runtime::CheckpointId(1), state, out).ok());
  auto restored = Open();
  runtime::StateReader reader(state.data());
  ASSERT_TRUE(restored->Restore(reader).ok());
  CollectingCollector after;
  ASSERT_TRUE(restored->ProcessBatch(Rows({{"a", 10}}), 0, after).ok());
  EXPECT_EQ(JsonRows(after.batches),
            (std::vector<std::string>{R"({"k":"a","agg0":2,"agg1":3,"$row_kind":"-U"}
)",
                                      R"({"k":"a","agg0":3,"agg1":13,"$row_kind":"+U"}
)"}));
}

}  // namespace
}  // namespace floe::sql
