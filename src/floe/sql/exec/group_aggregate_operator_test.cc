#include "floe/sql/exec/group_aggregate_operator.h"

#include <gtest/gtest.h>

#include <tuple>

#include "floe/connectors/connectors_test_util.h"
#include "floe/runtime/keyed_operator_harness.h"
#include "floe/runtime/row_kind.h"

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

// The keyed state backend every GroupAggregate test runs on (the test's parameter).
std::string g_backend = "hashmap";

class GroupAggregate : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { g_backend = GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Backends, GroupAggregate, ::testing::Values("hashmap", "rocksdb"),
                         [](const auto& info) { return info.param; });

using Harness = runtime::testing::KeyedOperatorHarness<GroupAggregateOperator>;

// The operator on the runtime's keyed state, as the executor runs it.
Harness Open(const GroupAggregateSpec& spec = Spec()) {
  auto options = GroupAggregateOperator::KeyedStateOptionsFor(spec);
  EXPECT_TRUE(options.ok()) << options.status().ToString();
  options->backend = g_backend;
  auto op = GroupAggregateOperator::Make(spec);
  EXPECT_TRUE(op.ok()) << op.status().ToString();
  runtime::OperatorContext ctx;
  ctx.task.vertex = "aggregate";
  ctx.task.key_groups = runtime::KeyGroupRange{0, 128};
  auto h = Harness::Open(std::move(op).value(), ctx, *options);
  EXPECT_TRUE(h.ok()) << h.status().ToString();
  return std::move(h).value();
}

// A key's first batch inserts (+I); a later batch retracts the old row (-U) and adds the new
// one (+U); several rows of a key in one batch make one change. The state survives a restore.
TEST_P(GroupAggregate, EmitsAChangelogPerKeyAndBatch) {
  auto op = Open();
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(Rows({{"a", 1}, {"b", 5}, {"a", 2}}), 0, out).ok());
  EXPECT_EQ(JsonRows(out.batches),
            (std::vector<std::string>{R"({"k":"a","agg0":2,"agg1":3,"$row_kind":"+I"}
)",
                                      R"({"k":"b","agg0":1,"agg1":5,"$row_kind":"+I"}
)"}));
  auto state = op.Checkpoint(runtime::CheckpointId(1), out);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto restored = Open();
  ASSERT_TRUE(restored.Restore(*state).ok());
  CollectingCollector after;
  ASSERT_TRUE(restored->ProcessBatch(Rows({{"a", 10}}), 0, after).ok());
  EXPECT_EQ(JsonRows(after.batches),
            (std::vector<std::string>{R"({"k":"a","agg0":2,"agg1":3,"$row_kind":"-U"}
)",
                                      R"({"k":"a","agg0":3,"agg1":13,"$row_kind":"+U"}
)"}));
}

// An update that changes no value is not emitted, as Flink's GroupAggFunction skips it
// (MAX(v) stays 5 when 3 arrives); with 'table.exec.state.ttl' it is, to refresh the row
// downstream, as there.
TEST_P(GroupAggregate, AnUpdateThatChangesNoValueIsEmittedOnlyWithAStateTtl) {
  GroupAggregateSpec spec = Spec();
  spec.aggregates.erase(spec.aggregates.begin());  // MAX(v) alone
  spec.aggregates[0].function = AggregateFunction::kMax;
  auto op = Open(spec);
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(Rows({{"a", 5}}), 0, out).ok());
  ASSERT_TRUE(op->ProcessBatch(Rows({{"a", 3}}), 0, out).ok());
  ASSERT_TRUE(op->ProcessBatch(Rows({{"a", 7}}), 0, out).ok());
  EXPECT_EQ(JsonRows(out.batches), (std::vector<std::string>{R"({"k":"a","agg0":5,"$row_kind":"+I"}
)",
                                                             R"({"k":"a","agg0":5,"$row_kind":"-U"}
)",
                                                             R"({"k":"a","agg0":7,"$row_kind":"+U"}
)"}));
  spec.job_config["table.exec.state.ttl"] = "1 h";
  auto with_ttl = Open(spec);
  CollectingCollector refreshed;
  ASSERT_TRUE(with_ttl->ProcessBatch(Rows({{"a", 5}}), 0, refreshed).ok());
  ASSERT_TRUE(with_ttl->ProcessBatch(Rows({{"a", 3}}), 0, refreshed).ok());
  EXPECT_EQ(JsonRows(refreshed.batches).size(), 3u);  // +I, then -U/+U of the same 5
}

// A query whose aggregates changed under the same operator name cannot read the old
// accumulators: the restore is refused naming the task and both shapes.
TEST_P(GroupAggregate, StateOfAnotherQueryShapeIsRefusedNamingBoth) {
  auto op = Open();
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(Rows({{"a", 1}}), 0, out).ok());
  auto state = op.Checkpoint(runtime::CheckpointId(1), out);
  ASSERT_TRUE(state.ok());
  GroupAggregateSpec changed = Spec();
  changed.aggregates.pop_back();  // SUM(v) dropped
  auto restored = Open(changed);
  Status st = restored.Restore(*state);
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.message().find("'aggregate/0' was written by a query with keys (k STRING); "
                              "COUNT(*), SUM(v BIGINT), this job's query has keys (k STRING); "
                              "COUNT(*)"),
            std::string::npos)
      << st.message();
}

// Scaled out by Kafka partition: a key's accumulator lives in its claim's key group (the
// partition), and each change carries the row kind, then the claim's split.
TEST_P(GroupAggregate, ScaledOutEachPartitionIsAKeyGroupAndItsChangesCarryItsClaim) {
  GroupAggregateSpec spec = Spec();
  auto input = std::make_shared<BatchSchema>(*Schema());
  input->fields.push_back(Field{runtime::kSourceSplitColumn, DataType::String(), false, 0});
  spec.input = input;
  spec.split_column = 2;
  auto rows = [&](const std::vector<std::tuple<std::string, int64_t, std::string>>& in) {
    RecordBatch b(input);
    for (const auto& [k, v, split] : in) {
      b.mutable_column(0).AppendBytes(k);
      b.mutable_column(1).Append<int64_t>(v);
      b.mutable_column(2).AppendBytes(split);
    }
    return b;
  };
  auto op = Open(spec);
  CollectingCollector out;
  ASSERT_TRUE(op->OnClaimChange(runtime::ClaimChange{"t/3/1", 3, true, ""}, out).ok());
  ASSERT_TRUE(op->OnClaimChange(runtime::ClaimChange{"t/5/2", 5, true, ""}, out).ok());
  ASSERT_TRUE(op->ProcessBatch(rows({{"a", 1, "t/3/1"}, {"b", 2, "t/5/2"}}), 0, out).ok());
  ASSERT_TRUE(op->ProcessBatch(rows({{"a", 10, "t/3/1"}}), 0, out).ok());
  EXPECT_EQ(JsonRows(out.batches),
            (std::vector<std::string>{
                R"({"k":"a","agg0":1,"agg1":1,"$row_kind":"+I","$source_split":"t/3/1"})"
                "\n",
                R"({"k":"b","agg0":1,"agg1":2,"$row_kind":"+I","$source_split":"t/5/2"})"
                "\n",
                R"({"k":"a","agg0":1,"agg1":1,"$row_kind":"-U","$source_split":"t/3/1"})"
                "\n",
                R"({"k":"a","agg0":2,"agg1":11,"$row_kind":"+U","$source_split":"t/3/1"})"
                "\n"}));
  // Dropping partition 3's group forgets "a" only.
  ASSERT_TRUE(op.state().DropKeyGroup(3).ok());
  EXPECT_EQ(op.state().num_entries(), 1u);
}

// Over a changelog, -U and -D rows are taken back from their group (Flink's retracting
// aggregates): MIN falls back to the next value, COUNT(DISTINCT) counts values still held, a
// group whose rows are all taken back is deleted (-D of its last result), and a retraction for a
// group without state is dropped. The counts survive a restore.
TEST_P(GroupAggregate, AChangelogInputRetractsAndDeletesEmptiedGroups) {
  GroupAggregateSpec spec = Spec();
  spec.input = runtime::WithRowKindColumn(*Schema());
  spec.changelog = true;
  AggregateCall min = spec.aggregates[1];
  min.function = AggregateFunction::kMin;
  AggregateCall distinct = spec.aggregates[0];
  distinct.input_column = 1;
  distinct.distinct = true;
  spec.aggregates = {spec.aggregates[0], min, distinct};  // COUNT(*), MIN(v), COUNT(DISTINCT v)
  const auto rows = [](const std::vector<std::tuple<std::string, int64_t, std::string>>& in) {
    RecordBatch b(runtime::WithRowKindColumn(*Schema()));
    for (const auto& [k, v, kind] : in) {
      b.mutable_column(0).AppendBytes(k);
      b.mutable_column(1).Append<int64_t>(v);
      b.mutable_column(2).AppendBytes(kind);
    }
    return b;
  };
  auto op = Open(spec);
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(
                    rows({{"a", 1, "+I"}, {"a", 5, "+I"}, {"a", 5, "+I"}, {"zz", 9, "-D"}}), 0, out)
                  .ok());
  auto state = op.Checkpoint(runtime::CheckpointId(1), out);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto restored = Open(spec);
  ASSERT_TRUE(restored.Restore(*state).ok());
  ASSERT_TRUE(restored->ProcessBatch(rows({{"a", 1, "-U"}, {"a", 5, "-D"}}), 0, out).ok());
  ASSERT_TRUE(restored->ProcessBatch(rows({{"a", 5, "-D"}}), 0, out).ok());
  EXPECT_EQ(JsonRows(out.batches),
            (std::vector<std::string>{R"({"k":"a","agg0":3,"agg1":1,"agg2":2,"$row_kind":"+I"}
)",
                                      R"({"k":"a","agg0":3,"agg1":1,"agg2":2,"$row_kind":"-U"}
)",
                                      R"({"k":"a","agg0":1,"agg1":5,"agg2":1,"$row_kind":"+U"}
)",
                                      R"({"k":"a","agg0":1,"agg1":5,"agg2":1,"$row_kind":"-D"}
)"}));
  EXPECT_EQ(restored.state().num_entries(), 0u);
}

// AVG of DECIMAL(p, s) is DECIMAL(38, max(6, s)): the sum over the count at that scale, HALF_UP,
// as Flink's (1.00, 2.00, 2.00 -> 1.666667).
TEST_P(GroupAggregate, DecimalAverageRoundsHalfUpAtItsOwnScale) {
  auto schema = std::make_shared<BatchSchema>();
  schema->fields = {Field{"k", DataType::String(), true, 0},
                    Field{"d", DataType::Decimal(10, 2), true, 0}};
  GroupAggregateSpec spec = Spec();
  spec.input = schema;
  AggregateCall avg;
  avg.function = AggregateFunction::kAvg;
  avg.input_column = 1;
  avg.output_type = DataType::Decimal(38, 6);
  spec.aggregates = {avg};
  RecordBatch b(schema);
  for (int64_t cents : {100, 200, 200}) {
    b.mutable_column(0).AppendBytes("a");
    b.mutable_column(1).Append<Int128>(cents);
  }
  auto op = Open(spec);
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(b, 0, out).ok());
  ASSERT_EQ(out.batches.size(), 1u);
  EXPECT_EQ(out.batches[0].column(1).Get<Int128>(0), Int128{1666667});
}

}  // namespace
}  // namespace floe::sql
