#include "floe/connectors/kafka/kafka_sink.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "floe/connectors/connectors_test_util.h"
#include "floe/kafka/mock_cluster.h"

// The Kafka sink against librdkafka's in-process mock cluster. What the mock cannot show:
// read_committed isolation (aborted and open transactions are visible to every reader), so
// these tests check the plumbing (one transaction per checkpoint, records and offsets in the
// state, commits, the fenced commit's error, both outcomes of the restore's read-back) and
// read the topic back with read_uncommitted.
namespace floe::connectors {
namespace {

using testing::CollectingCollector;
using testing::Table;
constexpr int kPartitions = 3;
constexpr std::chrono::seconds kTimeout(20);

class KafkaSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = kafka::MockCluster::Make(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(*cluster);
    ASSERT_TRUE(cluster_->CreateTopic("out", kPartitions).ok());
  }

  TableDescriptor SinkTable(std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> options = {
        {"connector", "kafka"},
        {"topic", "out"},
        {"format", "json"},
        {"properties.bootstrap.servers", cluster_->bootstrap_servers()}};
    for (auto& [k, v] : extra) options[k] = v;
    return Table("out", "seq BIGINT NOT NULL, name STRING", options);
  }

  static KafkaSinkJobSettings Job() {
    KafkaSinkJobSettings job;
    job.checkpointing.interval = std::chrono::seconds(1);
    job.checkpointing.timeout = std::chrono::seconds(10);
    return job;
  }

  std::unique_ptr<KafkaSink> MakeSink(
      const TableDescriptor& table, std::optional<uint64_t> restored_from = std::nullopt,
      std::shared_ptr<runtime::SourcePositionBoard> board = nullptr) {
    Result<KafkaSinkConfig> config = MakeKafkaSinkConfig(table, Job());
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    config->timeout_ms = 20000;
    auto sink = std::make_unique<KafkaSink>(*config, std::move(board));
    runtime::OperatorContext ctx = testing::Context("sink-out");
    if (restored_from) ctx.restored_from = runtime::CheckpointId(*restored_from);
    Status st = sink->Open(ctx);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return sink;
  }

  // Checkpoint `id` through the sink: barrier (state discarded), then completion.
  Status Checkpoint(KafkaSink& sink, uint64_t id) {
    runtime::StateWriter state;
    FLOE_RETURN_NOT_OK(sink.OnBarrier(runtime::CheckpointId(id), state, out_));
    return sink.OnCheckpointComplete(runtime::CheckpointId(id));
  }

  static TableDescriptor ExactlyOnce(KafkaSinkTest& t) {
    return t.SinkTable({{"sink.delivery-guarantee", "exactly-once"},
                        {"sink.transactional-id-prefix", "floe-test"},
                        {"properties.transaction.timeout.ms", "60000"}});
  }

  // Rows {"seq":first..last,"name":"n<seq>"}.
  static RecordBatch Rows(const TableDescriptor& table, int first, int last) {
    auto decoder = json::JsonLinesDecoder::Make(table.schema);
    EXPECT_TRUE(decoder.ok());
    std::string text;
    for (int seq = first; seq <= last; ++seq) text += Value(seq) + "\n";
    RecordBatch batch(table.schema);
    EXPECT_TRUE((*decoder)->Decode(text, "test", 1, &batch).ok());
    return batch;
  }
  static std::string Value(int seq) {
    return "{\"seq\":" + std::to_string(seq) + ",\"name\":\"n" + std::to_string(seq) + "\"}";
  }

  // Every record of the topic (read_uncommitted: all the mock can do), as (partition, offset)
  // -> value.
  std::map<std::pair<int32_t, int64_t>, std::string> ReadTopic() {
    auto consumer = kafka::KafkaConsumer::Make(
        {{"bootstrap.servers", cluster_->bootstrap_servers()}, {"enable.partition.eof", "true"}});
    EXPECT_TRUE(consumer.ok());
    kafka::PartitionOffsets start;
    for (int p = 0; p < kPartitions; ++p) start[p] = 0;
    EXPECT_TRUE((*consumer)->Assign("out", start).ok());
    std::map<std::pair<int32_t, int64_t>, std::string> out;
    std::set<int32_t> eof;
    auto deadline = std::chrono::steady_clock::now() + kTimeout;
    while (static_cast<int>(eof.size()) < kPartitions &&
           std::chrono::steady_clock::now() < deadline) {
      auto m = (*consumer)->Poll(std::chrono::milliseconds(100));
      if (!m.ok() || !m->has_value()) continue;
      if ((*m)->kind() == kafka::ConsumedMessage::Kind::kPartitionEnd) {
        eof.insert((*m)->partition());
      } else if ((*m)->kind() == kafka::ConsumedMessage::Kind::kRecord) {
        eof.erase((*m)->partition());
        out[{(*m)->partition(), (*m)->offset()}] = std::string((*m)->value());
      }
    }
    EXPECT_EQ(static_cast<int>(eof.size()), kPartitions) << "timed out reading the topic";
    return out;
  }

  // The values of the topic, sorted.
  std::vector<std::string> Values() {
    std::vector<std::string> v;
    for (auto& [where, value] : ReadTopic()) v.push_back(value);
    std::sort(v.begin(), v.end());
    return v;
  }
  static std::vector<std::string> Expected(int first, int last) {
    std::vector<std::string> v;
    for (int seq = first; seq <= last; ++seq) v.push_back(Value(seq));
    std::sort(v.begin(), v.end());
    return v;
  }

  std::unique_ptr<kafka::MockCluster> cluster_;
  CollectingCollector out_;
};

TEST_F(KafkaSinkTest, AtLeastOnceHasEveryRecordAcknowledgedWhenTheBarrierReturns) {
  TableDescriptor table = SinkTable();  // at-least-once is the default
  auto sink = MakeSink(table);
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 500), 0, out_).ok());
  runtime::StateWriter state;
  ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(1), state, out_).ok());
  // Read right after the barrier, before Close: the barrier waited for every ack.
  EXPECT_EQ(Values(), Expected(1, 500));
  EXPECT_EQ(state.size(), 0u);
  ASSERT_TRUE(sink->Close().ok());
}

TEST_F(KafkaSinkTest, FixedAndRoundRobinPartitionersLikeFlink) {
  {
    TableDescriptor table = SinkTable({{"sink.partitioner", "round-robin"}});
    auto sink = MakeSink(table);
    ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 30), 0, out_).ok());
    ASSERT_TRUE(sink->OnEndOfInput(out_).ok());
    ASSERT_TRUE(sink->Close().ok());
  }
  std::map<int32_t, int> per_partition;
  for (const auto& [where, value] : ReadTopic()) ++per_partition[where.first];
  EXPECT_EQ(per_partition, (std::map<int32_t, int>{{0, 10}, {1, 10}, {2, 10}}));
  {
    // Subtask 4 of 5 writes partition 4 mod 3 = 1 only.
    TableDescriptor table = SinkTable({{"sink.partitioner", "fixed"}});
    Result<KafkaSinkConfig> config = MakeKafkaSinkConfig(table, Job());
    ASSERT_TRUE(config.ok());
    KafkaSink sink(*config);
    ASSERT_TRUE(sink.Open(testing::Context("sink-out", 4, 5)).ok());
    ASSERT_TRUE(sink.ProcessBatch(Rows(table, 31, 40), 0, out_).ok());
    ASSERT_TRUE(sink.OnEndOfInput(out_).ok());
    ASSERT_TRUE(sink.Close().ok());
  }
  per_partition.clear();
  for (const auto& [where, value] : ReadTopic()) ++per_partition[where.first];
  EXPECT_EQ(per_partition, (std::map<int32_t, int>{{0, 10}, {1, 20}, {2, 10}}));
}

TEST_F(KafkaSinkTest, NoneFlushesAtEndOfInput) {
  TableDescriptor table = SinkTable({{"sink.delivery-guarantee", "none"}});
  auto sink = MakeSink(table);
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 50), 0, out_).ok());
  ASSERT_TRUE(sink->OnEndOfInput(out_).ok());
  EXPECT_EQ(Values(), Expected(1, 50));
  ASSERT_TRUE(sink->Close().ok());
}

TEST_F(KafkaSinkTest, ExactlyOnceKeepsOneTransactionPerCheckpointWithOffsetsInTheState) {
  TableDescriptor table = ExactlyOnce(*this);
  auto sink = MakeSink(table);
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 300), 0, out_).ok());
  runtime::StateWriter s1;
  ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(1), s1, out_).ok());
  // Records of checkpoint 2 go to the next transactional id while 1 waits for completion.
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 301, 400), 0, out_).ok());
  runtime::StateWriter s2;
  ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(2), s2, out_).ok());
  ASSERT_EQ(sink->pending().size(), 2u);
  EXPECT_EQ(sink->pending().at(1).transactional_id, "floe-test-0-1");
  EXPECT_EQ(sink->pending().at(2).transactional_id, "floe-test-0-2");

  // The state of checkpoint 2 holds both transactions; every kept (partition, offset) holds
  // the kept value in the topic.
  std::string blob = s2.Finish();
  runtime::StateReader reader(blob);
  Result<std::vector<KafkaSinkTransaction>> decoded = DecodeKafkaSinkState(reader);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[0].checkpoint_id, 1u);
  EXPECT_EQ((*decoded)[0].records.size(), 300u);
  EXPECT_EQ((*decoded)[1].records.size(), 100u);
  auto topic = ReadTopic();
  ASSERT_EQ(topic.size(), 400u);
  for (const KafkaSinkTransaction& t : *decoded) {
    for (const KafkaSinkRecord& r : t.records) {
      EXPECT_EQ(topic[std::make_pair(r.partition, r.offset)], r.value);
    }
  }
  ASSERT_TRUE(sink->OnCheckpointComplete(runtime::CheckpointId(2)).ok());  // subsumes 1
  EXPECT_TRUE(sink->pending().empty());
  // A checkpoint without records opens no transaction.
  runtime::StateWriter s3;
  ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(3), s3, out_).ok());
  EXPECT_TRUE(sink->pending().empty());
  ASSERT_TRUE(sink->Close().ok());
  EXPECT_EQ(Values(), Expected(1, 400));
}

// Kafka sources publish group offsets of checkpoint N only after this report (kafka_source.h).
TEST_F(KafkaSinkTest, ExactlyOnceReportsCommittedCheckpointsOnTheBoardOnlyAfterCommitting) {
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  TableDescriptor table = ExactlyOnce(*this);
  auto sink = MakeSink(table, std::nullopt, board);
  ASSERT_EQ(board->CommittedByAll(), std::optional<uint64_t>(0));  // registered in Open
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 50), 0, out_).ok());
  runtime::StateWriter s1;
  ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(1), s1, out_).ok());
  EXPECT_EQ(board->CommittedByAll(), std::optional<uint64_t>(0));  // flushed, not committed
  ASSERT_TRUE(sink->OnCheckpointComplete(runtime::CheckpointId(1)).ok());
  EXPECT_TRUE(sink->pending().empty());
  EXPECT_EQ(board->CommittedByAll(), std::optional<uint64_t>(1));
  // Nothing to commit for 2: reported all the same, or the sources would wait forever.
  ASSERT_TRUE(Checkpoint(*sink, 2).ok());
  EXPECT_EQ(board->CommittedByAll(), std::optional<uint64_t>(2));
  // Closed: a source waiting for 3 stops waiting at once instead of timing out.
  ASSERT_TRUE(sink->Close().ok());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(board->WaitCommittedByAll(runtime::CheckpointId(3), kTimeout, nullptr));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(KafkaSinkTest, AtLeastOnceIsNoCommitterOnTheBoard) {
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  auto sink =
      MakeSink(SinkTable({{"sink.delivery-guarantee", "at-least-once"}}), std::nullopt, board);
  ASSERT_TRUE(sink->OnCheckpointComplete(runtime::CheckpointId(1)).ok());
  EXPECT_EQ(board->CommittedByAll(), std::nullopt);
  ASSERT_TRUE(sink->Close().ok());
}

TEST_F(KafkaSinkTest, RestoreFindsACommittedTransactionAndSendsNothing) {
  TableDescriptor table = ExactlyOnce(*this);
  std::string blob;
  {
    auto sink = MakeSink(table);
    ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 200), 0, out_).ok());
    runtime::StateWriter state;
    ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(1), state, out_).ok());
    ASSERT_TRUE(sink->OnCheckpointComplete(runtime::CheckpointId(1)).ok());
    blob = state.Finish();
    ASSERT_TRUE(sink->Close().ok());
  }
  // Restored from checkpoint 1 whose transaction was committed after the snapshot.
  auto sink = MakeSink(table, 1);
  runtime::StateReader reader(blob);
  ASSERT_TRUE(sink->Restore(reader).ok());
  EXPECT_EQ(sink->resent_records(), 0);
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 201, 250), 0, out_).ok());
  ASSERT_TRUE(Checkpoint(*sink, 2).ok());
  ASSERT_TRUE(sink->Close().ok());
  EXPECT_EQ(Values(), Expected(1, 250));
}

TEST_F(KafkaSinkTest, RestoreResendsATransactionThatDidNotLandInTheNextTransaction) {
  TableDescriptor table = ExactlyOnce(*this);
  // Other records at the offsets the restored transaction claims (what a read_committed reader
  // would see after an abort on real Kafka), and one partition where it never got written.
  auto producer =
      kafka::KafkaProducer::Make({{"bootstrap.servers", cluster_->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*producer)->Produce("out", 0, "{\"other\":1}").ok());
  ASSERT_TRUE((*producer)->Flush(kTimeout).ok());
  KafkaSinkTransaction lost;
  lost.transactional_id = "floe-test-0-1";
  lost.checkpoint_id = 7;
  lost.records = {{0, 1, Value(1)}, {0, 2, Value(2)}, {1, 5, Value(3)}};
  runtime::StateWriter state7;
  EncodeKafkaSinkState({lost}, state7);
  std::string blob = state7.Finish();

  {
    // A first restore re-sends into a transaction that never reaches a barrier (the job fails
    // again): nothing was committed, so the next restore from 7 re-sends the same records.
    auto failed = MakeSink(table, 7);
    runtime::StateReader reader(blob);
    ASSERT_TRUE(failed->Restore(reader).ok());
    EXPECT_EQ(failed->resent_records(), 3);
    ASSERT_TRUE(failed->Close().ok());
  }
  auto sink = MakeSink(table, 7);
  runtime::StateReader reader(blob);
  Status st = sink->Restore(reader);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(sink->resent_records(), 3);
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 4, 10), 0, out_).ok());
  runtime::StateWriter state8;
  ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(8), state8, out_).ok());
  // The re-sent records belong to checkpoint 8's transaction: a failure before 8 completes
  // aborts them with it, and restoring 7 again re-sends them again.
  ASSERT_EQ(sink->pending().size(), 1u);
  EXPECT_EQ(sink->pending().at(8).records.size(), 10u);
  EXPECT_EQ(sink->pending().at(8).records[0].partition, 0);
  EXPECT_EQ(sink->pending().at(8).records[2].partition, 1);
  ASSERT_TRUE(sink->OnCheckpointComplete(runtime::CheckpointId(8)).ok());
  ASSERT_TRUE(sink->Close().ok());
  // Every value is there. The failed attempt's re-sent records may show too (the mock has no
  // read_committed), unless its close purged them before they were sent.
  std::vector<std::string> values = Values();
  std::vector<std::string> expected = Expected(1, 10);
  expected.push_back("{\"other\":1}");
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> distinct = values;
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  EXPECT_EQ(distinct, expected);
  EXPECT_GE(values.size(), 13u);
  EXPECT_LE(values.size(), 16u);
}

// Rescaled from 2 subtasks to 1: subtask 0 settles both old subtasks' pending transactions,
// which never landed, and re-sends their records once in its next transaction.
TEST_F(KafkaSinkTest, RescaledRestoreSettlesEveryOldSubtasksTransactions) {
  TableDescriptor table = ExactlyOnce(*this);
  std::vector<std::string> blobs;
  for (uint32_t old = 0; old < 2; ++old) {
    KafkaSinkTransaction lost;
    lost.transactional_id = KafkaSink::TransactionalId("floe-test", old, 1);
    lost.checkpoint_id = 7;
    const int first = 1 + 3 * static_cast<int>(old);
    lost.records = {{0, 1, Value(first)}, {1, 1, Value(first + 1)}, {0, 2, Value(first + 2)}};
    runtime::StateWriter state;
    EncodeKafkaSinkState({lost}, state);
    blobs.push_back(state.Finish());
  }
  auto sink = MakeSink(table, 7);
  Status st = sink->RestoreRescaled(blobs);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(sink->resent_records(), 6);
  runtime::StateWriter state8;
  ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(8), state8, out_).ok());
  ASSERT_TRUE(sink->OnCheckpointComplete(runtime::CheckpointId(8)).ok());
  ASSERT_TRUE(sink->Close().ok());
  EXPECT_EQ(Values(), Expected(1, 6));
}

TEST_F(KafkaSinkTest, ATransactionVisibleInOnlySomePartitionsFailsTheRestore) {
  TableDescriptor table = ExactlyOnce(*this);
  auto producer =
      kafka::KafkaProducer::Make({{"bootstrap.servers", cluster_->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok());
  ASSERT_TRUE((*producer)->Produce("out", 0, Value(1)).ok());
  ASSERT_TRUE((*producer)->Produce("out", 1, "{\"other\":1}").ok());
  ASSERT_TRUE((*producer)->Flush(kTimeout).ok());
  // Written by subtask 3 of an earlier, wider run: an id outside this run's pool, fenced too.
  KafkaSinkTransaction txn{"floe-test-3-0", 4, {{0, 0, Value(1)}, {1, 0, Value(2)}}};
  runtime::StateWriter state;
  EncodeKafkaSinkState({txn}, state);
  std::string blob = state.Finish();
  auto sink = MakeSink(table, 4);
  runtime::StateReader reader(blob);
  Status st = sink->Restore(reader);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("transaction 'floe-test-3-0' of checkpoint 4 (2 records to topic "
                              "'out') is only partly visible to a read_committed reader "
                              "(partition 0 at 0: found, partition 1 at 0: not found)"),
            std::string::npos)
      << st.ToString();
  ASSERT_TRUE(sink->Close().ok());
}

// Savepoints keep ids too (their completion is not delivered), so the pool of
// max-concurrent + 2 (3 here) grows on demand up to the 8 ids Open fences; only beyond that
// does a transaction find no id, and the error names every id and its checkpoint.
TEST_F(KafkaSinkTest, EveryFencedIdWaitingForItsCheckpointFailsWithTheIds) {
  TableDescriptor table = ExactlyOnce(*this);
  auto sink = MakeSink(table);
  for (uint64_t n = 1; n <= 8; ++n) {
    ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 5), 0, out_).ok()) << n;
    runtime::StateWriter state;
    ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(n), state, out_).ok()) << n;
  }
  ASSERT_EQ(sink->pending().size(), 8u);
  EXPECT_EQ(sink->pending().at(8).transactional_id, "floe-test-0-7");
  // None completed (checkpoint 1 failed, tolerated, the rest were savepoints): a ninth
  // transaction has no id.
  Status st = sink->ProcessBatch(Rows(table, 6, 6), 0, out_);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("all 8 transactional ids hold a transaction waiting for its "
                              "checkpoint to complete: floe-test-0-0 (checkpoint 3), "
                              "floe-test-0-1 (checkpoint 1), floe-test-0-2 (checkpoint 2), "
                              "floe-test-0-3 (checkpoint 4)"),
            std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("'execution.checkpointing.max-concurrent-checkpoints' + 2 ids and "
                              "grows on demand up to 8"),
            std::string::npos)
      << st.ToString();
  ASSERT_TRUE(sink->Close().ok());
}

// Reviewer finding: two savepoints in one checkpoint interval took every id of the pool of
// 3 and failed the task. Three savepoints and a checkpoint, none completed, then the
// checkpoint's completion commits them all, in order, exactly once.
TEST_F(KafkaSinkTest, SeveralSavepointsInOneIntervalTakeFurtherIds) {
  TableDescriptor table = ExactlyOnce(*this);
  auto sink = MakeSink(table);
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 100), 0, out_).ok());
  ASSERT_TRUE(Checkpoint(*sink, 1).ok());
  for (uint64_t id = 2; id <= 5; ++id) {  // savepoints 2, 3, 4; checkpoint 5
    ASSERT_TRUE(sink->ProcessBatch(Rows(table, 100 * (id - 1) + 1, 100 * id), 0, out_).ok()) << id;
    runtime::StateWriter s;
    ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(id), s, out_).ok()) << id;
  }
  // Checkpoint 5 is still completing: the next records need a fifth id.
  Status st = sink->ProcessBatch(Rows(table, 501, 550), 0, out_);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(sink->pending().size(), 4u);
  std::set<std::string> ids;
  for (const auto& [id, txn] : sink->pending()) ids.insert(txn.transactional_id);
  EXPECT_EQ(ids.size(), 4u);
  ASSERT_TRUE(sink->OnCheckpointComplete(runtime::CheckpointId(5)).ok());
  EXPECT_TRUE(sink->pending().empty());
  ASSERT_TRUE(Checkpoint(*sink, 6).ok());
  ASSERT_TRUE(sink->Close().ok());
  EXPECT_EQ(Values(), Expected(1, 550));
}

// A savepoint's completion is not delivered to the sink (docs/exactly-once.md): its
// transaction stays pending until the next checkpoint completes, while that checkpoint's
// transaction waits and the one after it is open. The pool (max-concurrent-checkpoints 1, so
// 3 ids) holds all three, and the checkpoint's completion commits both, in order.
TEST_F(KafkaSinkTest, ASavepointsTransactionWaitsForTheNextCheckpointInThePool) {
  TableDescriptor table = ExactlyOnce(*this);
  auto sink = MakeSink(table);
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 100), 0, out_).ok());
  ASSERT_TRUE(Checkpoint(*sink, 1).ok());
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 101, 200), 0, out_).ok());
  runtime::StateWriter s2;  // savepoint 2: never completed towards the sink
  ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(2), s2, out_).ok());
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 201, 300), 0, out_).ok());
  runtime::StateWriter s3;
  ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(3), s3, out_).ok());
  // Checkpoint 3 is still completing: the next records need a third id.
  Status st = sink->ProcessBatch(Rows(table, 301, 350), 0, out_);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(sink->pending().size(), 2u);
  ASSERT_TRUE(sink->OnCheckpointComplete(runtime::CheckpointId(3)).ok());
  EXPECT_TRUE(sink->pending().empty());  // 3 subsumed the savepoint's transaction
  ASSERT_TRUE(Checkpoint(*sink, 4).ok());
  ASSERT_TRUE(sink->Close().ok());
  EXPECT_EQ(Values(), Expected(1, 350));
}

TEST_F(KafkaSinkTest, FencedCommitFailsTheTaskNamingTheTransaction) {
  TableDescriptor table = ExactlyOnce(*this);
  auto sink = MakeSink(table);
  ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 20), 0, out_).ok());
  runtime::StateWriter state;
  ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(1), state, out_).ok());
  ASSERT_TRUE(cluster_->PushRequestErrors(26, {"PRODUCER_FENCED"}).ok());  // EndTxn
  Status st = sink->OnCheckpointComplete(runtime::CheckpointId(1));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("kafka sink 'sink-out/0': committing transaction "
                              "'floe-test-0-1' of checkpoint 1 (20 records to topic 'out') "
                              "failed (fatal)"),
            std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("restarts from checkpoint 1"), std::string::npos) << st.ToString();
  ASSERT_TRUE(sink->Close().ok());

  // The restart: the pending transaction is settled by the read-back (on the mock its records
  // are visible, so it counts as landed; on Kafka the fenced transaction is aborted, and the
  // records are re-sent).
  auto again = MakeSink(table, 1);
  std::string blob = state.Finish();
  runtime::StateReader reader(blob);
  ASSERT_TRUE(again->Restore(reader).ok());
  EXPECT_EQ(again->resent_records(), 0);
  ASSERT_TRUE(again->Close().ok());
  EXPECT_EQ(Values(), Expected(1, 20));
}

// Flink's json format: TIMESTAMP / TIMESTAMP_LTZ per 'json.timestamp-format.standard' (default
// 'SQL': a space), DECIMAL as a plain JSON number. The records read back into the same rows.
class KafkaSinkJsonFormatTest : public KafkaSinkTest,
                                public ::testing::WithParamInterface<const char*> {};

TEST_P(KafkaSinkJsonFormatTest, WritesTimestampsAndDecimalsLikeFlink) {
  std::map<std::string, std::string> options = {
      {"connector", "kafka"},
      {"topic", "out"},
      {"format", "json"},
      {"properties.bootstrap.servers", cluster_->bootstrap_servers()}};
  std::string standard = GetParam();
  if (!standard.empty()) options["json.timestamp-format.standard"] = standard;
  TableDescriptor table =
      Table("out", "seq INT, ts TIMESTAMP(6), tz TIMESTAMP_LTZ(6), amount DECIMAL(20, 2)", options);
  auto decoder = json::JsonLinesDecoder::Make(table.schema);
  ASSERT_TRUE(decoder.ok());
  RecordBatch rows(table.schema);
  ASSERT_TRUE((*decoder)
                  ->Decode("{\"seq\":1,\"ts\":\"2020-12-30T12:13:14.123\",\"tz\":"
                           "\"2020-12-30T12:13:14+01:00\",\"amount\":\"454621864049246170.5\"}\n"
                           "{\"seq\":2,\"ts\":\"1969-12-31 23:59:59.999999\",\"tz\":null,"
                           "\"amount\":-0.07}\n",
                           "test", 1, &rows)
                  .ok());
  auto sink = MakeSink(table);
  ASSERT_TRUE(sink->ProcessBatch(rows, 0, out_).ok());
  ASSERT_TRUE(sink->OnEndOfInput(out_).ok());
  ASSERT_TRUE(sink->Close().ok());

  const char sep = standard == "ISO-8601" ? 'T' : ' ';
  std::vector<std::string> expected = {std::string("{\"seq\":1,\"ts\":\"2020-12-30") + sep +
                                           "12:13:14.123\",\"tz\":\"2020-12-30" + sep +
                                           "11:13:14Z\",\"amount\":454621864049246170.50}",
                                       std::string("{\"seq\":2,\"ts\":\"1969-12-31") + sep +
                                           "23:59:59.999999\",\"tz\":null,\"amount\":-0.07}"};
  std::vector<std::string> values = Values();
  EXPECT_EQ(values, expected);
  // Read back (as a floe or Flink Kafka source with the same standard would): the same rows.
  std::string text;
  for (const std::string& v : values) text += v + "\n";
  RecordBatch back(table.schema);
  ASSERT_TRUE((*decoder)->Decode(text, "out", 1, &back).ok());
  ASSERT_EQ(back.num_rows(), 2u);
  for (size_t c = 0; c < table.schema->fields.size(); ++c) {
    EXPECT_TRUE(back.column(c).Equals(rows.column(c))) << table.schema->fields[c].name;
  }
}

INSTANTIATE_TEST_SUITE_P(Standards, KafkaSinkJsonFormatTest,
                         ::testing::Values("", "SQL", "ISO-8601"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           if (name.empty()) return std::string("Default");
                           return name == "SQL" ? name : std::string("Iso8601");
                         });

TEST_F(KafkaSinkTest, GarbledOrTruncatedStateIsCorruptionNotAnAllocation) {
  KafkaSinkTransaction txn{"floe-test-0-1", 3, {{0, 4, Value(1)}, {1, 9, Value(2)}}};
  runtime::StateWriter w;
  EncodeKafkaSinkState({txn}, w);
  std::string blob = w.Finish();
  auto decode = [](const std::string& b) {
    runtime::StateReader r(b);
    return DecodeKafkaSinkState(r).status();
  };
  ASSERT_TRUE(decode(blob).ok());
  // Every truncation fails cleanly.
  for (size_t n = 0; n < blob.size(); ++n) {
    Status st = decode(blob.substr(0, n));
    EXPECT_TRUE(st.IsCorruption()) << n << ": " << st.ToString();
  }
  // A transaction count of 2^32 - 1 (bytes 4..7), then a record count (after the 4-byte id
  // length, the 13-byte id and the 8-byte checkpoint).
  std::string bad_txns = blob;
  bad_txns.replace(4, 4, std::string(4, '\xff'));
  Status st = decode(bad_txns);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("4294967295 transactions at byte 8 cannot fit in the"),
            std::string::npos)
      << st.ToString();
  std::string bad_records = blob;
  bad_records.replace(8 + 4 + 13 + 8, 4, std::string("\x00\x00\x00\x40", 4));
  st = decode(bad_records);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("1073741824 records"), std::string::npos) << st.ToString();
}

// 'sink.delivery-guarantee' lowered from exactly-once across a restore: the exactly-once
// checkpoint's pending transactions are still settled; what did not land is re-sent as
// ordinary records (else it would be lost), and their ids are fenced.
TEST_F(KafkaSinkTest, ExactlyOnceStateRestoredWithAtLeastOnceResendsWhatDidNotLand) {
  TableDescriptor eo = ExactlyOnce(*this);
  auto producer =
      kafka::KafkaProducer::Make({{"bootstrap.servers", cluster_->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*producer)->Produce("out", 0, "{\"other\":1}").ok());
  ASSERT_TRUE((*producer)->Produce("out", 2, Value(4)).ok());  // a transaction that landed
  ASSERT_TRUE((*producer)->Flush(kTimeout).ok());
  KafkaSinkTransaction lost{
      "floe-test-0-1", 7, {{0, 1, Value(1)}, {0, 2, Value(2)}, {1, 5, Value(3)}}};
  KafkaSinkTransaction landed{"floe-test-0-0", 6, {{2, 0, Value(4)}}};
  runtime::StateWriter w;
  EncodeKafkaSinkState({landed, lost}, w);
  std::string blob = w.Finish();

  for (const char* guarantee : {"at-least-once", "none"}) {
    SCOPED_TRACE(guarantee);
    auto sink = MakeSink(SinkTable({{"sink.delivery-guarantee", guarantee}}), 7);
    runtime::StateReader reader(blob);
    Status st = sink->Restore(reader);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(sink->resent_records(), 3);
    EXPECT_EQ(sink->fenced_ids(), (std::vector<std::string>{"floe-test-0-0", "floe-test-0-1"}));
    ASSERT_TRUE(sink->OnEndOfInput(out_).ok());
    ASSERT_TRUE(sink->Close().ok());
  }
  std::vector<std::string> expected = Expected(1, 3);
  std::vector<std::string> once = expected;
  expected.insert(expected.end(), once.begin(), once.end());  // re-sent by both runs
  expected.push_back(Value(4));
  for (int i = 0; i < 3; ++i) expected.push_back("{\"other\":1}");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Values(), expected);
}

// Raised to exactly-once: the at-least-once checkpoint's empty blob restores nothing.
TEST_F(KafkaSinkTest, AtLeastOnceStateRestoredWithExactlyOnceRestoresNothing) {
  std::string blob;
  {
    auto alo = MakeSink(SinkTable({{"sink.delivery-guarantee", "at-least-once"}}));
    ASSERT_TRUE(alo->ProcessBatch(Rows(SinkTable(), 1, 5), 0, out_).ok());
    runtime::StateWriter w;
    ASSERT_TRUE(alo->OnBarrier(runtime::CheckpointId(1), w, out_).ok());
    blob = w.Finish();
    ASSERT_TRUE(alo->Close().ok());
  }
  EXPECT_TRUE(blob.empty());
  TableDescriptor eo = ExactlyOnce(*this);
  auto sink = MakeSink(eo, 1);
  runtime::StateReader reader(blob);
  Status st = sink->Restore(reader);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(sink->resent_records(), 0);
  ASSERT_TRUE(sink->ProcessBatch(Rows(eo, 6, 10), 0, out_).ok());
  ASSERT_TRUE(Checkpoint(*sink, 2).ok());
  ASSERT_TRUE(sink->Close().ok());
  EXPECT_EQ(Values(), Expected(1, 10));
}

// Open fences ids beyond a smaller pool (an earlier run's larger pool may have left one open).
TEST_F(KafkaSinkTest, OpenFencesIdsBeyondThePoolUpToTheBound) {
  auto sink = MakeSink(ExactlyOnce(*this));
  std::vector<std::string> expected;
  for (int slot = 0; slot < 8; ++slot) expected.push_back("floe-test-0-" + std::to_string(slot));
  EXPECT_EQ(sink->fenced_ids(), expected);
  ASSERT_TRUE(sink->Close().ok());
}

// A temporary FLOE_KAFKA_SINK_COMMIT_LOG for one test.
class CommitLog {
 public:
  CommitLog()
      : path_(std::filesystem::temp_directory_path() /
              ("floe-kafka-sink-commits-" + std::to_string(::getpid()) + "-" +
               std::to_string(counter_++) + ".jsonl")) {
    std::filesystem::remove(path_);
    ::setenv("FLOE_KAFKA_SINK_COMMIT_LOG", path_.c_str(), 1);
  }
  ~CommitLog() {
    ::unsetenv("FLOE_KAFKA_SINK_COMMIT_LOG");
    std::filesystem::remove(path_);
  }
  std::string Text() const {
    std::ifstream in(path_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

// Close aborts the open and the pending transaction (never commits them): with the commit log
// standing in for transaction markers, the restore then re-sends the pending one.
TEST_F(KafkaSinkTest, CloseAbortsOpenAndPendingTransactionsAndTheRestoreResendsThem) {
  CommitLog log;
  TableDescriptor table = ExactlyOnce(*this);
  std::string blob;
  {
    auto sink = MakeSink(table);
    ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 10), 0, out_).ok());
    runtime::StateWriter w1;
    ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(1), w1, out_).ok());
    ASSERT_TRUE(sink->OnCheckpointComplete(runtime::CheckpointId(1)).ok());
    ASSERT_TRUE(sink->ProcessBatch(Rows(table, 11, 20), 0, out_).ok());
    runtime::StateWriter w2;
    ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(2), w2, out_).ok());
    blob = w2.Finish();
    ASSERT_TRUE(sink->ProcessBatch(Rows(table, 21, 30), 0, out_).ok());  // open at close
    ASSERT_TRUE(sink->Close().ok());
    EXPECT_EQ(sink->aborted_at_close(), 2);
  }
  std::string text = log.Text();
  EXPECT_NE(text.find("\"checkpoint\":1,\"how\":\"commit\""), std::string::npos) << text;
  EXPECT_EQ(text.find("\"checkpoint\":2"), std::string::npos) << text;

  // Checkpoint 2 completed but its transaction was never committed: re-sent.
  auto sink = MakeSink(table, 2);
  runtime::StateReader reader(blob);
  Status st = sink->Restore(reader);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(sink->resent_records(), 10);
  ASSERT_TRUE(Checkpoint(*sink, 3).ok());
  ASSERT_TRUE(sink->Close().ok());
  EXPECT_EQ(sink->aborted_at_close(), 0);
  EXPECT_NE(log.Text().find("\"checkpoint\":3,\"how\":\"commit\""), std::string::npos);
}

// With the commit log set, a transaction whose records are all visible (as on the mock) is
// judged landed only when the log holds its commit line.
TEST_F(KafkaSinkTest, WithTheCommitLogOnlyALoggedCommitCountsAsLanded) {
  TableDescriptor table = ExactlyOnce(*this);
  std::string blob;
  {
    auto sink = MakeSink(table);
    ASSERT_TRUE(sink->ProcessBatch(Rows(table, 1, 10), 0, out_).ok());
    runtime::StateWriter w;
    ASSERT_TRUE(sink->OnBarrier(runtime::CheckpointId(1), w, out_).ok());
    blob = w.Finish();
    ASSERT_TRUE(sink->OnCheckpointComplete(runtime::CheckpointId(1)).ok());  // not logged
    ASSERT_TRUE(sink->Close().ok());
  }
  {
    auto sink = MakeSink(table, 1);  // no log: the read-back finds the records
    runtime::StateReader reader(blob);
    ASSERT_TRUE(sink->Restore(reader).ok());
    EXPECT_EQ(sink->resent_records(), 0);
    ASSERT_TRUE(sink->Close().ok());
  }
  CommitLog log;
  {
    auto sink = MakeSink(table, 1);  // a log without its commit line: not landed
    runtime::StateReader reader(blob);
    ASSERT_TRUE(sink->Restore(reader).ok());
    EXPECT_EQ(sink->resent_records(), 10);
    ASSERT_TRUE(sink->Close().ok());
  }
  std::string line =
      "{\"task\":\"sink-out/0\",\"transactional_id\":\"floe-test-0-1\","
      "\"checkpoint\":1,\"how\":\"commit\",\"offsets\":{}}\n";
  { std::ofstream(std::filesystem::path(std::getenv("FLOE_KAFKA_SINK_COMMIT_LOG"))) << line; }
  auto sink = MakeSink(table, 1);
  runtime::StateReader reader(blob);
  ASSERT_TRUE(sink->Restore(reader).ok());
  EXPECT_EQ(sink->resent_records(), 0);
  ASSERT_TRUE(sink->Close().ok());
}

// The read-back consumers never jump to the end when their offset is gone (librdkafka's
// default 'latest' would, and a committed transaction would look "not landed"): the fetch
// fails, and Landed reports it like a record below the earliest offset (IOError).
TEST_F(KafkaSinkTest, ReadBackConsumerFailsInsteadOfResettingTheOffset) {
  auto producer =
      kafka::KafkaProducer::Make({{"bootstrap.servers", cluster_->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*producer)->Produce("out", 0, Value(i)).ok());
  ASSERT_TRUE((*producer)->Flush(kTimeout).ok());
  kafka::Properties props = KafkaSink::ReadBackProperties(
      {{"bootstrap.servers", cluster_->bootstrap_servers()}, {"acks", "all"}}, true);
  EXPECT_EQ(props.count("acks"), 0u);
  auto consumer = kafka::KafkaConsumer::Make(props);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE((*consumer)->Assign("out", {{0, 50}}).ok());  // out of range
  auto kind = kafka::ConsumedMessage::Kind::kRecord;
  auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (kind == kafka::ConsumedMessage::Kind::kRecord &&
         std::chrono::steady_clock::now() < deadline) {
    auto m = (*consumer)->Poll(std::chrono::milliseconds(100));
    ASSERT_TRUE(m.ok());
    if (m->has_value()) kind = (*m)->kind();
  }
  EXPECT_EQ(kind, kafka::ConsumedMessage::Kind::kOffsetReset);
}

TEST_F(KafkaSinkTest, OptionErrorsNameTheTableAndOption) {
  KafkaSinkJobSettings job = Job();
  auto error = [&](std::map<std::string, std::string> extra) {
    Result<KafkaSinkConfig> c = MakeKafkaSinkConfig(SinkTable(std::move(extra)), job);
    EXPECT_FALSE(c.ok());
    return c.ok() ? std::string() : c.status().message();
  };
  EXPECT_NE(error({{"properties.transactional.id", "x"}}).find("is set by floe"),
            std::string::npos);
  EXPECT_NE(error({{"sink.transactional-id-prefix", "p"}})
                .find("only applies to 'sink.delivery-guarantee' = 'exactly-once'"),
            std::string::npos);
  EXPECT_NE(error({{"format", "csv"}}).find("option 'format' must be 'json'"), std::string::npos);
  // Rows have no key yet: the key options are refused, not ignored.
  for (const std::string key : {"key.fields", "key.format"}) {
    EXPECT_NE(error({{key, "id"}}).find("unsupported option '" + key + "'"), std::string::npos)
        << key;
  }
  EXPECT_NE(error({{"sink.partitioner", "com.acme.Mine"}})
                .find("option 'sink.partitioner' must be default, fixed or round-robin"),
            std::string::npos);
  EXPECT_NE(error({{"scan.startup.mode", "earliest-offset"}}).find("scan.startup.mode"),
            std::string::npos);
  EXPECT_NE(error({{"properties.acks", "several"}}).find("'acks'"), std::string::npos);
  // Flink's spellings only, case-sensitive like Flink; the message lists the allowed values.
  EXPECT_NE(error({{"json.timestamp-format.standard", "iso-8601"}})
                .find("option 'json.timestamp-format.standard' must be 'SQL' "
                      "(\"2020-12-30 12:13:14.123\", the default) or 'ISO-8601' "
                      "(\"2020-12-30T12:13:14.123\"), got 'iso-8601'"),
            std::string::npos);
  EXPECT_NE(error({{"json.encode.decimal-as-plain-number", "yes"}})
                .find("'json.encode.decimal-as-plain-number' must be 'true' or 'false'"),
            std::string::npos);
  for (const char* plain : {"true", "false"}) {
    EXPECT_TRUE(
        MakeKafkaSinkConfig(SinkTable({{"json.encode.decimal-as-plain-number", plain}}), job).ok());
  }
  // The pool: max-concurrent-checkpoints + 2 transactional ids per subtask.
  job.checkpointing.max_concurrent = 3;
  Result<KafkaSinkConfig> c = MakeKafkaSinkConfig(ExactlyOnce(*this), job);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pool_size, 5);
  EXPECT_EQ(KafkaSink::TransactionalId("p", 2, 3), "p-2-3");
}

}  // namespace
}  // namespace floe::connectors
