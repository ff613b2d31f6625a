#include "floe/runtime/partitioner.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <optional>
#include <set>

#include "floe/runtime/job_graph.h"
#include "floe/runtime/test_util.h"

namespace floe::runtime {
namespace {

RecordBatch KeyBatch(const std::vector<std::optional<std::string>>& keys) {
  auto schema = std::make_shared<BatchSchema>();
  schema->fields.push_back(Field{"k", DataType::String(), true, 0});
  RecordBatch b(schema);
  for (const auto& k : keys) {
    if (k) {
      b.mutable_column(0).AppendBytes(*k);
    } else {
      b.mutable_column(0).AppendNull();
    }
  }
  return b;
}

TEST(HashKeyRow, EqualKeysHashEquallyAcrossBatches) {
  RecordBatch a = KeyBatch({"alice", "bob", std::nullopt});
  RecordBatch b = KeyBatch({std::nullopt, "carol", "alice", "bob"});
  EXPECT_EQ(HashKeyRow(a, {0}, 0), HashKeyRow(b, {0}, 2));
  EXPECT_EQ(HashKeyRow(a, {0}, 1), HashKeyRow(b, {0}, 3));
  EXPECT_EQ(HashKeyRow(a, {0}, 2), HashKeyRow(b, {0}, 0));  // nulls hash consistently
  EXPECT_NE(HashKeyRow(a, {0}, 0), HashKeyRow(a, {0}, 1));
  // A null is not the empty string.
  RecordBatch e = KeyBatch({""});
  EXPECT_NE(HashKeyRow(e, {0}, 0), HashKeyRow(a, {0}, 2));
}

TEST(HashKeyRow, IsPinnedAcrossReleases) {
  // Keyed state will be stored per key group: changing these values breaks restores.
  RecordBatch a = KeyBatch({"alice", std::nullopt});
  RecordBatch n = testing::Int64Batch({42});
  EXPECT_EQ(HashKeyRow(a, {0}, 0), 481244919263575801ULL);
  EXPECT_EQ(HashKeyRow(a, {0}, 1), 7633836805041741590ULL);
  EXPECT_EQ(HashKeyRow(n, {0}, 0), 10695215759337456284ULL);
}

TEST(HashKeyValue, NegativeZeroAndNaNAreCanonical) {
  Column c(DataType::Double());
  c.Append<double>(0.0);
  c.Append<double>(-0.0);
  c.Append<double>(std::numeric_limits<double>::quiet_NaN());
  c.Append<double>(-std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(HashKeyValue(c, 0), HashKeyValue(c, 1));
  EXPECT_EQ(HashKeyValue(c, 2), HashKeyValue(c, 3));
}

TEST(KeyGroups, RangesTileTheKeyGroupsAndInvertTheMapping) {
  for (uint32_t p : {1u, 3u, 7u, 128u}) {
    uint32_t next = 0;
    for (uint32_t s = 0; s < p; ++s) {
      KeyGroupRange r = KeyGroupRangeForSubtask(s, 128, p);
      EXPECT_EQ(r.start, next);
      for (uint32_t g = r.start; g < r.end; ++g) EXPECT_EQ(SubtaskForKeyGroup(g, 128, p), s);
      next = r.end;
    }
    EXPECT_EQ(next, 128u);
  }
}

TEST(HashPartitionRows, SplitsRowsByKeyAndKeepsEveryRow) {
  RecordBatch b = KeyBatch({"a", "b", "c", "a", std::nullopt, "b", std::nullopt});
  auto parts = HashPartitionRows(b, {0}, 128, 3);
  ASSERT_EQ(parts.size(), 3u);
  size_t total = 0;
  std::map<std::string, std::set<size_t>> where;
  for (size_t t = 0; t < 3; ++t) {
    total += parts[t].size();
    for (uint32_t r : parts[t]) {
      std::string key = b.column(0).IsNull(r) ? "<null>" : std::string(b.column(0).GetBytes(r));
      where[key].insert(t);
    }
  }
  EXPECT_EQ(total, 7u);
  for (const auto& [k, targets] : where) EXPECT_EQ(targets.size(), 1u) << k;
}

TEST(ResolveKeyColumns, MissingColumnIsInvalidArgument) {
  RecordBatch b = KeyBatch({"a"});
  auto r = ResolveKeyColumns(*b.schema(), {"nope"});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument());
  EXPECT_NE(r.status().message().find("nope"), std::string::npos);
}

Result<std::unique_ptr<Operator>> NoOp(const TaskInfo&) {
  return Status::NotImplemented("not instantiated in these tests");
}
Result<std::unique_ptr<SourceOperator>> NoSource(const TaskInfo&) {
  return Status::NotImplemented("not instantiated in these tests");
}

TEST(JobGraph, ValidatesShapeAndNumbersInputs) {
  JobGraph g;
  VertexId a = g.AddSource("a", 2, NoSource);
  VertexId b = g.AddSource("b", 1, NoSource);
  VertexId j = g.AddOperator("join", 2, NoOp);
  g.Connect(a, j, Partitioning::Forward());
  g.Connect(b, j, Partitioning::Hash({"k"}));
  EXPECT_TRUE(g.Validate().ok());
  auto inputs = g.InputsOf(j);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].input, 0);
  EXPECT_EQ(inputs[1].input, 1);
  EXPECT_EQ(g.TaskNames(), (std::vector<std::string>{"a/0", "a/1", "b/0", "join/0", "join/1"}));
}

TEST(JobGraph, RejectsBadGraphs) {
  {
    JobGraph g;
    VertexId a = g.AddSource("a", 2, NoSource);
    VertexId m = g.AddOperator("m", 3, NoOp);
    g.Connect(a, m, Partitioning::Forward());
    Status st = g.Validate();
    EXPECT_TRUE(st.IsInvalidArgument());
    EXPECT_NE(st.message().find("FORWARD"), std::string::npos) << st.ToString();
  }
  {
    JobGraph g;
    g.AddSource("a", 1, NoSource);
    g.AddOperator("a", 1, NoOp);
    EXPECT_TRUE(g.Validate().IsInvalidArgument());  // duplicate name (and no input)
  }
  {
    JobGraph g;
    VertexId a = g.AddSource("a", 1, NoSource);
    VertexId m = g.AddOperator("m", 1, NoOp);
    VertexId n = g.AddOperator("n", 1, NoOp);
    g.Connect(a, m, Partitioning::Forward());
    g.Connect(m, n, Partitioning::Forward());
    g.Connect(n, m, Partitioning::Forward());
    Status st = g.Validate();
    EXPECT_NE(st.message().find("cycle"), std::string::npos) << st.ToString();
  }
  {
    JobGraph g;
    VertexId a = g.AddSource("a", 1, NoSource);
    VertexId m = g.AddOperator("m", 1, NoOp);
    g.Connect(a, m, Partitioning::Hash({}));
    EXPECT_TRUE(g.Validate().IsInvalidArgument());
  }
  {
    JobGraph g;
    g.AddSource("a", 0, NoSource);
    EXPECT_TRUE(g.Validate().IsInvalidArgument());
  }
}

}  // namespace
}  // namespace floe::runtime
