#include "floe/connectors/print/print_sink.h"

#include <gtest/gtest.h>

#include "floe/connectors/connectors_test_util.h"

namespace floe::connectors {
namespace {

using testing::Table;

RecordBatch TwoRows(const TableDescriptor& table) {
  RecordBatch b(table.schema);
  b.mutable_column(0).Append<int64_t>(1);
  b.mutable_column(1).AppendBytes("a");
  b.mutable_column(0).Append<int64_t>(2);
  b.mutable_column(1).AppendNull();
  return b;
}

TEST(PrintSink, WritesInsertRowsAsJsonLines) {
  TableDescriptor table = Table("out", "seq BIGINT, name STRING", {{"connector", "print"}});
  PrintSinkConfig config = MakePrintSinkConfig(table).ValueOrDie();
  std::string written;
  int writes = 0;
  PrintSink sink(config, [&](std::string_view text) {
    written += text;
    ++writes;
    return Status::OK();
  });
  ASSERT_TRUE(sink.Open(testing::Context("sink-out")).ok());
  testing::CollectingCollector out;
  ASSERT_TRUE(sink.ProcessBatch(TwoRows(table), 0, out).ok());
  EXPECT_EQ(written, "+I {\"seq\":1,\"name\":\"a\"}\n+I {\"seq\":2,\"name\":null}\n");
  EXPECT_EQ(writes, 1);  // one write per batch
  EXPECT_TRUE(out.batches.empty());
}

TEST(PrintSink, ShowsEachChangelogRowsKindAndHidesTheKindColumn) {
  TableDescriptor table = Table("out", "seq BIGINT, name STRING",
                                {{"connector", "print"}, {"print-identifier", "cdc"}});
  PrintSinkConfig config = MakePrintSinkConfig(table).ValueOrDie();
  std::string written;
  PrintSink sink(config, [&](std::string_view text) {
    written += text;
    return Status::OK();
  });
  ASSERT_TRUE(sink.Open(testing::Context("sink-out")).ok());
  RecordBatch rows = TwoRows(table);
  std::vector<Column> columns = rows.columns();
  Column kinds(DataType::String());
  kinds.AppendBytes("-U");
  kinds.AppendBytes("-D");
  columns.push_back(std::move(kinds));
  RecordBatch changelog(runtime::WithRowKindColumn(*table.schema), std::move(columns));
  testing::CollectingCollector out;
  ASSERT_TRUE(sink.ProcessBatch(changelog, 0, out).ok());
  EXPECT_EQ(written, "cdc> -U {\"seq\":1,\"name\":\"a\"}\ncdc> -D {\"seq\":2,\"name\":null}\n");
}

TEST(PrintSink, PrefixesIdentifierAndSubtaskLikeFlink) {
  TableDescriptor table = Table("out", "seq BIGINT, name STRING",
                                {{"connector", "print"}, {"print-identifier", "lake"}});
  PrintSinkConfig config = MakePrintSinkConfig(table).ValueOrDie();
  std::string single, parallel;
  PrintSink a(config, [&](std::string_view t) {
    single += t;
    return Status::OK();
  });
  PrintSink b(config, [&](std::string_view t) {
    parallel += t;
    return Status::OK();
  });
  ASSERT_TRUE(a.Open(testing::Context("sink-out")).ok());
  ASSERT_TRUE(b.Open(testing::Context("sink-out", 1, 2)).ok());
  testing::CollectingCollector out;
  ASSERT_TRUE(a.ProcessBatch(TwoRows(table), 0, out).ok());
  ASSERT_TRUE(b.ProcessBatch(TwoRows(table), 0, out).ok());
  EXPECT_EQ(single.substr(0, 12), "lake> +I {\"s");
  EXPECT_EQ(parallel.substr(0, 14), "lake:2> +I {\"s");
}

TEST(PrintSink, RefusesUnknownOptions) {
  TableDescriptor table =
      Table("out", "seq BIGINT", {{"connector", "print"}, {"print-identifer", "x"}});
  Result<PrintSinkConfig> r = MakePrintSinkConfig(table);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'print-identifier'"), std::string::npos);
  runtime::JobGraph graph;
  TableDescriptor bh =
      Table("bh", "seq BIGINT", {{"connector", "blackhole"}, {"sink.parallelism", "0"}});
  runtime::VertexId src = graph.AddSource("s", 1, nullptr);
  EXPECT_FALSE(AddBlackholeSink(graph, src, "sink-bh", bh, 1).ok());
}

TEST(BlackholeSink, DiscardsRows) {
  TableDescriptor table = Table("out", "seq BIGINT, name STRING", {{"connector", "blackhole"}});
  BlackholeSink sink;
  testing::CollectingCollector out;
  ASSERT_TRUE(sink.ProcessBatch(TwoRows(table), 0, out).ok());
  ASSERT_TRUE(sink.OnWatermark(runtime::Watermark(5), out).ok());
  EXPECT_EQ(sink.rows(), 2);
  EXPECT_TRUE(out.batches.empty());
}

TEST(PrintSink, AddsForwardOrRebalanceEdgesBySinkParallelism) {
  runtime::JobGraph graph;
  runtime::VertexId src = graph.AddSource("s", 1, nullptr);
  TableDescriptor one = Table("p1", "seq BIGINT", {{"connector", "print"}});
  TableDescriptor three =
      Table("p3", "seq BIGINT", {{"connector", "print"}, {"sink.parallelism", "3"}});
  ASSERT_TRUE(AddPrintSink(graph, src, "sink-p1", one, 1).ok());
  ASSERT_TRUE(AddPrintSink(graph, src, "sink-p3", three, 1).ok());
  ASSERT_EQ(graph.edges().size(), 2u);
  EXPECT_EQ(graph.edges()[0].partitioning.kind, runtime::PartitionKind::kForward);
  EXPECT_EQ(graph.edges()[1].partitioning.kind, runtime::PartitionKind::kRebalance);
  EXPECT_EQ(graph.vertices()[2].parallelism, 3u);
}

}  // namespace
}  // namespace floe::connectors
