#include "floe/sql/exec/expand_operator.h"

#include <gtest/gtest.h>

#include "floe/connectors/connectors_test_util.h"

namespace floe::sql {
namespace {

// Every row goes out once per grouping set (a set listed twice, twice): the keys the set leaves
// out NULL (and nullable in the schema), the set's index last; the other columns as they came.
TEST(ExpandOperator, EmitsEachRowOncePerGroupingSetWithTheOtherKeysNull) {
  auto schema = std::make_shared<BatchSchema>();
  schema->fields = {Field{"a", DataType::Int64(), false, 1},
                    Field{"b", DataType::String(), false, 2},
                    Field{"v", DataType::Int64(), true, 3}};
  Column a(DataType::Int64()), b(DataType::String()), v(DataType::Int64());
  for (int64_t i = 0; i < 2; ++i) {
    a.Append<int64_t>(i);
    b.AppendBytes(i == 0 ? "x" : "y");
    v.Append<int64_t>(10 + i);
  }
  ExpandSpec spec{schema, {0, 1}, {{true, true}, {true, false}, {true, false}}};
  const std::shared_ptr<const BatchSchema> output = ExpandOutput(spec);
  ASSERT_EQ(output->fields.size(), 4u);
  EXPECT_FALSE(output->fields[0].nullable);  // in every set
  EXPECT_TRUE(output->fields[1].nullable);
  EXPECT_EQ(output->fields[3].name, "$e");

  ExpandOperator expand(spec);
  connectors::testing::CollectingCollector out;
  ASSERT_TRUE(expand.ProcessBatch(RecordBatch(schema, {a, b, v}), 0, out).ok());
  ASSERT_EQ(out.batches.size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    const RecordBatch& batch = out.batches[s];
    ASSERT_EQ(batch.num_rows(), 2u);
    EXPECT_EQ(batch.column(0).null_count(), 0u);
    EXPECT_EQ(batch.column(1).null_count(), s == 0 ? 0u : 2u);
    EXPECT_EQ(batch.column(2).Get<int64_t>(1), 11);
    EXPECT_EQ(batch.column(3).Get<int64_t>(0), static_cast<int64_t>(s));
  }
}

}  // namespace
}  // namespace floe::sql
