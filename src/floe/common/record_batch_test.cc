#include "floe/common/record_batch.h"

#include <gtest/gtest.h>

namespace floe {
namespace {

std::shared_ptr<const BatchSchema> TwoColumns() {
  auto s = std::make_shared<BatchSchema>();
  s->fields = {{"id", DataType::Int64(), false, 1}, {"name", DataType::String(), true, 2}};
  return s;
}

TEST(Column, NullsAfterValuesKeepEarlierRowsValid) {
  Column c(DataType::Int32());
  c.Append<int32_t>(7);
  c.AppendNull();
  c.Append<int32_t>(9);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_FALSE(c.IsNull(0));
  EXPECT_TRUE(c.IsNull(1));
  EXPECT_FALSE(c.IsNull(2));
  EXPECT_EQ(c.Get<int32_t>(2), 9);
  EXPECT_EQ(c.null_count(), 1u);
}

TEST(Column, StringsKeepEmptyAndNullApart) {
  Column c(DataType::String());
  c.AppendBytes("");
  c.AppendNull();
  c.AppendBytes("abc");
  EXPECT_FALSE(c.IsNull(0));
  EXPECT_EQ(c.GetBytes(0), "");
  EXPECT_TRUE(c.IsNull(1));
  EXPECT_EQ(c.GetBytes(2), "abc");
}

TEST(Column, TruncateDropsRowsNullsAndBytes) {
  Column c(DataType::String());
  c.AppendBytes("a");
  c.AppendNull();
  c.AppendBytes("bc");
  c.Truncate(5);  // beyond the end: no-op
  EXPECT_EQ(c.size(), 3u);
  c.Truncate(2);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c.null_count(), 1u);
  EXPECT_EQ(c.bytes(), "a");
  EXPECT_EQ(c.offsets().size(), 3u);
  c.Truncate(1);  // the last null goes: the mask is empty again
  EXPECT_EQ(c.null_count(), 0u);
  EXPECT_TRUE(c.null_mask().empty());
  c.AppendBytes("d");
  EXPECT_EQ(c.GetBytes(1), "d");

  Column n(DataType::Int64());
  for (int64_t i = 0; i < 1000; ++i) n.Append<int64_t>(i);
  n.AppendNull();
  Column copy = n;  // copies hold the values, not the spare capacity
  n.Truncate(0);
  EXPECT_EQ(n.size(), 0u);
  EXPECT_EQ(n.null_count(), 0u);
  n.Append<int64_t>(42);
  EXPECT_EQ(n.Get<int64_t>(0), 42);
  ASSERT_EQ(copy.size(), 1001u);
  EXPECT_EQ(copy.values<int64_t>()[999], 999);
  EXPECT_TRUE(copy.IsNull(1000));
  EXPECT_EQ(copy.Get<int64_t>(1000), 0);
}

TEST(RecordBatch, TruncateKeepsColumnsAligned) {
  RecordBatch b(TwoColumns());
  b.mutable_column(0).Append<int64_t>(1);
  b.mutable_column(1).AppendBytes("x");
  b.mutable_column(0).Append<int64_t>(2);  // a half-appended row
  b.Truncate(1);
  EXPECT_EQ(b.num_rows(), 1u);
  EXPECT_TRUE(b.Validate().ok());
  b.Truncate(0);
  EXPECT_EQ(b.num_rows(), 0u);
  EXPECT_EQ(b.column(1).bytes(), "");
}

TEST(RecordBatch, TakeReordersRows) {
  RecordBatch b(TwoColumns());
  for (int i = 0; i < 3; ++i) {
    b.mutable_column(0).Append<int64_t>(i);
    b.mutable_column(1).AppendBytes("n" + std::to_string(i));
  }
  ASSERT_TRUE(b.Validate().ok());
  RecordBatch t = b.Take({2, 0});
  ASSERT_EQ(t.num_rows(), 2u);
  EXPECT_EQ(t.column(0).Get<int64_t>(0), 2);
  EXPECT_EQ(t.column(1).GetBytes(1), "n0");
}

// A slice equals taking its rows one by one, with and without nulls, into an empty column and
// after rows already held (offsets rebased, the null mask kept aligned).
TEST(RecordBatch, SliceEqualsTakingItsRows) {
  for (bool with_nulls : {false, true}) {
    RecordBatch b(TwoColumns());
    for (int i = 0; i < 6; ++i) {
      b.mutable_column(0).Append<int64_t>(i * 10);
      if (with_nulls && i == 3) {
        b.mutable_column(1).AppendNull();
      } else {
        b.mutable_column(1).AppendBytes(std::string(static_cast<size_t>(i), 'a' + i));
      }
    }
    for (size_t begin = 0; begin <= 6; ++begin) {
      for (size_t end = begin; end <= 6; ++end) {
        std::vector<uint32_t> rows;
        for (size_t r = begin; r < end; ++r) rows.push_back(static_cast<uint32_t>(r));
        RecordBatch sliced = b.Slice(begin, end);
        EXPECT_TRUE(sliced.Equals(b.Take(rows))) << begin << ".." << end << " nulls " << with_nulls;
        EXPECT_TRUE(sliced.Validate().ok());
      }
    }
    Column held(DataType::String());
    held.AppendNull();
    held.AppendBytes("xy");
    held.AppendRange(b.column(1), 1, 5);
    ASSERT_EQ(held.size(), 6u);
    EXPECT_TRUE(held.IsNull(0));
    EXPECT_EQ(held.GetBytes(1), "xy");
    EXPECT_EQ(held.GetBytes(2), "b");
    EXPECT_EQ(held.GetBytes(3), "cc");
    EXPECT_EQ(held.IsNull(4), with_nulls);
    EXPECT_EQ(held.GetBytes(5), "eeee");
    EXPECT_EQ(held.null_count(), with_nulls ? 2u : 1u);
  }
}

TEST(RecordBatch, ValidateRejectsNullInRequiredColumn) {
  RecordBatch b(TwoColumns());
  b.mutable_column(0).AppendNull();
  b.mutable_column(1).AppendBytes("x");
  Status st = b.Validate();
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("'id'"), std::string::npos);
}

}  // namespace
}  // namespace floe
