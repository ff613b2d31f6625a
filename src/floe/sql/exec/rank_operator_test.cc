#include "floe/sql/exec/rank_operator.h"

#include <gtest/gtest.h>

#include <optional>

#include "floe/connectors/connectors_test_util.h"
#include "floe/runtime/keyed_operator_harness.h"

namespace floe::sql {
namespace {

using connectors::testing::CollectingCollector;
using Harness = runtime::testing::KeyedOperatorHarness<RankOperator>;

std::shared_ptr<const BatchSchema> Schema() {
  auto s = std::make_shared<BatchSchema>();
  s->fields = {Field{"k", DataType::String(), true, 0}, Field{"v", DataType::Double(), true, 0},
               Field{"s", DataType::String(), true, 0}};
  return s;
}

RecordBatch Rows(const std::vector<std::pair<std::optional<double>, std::string>>& rows) {
  RecordBatch b(Schema());
  for (const auto& [v, s] : rows) {
    b.mutable_column(0).AppendBytes("p");
    if (v) {
      b.mutable_column(1).Append<double>(*v);
    } else {
      b.mutable_column(1).AppendNull();
    }
    b.mutable_column(2).AppendBytes(s);
  }
  return b;
}

// The changes as "kind v s" lines.
std::string Changes(const CollectingCollector& out) {
  std::string text;
  for (const RecordBatch& b : out.batches) {
    for (size_t r = 0; r < b.num_rows(); ++r) {
      text += std::string(b.column(b.num_columns() - 1).GetBytes(r)) + " " +
              (b.column(1).IsNull(r) ? "null" : std::to_string(b.column(1).Get<double>(r))) + " " +
              std::string(b.column(2).GetBytes(r)) + "\n";
    }
  }
  return text;
}

Harness Open(const RankSpec& spec, const std::string& backend) {
  auto options = RankOperator::KeyedStateOptionsFor(spec);
  EXPECT_TRUE(options.ok());
  options->backend = backend;
  auto op = RankOperator::Make(spec);
  EXPECT_TRUE(op.ok()) << op.status().ToString();
  runtime::OperatorContext ctx;
  ctx.task.vertex = "rank";
  ctx.task.key_groups = runtime::KeyGroupRange{0, 128};
  auto h = Harness::Open(std::move(op).value(), ctx, *options);
  EXPECT_TRUE(h.ok()) << h.status().ToString();
  return std::move(h).value();
}

class Rank : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Backends, Rank, ::testing::Values("hashmap", "rocksdb"),
                         [](const auto& info) { return info.param; });

// Top 3 by a DOUBLE descending (NULLS LAST, Flink's default): NULL ranks last, negatives below
// zero; a row better than the
// last kept pushes it out (-D, +I); a row no better than the last does not enter. The kept rows
// survive a checkpoint.
TEST_P(Rank, KeepsTheBestRowsInSqlOrderAcrossARestore) {
  RankSpec spec;
  spec.input = Schema();
  spec.partition_columns = {0};
  spec.order = {{1, /*descending=*/true, /*nulls_first=*/false}};
  spec.limit = 3;
  auto op = Open(spec, GetParam());
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(Rows({{1.0, "a"}, {std::nullopt, "b"}, {-2.5, "c"}}), 0, out).ok());
  ASSERT_TRUE(op->ProcessBatch(Rows({{10.0, "d"}, {3.0, "e"}}), 0, out).ok());
  EXPECT_EQ(Changes(out),
            "+I 1.000000 a\n+I null b\n+I -2.500000 c\n-D null b\n+I 10.000000 d\n"
            "-D -2.500000 c\n+I 3.000000 e\n");
  auto state = op.Checkpoint(runtime::CheckpointId(1), out);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto restored = Open(spec, GetParam());
  ASSERT_TRUE(restored.Restore(*state).ok());
  CollectingCollector after;
  ASSERT_TRUE(restored->ProcessBatch(Rows({{2.0, "f"}, {1.0, "g"}, {2.0, "h"}}), 0, after).ok());
  EXPECT_EQ(Changes(after), "-D 1.000000 a\n+I 2.000000 f\n");

  // NULLS FIRST puts the NULL row ahead of every value, descending too.
  spec.order = {{1, true, /*nulls_first=*/true}};
  auto nulls_first = Open(spec, GetParam());
  CollectingCollector first;
  ASSERT_TRUE(
      nulls_first
          ->ProcessBatch(Rows({{1.0, "a"}, {2.0, "b"}, {3.0, "c"}, {std::nullopt, "n"}}), 0, first)
          .ok());
  EXPECT_EQ(Changes(first),
            "+I 1.000000 a\n+I 2.000000 b\n+I 3.000000 c\n-D 1.000000 a\n+I null n\n");

  // A restore into another query's rank is refused, naming both.
  spec.limit = 4;
  auto other = Open(spec, GetParam());
  Status st = other.Restore(*state);
  EXPECT_NE(st.message().find("ranks 1..3, this job's query has"), std::string::npos)
      << st.ToString();
}

// Strings order by their bytes, a prefix first; deduplication keeping the last row replaces
// on a tie, keeping the first does not.
TEST_P(Rank, StringsOrderByBytesAndTiesFollowTheDeduplicationsKeep) {
  RankSpec spec;
  spec.input = Schema();
  spec.partition_columns = {0};
  spec.order = {{2, false}};
  spec.limit = 2;
  auto op = Open(spec, GetParam());
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(Rows({{1.0, "b"}, {2.0, "ab"}, {3.0, "a"}}), 0, out).ok());
  EXPECT_EQ(Changes(out), "+I 1.000000 b\n+I 2.000000 ab\n-D 1.000000 b\n+I 3.000000 a\n");

  spec.order = {{1, true, false}};
  spec.limit = 1;
  spec.ties_replace = true;  // keep last
  auto last = Open(spec, GetParam());
  CollectingCollector kept_last;
  ASSERT_TRUE(last->ProcessBatch(Rows({{5.0, "x"}, {5.0, "y"}, {4.0, "z"}}), 0, kept_last).ok());
  EXPECT_EQ(Changes(kept_last), "+I 5.000000 x\n-U 5.000000 x\n+U 5.000000 y\n");
  spec.order = {{1, false}};
  spec.ties_replace = false;  // keep first
  auto first = Open(spec, GetParam());
  CollectingCollector kept_first;
  ASSERT_TRUE(first->ProcessBatch(Rows({{5.0, "x"}, {5.0, "y"}, {4.0, "z"}}), 0, kept_first).ok());
  EXPECT_EQ(Changes(kept_first), "+I 5.000000 x\n-U 5.000000 x\n+U 4.000000 z\n");
}

// Deduplication on a processing-time attribute has no order: rows rank as they arrive. Keeping
// the first emits a partition's first row once, as an insert without a row kind (its output is
// append-only), across a restore too; keeping the last replaces it with every newer row.
TEST_P(Rank, ArrivalOrderKeepsTheFirstRowAsAnInsertOrEachNewerRow) {
  RankSpec spec;
  spec.input = Schema();
  spec.partition_columns = {0};
  spec.insert_only = true;
  ASSERT_EQ(RankOutput(spec)->fields.size(), 3u);  // no row-kind column
  auto first = Open(spec, GetParam());
  CollectingCollector out;
  ASSERT_TRUE(first->ProcessBatch(Rows({{3.0, "x"}, {1.0, "y"}}), 0, out).ok());
  auto state = first.Checkpoint(runtime::CheckpointId(1), out);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto restored = Open(spec, GetParam());
  ASSERT_TRUE(restored.Restore(*state).ok());
  ASSERT_TRUE(restored->ProcessBatch(Rows({{0.5, "z"}}), 0, out).ok());
  ASSERT_EQ(out.batches.size(), 1u);
  ASSERT_EQ(out.batches[0].num_rows(), 1u);
  EXPECT_EQ(out.batches[0].column(2).GetBytes(0), "x");

  spec.insert_only = false;
  spec.ties_replace = true;  // ORDER BY proctime DESC: keep last
  auto last = Open(spec, GetParam());
  CollectingCollector kept_last;
  ASSERT_TRUE(last->ProcessBatch(Rows({{3.0, "x"}, {1.0, "y"}}), 0, kept_last).ok());
  EXPECT_EQ(Changes(kept_last), "+I 3.000000 x\n-U 3.000000 x\n+U 1.000000 y\n");

  spec.limit = 2;  // arrival order keeps one row
  EXPECT_FALSE(RankOperator::Make(spec).ok());
}

// A window rank keeps each window's best rows until the watermark reaches its end - 1 ms, then
// emits them once, as inserts with their rank; the watermark it passed survives a restore, so a
// row for a window that fired before the checkpoint is late and dropped after it.
TEST_P(Rank, AWindowRankFiresEachWindowOnceAndKeepsItsWatermarkAcrossARestore) {
  auto schema = std::make_shared<BatchSchema>();
  schema->fields = {Field{"v", DataType::Int64(), true, 0},
                    Field{"window_start", DataType::Timestamp(), false, 0},
                    Field{"window_end", DataType::Timestamp(), false, 0}};
  const auto rows = [&](const std::vector<std::pair<int64_t, int64_t>>& in) {  // (v, start s)
    RecordBatch b(schema);
    for (const auto& [v, start] : in) {
      b.mutable_column(0).Append<int64_t>(v);
      b.mutable_column(1).Append<int64_t>(start * 1'000'000);
      b.mutable_column(2).Append<int64_t>((start + 5) * 1'000'000);
    }
    return b;
  };
  RankSpec spec;
  spec.input = schema;
  spec.order = {{0, /*descending=*/true, /*nulls_first=*/false}};
  spec.limit = 2;
  spec.output_number = true;
  spec.window_start_column = 1;
  spec.window_end_column = 2;
  const auto fired = [](const CollectingCollector& out) {
    std::string text;
    for (const RecordBatch& b : out.batches) {
      for (size_t r = 0; r < b.num_rows(); ++r) {
        text += std::to_string(b.column(0).Get<int64_t>(r)) + "@" +
                std::to_string(b.column(1).Get<int64_t>(r) / 1'000'000) + "#" +
                std::to_string(b.column(3).Get<int64_t>(r)) + " ";
      }
    }
    return text;
  };
  auto op = Open(spec, GetParam());
  CollectingCollector out;
  ASSERT_TRUE(op->ProcessBatch(rows({{1, 0}, {7, 0}, {3, 0}, {9, 5}}), 0, out).ok());
  EXPECT_TRUE(out.batches.empty());  // nothing before the watermark
  ASSERT_TRUE(op->OnWatermark(runtime::Watermark(4'999'000), out).ok());
  EXPECT_EQ(fired(out), "7@0#1 3@0#2 ");
  auto state = op.Checkpoint(runtime::CheckpointId(1), out);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto restored = Open(spec, GetParam());
  ASSERT_TRUE(restored.Restore(*state).ok());
  CollectingCollector after;
  ASSERT_TRUE(restored->ProcessBatch(rows({{100, 0}, {4, 5}}), 0, after).ok());  // 100: late
  ASSERT_TRUE(restored->OnWatermark(runtime::Watermark(9'999'000), after).ok());
  EXPECT_EQ(fired(after), "9@5#1 4@5#2 ");
  EXPECT_EQ(restored.state().num_entries(), 0u);  // fired windows leave no state
}

}  // namespace
}  // namespace floe::sql
