#include "floe/connectors/kafka_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "floe/connectors/connectors_test_util.h"
#include "floe/kafka/mock_cluster.h"

namespace floe::connectors {
namespace {

using testing::CollectingCollector;
using testing::Int64Column;
using testing::Table;

constexpr int kPartitions = 3;
constexpr int kRecords = 300;

// One mock cluster per test; records {"seq":1..kRecords} round-robin over 3 partitions.
class KafkaSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = kafka::MockCluster::Make(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(*cluster);
    ASSERT_TRUE(cluster_->CreateTopic("roster", kPartitions).ok());
    Produce(1, kRecords);
  }

  void Produce(int first, int last, const std::string& bad_at = "") {
    auto producer = kafka::KafkaProducer::Make({{"bootstrap.servers", Bootstrap()}});
    ASSERT_TRUE(producer.ok());
    for (int seq = first; seq <= last; ++seq) {
      std::string v =
          "{\"seq\":" + std::to_string(seq) + ",\"name\":\"n" + std::to_string(seq) + "\"}";
      if (bad_at == std::to_string(seq)) v = "{\"seq\":\"not a number\"}";
      ASSERT_TRUE((*producer)->Produce("roster", seq % kPartitions, v).ok());
    }
    ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(10)).ok());
  }

  std::string Bootstrap() const { return cluster_->bootstrap_servers(); }

  TableDescriptor KTable(std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> options = {{"connector", "kafka"},
                                                  {"topic", "roster"},
                                                  {"format", "json"},
                                                  {"properties.bootstrap.servers", Bootstrap()},
                                                  {"properties.group.id", "g-" + group_},
                                                  {"scan.startup.mode", "earliest-offset"},
                                                  {"scan.bounded.mode", "latest-offset"}};
    for (auto& [k, v] : extra) options[k] = v;
    return Table("roster", "seq BIGINT NOT NULL, name STRING", options);
  }

  std::unique_ptr<KafkaSource> MakeSource(const TableDescriptor& table,
                                          std::shared_ptr<runtime::SourcePositionBoard> board,
                                          size_t batch_rows = 1000) {
    Result<KafkaSourceConfig> config = MakeKafkaSourceConfig(table);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    config->batch_rows = batch_rows;
    auto source = std::make_unique<KafkaSource>(*config, std::move(board));
    Status st = source->Open(testing::Context("source-roster"));
    EXPECT_TRUE(st.ok()) << st.ToString();
    return source;
  }

  // Polls until kEnd or `max_polls` polls that returned records; bounded by a deadline.
  static Status PollAll(KafkaSource& source, CollectingCollector& out, int max_polls = 1 << 20) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int polls = 0;
    while (polls < max_polls) {
      if (std::chrono::steady_clock::now() > deadline) return Status::Unavailable("timed out");
      FLOE_ASSIGN_OR_RAISE(runtime::SourceStatus st, source.Poll(out));
      if (st == runtime::SourceStatus::kEnd) return Status::OK();
      if (st == runtime::SourceStatus::kMore) ++polls;
    }
    return Status::OK();
  }

  static std::vector<int64_t> Sorted(std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return v;
  }
  static std::vector<int64_t> Range(int64_t a, int64_t b) {
    std::vector<int64_t> v;
    for (int64_t i = a; i <= b; ++i) v.push_back(i);
    return v;
  }

  std::string group_ = std::to_string(::testing::UnitTest::GetInstance()->random_seed());
  std::unique_ptr<kafka::MockCluster> cluster_;
};

TEST_F(KafkaSourceTest, BoundedLatestReadsEveryPartitionToTheEndOffsetsSeenAtStart) {
  auto source = MakeSource(KTable(), nullptr);
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out).ok());
  EXPECT_EQ(Sorted(Int64Column(out.batches, 0)), Range(1, kRecords));
  EXPECT_EQ(source->position().next,
            (kafka::PartitionOffsets{{0, kRecords / 3}, {1, kRecords / 3}, {2, kRecords / 3}}));
}

TEST_F(KafkaSourceTest, RestoreResumesAtTheCheckpointedOffsetsWithoutDuplicates) {
  for (int k : {0, 1, 2}) {
    auto board = std::make_shared<runtime::SourcePositionBoard>();
    auto first = MakeSource(KTable(), board, /*batch_rows=*/50);
    CollectingCollector out;
    ASSERT_TRUE(PollAll(*first, out, k).ok());
    runtime::StateWriter state;
    ASSERT_TRUE(first->SnapshotPosition(runtime::CheckpointId(1), state).ok());
    first.reset();
    auto second = MakeSource(KTable(), board);
    std::string blob = state.Finish();
    runtime::StateReader reader(blob);
    ASSERT_TRUE(second->Restore(reader).ok());
    ASSERT_TRUE(PollAll(*second, out).ok());
    EXPECT_EQ(Sorted(Int64Column(out.batches, 0)), Range(1, kRecords)) << "after " << k;
  }
}

TEST_F(KafkaSourceTest, RecordsTopicAndPartitionOffsetsOnTheBoard) {
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  auto source = MakeSource(KTable(), board);
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out).ok());
  runtime::StateWriter state;
  ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(7), state).ok());
  auto at = board->PositionsAt(runtime::CheckpointId(7));
  ASSERT_EQ(at.count("source-roster/0"), 1u) << at.begin()->first;
  EXPECT_EQ(at["source-roster/0"], R"({"partitions":{"0":100,"1":100,"2":100},"topic":"roster"})");
  auto parsed = KafkaPosition::FromJson(at["source-roster/0"]);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->next.at(2), 100);
}

TEST_F(KafkaSourceTest, StartOverrideBeatsRestoredStateAndStartupMode) {
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  board->SetStartOverrides(
      {{"source-roster/0", R"({"topic":"roster","partitions":{"0":90,"1":100,"2":100}})"}});
  auto source = MakeSource(KTable(), board);
  runtime::StateWriter empty_state;
  {
    // A restored state at the beginning loses against the override.
    auto other = MakeSource(KTable(), nullptr);
    ASSERT_TRUE(other->SnapshotPosition(runtime::CheckpointId(1), empty_state).ok());
  }
  std::string blob = empty_state.Finish();
  runtime::StateReader reader(blob);
  ASSERT_TRUE(source->Restore(reader).ok());
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out).ok());
  // Partition 0 holds seq 3, 6, ..., 300; offsets 90..99 are seq 273..300.
  EXPECT_EQ(Sorted(Int64Column(out.batches, 0)),
            (std::vector<int64_t>{273, 276, 279, 282, 285, 288, 291, 294, 297, 300}));
}

TEST_F(KafkaSourceTest, SpecificOffsetsAndLatestOffsetStartingPoints) {
  auto source = MakeSource(
      KTable({{"scan.startup.mode", "specific-offsets"},
              {"scan.startup.specific-offsets", "partition:0,offset:98;partition:1,offset:100"}}),
      nullptr);
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out).ok());
  // Partition 0 from 98 (seq 297, 300), partition 1 nothing, partition 2 (unlisted) from 0.
  EXPECT_EQ(Int64Column(out.batches, 0).size(), 2u + 100u);
  auto latest = MakeSource(KTable({{"scan.startup.mode", "latest-offset"}}), nullptr);
  CollectingCollector none;
  ASSERT_TRUE(PollAll(*latest, none).ok());
  EXPECT_TRUE(Int64Column(none.batches, 0).empty());
}

TEST_F(KafkaSourceTest, GroupOffsetsCommittedAfterCheckpointStartTheNextFreshJob) {
  auto source = MakeSource(KTable(), nullptr, /*batch_rows=*/60);
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out, 1).ok());
  runtime::StateWriter state;
  ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(1), state).ok());
  kafka::PartitionOffsets at_checkpoint = source->position().next;
  ASSERT_TRUE(PollAll(*source, out).ok());  // to the end: the last commit waits for its outcome
  ASSERT_TRUE(source->OnCheckpointComplete(runtime::CheckpointId(1)).ok());
  runtime::StateWriter state2;
  ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(2), state2).ok());
  ASSERT_TRUE(source->OnCheckpointComplete(runtime::CheckpointId(2)).ok());
  source.reset();
  (void)at_checkpoint;

  auto consumer =
      kafka::KafkaConsumer::Make({{"bootstrap.servers", Bootstrap()}, {"group.id", "g-" + group_}});
  ASSERT_TRUE(consumer.ok());
  auto committed = (*consumer)->Committed("roster", {0, 1, 2}, std::chrono::seconds(10));
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(*committed, (kafka::PartitionOffsets{{0, 100}, {1, 100}, {2, 100}}));

  // A fresh job (no state, no table) with group-offsets starts there: nothing but new data.
  Produce(kRecords + 1, kRecords + 30);
  auto fresh = MakeSource(KTable({{"scan.startup.mode", "group-offsets"}}), nullptr);
  CollectingCollector more;
  ASSERT_TRUE(PollAll(*fresh, more).ok());
  EXPECT_EQ(Sorted(Int64Column(more.batches, 0)), Range(kRecords + 1, kRecords + 30));
}

TEST_F(KafkaSourceTest, GroupOffsetsWithoutCommitsNeedsAutoOffsetReset) {
  auto source = MakeSource(KTable({{"scan.startup.mode", "group-offsets"},
                                   {"properties.group.id", "g-empty-" + group_}}),
                           nullptr);
  CollectingCollector out;
  Status st = PollAll(*source, out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("auto.offset.reset"), std::string::npos) << st.ToString();
}

TEST_F(KafkaSourceTest, AMalformedRecordFailsWithTopicPartitionOffsetAndExcerpt) {
  Produce(kRecords + 1, kRecords + 3, /*bad_at=*/std::to_string(kRecords + 2));
  auto source = MakeSource(KTable(), nullptr);
  CollectingCollector out;
  Status st = PollAll(*source, out);
  ASSERT_FALSE(st.ok());
  // seq 302 -> partition 2, the 101st record there: offset 100.
  EXPECT_NE(st.message().find("topic 'roster' partition 2 offset 100"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("not a number"), std::string::npos) << st.ToString();

  auto tolerant = MakeSource(KTable({{"json.ignore-parse-errors", "true"}}), nullptr);
  CollectingCollector all;
  ASSERT_TRUE(PollAll(*tolerant, all).ok());
  EXPECT_EQ(Int64Column(all.batches, 0).size(), static_cast<size_t>(kRecords + 2));
}

TEST_F(KafkaSourceTest, UnboundedReadsWhatIsThereThenIdlesAndPicksUpNewRecords) {
  auto source = MakeSource(KTable({{"scan.bounded.mode", "unbounded"}}), nullptr);
  CollectingCollector out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (Int64Column(out.batches, 0).size() < static_cast<size_t>(kRecords) &&
         std::chrono::steady_clock::now() < deadline) {
    auto st = source->Poll(out);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    ASSERT_NE(*st, runtime::SourceStatus::kEnd);
  }
  auto idle = source->Poll(out);
  ASSERT_TRUE(idle.ok());
  EXPECT_EQ(*idle, runtime::SourceStatus::kIdle);
  Produce(kRecords + 1, kRecords + 9);
  while (Int64Column(out.batches, 0).size() < static_cast<size_t>(kRecords + 9) &&
         std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(source->Poll(out).ok());
  }
  EXPECT_EQ(Sorted(Int64Column(out.batches, 0)), Range(1, kRecords + 9));
}

// The mock answers offsets-by-timestamp with -1 (docs/kafka.md): every partition starts at its
// end there. On a real broker the same call finds the first record at or after the timestamp.
TEST_F(KafkaSourceTest, TimestampStartupOnTheMockStartsAtTheEnd) {
  auto source = MakeSource(
      KTable({{"scan.startup.mode", "timestamp"}, {"scan.startup.timestamp-millis", "0"}}),
      nullptr);
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out).ok());
  EXPECT_TRUE(Int64Column(out.batches, 0).empty());
  EXPECT_EQ(source->position().next,
            (kafka::PartitionOffsets{{0, kRecords / 3}, {1, kRecords / 3}, {2, kRecords / 3}}));
}

TEST_F(KafkaSourceTest, APrettyPrintedRecordIsOneRow) {
  auto producer = kafka::KafkaProducer::Make({{"bootstrap.servers", Bootstrap()}});
  ASSERT_TRUE(producer.ok());
  ASSERT_TRUE((*producer)->Produce("roster", 0, "{\n  \"seq\": 301,\r\n  \"name\": \"a\"\n}").ok());
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(10)).ok());
  auto source = MakeSource(KTable(), nullptr);
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out).ok());
  EXPECT_EQ(Sorted(Int64Column(out.batches, 0)), Range(1, kRecords + 1));
}

TEST_F(KafkaSourceTest, RefusesBadOptionsAtPlanTime) {
  auto refused = [&](std::map<std::string, std::string> extra, const std::string& needle) {
    TableDescriptor t = KTable(std::move(extra));
    Result<KafkaSourceConfig> c = MakeKafkaSourceConfig(t);
    ASSERT_FALSE(c.ok()) << needle;
    EXPECT_NE(c.status().message().find(needle), std::string::npos) << c.status().ToString();
  };
  refused({{"topic", ""}}, "'topic'");
  refused({{"format", "avro"}}, "'format'");
  refused({{"scan.startup.mode", "sometime"}}, "scan.startup.mode");
  refused({{"scan.startup.mode", "specific-offsets"}}, "scan.startup.specific-offsets");
  refused({{"scan.bounded.mode", "timestamp"}}, "scan.bounded.mode");
  refused({{"no-such-option", "1"}}, "no-such-option");
  refused({{"topic", "a;b"}}, "one topic");
  refused({{"properties.no.such.property", "1"}}, "no.such.property");
  refused({{"scan.startup.mode", "timestamp"}}, "scan.startup.timestamp-millis");
  TableDescriptor no_bootstrap = KTable();
  no_bootstrap.options.erase("properties.bootstrap.servers");
  EXPECT_FALSE(MakeKafkaSourceConfig(no_bootstrap).ok());
}

}  // namespace
}  // namespace floe::connectors
