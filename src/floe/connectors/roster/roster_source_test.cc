#include "floe/connectors/roster/roster_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>

#include "floe/connectors/connectors_test_util.h"
#include "floe/runtime/local_job.h"

namespace floe::connectors {
namespace {

using testing::CollectingCollector;
using testing::Int64Column;
using testing::JsonRows;
using testing::Table;

constexpr const char* kColumns =
    "active BOOLEAN, seq BIGINT NOT NULL, npi STRING NOT NULL, revision INT, city STRING";

TableDescriptor RosterTable(std::map<std::string, std::string> options,
                            const char* columns = kColumns) {
  options["connector"] = "roster";
  return Table("roster", columns, std::move(options));
}

std::unique_ptr<RosterSource> MakeSource(const TableDescriptor& table,
                                         std::shared_ptr<runtime::SourcePositionBoard> board,
                                         const runtime::Clock* clock = nullptr) {
  Result<RosterSourceConfig> config = MakeRosterSourceConfig(table);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  auto source = std::make_unique<RosterSource>(*config, std::move(board), clock);
  EXPECT_TRUE(source->Open(testing::Context("source-roster")).ok());
  return source;
}

// Polls until kEnd (or `max_polls`); returns the last status.
runtime::SourceStatus PollAll(RosterSource& source, CollectingCollector& out,
                              int max_polls = 1 << 20) {
  runtime::SourceStatus st = runtime::SourceStatus::kMore;
  for (int i = 0; i < max_polls && st != runtime::SourceStatus::kEnd; ++i) {
    Result<runtime::SourceStatus> r = source.Poll(out);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    st = *r;
  }
  return st;
}

// The declared columns of the whole feed, straight from the generator.
std::vector<std::string> ExpectedRows(const TableDescriptor& table) {
  RosterSourceConfig config = MakeRosterSourceConfig(table).ValueOrDie();
  RosterGenerator gen(config.roster);
  RecordBatch all = gen.Next(static_cast<size_t>(config.roster.events));
  std::vector<Column> cols;
  for (int i : config.projection) cols.push_back(all.column(static_cast<size_t>(i)));
  return JsonRows({RecordBatch(config.schema, std::move(cols))});
}

TEST(RosterGenerator, SkipToMatchesProducingThePrefix) {
  RosterOptions o;
  o.events = 3000;
  o.providers = 50;
  RosterGenerator a(o), b(o);
  (void)a.Next(1234);
  b.SkipTo(1235);
  EXPECT_EQ(b.next_seq(), 1235);
  EXPECT_TRUE(a.Next(5000).Equals(b.Next(5000)));
  RosterGenerator c(o);
  c.SkipTo(1 << 20);
  EXPECT_TRUE(c.done());
  EXPECT_EQ(c.Next(10).num_rows(), 0u);
}

TEST(RosterSource, ProjectsDeclaredColumnsByNameInDeclaredOrder) {
  TableDescriptor table = RosterTable({{"events", "2500"}, {"providers", "100"}});
  auto source = MakeSource(table, nullptr);
  CollectingCollector out;
  EXPECT_EQ(PollAll(*source, out), runtime::SourceStatus::kEnd);
  ASSERT_GE(out.batches.size(), 3u);  // 1000-row batches
  EXPECT_EQ(out.batches[0].num_rows(), 1000u);
  EXPECT_EQ(*out.batches[0].schema(), *table.schema);
  EXPECT_EQ(JsonRows(out.batches), ExpectedRows(table));
  std::vector<int64_t> seqs = Int64Column(out.batches, 1);
  std::vector<int64_t> want(2500);
  std::iota(want.begin(), want.end(), 1);
  EXPECT_EQ(seqs, want);
}

TEST(RosterSource, RefusesAnUnknownColumnNamingIt) {
  Result<RosterSourceConfig> r =
      MakeRosterSourceConfig(RosterTable({}, "seq BIGINT NOT NULL, colour STRING"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'colour' is not a roster column"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("event_time"), std::string::npos);
}

TEST(RosterSource, RefusesATypeMismatchAndANotNullTheFeedCannotKeep) {
  Result<RosterSourceConfig> r = MakeRosterSourceConfig(RosterTable({}, "revision BIGINT"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'revision' is declared BIGINT but the roster feed "
                                      "produces INT"),
            std::string::npos)
      << r.status().message();
  r = MakeRosterSourceConfig(RosterTable({}, "city STRING NOT NULL"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'city'"), std::string::npos);
}

TEST(RosterSource, RefusesUnknownAndMalformedOptions) {
  Result<RosterSourceConfig> r = MakeRosterSourceConfig(RosterTable({{"sede", "1"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unsupported option 'sede'"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("'rows-per-second'"), std::string::npos);
  r = MakeRosterSourceConfig(RosterTable({{"events", "12k"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("option 'events' must be an integer, got '12k'"),
            std::string::npos)
      << r.status().message();
  r = MakeRosterSourceConfig(RosterTable({{"providers", "0"}}));
  ASSERT_FALSE(r.ok());
}

TEST(RosterSource, RestoredAtACheckpointContinuesWithTheSameSeqs) {
  TableDescriptor table = RosterTable({{"events", "3500"}, {"providers", "70"}, {"seed", "7"}});
  std::vector<std::string> expected = ExpectedRows(table);
  for (int polls_before : {0, 1, 2, 4}) {
    auto board = std::make_shared<runtime::SourcePositionBoard>();
    auto first = MakeSource(table, board);
    CollectingCollector out;
    PollAll(*first, out, polls_before);
    runtime::StateWriter state;
    ASSERT_TRUE(first->SnapshotPosition(runtime::CheckpointId(5), state).ok());
    int64_t next = polls_before == 4 ? 3501 : polls_before * 1000 + 1;
    EXPECT_EQ(board->PositionsAt(runtime::CheckpointId(5)),
              (std::map<std::string, std::string>{
                  {"source-roster/0", "{\"next_seq\":" + std::to_string(next) + "}"}}));
    // A fresh instance (a restarted worker) restores the blob and produces the rest.
    auto second = MakeSource(table, board);
    std::string blob = state.Finish();
    runtime::StateReader reader(blob);
    ASSERT_TRUE(second->Restore(reader).ok());
    EXPECT_EQ(PollAll(*second, out), runtime::SourceStatus::kEnd);
    EXPECT_EQ(JsonRows(out.batches), expected) << "restored after " << polls_before << " polls";
  }
}

TEST(RosterSource, StartOverrideBeatsRestoredState) {
  TableDescriptor table = RosterTable({{"events", "2000"}, {"providers", "70"}});
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  runtime::StateWriter state;
  state.PutU32(1);
  state.PutI64(301);  // the checkpoint says 301...
  board->SetStartOverrides({{"source-roster/0", "{\"next_seq\":1701}"}});  // ...the table 1701
  auto source = MakeSource(table, board);
  std::string blob = state.Finish();
  runtime::StateReader reader(blob);
  ASSERT_TRUE(source->Restore(reader).ok());
  CollectingCollector out;
  PollAll(*source, out);
  std::vector<int64_t> seqs = Int64Column(out.batches, 1);
  ASSERT_EQ(seqs.size(), 300u);
  EXPECT_EQ(seqs.front(), 1701);
  EXPECT_EQ(seqs.back(), 2000);
  std::vector<std::string> expected = ExpectedRows(table);
  EXPECT_EQ(JsonRows(out.batches),
            std::vector<std::string>(expected.begin() + 1700, expected.end()));
}

TEST(RosterSource, StartOverrideAppliesWithoutRestoreAndBeforeTheFirstPoll) {
  TableDescriptor table = RosterTable({{"events", "100"}});
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  board->SetStartOverrides({{"source-roster/0", "{\"next_seq\":91}"}});
  auto source = MakeSource(table, board);
  runtime::StateWriter state;
  ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(1), state).ok());
  EXPECT_EQ(board->PositionsAt(runtime::CheckpointId(1)).at("source-roster/0"),
            "{\"next_seq\":91}");
  board->SetStartOverrides({{"source-roster/0", "garbage"}});
  auto bad = MakeSource(table, board);
  CollectingCollector out;
  EXPECT_FALSE(bad->Poll(out).ok());
}

TEST(RosterSource, ThrottleIdlesUntilRowsAreDue) {
  runtime::FakeClock clock(1000);
  TableDescriptor table = RosterTable({{"events", "100"}, {"rows-per-second", "100"}});
  auto source = MakeSource(table, nullptr, &clock);
  CollectingCollector out;
  // One batch (rows-per-second / 10 = 10 rows) of burst, then nothing until time moves.
  EXPECT_EQ(*source->Poll(out), runtime::SourceStatus::kMore);
  EXPECT_EQ(out.batches.back().num_rows(), 10u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(*source->Poll(out), runtime::SourceStatus::kIdle);
  clock.Advance(std::chrono::milliseconds(50));  // 5 rows due
  EXPECT_EQ(*source->Poll(out), runtime::SourceStatus::kMore);
  EXPECT_EQ(out.batches.back().num_rows(), 5u);
  EXPECT_EQ(*source->Poll(out), runtime::SourceStatus::kIdle);
  clock.Advance(std::chrono::seconds(10));
  int polls = 0;
  while (*source->Poll(out) != runtime::SourceStatus::kEnd) ++polls;
  EXPECT_EQ(polls, 8);  // 85 rows left in batches of 10 (the 9th poll ends)
  EXPECT_EQ(Int64Column(out.batches, 1).size(), 100u);
}

// Counts Polls of a wrapped source.
class CountingSource final : public runtime::SourceOperator {
 public:
  CountingSource(std::unique_ptr<runtime::SourceOperator> inner, std::atomic<int64_t>* polls,
                 std::atomic<int64_t>* idle)
      : inner_(std::move(inner)), polls_(polls), idle_(idle) {}
  Status Open(const runtime::OperatorContext& ctx) override { return inner_->Open(ctx); }
  Status Restore(runtime::StateReader& s) override { return inner_->Restore(s); }
  Result<runtime::SourceStatus> Poll(runtime::Collector& out) override {
    ++*polls_;
    Result<runtime::SourceStatus> r = inner_->Poll(out);
    if (r.ok() && *r == runtime::SourceStatus::kIdle) ++*idle_;
    return r;
  }
  Status SnapshotPosition(runtime::CheckpointId id, runtime::StateWriter& s) override {
    return inner_->SnapshotPosition(id, s);
  }

 private:
  std::unique_ptr<runtime::SourceOperator> inner_;
  std::atomic<int64_t>* polls_;
  std::atomic<int64_t>* idle_;
};

TEST(RosterSource, ThrottledJobBacksOffInsteadOfSpinning) {
  TableDescriptor table = RosterTable({{"events", "300"}, {"rows-per-second", "2000"}});
  JobContext context;
  context.positions = std::make_shared<runtime::SourcePositionBoard>();
  RosterSourceConfig config = MakeRosterSourceConfig(table).ValueOrDie();
  std::atomic<int64_t> polls{0}, idle{0};
  auto collected = std::make_shared<testing::Collected>();
  runtime::JobGraph graph;
  runtime::VertexId src = graph.AddSource(
      "source-roster", 1,
      [&](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::SourceOperator>> {
        return std::unique_ptr<runtime::SourceOperator>(std::make_unique<CountingSource>(
            std::make_unique<RosterSource>(config, context.positions), &polls, &idle));
      });
  runtime::VertexId sink = graph.AddOperator("sink", 1, testing::CollectingSinkFactory(collected));
  graph.Connect(src, sink, runtime::Partitioning::Forward());
  runtime::LocalJobOptions options;
  options.timer_thread = false;
  auto job = runtime::LocalJob::Make(graph, options).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  ASSERT_TRUE(job->Wait().ok());
  EXPECT_EQ(Int64Column(collected->Batches(), 1).size(), 300u);
  // 300 rows at 2000/s take >= ~100 ms; with the executor's 10 ms idle backoff that is a few
  // dozen polls on an idle machine. A busy loop would make hundreds of thousands; the bound only
  // has to separate the two (the machine may be loaded).
  EXPECT_GT(idle.load(), 0);
  EXPECT_LT(polls.load(), 20000);
}

TEST(RosterSource, LocalJobRunsToCompletionAndARestoreFromTheFinalCheckpointEmitsNothing) {
  testing::TempDir dir;
  TableDescriptor table = RosterTable({{"events", "1500"}});
  JobContext context;
  context.positions = std::make_shared<runtime::SourcePositionBoard>();
  auto run = [&](std::optional<std::string> restore_from,
                 std::shared_ptr<testing::Collected> collected) {
    runtime::JobGraph graph;
    Result<runtime::VertexId> src = AddRosterSource(graph, "source-roster", table, context);
    EXPECT_TRUE(src.ok()) << src.status().ToString();
    runtime::VertexId sink =
        graph.AddOperator("sink", 1, testing::CollectingSinkFactory(collected));
    graph.Connect(*src, sink, runtime::Partitioning::Forward());
    runtime::LocalJobOptions options;
    options.timer_thread = false;
    options.checkpointing.dir = dir.path();
    options.restore_from = std::move(restore_from);
    auto job = runtime::LocalJob::Make(graph, options).ValueOrDie();
    EXPECT_TRUE(job->Start().ok());
    EXPECT_TRUE(job->Wait().ok());
    return job->last_completed();
  };
  auto first = std::make_shared<testing::Collected>();
  runtime::CheckpointId final_id = run(std::nullopt, first);
  EXPECT_TRUE(final_id.valid());
  EXPECT_EQ(Int64Column(first->Batches(), 1).size(), 1500u);
  EXPECT_EQ(context.positions->PositionsAt(final_id).at("source-roster/0"), "{\"next_seq\":1501}");
  auto second = std::make_shared<testing::Collected>();
  runtime::CheckpointId second_id = run("latest", second);
  EXPECT_GT(second_id, final_id);
  EXPECT_TRUE(Int64Column(second->Batches(), 1).empty());
}

}  // namespace
}  // namespace floe::connectors
