#include "floe/connectors/kafka/kafka_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "floe/connectors/connectors_test_util.h"
#include "floe/connectors/partition_claims.h"
#include "floe/kafka/mock_cluster.h"
#include "floe/runtime/row_kind.h"

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

 public:
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

 protected:
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
  EXPECT_EQ(source->position().next.at("roster"),
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
  EXPECT_EQ(at["source-roster/0"],
            R"({"parallelism":1,"topics":{"roster":{"0":100,"1":100,"2":100}}})");
  auto parsed = KafkaPosition::FromJson(at["source-roster/0"]);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->next.at("roster").at(2), 100);
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
  TopicOffsets at_checkpoint = source->position().next;
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

// The group's committed offsets of `topic` partitions 0..kPartitions-1 (-1 or absent: none).
static kafka::PartitionOffsets GroupCommitted(const std::string& bootstrap,
                                              const std::string& group) {
  auto consumer =
      kafka::KafkaConsumer::Make({{"bootstrap.servers", bootstrap}, {"group.id", group}});
  EXPECT_TRUE(consumer.ok());
  if (!consumer.ok()) return {};
  auto committed = (*consumer)->Committed("roster", {0, 1, 2}, std::chrono::seconds(10));
  EXPECT_TRUE(committed.ok()) << committed.status().ToString();
  kafka::PartitionOffsets out;
  if (!committed.ok()) return out;
  for (auto [p, o] : *committed) {
    if (o >= 0) out[p] = o;
  }
  return out;
}

// Kafka -> Kafka: group offsets past a transaction the sink has not committed yet would make a
// fresh job started from them lose that transaction's records. They wait for every committing
// sink's report (SourcePositionBoard); Poll, OnCheckpointComplete and Close publish them.
TEST_F(KafkaSourceTest, GroupOffsetsWaitUntilEveryRegisteredSinkCommittedTheCheckpoint) {
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  board->RegisterCommitter("sink-out-0");
  board->RegisterCommitter("sink-out-1");
  auto source = MakeSource(KTable({{"scan.bounded.mode", "unbounded"}}), board,
                           /*batch_rows=*/60);
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out, 1).ok());
  runtime::StateWriter state;
  ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(1), state).ok());
  TopicOffsets at1 = source->position().next;
  ASSERT_TRUE(source->OnCheckpointComplete(runtime::CheckpointId(1)).ok());
  ASSERT_TRUE(PollAll(*source, out, 1).ok());
  board->ReportCommitted("sink-out-0", runtime::CheckpointId(1));  // one of two sinks
  ASSERT_TRUE(PollAll(*source, out, 1).ok());
  // No commit was even requested (an async one not yet landed would be missed by reading the
  // group's offsets back).
  EXPECT_EQ(source->group_offset_commits(), 0u)
      << "committed before every sink committed checkpoint 1";
  EXPECT_TRUE(GroupCommitted(Bootstrap(), "g-" + group_).empty());

  board->ReportCommitted("sink-out-1", runtime::CheckpointId(1));
  kafka::PartitionOffsets committed;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (committed != at1["roster"] && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(source->Poll(out).ok());  // the next Poll publishes (async)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    committed = GroupCommitted(Bootstrap(), "g-" + group_);
  }
  EXPECT_EQ(committed, at1["roster"]);

  // Checkpoint 2 completes; the sinks report it while the task closes: Close waits for them
  // and commits synchronously.
  ASSERT_TRUE(source->Poll(out).ok());
  runtime::StateWriter state2;
  ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(2), state2).ok());
  TopicOffsets at2 = source->position().next;
  ASSERT_NE(at2, at1);
  ASSERT_TRUE(source->OnCheckpointComplete(runtime::CheckpointId(2)).ok());
  std::atomic<bool> closed{false};
  Status close_status;
  std::thread closer([&] {
    close_status = source->Close();
    closed = true;
  });
  // Close is seen waiting for the sinks' reports, and cannot return without them (its bound is
  // request.timeout.ms, 30 s).
  auto wait_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (board->waiting() == 0 && !closed && std::chrono::steady_clock::now() < wait_deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(board->waiting(), 1);
  EXPECT_FALSE(closed) << "Close returned before the sinks reported checkpoint 2";
  board->ReportCommitted("sink-out-0", runtime::CheckpointId(2));
  board->ReportCommitted("sink-out-1", runtime::CheckpointId(2));
  closer.join();
  ASSERT_TRUE(close_status.ok()) << close_status.ToString();
  EXPECT_EQ(source->group_offset_commits(), 2u);
  EXPECT_EQ(GroupCommitted(Bootstrap(), "g-" + group_), at2["roster"]);
}

// A sink that closes without committing the last checkpoint (it failed, or the job stops):
// Close does not wait out the timeout and does not publish that checkpoint's offsets.
TEST_F(KafkaSourceTest, CloseDoesNotPublishACheckpointASinkClosedWithoutCommitting) {
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  board->RegisterCommitter("sink-out-0");
  auto source = MakeSource(KTable(), board, /*batch_rows=*/60);
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out).ok());  // to the end
  runtime::StateWriter state;
  ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(1), state).ok());
  ASSERT_TRUE(source->OnCheckpointComplete(runtime::CheckpointId(1)).ok());
  board->ReportClosed("sink-out-0");
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(source->Close().ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(GroupCommitted(Bootstrap(), "g-" + group_).empty());
}

// Print / blackhole / at-least-once sinks register nothing: offsets are published when the
// checkpoint completes (synchronously after the end of a bounded source).
TEST_F(KafkaSourceTest, WithoutCommittingSinksGroupOffsetsAreCommittedAtCompletion) {
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  auto source = MakeSource(KTable(), board, /*batch_rows=*/60);
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out).ok());
  runtime::StateWriter state;
  ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(1), state).ok());
  ASSERT_TRUE(source->OnCheckpointComplete(runtime::CheckpointId(1)).ok());
  EXPECT_EQ(GroupCommitted(Bootstrap(), "g-" + group_),
            (kafka::PartitionOffsets{{0, 100}, {1, 100}, {2, 100}}));
  ASSERT_TRUE(source->Close().ok());
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
  // The reason follows the coordinates directly (no decoder "<source>:<line>:" prefix).
  EXPECT_NE(st.message().find("topic 'roster' partition 2 offset 100: field 'seq'"),
            std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("not a number"), std::string::npos) << st.ToString();

  auto tolerant = MakeSource(KTable({{"json.ignore-parse-errors", "true"}}), nullptr);
  CollectingCollector all;
  ASSERT_TRUE(PollAll(*tolerant, all).ok());
  EXPECT_EQ(Int64Column(all.batches, 0).size(), static_cast<size_t>(kRecords + 2));
}

// 'scan.bad-records': a bad record inside a poll of good ones (the decoder's batch falls back to
// record by record) and one that is not JSON at all, with a key.
TEST_F(KafkaSourceTest, BadRecordsAreSkippedOrDeadLetteredWithTheirCoordinates) {
  Produce(kRecords + 1, kRecords + 3, /*bad_at=*/std::to_string(kRecords + 2));
  {
    auto producer = kafka::KafkaProducer::Make({{"bootstrap.servers", Bootstrap()}});
    ASSERT_TRUE(producer.ok());
    ASSERT_TRUE((*producer)->Produce("roster", 0, "\x01garbage", "k-9").ok());
    ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(10)).ok());
  }
  const size_t good = static_cast<size_t>(kRecords + 2);
  auto skipping = MakeSource(KTable({{"scan.bad-records", "skip"}}), nullptr);
  CollectingCollector skipped;
  ASSERT_TRUE(PollAll(*skipping, skipped).ok());
  EXPECT_EQ(Int64Column(skipped.batches, 0).size(), good);
  EXPECT_TRUE(skipped.side.empty());

  auto source = MakeSource(
      KTable({{"scan.bad-records", "dead-letter"}, {"scan.bad-records.table", "roster_bad"}}),
      nullptr, /*batch_rows=*/1000);
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out).ok());
  std::vector<int64_t> seqs = Int64Column(out.batches, 0);
  std::sort(seqs.begin(), seqs.end());
  ASSERT_EQ(seqs.size(), good);
  EXPECT_EQ(seqs.back(), kRecords + 3);
  EXPECT_EQ(std::count(seqs.begin(), seqs.end(), kRecords + 2), 0);
  std::vector<std::string> letters = testing::JsonRows(out.side[1]);
  ASSERT_EQ(letters.size(), 2u);
  std::sort(letters.begin(), letters.end());
  // seq 302 -> partition 2 offset 100; the garbage one -> partition 0 offset 101.
  EXPECT_NE(letters[0].find("\"kafka_partition\":0,\"kafka_offset\":101"), std::string::npos)
      << letters[0];
  EXPECT_NE(letters[0].find("\"source_table\":\"roster\",\"kafka_topic\":\"roster\""),
            std::string::npos)
      << letters[0];
  EXPECT_NE(letters[1].find("\"kafka_partition\":2,\"kafka_offset\":100"), std::string::npos)
      << letters[1];
  EXPECT_NE(letters[1].find("field 'seq'"), std::string::npos) << letters[1];
  EXPECT_NE(letters[1].find("\"kafka_key\":null"), std::string::npos) << letters[1];
  ASSERT_EQ(out.side[1].front().schema()->fields.size(), DeadLetterSchema()->fields.size());
  for (const RecordBatch& b : out.side[1]) {
    for (size_t r = 0; r < b.num_rows(); ++r) {
      EXPECT_FALSE(b.column(4).IsNull(r)) << "every record has a Kafka timestamp";
      if (b.column(3).Get<int64_t>(r) == 101) {
        EXPECT_EQ(b.column(5).GetBytes(r), "k-9");
        EXPECT_EQ(b.column(6).GetBytes(r), "\x01garbage");
      }
    }
  }

  // Read as debezium-json, no record is a change event: every one is a dead letter, and the
  // changelog's kinds stay as long as its rows (none).
  auto debezium = MakeSource(KTable({{"format", "debezium-json"},
                                     {"scan.bad-records", "dead-letter"},
                                     {"scan.bad-records.table", "roster_bad"}}),
                             nullptr);
  CollectingCollector changes;
  ASSERT_TRUE(PollAll(*debezium, changes).ok());
  size_t rows = 0;
  for (const RecordBatch& b : changes.batches) rows += b.num_rows();
  EXPECT_EQ(rows, 0u);
  std::vector<std::string> all = testing::JsonRows(changes.side[1]);
  EXPECT_EQ(all.size(), good + 2);
  EXPECT_NE(all.front().find("debezium-json"), std::string::npos) << all.front();
}

// A registry that cannot be reached is not a bad record: the job fails whatever the policy (the
// records before it, not Confluent-framed, are dead letters as usual).
TEST_F(KafkaSourceTest, AnUnreachableRegistryFailsTheJobEvenWithDeadLetters) {
  {
    auto producer = kafka::KafkaProducer::Make({{"bootstrap.servers", Bootstrap()}});
    ASSERT_TRUE(producer.ok());
    ASSERT_TRUE((*producer)->Produce("roster", 0, ConfluentHeader(7) + "datum").ok());
    ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(10)).ok());
  }
  auto source = MakeSource(KTable({{"format", "avro-confluent"},
                                   {"avro-confluent.url", "http://127.0.0.1:1"},
                                   {"scan.bad-records", "dead-letter"},
                                   {"scan.bad-records.table", "roster_bad"}}),
                           nullptr);
  CollectingCollector out;
  Status st = PollAll(*source, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIOError) << st.ToString();
  EXPECT_NE(st.message().find("schema registry http://127.0.0.1:1: schema id 7"), std::string::npos)
      << st.ToString();
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
  EXPECT_EQ(source->position().next.at("roster"),
            (kafka::PartitionOffsets{{0, kRecords / 3}, {1, kRecords / 3}, {2, kRecords / 3}}));
}

// The records of a poll are decoded together, one per line; records that are not one JSON
// object each on their own line (a byte-order mark, a blank value) still give what they give
// decoded alone.
TEST_F(KafkaSourceTest, APrettyPrintedRecordIsOneRow) {
  auto producer = kafka::KafkaProducer::Make({{"bootstrap.servers", Bootstrap()}});
  ASSERT_TRUE(producer.ok());
  ASSERT_TRUE((*producer)->Produce("roster", 0, "{\n  \"seq\": 301,\r\n  \"name\": \"a\"\n}").ok());
  ASSERT_TRUE((*producer)->Produce("roster", 0, "\xef\xbb\xbf{\"seq\": 302}").ok());
  ASSERT_TRUE((*producer)->Produce("roster", 0, " \n ").ok());
  ASSERT_TRUE((*producer)->Produce("roster", 0, "{\"seq\": 303}").ok());
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(10)).ok());
  auto source = MakeSource(KTable(), nullptr);
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out).ok());
  EXPECT_EQ(Sorted(Int64Column(out.batches, 0)), Range(1, kRecords + 3));
}

// Flink's json format writes TIMESTAMP as "2020-12-30 12:13:14.123" and TIMESTAMP_LTZ with 'Z'
// by default ('json.timestamp-format.standard' = 'SQL'), "...T..." with 'ISO-8601'. floe reads
// both spellings whichever standard the table sets (Flink reads only the configured one).
TEST_F(KafkaSourceTest, ReadsSqlAndIsoTimestampsWhicheverStandardIsSet) {
  ASSERT_TRUE(cluster_->CreateTopic("times", 1).ok());
  auto producer = kafka::KafkaProducer::Make({{"bootstrap.servers", Bootstrap()}});
  ASSERT_TRUE(producer.ok());
  for (const char* v :
       {R"({"id":1,"ts":"2020-12-30 12:13:14.123","tz":"2020-12-30 12:13:14.123Z"})",
        R"({"id":2,"ts":"2020-12-30 12:13:14","tz":"2020-12-30 12:13:14Z"})",
        R"({"id":3,"ts":"2020-12-30T12:13:14.5","tz":"2020-12-30T12:13:14.5Z"})"}) {
    ASSERT_TRUE((*producer)->Produce("times", 0, v).ok());
  }
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(10)).ok());
  const std::vector<std::string> expected = {
      R"({"id":1,"ts":"2020-12-30T12:13:14.123","tz":"2020-12-30T12:13:14.123Z"})"
      "\n",
      R"({"id":2,"ts":"2020-12-30T12:13:14","tz":"2020-12-30T12:13:14Z"})"
      "\n",
      R"({"id":3,"ts":"2020-12-30T12:13:14.5","tz":"2020-12-30T12:13:14.5Z"})"
      "\n"};
  for (const char* standard : {"", "SQL", "ISO-8601"}) {
    std::map<std::string, std::string> options = {{"connector", "kafka"},
                                                  {"topic", "times"},
                                                  {"format", "json"},
                                                  {"properties.bootstrap.servers", Bootstrap()},
                                                  {"scan.startup.mode", "earliest-offset"},
                                                  {"scan.bounded.mode", "latest-offset"}};
    if (*standard != '\0') options["json.timestamp-format.standard"] = standard;
    TableDescriptor table =
        Table("times", "id INT, ts TIMESTAMP(3), tz TIMESTAMP_LTZ(3)", std::move(options));
    auto source = MakeSource(table, nullptr);
    CollectingCollector out;
    ASSERT_TRUE(PollAll(*source, out).ok()) << standard;
    EXPECT_EQ(testing::JsonRows(out.batches), expected) << standard;
  }
}

TEST_F(KafkaSourceTest, RefusesBadOptionsAtPlanTime) {
  auto refused = [&](std::map<std::string, std::string> extra, const std::string& needle) {
    TableDescriptor t = KTable(std::move(extra));
    Result<KafkaSourceConfig> c = MakeKafkaSourceConfig(t);
    ASSERT_FALSE(c.ok()) << needle;
    EXPECT_NE(c.status().message().find(needle), std::string::npos) << c.status().ToString();
  };
  refused({{"topic", ""}}, "'topic'");
  refused({{"format", "csv"}}, "'format'");
  refused({{"scan.startup.mode", "sometime"}}, "scan.startup.mode");
  refused({{"scan.startup.mode", "specific-offsets"}}, "scan.startup.specific-offsets");
  refused({{"scan.bounded.mode", "timestamp"}}, "scan.bounded.mode");
  refused({{"no-such-option", "1"}}, "no-such-option");
  refused({{"topic", "a;;b"}}, "without empty names");
  refused({{"topic", "a;b;a"}}, "names topic 'a' twice");
  refused({{"topic-pattern", "roster-.*"}}, "list the topics in 'topic'");
  refused({{"topic", "a;b"},
           {"scan.startup.mode", "specific-offsets"},
           {"scan.startup.specific-offsets", "partition:0,offset:1"}},
          "cannot be used with a topic list");
  refused({{"scan.parallelism", "0"}}, "scan.parallelism");
  refused({{"debezium-json.schema-include", "true"}}, "applies to 'format' = 'debezium-json' only");
  refused({{"format", "debezium-json"}, {"json.ignore-parse-errors", "true"}},
          "use 'debezium-json.ignore-parse-errors'");
  refused({{"format", "debezium-json"}, {"debezium-json.schema-include", "maybe"}},
          "debezium-json.schema-include");
  refused({{"properties.no.such.property", "1"}}, "no.such.property");
  refused({{"protobuf-confluent.url", "http://127.0.0.1:1"}},
          "does not apply to 'format' = 'json'");
  refused({{"format", "protobuf-confluent"}}, "'protobuf-confluent.url' is required");
  refused({{"format", "debezium-avro-confluent"}}, "'debezium-avro-confluent.url' is required");
  refused({{"scan.bad-records", "ignore"}}, "must be fail, skip or dead-letter");
  refused({{"scan.bad-records", "dead-letter"}}, "needs 'scan.bad-records.table'");
  refused({{"scan.bad-records", "skip"}, {"scan.bad-records.table", "bad"}},
          "only read with 'scan.bad-records' = 'dead-letter'");
  refused({{"scan.bad-records", "skip"}, {"json.ignore-parse-errors", "true"}}, "set one of them");
  {
    // A misspelt bootstrap property is named as such, not as a missing one.
    TableDescriptor t = KTable({{"properties.bootstrap.servrs", Bootstrap()}});
    t.options.erase("properties.bootstrap.servers");
    Result<KafkaSourceConfig> c = MakeKafkaSourceConfig(t);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.status().message().find("did you mean 'bootstrap.servers'"), std::string::npos)
        << c.status().ToString();
  }
  refused({{"json.timestamp-format.standard", "RFC-3339"}},
          "option 'json.timestamp-format.standard' must be 'SQL' (\"2020-12-30 12:13:14.123\", "
          "the default) or 'ISO-8601' (\"2020-12-30T12:13:14.123\"), got 'RFC-3339'");
  refused({{"format", "debezium-json"}, {"json.timestamp-format.standard", "SQL"}},
          "use 'debezium-json.timestamp-format.standard'");
  refused({{"debezium-json.timestamp-format.standard", "SQL"}},
          "applies to 'format' = 'debezium-json' only");
  refused({{"format", "debezium-json"}, {"debezium-json.timestamp-format.standard", "sql"}},
          "option 'debezium-json.timestamp-format.standard' must be 'SQL'");
  for (const char* standard : {"SQL", "ISO-8601"}) {
    EXPECT_TRUE(MakeKafkaSourceConfig(KTable({{"json.timestamp-format.standard", standard}})).ok());
    EXPECT_TRUE(
        MakeKafkaSourceConfig(KTable({{"format", "debezium-json"},
                                      {"debezium-json.timestamp-format.standard", standard}}))
            .ok());
  }
  refused({{"scan.startup.mode", "timestamp"}}, "scan.startup.timestamp-millis");
  TableDescriptor no_bootstrap = KTable();
  no_bootstrap.options.erase("properties.bootstrap.servers");
  EXPECT_FALSE(MakeKafkaSourceConfig(no_bootstrap).ok());
}

// librdkafka 2.0.2's pre-fetch queue limits (100,000 messages, 64 MiB) make the source read in
// 1 s bursts (docs/kafka.md); floe sets larger ones unless the table sets its own.
TEST_F(KafkaSourceTest, ConsumerGetsFloesQueueDefaultsUnlessTheTableSetsThem) {
  Result<KafkaSourceConfig> unset = MakeKafkaSourceConfig(KTable());
  ASSERT_TRUE(unset.ok()) << unset.status().ToString();
  EXPECT_EQ(unset->properties.at("queued.min.messages"), "500000");
  EXPECT_EQ(unset->properties.at("queued.max.messages.kbytes"), "131072");

  Result<KafkaSourceConfig> set =
      MakeKafkaSourceConfig(KTable({{"properties.queued.min.messages", "100000"},
                                    {"properties.queued.max.messages.kbytes", "65536"}}));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->properties.at("queued.min.messages"), "100000");
  EXPECT_EQ(set->properties.at("queued.max.messages.kbytes"), "65536");

  // One set, the other defaulted.
  Result<KafkaSourceConfig> one =
      MakeKafkaSourceConfig(KTable({{"properties.queued.max.messages.kbytes", "262144"}}));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->properties.at("queued.min.messages"), "500000");
  EXPECT_EQ(one->properties.at("queued.max.messages.kbytes"), "262144");

  // librdkafka accepts the defaults: every other test here opens its consumer with them.
}

// The owners Flink's KafkaSourceEnumerator computes (Java String.hashCode, then
// ((hash * 31) & 0x7FFFFFFF) % n as the start, partitions round robin from there); the expected
// values were computed independently from Java's hashCode ("a" = 97, "roster" = -925192565).
TEST(KafkaSplitOwner, FollowsFlinksEnumeratorRule) {
  EXPECT_EQ(KafkaSplitOwner("a", 0, 2), 1u);
  EXPECT_EQ(KafkaSplitOwner("a", 1, 2), 0u);
  EXPECT_EQ(KafkaSplitOwner("b", 0, 2), 0u);
  EXPECT_EQ(KafkaSplitOwner("a", 0, 3), 1u);
  EXPECT_EQ(KafkaSplitOwner("a", 1, 3), 2u);
  EXPECT_EQ(KafkaSplitOwner("a", 2, 3), 0u);
  EXPECT_EQ(KafkaSplitOwner("roster", 0, 3), 2u);  // negative hash
  EXPECT_EQ(KafkaSplitOwner("roster", 1, 3), 0u);
  EXPECT_EQ(KafkaSplitOwner("roster", 0, 1), 0u);
  // Every partition has exactly one owner, and one topic's partitions are spread evenly.
  for (uint32_t n = 1; n <= 5; ++n) {
    std::vector<int> per(n, 0);
    for (int32_t p = 0; p < 11; ++p) {
      uint32_t owner = KafkaSplitOwner("orders", p, n);
      ASSERT_LT(owner, n);
      EXPECT_EQ(owner, KafkaSplitOwner("orders", p, n));  // stable
      ++per[owner];
    }
    EXPECT_LE(*std::max_element(per.begin(), per.end()) - *std::min_element(per.begin(), per.end()),
              1)
        << n;
  }
}

TEST(KafkaPosition, WritesTopicsAndParallelismAndReadsTheSingleTopicForm) {
  KafkaPosition p;
  p.parallelism = 2;
  p.next["a"] = {{0, 5}, {2, 7}};
  p.next["b"] = {};
  EXPECT_EQ(p.ToJson(), R"({"parallelism":2,"topics":{"a":{"0":5,"2":7},"b":{}}})");
  auto back = KafkaPosition::FromJson(p.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, p);
  // Positions of earlier versions (checkpoints, floe.source-offsets of existing tables).
  auto old = KafkaPosition::FromJson(R"({"topic":"roster","partitions":{"0":4000,"1":3999}})");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->parallelism, 1u);
  EXPECT_EQ(old->next.at("roster"), (kafka::PartitionOffsets{{0, 4000}, {1, 3999}}));
  // Without "parallelism": 1.
  auto bare = KafkaPosition::FromJson(R"({"topics":{"t":{"3":1}}})");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->parallelism, 1u);
  for (const char* bad :
       {"", "[]", R"({"topics":[]})", R"({"topics":{"t":{"x":1}}})", R"({"topics":{"t":{"0":-1}}})",
        R"({"topics":{"t":{"0":1}},"parallelism":0})", R"({"topic":"t"})",
        R"({"topic":"t","partitions":{"0":"1"}})", R"({"topics":{"":{}}})"}) {
    auto r = KafkaPosition::FromJson(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("parallelism"), std::string::npos);
    }
  }
}

// Subtask `i` of `n` of the roster source.
std::unique_ptr<KafkaSource> MakeSubtask(const TableDescriptor& table, uint32_t i, uint32_t n,
                                         std::shared_ptr<runtime::SourcePositionBoard> board,
                                         size_t batch_rows = 1000) {
  Result<KafkaSourceConfig> config = MakeKafkaSourceConfig(table);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  config->batch_rows = batch_rows;
  auto source = std::make_unique<KafkaSource>(*config, std::move(board));
  Status st = source->Open(testing::Context("source-roster", i, n));
  EXPECT_TRUE(st.ok()) << st.ToString();
  return source;
}

TEST_F(KafkaSourceTest, SubtasksReadDisjointSplitsThatCoverEveryPartition) {
  for (uint32_t n : {2u, 3u, 4u}) {
    auto board = std::make_shared<runtime::SourcePositionBoard>();
    std::vector<int64_t> all;
    for (uint32_t i = 0; i < n; ++i) {
      auto source = MakeSubtask(KTable(), i, n, board);
      CollectingCollector out;
      ASSERT_TRUE(PollAll(*source, out).ok());  // a subtask without splits ends at once
      std::vector<int64_t> seqs = Int64Column(out.batches, 0);
      for (int64_t seq : seqs) {
        // seq s was produced to partition s % 3.
        EXPECT_EQ(KafkaSplitOwner("roster", static_cast<int32_t>(seq % kPartitions), n), i);
      }
      all.insert(all.end(), seqs.begin(), seqs.end());
      runtime::StateWriter state;
      ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(n), state).ok());
      // Only the owned splits are in the position.
      for (const auto& [p, next] : source->position().next.at("roster")) {
        EXPECT_EQ(KafkaSplitOwner("roster", p, n), i);
        EXPECT_EQ(next, kRecords / 3);
      }
    }
    EXPECT_EQ(Sorted(all), Range(1, kRecords)) << "parallelism " << n;
    // Every subtask recorded its position for the committer, even one without splits.
    auto at = board->PositionsAt(runtime::CheckpointId(n));
    EXPECT_EQ(at.size(), n);
    if (n == 4) {
      // roster's partitions 0, 1, 2 go to subtasks 1, 2, 3 (start 1): subtask 0 owns none.
      EXPECT_EQ(at["source-roster/0"], R"({"parallelism":4,"topics":{"roster":{}}})");
    }
  }
}

TEST_F(KafkaSourceTest, ASubtaskWithoutSplitsIdlesWhenUnboundedAndServesCheckpoints) {
  // 4 subtasks over 3 partitions: subtask 0 owns none of roster's partitions.
  auto source = MakeSubtask(KTable({{"scan.bounded.mode", "unbounded"}}), 0, 4, nullptr);
  CollectingCollector out;
  for (int i = 0; i < 3; ++i) {
    auto st = source->Poll(out);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_EQ(*st, runtime::SourceStatus::kIdle);
  }
  runtime::StateWriter state;
  ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(1), state).ok());
  ASSERT_TRUE(source->OnCheckpointComplete(runtime::CheckpointId(1)).ok());
  EXPECT_TRUE(out.batches.empty());
}

// Runs subtasks 0..n-1 of `n`, each restored from `blobs` (the old subtasks' state, by index;
// none: a fresh start) at another parallelism, polling each at most `max_polls` times; appends
// what they read to `seqs` and returns their new blobs.
std::vector<std::string> RunRescaled(const TableDescriptor& table, uint32_t n,
                                     const std::vector<std::string>& blobs,
                                     std::vector<int64_t>* seqs, int max_polls) {
  std::vector<std::string> out;
  for (uint32_t i = 0; i < n; ++i) {
    auto source = MakeSubtask(table, i, n, nullptr, /*batch_rows=*/10);
    if (!blobs.empty()) {
      Status st = source->RestoreRescaled(blobs);
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
    CollectingCollector collected;
    Status st = KafkaSourceTest::PollAll(*source, collected, max_polls);
    EXPECT_TRUE(st.ok()) << st.ToString();
    std::vector<int64_t> read = Int64Column(collected.batches, 0);
    seqs->insert(seqs->end(), read.begin(), read.end());
    runtime::StateWriter state;
    EXPECT_TRUE(source->SnapshotPosition(runtime::CheckpointId(1), state).ok());
    out.push_back(state.Finish());
  }
  return out;
}

TEST_F(KafkaSourceTest, RescalesCheckpointPositions2To3To1EveryRecordOnce) {
  std::vector<int64_t> seqs;
  std::vector<std::string> two = RunRescaled(KTable(), 2, {}, &seqs, /*max_polls=*/1);
  ASSERT_FALSE(seqs.empty());
  // Records produced after the first start lie past the bounded end offsets, which the old
  // subtasks' blobs carry to the new ones: none of them is read.
  Produce(kRecords + 1, kRecords + 60);
  std::vector<std::string> three = RunRescaled(KTable(), 3, two, &seqs, /*max_polls=*/2);
  ASSERT_LT(seqs.size(), static_cast<size_t>(kRecords));  // stopped mid-stream
  RunRescaled(KTable(), 1, three, &seqs, /*max_polls=*/1 << 20);
  EXPECT_EQ(Sorted(seqs), Range(1, kRecords));
}

// The next offsets the table records for old subtask `i` of `n`: partition p at 90 + p.
std::string TablePosition(uint32_t i, uint32_t n) {
  KafkaPosition position;
  position.parallelism = n;
  position.next["roster"];
  for (int32_t p = 0; p < kPartitions; ++p) {
    if (KafkaSplitOwner("roster", p, n) == i) position.next["roster"][p] = 90 + p;
  }
  return position.ToJson();
}

TEST_F(KafkaSourceTest, RescalesTheTablesPositions2To3And3To1) {
  // Partition p holds seq 3(k+1) (p = 0) or 3k+p at offset k; reading resumes at 90 + p.
  std::vector<int64_t> want;
  for (int32_t p = 0; p < kPartitions; ++p) {
    for (int64_t k = 90 + p; k < kRecords / kPartitions; ++k)
      want.push_back(p == 0 ? 3 * (k + 1) : 3 * k + p);
  }
  for (auto [from, to] : {std::pair<uint32_t, uint32_t>{2, 3}, {3, 1}}) {
    auto board = std::make_shared<runtime::SourcePositionBoard>();
    std::map<std::string, std::string> overrides;
    for (uint32_t i = 0; i < from; ++i)
      overrides["source-roster/" + std::to_string(i)] = TablePosition(i, from);
    board->SetStartOverrides(overrides);
    std::vector<int64_t> seqs;
    for (uint32_t i = 0; i < to; ++i) {
      auto source = MakeSubtask(KTable(), i, to, board);
      CollectingCollector out;
      Status st = PollAll(*source, out);
      ASSERT_TRUE(st.ok()) << st.ToString();
      for (const auto& [p, next] : source->position().next.at("roster")) {
        EXPECT_EQ(KafkaSplitOwner("roster", p, to), i);
      }
      std::vector<int64_t> read = Int64Column(out.batches, 0);
      seqs.insert(seqs.end(), read.begin(), read.end());
    }
    EXPECT_EQ(Sorted(seqs), Sorted(want)) << from << " -> " << to;
  }
}

// A version-2 blob of an old subtask of `parallelism` holding `next` of roster (end 100).
std::string Blob(uint32_t parallelism, const kafka::PartitionOffsets& next) {
  runtime::StateWriter w;
  w.PutU32(2);
  w.PutU32(parallelism);
  w.PutU32(1);
  w.PutString("roster");
  w.PutU32(static_cast<uint32_t>(next.size()));
  for (const auto& [p, offset] : next) {
    w.PutU32(static_cast<uint32_t>(p));
    w.PutI64(offset);
    w.PutI64(100);
  }
  return w.Finish();
}

TEST_F(KafkaSourceTest, RescalingRefusesAPartitionTwiceWithDifferentOffsetsAndMissingSubtasks) {
  auto source = MakeSubtask(KTable(), 0, 3, nullptr);
  Status st = source->RestoreRescaled({Blob(2, {{0, 5}, {1, 9}}), Blob(2, {{0, 7}})});
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("the restored checkpoint: topic 'roster' partition 0: old subtask "
                              "0 holds next offset 5 and old subtask 1 holds 7"),
            std::string::npos)
      << st.ToString();
  // The same offset twice is harmless; a blob of 3 subtasks among 2 means one is missing.
  EXPECT_TRUE(source->RestoreRescaled({Blob(2, {{0, 5}}), Blob(2, {{0, 5}})}).ok());
  st = source->RestoreRescaled({Blob(2, {{0, 5}}), Blob(3, {{1, 5}})});
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("old subtask 1's position was written with source parallelism 3 "
                              "but the positions of 2 old subtasks were found"),
            std::string::npos)
      << st.ToString();

  auto board = std::make_shared<runtime::SourcePositionBoard>();
  board->SetStartOverrides(
      {{"source-roster/0", R"({"parallelism":2,"topics":{"roster":{"0":5}}})"},
       {"source-roster/1", R"({"parallelism":2,"topics":{"roster":{"0":7,"1":3}}})"}});
  auto from_table = MakeSubtask(KTable(), 2, 3, board);
  CollectingCollector out;
  Status table_st = PollAll(*from_table, out);
  EXPECT_TRUE(table_st.IsCorruption()) << table_st.ToString();
  EXPECT_NE(table_st.message().find("the table's positions (floe.source-offsets): topic 'roster' "
                                    "partition 0: old subtask 0 holds next offset 5 and old "
                                    "subtask 1 holds 7"),
            std::string::npos)
      << table_st.ToString();
}

TEST_F(KafkaSourceTest, RestoresTheStateOfEarlierVersions) {
  // Version 1 blob: one topic, no parallelism (it was always 1).
  runtime::StateWriter v1;
  v1.PutU32(1);
  v1.PutString("roster");
  v1.PutU32(3);
  for (uint32_t p = 0; p < 3; ++p) {
    v1.PutU32(p);
    v1.PutI64(p == 0 ? 95 : 100);  // next
    v1.PutI64(100);                // bounded end
  }
  std::string blob = v1.Finish();
  auto source = MakeSource(KTable(), nullptr);
  runtime::StateReader reader(blob);
  ASSERT_TRUE(source->Restore(reader).ok());
  CollectingCollector out;
  ASSERT_TRUE(PollAll(*source, out).ok());
  EXPECT_EQ(Sorted(Int64Column(out.batches, 0)), (std::vector<int64_t>{288, 291, 294, 297, 300}));
  // Restore takes a blob of this run's parallelism only; RestoreRescaled splits the old one.
  auto two = MakeSubtask(KTable(), 1, 2, nullptr);
  runtime::StateReader again(blob);
  EXPECT_TRUE(two->Restore(again).IsCorruption());
  std::vector<int64_t> seqs;
  RunRescaled(KTable(), 2, {blob}, &seqs, 1 << 20);
  EXPECT_EQ(Sorted(seqs), (std::vector<int64_t>{288, 291, 294, 297, 300}));
}

TEST_F(KafkaSourceTest, ReadsATopicListWithPositionsPerTopic) {
  ASSERT_TRUE(cluster_->CreateTopic("other", 2).ok());
  auto producer = kafka::KafkaProducer::Make({{"bootstrap.servers", Bootstrap()}});
  ASSERT_TRUE(producer.ok());
  for (int seq = 1001; seq <= 1040; ++seq) {
    ASSERT_TRUE(
        (*producer)->Produce("other", seq % 2, "{\"seq\":" + std::to_string(seq) + "}").ok());
  }
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(10)).ok());
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  std::vector<int64_t> all;
  for (uint32_t i = 0; i < 2; ++i) {
    auto source = MakeSubtask(KTable({{"topic", "roster; other"}}), i, 2, board);
    CollectingCollector out;
    ASSERT_TRUE(PollAll(*source, out).ok());
    auto seqs = Int64Column(out.batches, 0);
    all.insert(all.end(), seqs.begin(), seqs.end());
    runtime::StateWriter state;
    ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(1), state).ok());
  }
  std::vector<int64_t> want = Range(1, kRecords);
  for (int64_t s : Range(1001, 1040)) want.push_back(s);
  EXPECT_EQ(Sorted(all), want);
  auto at = board->PositionsAt(runtime::CheckpointId(1));
  // roster: partitions 0, 2 -> subtask 1, 1 -> subtask 0; other (start 0 of 2): partition 0 ->
  // subtask 0, 1 -> subtask 1.
  auto p0 = KafkaPosition::FromJson(at["source-roster/0"]);
  auto p1 = KafkaPosition::FromJson(at["source-roster/1"]);
  ASSERT_TRUE(p0.ok() && p1.ok());
  size_t splits = 0;
  for (const auto* p : {&*p0, &*p1}) {
    for (const auto& [topic, offsets] : p->next) splits += offsets.size();
  }
  EXPECT_EQ(splits, 5u);
  EXPECT_EQ(p0->next.size() + p1->next.size(), 4u);  // both topics in both positions
}

TEST_F(KafkaSourceTest, DebeziumEventsBecomeRowsWithKindsAndTombstonesAreSkipped) {
  ASSERT_TRUE(cluster_->CreateTopic("cdc", 1).ok());
  auto producer = kafka::KafkaProducer::Make({{"bootstrap.servers", Bootstrap()}});
  ASSERT_TRUE(producer.ok());
  for (const char* v : {R"({"before":null,"after":{"seq":1,"name":"a"},"op":"c"})",
                        R"({"before":{"seq":1,"name":"a"},"after":{"seq":1,"name":"b"},"op":"u"})",
                        R"({"before":{"seq":1,"name":"b"},"after":null,"op":"d"})"}) {
    ASSERT_TRUE((*producer)->Produce("cdc", 0, v).ok());
  }
  // A tombstone (null value), as Debezium sends after a delete.
  ASSERT_TRUE((*producer)->ProduceTombstone("cdc", 0, "1").ok());
  ASSERT_TRUE((*producer)->Produce("cdc", 0, R"({"after":{"seq":2},"op":"r"})").ok());
  ASSERT_TRUE((*producer)->Produce("cdc", 0, R"({"after":{"seq":"x"},"op":"c"})").ok());
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(10)).ok());

  auto table = KTable({{"topic", "cdc"}, {"format", "debezium-json"}});
  auto source = MakeSource(table, nullptr);
  CollectingCollector out;
  Status st = PollAll(*source, out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("topic 'cdc' partition 0 offset 5: debezium-json: in 'after': "
                              "field 'seq': expected BIGINT NOT NULL"),
            std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find(R"(record: {"after":{"seq":"x"},"op":"c"})"), std::string::npos)
      << st.ToString();

  auto tolerant = MakeSource(KTable({{"topic", "cdc"},
                                     {"format", "debezium-json"},
                                     {"debezium-json.ignore-parse-errors", "true"}}),
                             nullptr);
  CollectingCollector rows;
  ASSERT_TRUE(PollAll(*tolerant, rows).ok());
  std::vector<std::string> got;
  for (const RecordBatch& b : rows.batches) {
    ASSERT_EQ(b.schema()->fields.back().name, runtime::kRowKindColumn);
    for (size_t r = 0; r < b.num_rows(); ++r) {
      got.push_back(std::string(b.column(2).GetBytes(r)) +
                    std::to_string(b.column(0).Get<int64_t>(r)) +
                    (b.column(1).IsNull(r) ? "" : std::string(b.column(1).GetBytes(r))));
    }
  }
  EXPECT_EQ(got, (std::vector<std::string>{"+I1a", "-U1a", "+U1b", "-D1b", "+I2"}));
}

// --- DebeziumJsonDecoder on its own: every op and every error.

class DebeziumJsonTest : public ::testing::Test {
 protected:
  Status Decode(std::string_view value, DebeziumJsonOptions options = {}) {
    auto decoder = DebeziumJsonDecoder::Make(columns_, options);
    EXPECT_TRUE(decoder.ok());
    rows_ = RecordBatch(columns_);
    kinds_ = Column(DataType::String());
    Status st = (*decoder)->Decode(value, &rows_, &kinds_);
    skipped_ = (*decoder)->skipped();
    return st;
  }
  std::vector<std::string> Rows() const {
    std::vector<std::string> out;
    for (size_t r = 0; r < rows_.num_rows(); ++r) {
      out.push_back(
          std::string(kinds_.GetBytes(r)) + "[" + std::to_string(rows_.column(0).Get<int64_t>(r)) +
          "," + (rows_.column(1).IsNull(r) ? "null" : std::string(rows_.column(1).GetBytes(r))) +
          "]");
    }
    return out;
  }
  void ExpectError(std::string_view value, const std::string& needle,
                   DebeziumJsonOptions options = {}) {
    Status st = Decode(value, options);
    ASSERT_FALSE(st.ok()) << value;
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.ToString();
    EXPECT_EQ(rows_.num_rows(), 0u) << value;  // nothing of a bad event stays
    EXPECT_EQ(kinds_.size(), 0u) << value;
    options.ignore_parse_errors = true;
    ASSERT_TRUE(Decode(value, options).ok()) << value;
    EXPECT_EQ(skipped_, 1);
    EXPECT_EQ(rows_.num_rows(), 0u) << value;
  }

  std::shared_ptr<const BatchSchema> columns_ = [] {
    auto s = std::make_shared<BatchSchema>();
    s->fields.push_back(Field{"id", DataType::Int64(), false, 1});
    s->fields.push_back(Field{"name", DataType::String(), true, 2});
    return s;
  }();
  RecordBatch rows_;
  Column kinds_{DataType::String()};
  int64_t skipped_ = 0;
};

TEST_F(DebeziumJsonTest, EveryOpBecomesFlinksRowKinds) {
  ASSERT_TRUE(Decode(R"({"before":null,"after":{"id":1,"name":"a"},"op":"c","ts_ms":1})").ok());
  EXPECT_EQ(Rows(), (std::vector<std::string>{"+I[1,a]"}));
  ASSERT_TRUE(Decode(R"({"op":"r","after":{"id":2,"name":"b"},"source":{"db":"x"}})").ok());
  EXPECT_EQ(Rows(), (std::vector<std::string>{"+I[2,b]"}));
  ASSERT_TRUE(
      Decode(R"({"before":{"id":1,"name":"a"},"after":{"id":1,"name":"z"},"op":"u"})").ok());
  EXPECT_EQ(Rows(), (std::vector<std::string>{"-U[1,a]", "+U[1,z]"}));
  ASSERT_TRUE(Decode(R"({"before":{"id":1,"name":"z"},"after":null,"op":"d"})").ok());
  EXPECT_EQ(Rows(), (std::vector<std::string>{"-D[1,z]"}));
  // Unknown columns inside before/after are ignored, missing nullable ones are null.
  ASSERT_TRUE(Decode(R"({"after":{"id":3,"extra":[1,2]},"op":"c"})").ok());
  EXPECT_EQ(Rows(), (std::vector<std::string>{"+I[3,null]"}));
}

TEST_F(DebeziumJsonTest, SchemaIncludeReadsThePayload) {
  DebeziumJsonOptions o;
  o.schema_include = true;
  ASSERT_TRUE(Decode(R"({"schema":{"type":"struct","fields":[]},"payload":{"before":{"id":4},)"
                     R"("after":{"id":4,"name":"n"},"op":"u"}})",
                     o)
                  .ok());
  EXPECT_EQ(Rows(), (std::vector<std::string>{"-U[4,null]", "+U[4,n]"}));
  ExpectError(R"({"before":null,"after":{"id":1},"op":"c"})", "has no \"payload\" field", o);
  ExpectError(R"({"schema":{},"payload":[1]})", "field 'payload' must be an object", o);
  // The schema envelope without the option: a hint, not just "no op".
  ExpectError(R"({"schema":{},"payload":{"after":{"id":1},"op":"c"}})",
              "set 'debezium-json.schema-include' = 'true'");
}

TEST_F(DebeziumJsonTest, EveryErrorNamesTheFieldAndTheRule) {
  ExpectError("{\"op\":", "invalid JSON");
  ExpectError("[1,2]", "not a JSON object");
  ExpectError(R"({"after":{"id":1}})", "field 'op' is missing");
  ExpectError(R"({"after":{"id":1},"op":7})", "field 'op' must be a string, got 7");
  ExpectError(R"({"after":{"id":1},"op":"t"})", "unknown value 't' (expected c, r, u or d)");
  ExpectError(R"({"after":null,"op":"c"})", "field 'after' is null or missing for op 'c'");
  ExpectError(R"({"op":"r"})", "field 'after' is null or missing for op 'r'");
  ExpectError(R"({"before":null,"after":{"id":1},"op":"u"})",
              "field 'before' is null or missing for op 'u' (Debezium sends it only when the "
              "table's replica identity is FULL");
  ExpectError(R"({"before":{"id":1},"after":null,"op":"u"})",
              "field 'after' is null or missing for op 'u'");
  ExpectError(R"({"after":null,"op":"d"})", "field 'before' is null or missing for op 'd'");
  ExpectError(R"({"after":"id=1","op":"c"})",
              "field 'after' must be an object or null, got \"id=1\"");
  ExpectError(R"({"after":{"id":"one"},"op":"c"})",
              "in 'after': field 'id': expected BIGINT NOT NULL, got string");
  ExpectError(R"({"after":{"name":"x"},"op":"c"})", "in 'after': field 'id'");
  // An update whose "after" is bad leaves no "-U" behind.
  ExpectError(R"({"before":{"id":1},"after":{"id":true},"op":"u"})", "in 'after': field 'id'");
}

// Rows ("r<seq>") and watermarks ("w<seconds>") in the order a source emitted them.
class TraceCollector final : public runtime::Collector {
 public:
  Status Emit(RecordBatch batch) override {
    for (size_t r = 0; r < batch.num_rows(); ++r) {
      trace.push_back("r" + std::to_string(batch.column(0).Get<int64_t>(r)));
    }
    return Status::OK();
  }
  Status EmitWatermark(runtime::Watermark w) override {
    trace.push_back("w" + std::to_string(w.micros / 1'000'000 % 3600));
    return Status::OK();
  }
  std::vector<std::string> trace;
};

// The watermark goes out right after the record that raised it, whatever the poll's batch
// size, so the rows a window drops as late are the same however the records were grouped
// (pipeline.auto-watermark-interval 0 here: every rise; the interval rule is the generator's,
// WatermarkGenerator.EmitsAfterTheRecordThatRaisesItByMoreThanTheInterval).
TEST_F(KafkaSourceTest, WatermarksFollowRecordOrderWhateverTheBatchSize) {
  ASSERT_TRUE(cluster_->CreateTopic("events", 1).ok());
  auto producer = kafka::KafkaProducer::Make({{"bootstrap.servers", Bootstrap()}});
  ASSERT_TRUE(producer.ok());
  for (int i = 10; i < 50; ++i) {
    char ts[32];
    std::snprintf(ts, sizeof ts, "2020-12-30 12:00:%02d", i % 5 == 0 ? i - 4 : i);  // some late
    const std::string v = "{\"seq\":" + std::to_string(i) + ",\"ts\":\"" + ts + "\"}";
    ASSERT_TRUE((*producer)->Produce("events", 0, v).ok());
  }
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(10)).ok());
  TableDescriptor table = Table("events", "seq BIGINT NOT NULL, ts TIMESTAMP(3)",
                                {{"connector", "kafka"},
                                 {"topic", "events"},
                                 {"format", "json"},
                                 {"properties.bootstrap.servers", Bootstrap()},
                                 {"scan.startup.mode", "earliest-offset"},
                                 {"scan.bounded.mode", "latest-offset"}});
  table.watermark = WatermarkSpec{1, /*delay_ms=*/2000, nullptr};
  std::vector<std::vector<std::string>> traces;
  for (size_t batch_rows : {1, 3, 1000}) {
    Result<KafkaSourceConfig> config = MakeKafkaSourceConfig(table);
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    config->batch_rows = batch_rows;
    config->watermark_interval = std::chrono::milliseconds(0);
    KafkaSource source(*config, nullptr);
    ASSERT_TRUE(source.Open(testing::Context("source-events")).ok());
    TraceCollector out;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    Result<runtime::SourceStatus> st = runtime::SourceStatus::kMore;
    while (st.ok() && *st != runtime::SourceStatus::kEnd &&
           std::chrono::steady_clock::now() < deadline) {
      st = source.Poll(out);
    }
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    traces.push_back(out.trace);
  }
  // Record 15 (time 11) comes after the watermark reached 12 (record 14's 14 s - 2 s).
  const std::vector<std::string> head = {"r10", "w4",  "r11", "w9",  "r12", "w10", "r13",
                                         "w11", "r14", "w12", "r15", "r16", "w14"};
  ASSERT_GE(traces[0].size(), head.size());
  EXPECT_EQ(std::vector<std::string>(traces[0].begin(), traces[0].begin() + head.size()), head);
  EXPECT_EQ(traces[1], traces[0]) << "3 records per batch";
  EXPECT_EQ(traces[2], traces[0]) << "one batch";
}

// Scale-out: instances of one job are members of one group. Each partition the group gives a
// member starts at the table's position (else 'scan.startup.mode'), as a new claim whose split
// name every row of it carries; the positions recorded are the claims; partitions move to a
// member that joins; a fence of a claim the member holds fails Poll.
TEST_F(KafkaSourceTest, GroupMembersClaimPartitionsAtTheTablesPositions) {
  std::map<int32_t, int64_t> table = {{0, 30}};  // partition -> position in the table
  auto position = [&](const iceberg::SourcePartition& p) -> Result<iceberg::PartitionStart> {
    EXPECT_EQ(p.topic, "roster");
    auto it = table.find(p.partition);
    iceberg::PartitionStart start;
    if (it != table.end()) start.position = it->second;
    start.state = "state-of-" + p.ToString();  // a keyed job's: the claim change carries it
    return start;
  };
  auto member = [&](std::shared_ptr<runtime::SourcePositionBoard> board) {
    // Heartbeats every 300 ms: the two rounds of a cooperative rebalance take seconds, not
    // tens of seconds.
    Result<KafkaSourceConfig> config =
        MakeKafkaSourceConfig(KTable({{"scan.bounded.mode", "unbounded"},
                                      {"properties.heartbeat.interval.ms", "300"},
                                      {"properties.session.timeout.ms", "6000"}}));
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    EXPECT_TRUE(EnableGroupMember(*config, position).ok());
    auto source = std::make_unique<KafkaSource>(*config, std::move(board));
    Status st = source->Open(testing::Context("source-roster"));
    EXPECT_TRUE(st.ok()) << st.ToString();
    return source;
  };
  auto claims_at = [](runtime::SourcePositionBoard& board, uint64_t id) {
    auto positions = board.PositionsAt(runtime::CheckpointId(id));
    EXPECT_EQ(positions.size(), 1u);
    return ClaimsFromJson(positions.begin()->second, "position").ValueOrDie();
  };
  // Rows read so far, by split.
  auto rows_by_split = [](const CollectingCollector& out) {
    std::map<std::string, int> n;
    for (const RecordBatch& b : out.batches) {
      EXPECT_EQ(b.schema()->fields.back().name, runtime::kSourceSplitColumn);
      const Column& split = b.column(b.num_columns() - 1);
      for (size_t r = 0; r < b.num_rows(); ++r) ++n[std::string(split.GetBytes(r))];
    }
    return n;
  };
  // Every row's claim began before it and had not ended (claim changes travel in order with
  // the rows, so a keyed task moves a partition's state between them); the claims held now.
  auto claims_in_order = [](const CollectingCollector& out) {
    std::map<std::string, std::pair<size_t, size_t>> live;  // split -> [began, ended) batches
    std::set<std::string> held;
    for (const auto& [at, change] : out.claims) {
      if (change.begins) {
        EXPECT_TRUE(held.insert(change.split).second) << change.split;
        live[change.split] = {at, SIZE_MAX};
        EXPECT_EQ(change.state, "state-of-roster/" + std::to_string(change.key_group));
        EXPECT_EQ(change.split.rfind("roster/" + std::to_string(change.key_group) + "/", 0), 0u);
      } else {
        EXPECT_EQ(held.erase(change.split), 1u) << change.split;
        live[change.split].second = at;
      }
    }
    for (size_t i = 0; i < out.batches.size(); ++i) {
      const Column& split = out.batches[i].column(out.batches[i].num_columns() - 1);
      for (size_t r = 0; r < out.batches[i].num_rows(); ++r) {
        auto it = live.find(std::string(split.GetBytes(r)));
        EXPECT_TRUE(it != live.end() && it->second.first <= i && i < it->second.second)
            << "a row of " << split.GetBytes(r) << " in batch " << i << " outside its claim";
      }
    }
    return held;
  };
  auto poll_until = [](std::vector<std::pair<KafkaSource*, CollectingCollector*>> members,
                       const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      for (auto [source, out] : members) EXPECT_TRUE(source->Poll(*out).ok());
    }
    return true;
  };

  auto board_a = std::make_shared<runtime::SourcePositionBoard>();
  auto a = member(board_a);
  CollectingCollector out_a;
  ASSERT_TRUE(poll_until({{a.get(), &out_a}}, [&] {
    std::map<std::string, int> n = rows_by_split(out_a);
    return n["roster/0/1"] == 70 && n["roster/1/1"] == 100 && n["roster/2/1"] == 100;
  })) << "partition 0 from offset 30, the others from the start";
  runtime::StateWriter state;
  ASSERT_TRUE(a->SnapshotPosition(runtime::CheckpointId(1), state).ok());
  std::vector<PartitionClaim> claims = claims_at(*board_a, 1);
  ASSERT_EQ(claims.size(), 3u);
  EXPECT_EQ(claims[0], (PartitionClaim{{"roster", 0}, 1, 30, 100}));
  EXPECT_EQ(claims[1], (PartitionClaim{{"roster", 1}, 1, std::nullopt, 100}));

  // a committed everything; b joins and takes partitions at the table's positions.
  table = {{0, 100}, {1, 100}, {2, 100}};
  auto board_b = std::make_shared<runtime::SourcePositionBoard>();
  auto b = member(board_b);
  CollectingCollector out_b;
  std::vector<PartitionClaim> held_by_b;
  ASSERT_TRUE(poll_until({{a.get(), &out_a}, {b.get(), &out_b}}, [&] {
    runtime::StateWriter w;
    EXPECT_TRUE(b->SnapshotPosition(runtime::CheckpointId(2), w).ok());
    held_by_b = claims_at(*board_b, 2);
    return !held_by_b.empty();
  })) << "b never got a partition";
  for (const PartitionClaim& c : held_by_b) {
    EXPECT_EQ(c.from, std::optional<int64_t>(100)) << ClaimSplit(c);
    EXPECT_EQ(c.next, 100) << ClaimSplit(c);
  }
  // New records reach each partition's holder only.
  Produce(kRecords + 1, kRecords + 30);
  ASSERT_TRUE(poll_until({{a.get(), &out_a}, {b.get(), &out_b}}, [&] {
    int n = 0;
    for (const auto& [split, rows] : rows_by_split(out_a)) n += rows;
    for (const auto& [split, rows] : rows_by_split(out_b)) n += rows;
    return n == 270 + 30;
  }));
  for (const auto& [split, rows] : rows_by_split(out_b)) {
    EXPECT_EQ(rows, 10) << split;  // 30 new records over 3 partitions
  }
  // a ended the claims b took, after their last rows; both hold what they hold now.
  std::set<std::string> held_a = claims_in_order(out_a);
  std::set<std::string> held_b_now = claims_in_order(out_b);
  EXPECT_EQ(held_a.size() + held_b_now.size(), 3u);
  for (const PartitionClaim& c : held_by_b) EXPECT_EQ(held_b_now.count(ClaimSplit(c)), 1u);

  // The table fenced one of b's claims: b stops.
  board_b->ReportFenced(ClaimSplit(held_by_b.front()));
  Result<runtime::SourceStatus> polled = b->Poll(out_b);
  ASSERT_FALSE(polled.ok());
  EXPECT_NE(polled.status().message().find("partition " + held_by_b.front().partition.ToString()),
            std::string::npos)
      << polled.status().ToString();
  EXPECT_TRUE(b->Close().ok());
  EXPECT_TRUE(a->Close().ok());
}

// A key-partitioned topic ('floe.partition-key') read by a keyed scaled-out job: each claim
// keeps the topic's partition count, and a member refuses a partition whose state the table
// holds as read with another count (the producer's key -> partition map changed, so a key's
// rows and its state would part). The mock cluster cannot add partitions to a live topic, so
// the count changing while an instance runs (the same check against the count it first saw) is
// not exercised here.
TEST_F(KafkaSourceTest, AKeyPartitionedMemberRefusesStateReadWithAnotherPartitionCount) {
  auto run = [&](int32_t table_count, const std::string& group) {
    Result<KafkaSourceConfig> config =
        MakeKafkaSourceConfig(KTable({{"scan.bounded.mode", "unbounded"},
                                      {"floe.partition-key", "seq"},
                                      {"properties.group.id", group}}));
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    EXPECT_TRUE(config->key_partitioned);
    EXPECT_TRUE(EnableGroupMember(*config, [table_count](const iceberg::SourcePartition&) {
                  iceberg::PartitionStart start;
                  start.topic_partitions = table_count;
                  return Result<iceberg::PartitionStart>(start);
                }).ok());
    auto board = std::make_shared<runtime::SourcePositionBoard>();
    KafkaSource source(*config, board);
    EXPECT_TRUE(source.Open(testing::Context("source-roster")).ok());
    CollectingCollector out;
    Status polled;
    size_t rows = 0;
    for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
         polled.ok() && rows < kRecords && std::chrono::steady_clock::now() < deadline;) {
      Result<runtime::SourceStatus> r = source.Poll(out);
      polled = r.status();
      rows = 0;
      for (const RecordBatch& b : out.batches) rows += b.num_rows();
    }
    std::vector<PartitionClaim> claims;
    if (polled.ok()) {
      runtime::StateWriter w;
      EXPECT_TRUE(source.SnapshotPosition(runtime::CheckpointId(1), w).ok());
      claims =
          ClaimsFromJson(board->PositionsAt(runtime::CheckpointId(1)).begin()->second, "position")
              .ValueOrDie();
    }
    EXPECT_TRUE(source.Close().ok());
    return std::make_pair(polled, claims);
  };
  auto [same, claims] = run(kPartitions, "g-same-" + group_);
  ASSERT_TRUE(same.ok()) << same.ToString();
  ASSERT_EQ(claims.size(), static_cast<size_t>(kPartitions));
  for (const PartitionClaim& c : claims) EXPECT_EQ(c.topic_partitions, kPartitions);

  auto [grown, none] = run(kPartitions - 1, "g-grown-" + group_);
  ASSERT_FALSE(grown.ok());
  EXPECT_EQ(grown.code(), StatusCode::kInvalidArgument);
  for (const std::string& part :
       {"topic 'roster' has " + std::to_string(kPartitions) + " partitions",
        "state as read with " + std::to_string(kPartitions - 1),
        std::string("'floe.partitions.<sink>.roster'")}) {
    EXPECT_NE(grown.message().find(part), std::string::npos) << grown.ToString();
  }
}

// Moving a single-instance job (which committed group offsets after its table commits) to
// scale-out with the same group: a partition without a table position starts at the group's
// committed offset under 'group-offsets', read inside the rebalance.
TEST_F(KafkaSourceTest, AGroupMemberWithoutTablePositionsStartsAtTheGroupsOffsets) {
  auto committer =
      kafka::KafkaConsumer::Make({{"bootstrap.servers", Bootstrap()}, {"group.id", "g-" + group_}});
  ASSERT_TRUE(committer.ok());
  ASSERT_TRUE((*committer)->CommitSync("roster", {{0, 60}, {1, 70}, {2, 80}}).ok());
  Result<KafkaSourceConfig> config = MakeKafkaSourceConfig(
      KTable({{"scan.bounded.mode", "unbounded"}, {"scan.startup.mode", "group-offsets"}}));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_TRUE(EnableGroupMember(*config, [](const iceberg::SourcePartition&) {
                return Result<iceberg::PartitionStart>(iceberg::PartitionStart{});
              }).ok());
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  KafkaSource source(*config, board);
  ASSERT_TRUE(source.Open(testing::Context("source-roster")).ok());
  CollectingCollector out;
  size_t rows = 0;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       rows < 90 && std::chrono::steady_clock::now() < deadline;) {
    ASSERT_TRUE(source.Poll(out).ok());
    rows = 0;
    for (const RecordBatch& b : out.batches) rows += b.num_rows();
  }
  EXPECT_EQ(rows, 90u) << "100 records per partition from offsets 60, 70 and 80";
  runtime::StateWriter state;
  ASSERT_TRUE(source.SnapshotPosition(runtime::CheckpointId(1), state).ok());
  std::vector<PartitionClaim> claims =
      ClaimsFromJson(board->PositionsAt(runtime::CheckpointId(1)).begin()->second, "position")
          .ValueOrDie();
  ASSERT_EQ(claims.size(), 3u);
  for (const PartitionClaim& c : claims) {
    EXPECT_EQ(c.from, std::nullopt);
    EXPECT_EQ(c.next, 100);
  }
  EXPECT_TRUE(source.Close().ok());
}

}  // namespace
}  // namespace floe::connectors
