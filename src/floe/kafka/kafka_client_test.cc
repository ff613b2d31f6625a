#include "floe/kafka/kafka_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

#include "floe/kafka/mock_cluster.h"

namespace floe::kafka {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kTimeout{10000};

std::unique_ptr<MockCluster> StartCluster(const std::string& topic, int partitions) {
  auto cluster = MockCluster::Make(3);
  EXPECT_TRUE(cluster.ok()) << cluster.status().ToString();
  EXPECT_TRUE((*cluster)->CreateTopic(topic, partitions).ok());
  return std::move(*cluster);
}

Properties Consumer(const MockCluster& c, const std::string& group) {
  return {{"bootstrap.servers", c.bootstrap_servers()},
          {"group.id", group},
          {"enable.partition.eof", "true"},
          {"session.timeout.ms", "6000"}};
}

// Reads every partition from offset 0 until each reported its end; record values by partition.
std::map<int32_t, std::vector<std::pair<int64_t, std::string>>> ReadAll(KafkaConsumer& consumer,
                                                                        const std::string& topic,
                                                                        int partitions) {
  PartitionOffsets start;
  for (int p = 0; p < partitions; ++p) start[p] = 0;
  EXPECT_TRUE(consumer.Assign(topic, start).ok());
  std::map<int32_t, std::vector<std::pair<int64_t, std::string>>> out;
  std::map<int32_t, bool> eof;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (static_cast<int>(eof.size()) < partitions && std::chrono::steady_clock::now() < deadline) {
    auto m = consumer.Poll(milliseconds(200));
    EXPECT_TRUE(m.ok());
    if (!m.ok() || !m->has_value()) continue;
    const ConsumedMessage& msg = **m;
    if (msg.err() == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      eof[msg.partition()] = true;
      continue;
    }
    EXPECT_EQ(msg.err(), RD_KAFKA_RESP_ERR_NO_ERROR);
    eof.erase(msg.partition());
    out[msg.partition()].emplace_back(msg.offset(), std::string(msg.value()));
  }
  EXPECT_EQ(static_cast<int>(eof.size()), partitions) << "timed out before every partition's end";
  return out;
}

TEST(KafkaClient, ProducesAndConsumesJsonRecordsThroughMockCluster) {
  auto cluster = StartCluster("roster", 3);
  auto producer = KafkaProducer::Make({{"bootstrap.servers", cluster->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  constexpr int kRecords = 3000;
  for (int seq = 1; seq <= kRecords; ++seq) {
    std::string value = "{\"seq\":" + std::to_string(seq) + "}";
    ASSERT_TRUE((*producer)->Produce("roster", seq % 3, value).ok());
  }
  ASSERT_TRUE((*producer)->Flush(kTimeout).ok());

  auto consumer = KafkaConsumer::Make(Consumer(*cluster, "g-read"));
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  auto count = (*consumer)->PartitionCount("roster", kTimeout);
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(*count, 3);
  for (int p = 0; p < 3; ++p) {
    auto wm = (*consumer)->Watermarks("roster", p, kTimeout);
    ASSERT_TRUE(wm.ok()) << wm.status().ToString();
    EXPECT_EQ(wm->first, 0);
    EXPECT_EQ(wm->second, kRecords / 3);
  }
  auto records = ReadAll(**consumer, "roster", 3);
  int total = 0;
  for (const auto& [partition, list] : records) {
    int64_t expect_offset = 0;
    int last_seq = -1;
    for (const auto& [offset, value] : list) {
      EXPECT_EQ(offset, expect_offset++);  // dense, in order
      int seq = std::stoi(value.substr(7));
      EXPECT_EQ(seq % 3, partition);
      EXPECT_GT(seq, last_seq);  // per-partition order kept
      last_seq = seq;
      ++total;
    }
  }
  EXPECT_EQ(total, kRecords);
}

TEST(KafkaClient, StandaloneCommitOfAMemberlessGroupReadsBack) {
  auto cluster = StartCluster("events", 2);
  auto consumer = KafkaConsumer::Make(Consumer(*cluster, "g-commit"));
  ASSERT_TRUE(consumer.ok());
  ASSERT_TRUE((*consumer)->CommitSync("events", {{0, 5}, {1, 7}}).ok());
  auto committed = (*consumer)->Committed("events", {0, 1}, kTimeout);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(*committed, (PartitionOffsets{{0, 5}, {1, 7}}));
}

TEST(KafkaClient, UnknownTopicIsNotFound) {
  auto cluster = StartCluster("events", 1);
  auto consumer = KafkaConsumer::Make(
      {{"bootstrap.servers", cluster->bootstrap_servers()}, {"allow.auto.create.topics", "false"}});
  ASSERT_TRUE(consumer.ok());
  auto count = (*consumer)->PartitionCount("nope", milliseconds(5000));
  EXPECT_FALSE(count.ok());
}

TEST(KafkaClient, BadPropertyIsInvalidArgumentNamingIt) {
  auto producer = KafkaProducer::Make({{"no.such.property", "1"}});
  ASSERT_FALSE(producer.ok());
  EXPECT_TRUE(producer.status().IsInvalidArgument());
  EXPECT_NE(producer.status().message().find("no.such.property"), std::string::npos);
}

TEST(KafkaStatus, KeepsRetryableAndFatalApart) {
  EXPECT_TRUE(KafkaStatus(RD_KAFKA_RESP_ERR_NO_ERROR, "x").ok());
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR__TRANSPORT, "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION, "x").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR__FENCED, "x").code(), StatusCode::kInternal);
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR_PRODUCER_FENCED, "x").code(), StatusCode::kInternal);
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC, "x").code(),
            StatusCode::kInvalidArgument);
  // Retriable in Kafka (metadata not propagated yet): not a refusal of the job.
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, "x").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION, "x").code(),
            StatusCode::kUnavailable);
  // The brokers refuse transaction.timeout.ms: configuration, not retried.
  EXPECT_EQ(KafkaStatus(RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT, "x").code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsRetryable(RD_KAFKA_RESP_ERR__TIMED_OUT));
  EXPECT_FALSE(IsRetryable(RD_KAFKA_RESP_ERR__FENCED));
  Status st = KafkaStatus(RD_KAFKA_RESP_ERR__TIMED_OUT, "poll topic 't'");
  EXPECT_NE(st.message().find("poll topic 't'"), std::string::npos);
}

// librdkafka raises INVALID_TRANSACTION_TIMEOUT from init_transactions as a fatal error; it is
// still the configuration's (InvalidArgument: the job is not restarted into the same refusal).
TEST(KafkaProducerTransactions, InvalidTransactionTimeoutAtInitIsInvalidArgument) {
  auto cluster = StartCluster("out", 1);
  cluster->PushRequestErrors(22,
                             {RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT});  // InitProducerId
  auto producer = KafkaProducer::Make(
      {{"bootstrap.servers", cluster->bootstrap_servers()}, {"transactional.id", "t-0"}},
      /*keep_deliveries=*/true);
  ASSERT_TRUE(producer.ok());
  TxnResult init = (*producer)->InitTransactions(kTimeout);
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.kind, TxnErrorKind::kFatal);
  EXPECT_TRUE(init.status.IsInvalidArgument()) << init.status.ToString();
  EXPECT_NE(init.status.message().find("INVALID_TRANSACTION_TIMEOUT"), std::string::npos)
      << init.status.ToString();
}

TEST(KafkaProducerTransactions, DeliveriesGiveEachTaggedRecordsPartitionAndOffset) {
  auto cluster = StartCluster("out", 3);
  auto producer = KafkaProducer::Make(
      {{"bootstrap.servers", cluster->bootstrap_servers()}, {"transactional.id", "t-deliver"}},
      /*keep_deliveries=*/true);
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  KafkaProducer& p = **producer;
  ASSERT_TRUE(p.InitTransactions(kTimeout).ok());
  ASSERT_TRUE(p.BeginTransaction().ok());
  for (uint64_t i = 0; i < 90; ++i) {
    ASSERT_TRUE(
        p.Produce("out", KafkaProducer::kAnyPartition, "v" + std::to_string(i), {}, i).ok());
  }
  ASSERT_TRUE(p.Flush(kTimeout).ok());
  std::vector<Delivery> d = p.TakeDeliveries();
  ASSERT_EQ(d.size(), 90u);
  TxnResult commit = p.CommitTransaction(kTimeout);
  ASSERT_TRUE(commit.ok()) << commit.status.ToString();
  EXPECT_TRUE(p.TakeDeliveries().empty());

  auto consumer = KafkaConsumer::Make(Consumer(*cluster, "g-deliver"));
  ASSERT_TRUE(consumer.ok());
  auto records = ReadAll(**consumer, "out", 3);
  std::map<std::pair<int32_t, int64_t>, std::string> where;
  for (const auto& [partition, list] : records) {
    for (const auto& [offset, value] : list) where[{partition, offset}] = value;
  }
  ASSERT_EQ(where.size(), 90u);
  for (const Delivery& r : d) {
    EXPECT_EQ(r.err, RD_KAFKA_RESP_ERR_NO_ERROR);
    EXPECT_EQ(where[std::make_pair(r.partition, r.offset)], "v" + std::to_string(r.tag));
  }
}

// librdkafka 2.0.2's classification of a failed EndTxn (injected on the mock): fenced and an
// invalid epoch are fatal (the producer is unusable); the producer is then recreated.
TEST(KafkaProducerTransactions, FencedCommitIsFatal) {
  auto cluster = StartCluster("out", 1);
  for (rd_kafka_resp_err_t err :
       {RD_KAFKA_RESP_ERR_PRODUCER_FENCED, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH}) {
    auto producer = KafkaProducer::Make(
        {{"bootstrap.servers", cluster->bootstrap_servers()}, {"transactional.id", "t-fenced"}});
    ASSERT_TRUE(producer.ok());
    ASSERT_TRUE((*producer)->InitTransactions(kTimeout).ok());
    ASSERT_TRUE((*producer)->BeginTransaction().ok());
    ASSERT_TRUE((*producer)->Produce("out", 0, "x").ok());
    cluster->PushRequestErrors(26, {err});
    TxnResult r = (*producer)->CommitTransaction(kTimeout);
    EXPECT_EQ(r.kind, TxnErrorKind::kFatal)
        << rd_kafka_err2name(err) << ": " << r.status.ToString();
    EXPECT_EQ(r.status.code(), StatusCode::kInternal);
    EXPECT_NE(r.status.message().find("commit_transaction"), std::string::npos);
  }
}

// A retriable EndTxn error is retried inside librdkafka; a failed produce makes the commit
// abortable.
TEST(KafkaProducerTransactions, FailedProduceRequiresAbortAndAbortWorks) {
  auto cluster = StartCluster("out", 1);
  auto producer = KafkaProducer::Make({{"bootstrap.servers", cluster->bootstrap_servers()},
                                       {"transactional.id", "t-abort"},
                                       {"message.timeout.ms", "3000"}});
  ASSERT_TRUE(producer.ok());
  ASSERT_TRUE((*producer)->InitTransactions(kTimeout).ok());
  ASSERT_TRUE((*producer)->BeginTransaction().ok());
  cluster->PushRequestErrors(
      0, std::vector<rd_kafka_resp_err_t>(50, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED));
  ASSERT_TRUE((*producer)->Produce("out", 0, "x").ok());
  EXPECT_FALSE((*producer)->Flush(kTimeout).ok());
  TxnResult r = (*producer)->CommitTransaction(kTimeout);
  EXPECT_EQ(r.kind, TxnErrorKind::kRequiresAbort) << r.status.ToString();
  cluster->ClearRequestErrors(0);
  TxnResult abort = (*producer)->AbortTransaction(kTimeout);
  EXPECT_TRUE(abort.ok()) << abort.status.ToString();
  // A new transaction commits (to another topic: the producer keeps the authorization error
  // of "out" in its metadata).
  ASSERT_TRUE(cluster->CreateTopic("out2", 1).ok());
  ASSERT_TRUE((*producer)->BeginTransaction().ok());
  Status again = (*producer)->Produce("out2", 0, "y");
  ASSERT_TRUE(again.ok()) << again.ToString();
  cluster->PushRequestErrors(26, {RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE});
  TxnResult commit = (*producer)->CommitTransaction(kTimeout);
  EXPECT_TRUE(commit.ok()) << commit.status.ToString();
}

TEST(MockClusterNames, ApiKeysAndErrorCodesByName) {
  EXPECT_EQ(*ApiKeyByName("EndTxn"), 26);
  EXPECT_EQ(*ApiKeyByName("0"), 0);
  EXPECT_FALSE(ApiKeyByName("EndTx").ok());
  EXPECT_EQ(*ErrorCodeByName("PRODUCER_FENCED"), RD_KAFKA_RESP_ERR_PRODUCER_FENCED);
  EXPECT_EQ(*ErrorCodeByName("ERR_INVALID_PRODUCER_EPOCH"),
            RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH);
  EXPECT_EQ(*ErrorCodeByName("_TRANSPORT"), RD_KAFKA_RESP_ERR__TRANSPORT);
  EXPECT_EQ(*ErrorCodeByName("90"), RD_KAFKA_RESP_ERR_PRODUCER_FENCED);
  EXPECT_FALSE(ErrorCodeByName("NOT_AN_ERROR").ok());
}

TEST(SpecificOffsets, ParsesFlinkSyntax) {
  auto o = ParseSpecificOffsets("partition:0,offset:42;partition:1,offset:300");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(*o, (PartitionOffsets{{0, 42}, {1, 300}}));
  EXPECT_TRUE(ParseSpecificOffsets("partition:2,offset:0;").ok());
  for (const char* bad : {"", "partition:0", "partition:0,offset:x", "p:0,o:1",
                          "partition:0,offset:1;partition:0,offset:2", "partition:-1,offset:1"}) {
    EXPECT_FALSE(ParseSpecificOffsets(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace floe::kafka
