#include "floe/sql/exec/computed_columns_operator.h"

#include <gtest/gtest.h>

#include "floe/common/civil_time.h"
#include "floe/connectors/connectors_test_util.h"
#include "floe/sql/parser.h"

namespace floe::sql {
namespace {

// The program for `CREATE TABLE t (<columns>)` through the real parser; physical columns are read
// in declared order.
Result<std::shared_ptr<const ComputedColumnsProgram>> Compile(const std::string& columns) {
  FLOE_ASSIGN_OR_RAISE(Script script, ParseScript("CREATE TABLE t (" + columns + ");"));
  const CreateTable& table = script.tables.at(0);
  auto physical = std::make_shared<BatchSchema>();
  auto all = std::make_shared<BatchSchema>();
  for (const ColumnDef& c : table.columns) {
    if (!c.computed) physical->fields.push_back(Field{c.name, c.type, !c.not_null});
    all->fields.push_back(Field{c.name, c.type, !c.not_null});
  }
  ComputedColumnsSpec spec{"t", physical, table.columns, all, nullptr};
  return ComputedColumnsProgram::Compile(spec);
}

int64_t Micros(int y, int mo, int d, int h, int mi, int s, int us = 0) {
  return (DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * kMicrosPerSecond + us;
}

TEST(ComputedColumns, EventTimeFromEpochMillisSecondsAndStrings) {
  auto program = Compile(
      "id BIGINT, epoch_ms BIGINT, epoch_s INT, text STRING, "
      "ts AS TO_TIMESTAMP_LTZ(epoch_ms, 3), ts_s AS TO_TIMESTAMP_LTZ(epoch_s, 0), "
      "parsed AS CAST(text AS TIMESTAMP(3)), local_ts AS CAST(TO_TIMESTAMP_LTZ(epoch_ms, 3) AS "
      "TIMESTAMP(3)), id_text AS CAST(id AS STRING), tag AS 'x'");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto physical = std::make_shared<BatchSchema>();
  physical->fields = {{"id", DataType::Int64()},
                      {"epoch_ms", DataType::Int64()},
                      {"epoch_s", DataType::Int32()},
                      {"text", DataType::String()}};
  RecordBatch in(physical);
  const int64_t t = Micros(2026, 1, 5, 7, 55, 1, 123000);
  in.mutable_column(0).Append<int64_t>(7);
  in.mutable_column(1).Append<int64_t>(t / 1000);
  in.mutable_column(2).Append<int32_t>(static_cast<int32_t>(t / kMicrosPerSecond));
  in.mutable_column(3).AppendBytes("2026-01-05 07:55:01.123456");
  in.mutable_column(0).Append<int64_t>(8);
  in.mutable_column(1).AppendNull();
  in.mutable_column(2).AppendNull();
  in.mutable_column(3).AppendNull();
  Result<RecordBatch> out = (*program)->Apply(in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->num_columns(), 10u);
  EXPECT_EQ(out->column(4).Get<int64_t>(0), t);
  EXPECT_EQ(out->column(4).type(), DataType::TimestampTz());
  EXPECT_EQ(out->column(5).Get<int64_t>(0), t - 123000);
  EXPECT_EQ(out->column(6).Get<int64_t>(0), t);  // truncated to milliseconds
  EXPECT_EQ(out->column(7).Get<int64_t>(0), t);
  EXPECT_EQ(out->column(7).type(), DataType::Timestamp());
  EXPECT_EQ(out->column(8).GetBytes(0), "7");
  EXPECT_EQ(out->column(9).GetBytes(1), "x");
  for (size_t c : {4, 5, 6, 7}) EXPECT_TRUE(out->column(c).IsNull(1)) << c;
  EXPECT_EQ(out->column(0).Get<int64_t>(1), 8);  // physical columns pass through
}

TEST(ComputedColumns, AValueThatDoesNotParseNamesTableColumnAndValue) {
  auto program = Compile("text STRING, n AS CAST(text AS INT)");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto physical = std::make_shared<BatchSchema>();
  physical->fields = {{"text", DataType::String()}};
  RecordBatch in(physical);
  in.mutable_column(0).AppendBytes("12");
  in.mutable_column(0).AppendBytes("twelve");
  Result<RecordBatch> out = (*program)->Apply(in);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "table 't', computed column 'n': CAST(text AS INT) cannot be evaluated for the value "
            "'twelve'");
}

// With a dead-letter table, the rows that fail go down side output 1 with their error and their
// physical columns as JSON; the others go on.
TEST(ComputedColumns, FailedRowsGoToTheSideOutputWhenTheTableHasADeadLetterTable) {
  Result<Script> script = ParseScript("CREATE TABLE t (text STRING, n AS CAST(text AS INT));");
  ASSERT_TRUE(script.ok()) << script.status().ToString();
  const CreateTable& table = script->tables.at(0);
  auto physical = std::make_shared<BatchSchema>();
  physical->fields = {{"text", DataType::String()}};
  auto all = std::make_shared<BatchSchema>();
  all->fields = {{"text", DataType::String()}, {"n", DataType::Int32()}};
  ComputedColumnsSpec spec{"t", physical, table.columns, all, nullptr};
  spec.failed_rows = ComputedColumnsSpec::FailedRows::kSideOutput;
  auto program = ComputedColumnsProgram::Compile(spec);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ComputedColumnsOperator op(*program);
  RecordBatch in(physical);
  for (const char* v : {"12", "twelve", "13", "x"}) in.mutable_column(0).AppendBytes(v);
  connectors::testing::CollectingCollector out;
  ASSERT_TRUE(op.ProcessBatch(in, 0, out).ok());
  ASSERT_EQ(out.batches.size(), 1u);
  ASSERT_EQ(out.batches[0].num_rows(), 2u);
  EXPECT_EQ(out.batches[0].column(1).Get<int32_t>(0), 12);
  EXPECT_EQ(out.batches[0].column(1).Get<int32_t>(1), 13);
  ASSERT_EQ(out.side[1].size(), 1u);
  ASSERT_EQ(out.side[1][0].num_rows(), 2u);
  EXPECT_EQ(out.side[1][0].column(0).GetBytes(0),
            "table 't', computed column 'n': CAST(text AS INT) cannot be evaluated for the value "
            "'twelve'");
  EXPECT_EQ(out.side[1][0].column(1).GetBytes(0), R"({"text":"twelve"})");
  EXPECT_EQ(out.side[1][0].column(1).GetBytes(1), R"({"text":"x"})");
  // Without one, the batch fails as before.
  ComputedColumnsOperator strict(*Compile("text STRING, n AS CAST(text AS INT)"));
  EXPECT_FALSE(strict.ProcessBatch(in, 0, out).ok());
}

// Arithmetic in a computed column, typed as the parser typed the column: an epoch in seconds
// from one in milliseconds (truncated toward zero), a bucket by MOD (the divisor's type, the
// dividend's sign); a division by zero names the table, the column and the value.
TEST(ComputedColumns, ArithmeticIsEvaluatedWithTheTypeTheTableDeclares) {
  auto program =
      Compile("ms BIGINT, n INT, secs AS ms / 1000, bucket AS MOD(ms, n), half AS n * 0.5e0");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto physical = std::make_shared<BatchSchema>();
  physical->fields = {{"ms", DataType::Int64()}, {"n", DataType::Int32()}};
  RecordBatch in(physical);
  in.mutable_column(0).Append<int64_t>(-7501);
  in.mutable_column(1).Append<int32_t>(4);
  in.mutable_column(0).Append<int64_t>(9000);
  in.mutable_column(1).AppendNull();
  Result<RecordBatch> out = (*program)->Apply(in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->column(2).Get<int64_t>(0), -7);        // toward zero
  EXPECT_EQ(out->column(3).type(), DataType::Int32());  // the divisor's type
  EXPECT_EQ(out->column(3).Get<int32_t>(0), -1);        // the dividend's sign
  EXPECT_EQ(out->column(4).Get<double>(0), 2.0);
  EXPECT_TRUE(out->column(3).IsNull(1));
  in = RecordBatch(physical);
  in.mutable_column(0).Append<int64_t>(5);
  in.mutable_column(1).Append<int32_t>(0);
  out = (*program)->Apply(in);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "table 't', computed column 'bucket': MOD(ms, n) cannot be evaluated for the value "
            "5 / 0 (division by zero)");
}

TEST(ComputedColumns, WhatIsNotEvaluatedYetIsRefusedWithItsPosition) {
  auto date = Compile("b BOOLEAN, x AS CAST(b AS STRING)");
  ASSERT_FALSE(date.ok());
  EXPECT_TRUE(date.status().code() == StatusCode::kNotImplemented) << date.status().ToString();
  EXPECT_NE(date.status().message().find("line 1, column "), std::string::npos)
      << date.status().ToString();
  EXPECT_NE(date.status().message().find("CAST from BOOLEAN to STRING"), std::string::npos)
      << date.status().ToString();
}

// A computed column may be a predicate or a CASE; its type is the one the parser derives.
TEST(ComputedColumns, PredicatesAndCaseAreEvaluated) {
  auto program = Compile(
      "a INT, s STRING, big AS a > 3, "
      "size AS CASE WHEN a IS NULL THEN 'none' WHEN a > 3 THEN 'big' ELSE 'small' END, "
      "ratio AS IF(a = 0, NULL, 10 / a), tag AS NULLIF(s, '')");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto physical = std::make_shared<BatchSchema>();
  physical->fields = {{"a", DataType::Int32()}, {"s", DataType::String()}};
  RecordBatch in(physical);
  for (int v : {5, 0, 2}) in.mutable_column(0).Append<int32_t>(v);
  in.mutable_column(0).AppendNull();
  for (const char* v : {"x", "", "y", ""}) in.mutable_column(1).AppendBytes(v);
  Result<RecordBatch> out = (*program)->Apply(in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();  // 10 / 0 is never evaluated
  const Column& big = out->column(2);
  EXPECT_EQ(big.type(), DataType::Boolean());
  EXPECT_EQ(big.Get<uint8_t>(0), 1);
  EXPECT_EQ(big.Get<uint8_t>(1), 0);
  EXPECT_TRUE(big.IsNull(3));
  const Column& size = out->column(3);
  EXPECT_EQ(size.GetBytes(0), "big");
  EXPECT_EQ(size.GetBytes(1), "small");
  EXPECT_EQ(size.GetBytes(3), "none");
  const Column& ratio = out->column(4);
  EXPECT_EQ(ratio.type(), DataType::Int32());
  EXPECT_EQ(ratio.Get<int32_t>(0), 2);
  EXPECT_TRUE(ratio.IsNull(1));
  EXPECT_EQ(ratio.Get<int32_t>(2), 5);
  const Column& tag = out->column(5);
  EXPECT_EQ(tag.GetBytes(0), "x");
  EXPECT_TRUE(tag.IsNull(1));
}

}  // namespace
}  // namespace floe::sql
