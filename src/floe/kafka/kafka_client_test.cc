#include "floe/kafka/kafka_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "floe/kafka/kafka_internal.h"
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
    if (msg.kind() == ConsumedMessage::Kind::kPartitionEnd) {
      eof[msg.partition()] = true;
      continue;
    }
    EXPECT_EQ(msg.kind(), ConsumedMessage::Kind::kRecord) << msg.error("poll").ToString();
    EXPECT_EQ(msg.topic(), topic);
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
  auto produced_count = (*producer)->PartitionCount("roster", kTimeout);
  ASSERT_TRUE(produced_count.ok()) << produced_count.status().ToString();
  EXPECT_EQ(*produced_count, 3);

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

// A group member as a test sees it: what it owns (by the listener's calls), every change, and
// the records it read by partition.
struct Member {
  std::set<int32_t> owned;
  std::vector<GroupChange> changes;
  std::map<int32_t, std::vector<int64_t>> offsets;  // read, by partition
  std::unique_ptr<KafkaConsumer> consumer;

  Member(const MockCluster& cluster, const std::string& group, int64_t start) {
    Properties props = Consumer(cluster, group);
    props["heartbeat.interval.ms"] = "300";
    auto c = KafkaConsumer::MakeMember(props, [this, start](const GroupChange& change) {
      changes.push_back(change);
      PartitionOffsets next;
      for (int32_t p : change.partitions) {
        if (change.kind == GroupChange::Kind::kAssigned) {
          EXPECT_TRUE(owned.insert(p).second) << "partition " << p << " assigned twice";
          next[p] = start;
        } else {
          EXPECT_EQ(owned.erase(p), 1u) << "partition " << p << " revoked but not owned";
        }
      }
      return Result<PartitionOffsets>(next);
    });
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    consumer = std::move(*c);
    EXPECT_TRUE(consumer->Subscribe({"moving"}).ok());
  }

  void Poll() {
    auto m = consumer->Poll(milliseconds(50));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    if (!m->has_value() || (*m)->kind() != ConsumedMessage::Kind::kRecord) return;
    EXPECT_TRUE(owned.count((*m)->partition())) << "a record of a partition not owned";
    offsets[(*m)->partition()].push_back((*m)->offset());
  }

  int revoked() const {
    int n = 0;
    for (const GroupChange& c : changes) {
      if (c.kind != GroupChange::Kind::kAssigned) n += static_cast<int>(c.partitions.size());
    }
    return n;
  }
};

// Polls `members` until `done` or 60 s.
bool PollUntil(const std::vector<Member*>& members, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    for (Member* m : members) m->Poll();
  }
  return true;
}

// Two members of one group (cooperative-sticky): the first owns all four partitions; when the
// second joins, only two move, the first keeps reading the others without giving them up; the
// listener's offsets are where each starts; when the second leaves, its partitions come back.
TEST(KafkaGroupMember, PartitionsMoveCooperativelyAndStartWhereTheListenerSays) {
  auto cluster = StartCluster("moving", 4);
  auto producer = KafkaProducer::Make({{"bootstrap.servers", cluster->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok());
  for (int i = 0; i < 40; ++i) ASSERT_TRUE((*producer)->Produce("moving", i % 4, "x").ok());
  ASSERT_TRUE((*producer)->Flush(kTimeout).ok());

  Member a(*cluster, "g-moving", 3);
  ASSERT_TRUE(PollUntil({&a}, [&] { return a.owned.size() == 4; })) << "a never got 4";
  ASSERT_TRUE(PollUntil({&a}, [&] {
    size_t n = 0;
    for (const auto& [p, list] : a.offsets) n += list.size();
    return n == 28;  // offsets 3..9 of each partition
  }));
  for (const auto& [p, list] : a.offsets) EXPECT_EQ(list.front(), 3) << "partition " << p;

  Member b(*cluster, "g-moving", 5);
  ASSERT_TRUE(PollUntil({&a, &b}, [&] { return a.owned.size() == 2 && b.owned.size() == 2; }))
      << "a owns " << a.owned.size() << ", b " << b.owned.size();
  EXPECT_EQ(a.revoked(), 2) << "cooperative: only the partitions that moved are revoked";
  for (int32_t p : b.owned) {
    EXPECT_FALSE(a.owned.count(p));
    ASSERT_TRUE(PollUntil({&a, &b}, [&] { return b.offsets[p].size() == 5; }));
    EXPECT_EQ(b.offsets[p].front(), 5);
  }
  auto assignment = b.consumer->Assignment();
  ASSERT_TRUE(assignment.ok());
  EXPECT_EQ((*assignment)["moving"].size(), 2u);

  ASSERT_TRUE(b.consumer->Close().ok());
  EXPECT_TRUE(b.owned.empty());
  ASSERT_TRUE(PollUntil({&a}, [&] { return a.owned.size() == 4; }))
      << "b's partitions never came back";
  EXPECT_TRUE(a.consumer->Close().ok());
}

TEST(KafkaGroupMember, AnotherAssignorIsRefused) {
  auto cluster = StartCluster("moving", 1);
  Properties props = Consumer(*cluster, "g-range");
  props["partition.assignment.strategy"] = "range";
  auto c = KafkaConsumer::MakeMember(
      props, [](const GroupChange&) { return Result<PartitionOffsets>(PartitionOffsets{}); });
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("cooperative-sticky"), std::string::npos);
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
  EXPECT_TRUE(count.status().IsNotFound()) << count.status().ToString();
  auto producer = KafkaProducer::Make({{"bootstrap.servers", cluster->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok());
  EXPECT_TRUE((*producer)->PartitionCount("nope", milliseconds(5000)).status().IsNotFound());
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
  ASSERT_TRUE(cluster->PushRequestErrors(22, {"INVALID_TRANSACTION_TIMEOUT"}).ok());  // InitPid
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
    EXPECT_TRUE(r.ok()) << r.status.ToString();
    EXPECT_EQ(where[std::make_pair(r.partition, r.offset)], "v" + std::to_string(r.tag));
  }
}

// librdkafka 2.0.2's classification of a failed EndTxn (injected on the mock): fenced and an
// invalid epoch are fatal (the producer is unusable); the producer is then recreated.
TEST(KafkaProducerTransactions, FencedCommitIsFatal) {
  auto cluster = StartCluster("out", 1);
  for (const char* err : {"PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"}) {
    auto producer = KafkaProducer::Make(
        {{"bootstrap.servers", cluster->bootstrap_servers()}, {"transactional.id", "t-fenced"}});
    ASSERT_TRUE(producer.ok());
    ASSERT_TRUE((*producer)->InitTransactions(kTimeout).ok());
    ASSERT_TRUE((*producer)->BeginTransaction().ok());
    ASSERT_TRUE((*producer)->Produce("out", 0, "x").ok());
    ASSERT_TRUE(cluster->PushRequestErrors(26, {err}).ok());
    TxnResult r = (*producer)->CommitTransaction(kTimeout);
    EXPECT_EQ(r.kind, TxnErrorKind::kFatal) << err << ": " << r.status.ToString();
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
  ASSERT_TRUE(
      cluster->PushRequestErrors(0, std::vector<std::string>(50, "TOPIC_AUTHORIZATION_FAILED"))
          .ok());
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
  ASSERT_TRUE(cluster->PushRequestErrors(26, {"COORDINATOR_NOT_AVAILABLE"}).ok());
  TxnResult commit = (*producer)->CommitTransaction(kTimeout);
  EXPECT_TRUE(commit.ok()) << commit.status.ToString();
}

TEST(MockClusterNames, ApiKeysAndErrorCodesByName) {
  EXPECT_EQ(*ApiKeyByName("EndTxn"), 26);
  EXPECT_EQ(*ApiKeyByName("0"), 0);
  EXPECT_FALSE(ApiKeyByName("EndTx").ok());
  EXPECT_EQ(*ErrorCodeByName("PRODUCER_FENCED"), int{RD_KAFKA_RESP_ERR_PRODUCER_FENCED});
  EXPECT_EQ(*ErrorCodeByName("ERR_INVALID_PRODUCER_EPOCH"),
            int{RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH});
  EXPECT_EQ(*ErrorCodeByName("_TRANSPORT"), int{RD_KAFKA_RESP_ERR__TRANSPORT});
  EXPECT_EQ(*ErrorCodeByName("90"), int{RD_KAFKA_RESP_ERR_PRODUCER_FENCED});
  EXPECT_FALSE(ErrorCodeByName("NOT_AN_ERROR").ok());
  EXPECT_EQ(*CanonicalErrorName("ERR_PRODUCER_FENCED"), "PRODUCER_FENCED");
  EXPECT_EQ(*CanonicalErrorName("90"), "PRODUCER_FENCED");
  EXPECT_EQ(*CanonicalErrorName("_TRANSPORT"), "_TRANSPORT");
  EXPECT_TRUE(CanonicalErrorName("NOT_AN_ERROR").status().IsInvalidArgument());
}

TEST(MockCluster, PushRequestErrorsRefusesAnUnknownNameAndPushesNothing) {
  auto cluster = StartCluster("out", 1);
  Status st = cluster->PushRequestErrors(0, {"TOPIC_AUTHORIZATION_FAILED", "NO_SUCH_ERROR"});
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.message().find("NO_SUCH_ERROR"), std::string::npos) << st.ToString();
  // Nothing was queued: the next produce succeeds. (The valid name alone does fail it.)
  auto producer = KafkaProducer::Make(
      {{"bootstrap.servers", cluster->bootstrap_servers()}, {"message.timeout.ms", "3000"}});
  ASSERT_TRUE(producer.ok());
  ASSERT_TRUE((*producer)->Produce("out", 0, "x").ok());
  Status flushed = (*producer)->Flush(kTimeout);
  EXPECT_TRUE(flushed.ok()) << flushed.ToString();
  ASSERT_TRUE(cluster->PushRequestErrors(0, {"TOPIC_AUTHORIZATION_FAILED"}).ok());
  ASSERT_TRUE((*producer)->Produce("out", 0, "y").ok());
  flushed = (*producer)->Flush(kTimeout);
  EXPECT_NE(flushed.message().find("TOPIC_AUTHORIZATION_FAILED"), std::string::npos)
      << flushed.ToString();
}

// The next message that is not a retryable error, within the timeout.
std::optional<ConsumedMessage> Next(KafkaConsumer& consumer) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    auto m = consumer.Poll(milliseconds(200));
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (!m.ok()) return std::nullopt;
    if (m->has_value() && !(*m)->retryable()) return std::move(*m);
  }
  ADD_FAILURE() << "no message within 30 s";
  return std::nullopt;
}

// A record with headers (one with a null value), produced with librdkafka directly: the
// adapter's producer does not write headers.
void ProduceWithHeaders(const MockCluster& cluster, const std::string& topic) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  ASSERT_EQ(rd_kafka_conf_set(conf, "bootstrap.servers", cluster.bootstrap_servers().c_str(), err,
                              sizeof(err)),
            RD_KAFKA_CONF_OK);
  rd_kafka_t* raw = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  ASSERT_NE(raw, nullptr) << err;
  HandlePtr rk(raw);
  ASSERT_EQ(rd_kafka_producev(rk.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                              RD_KAFKA_V_VALUE(const_cast<char*>("v"), 1),
                              RD_KAFKA_V_KEY(const_cast<char*>("k1"), 2),
                              RD_KAFKA_V_HEADER("trace", "abc", 3),
                              RD_KAFKA_V_HEADER("empty", nullptr, 0),
                              RD_KAFKA_V_HEADER("trace", "def", 3), RD_KAFKA_V_END),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(rd_kafka_flush(rk.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

TEST(ConsumedMessage, KindsOfRecordsAndPartitionEvents) {
  // Partition 0: a record with key and headers, a tombstone, an empty value; partition 1 empty.
  // All written before reading, so each partition's end comes after its records.
  auto cluster = StartCluster("kinds", 2);
  ProduceWithHeaders(*cluster, "kinds");
  auto producer = KafkaProducer::Make({{"bootstrap.servers", cluster->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok());
  ASSERT_TRUE((*producer)->ProduceTombstone("kinds", 0, "k2").ok());
  ASSERT_TRUE((*producer)->Produce("kinds", 0, "").ok());
  ASSERT_TRUE((*producer)->Flush(kTimeout).ok());

  auto consumer = KafkaConsumer::Make(Consumer(*cluster, "g-kinds"));
  ASSERT_TRUE(consumer.ok());
  ASSERT_TRUE((*consumer)->Assign("kinds", {{0, 0}, {1, 0}}).ok());
  std::map<int32_t, std::vector<ConsumedMessage>> by_partition;  // move-only messages
  int ends = 0;
  while (ends < 2) {
    std::optional<ConsumedMessage> m = Next(**consumer);
    ASSERT_TRUE(m.has_value());
    if (m->kind() == ConsumedMessage::Kind::kPartitionEnd) ++ends;
    by_partition[m->partition()].push_back(std::move(*m));
  }
  ASSERT_EQ(by_partition[1].size(), 1u);
  const ConsumedMessage& empty_end = by_partition[1][0];
  EXPECT_EQ(empty_end.kind(), ConsumedMessage::Kind::kPartitionEnd);
  EXPECT_EQ(empty_end.topic(), "kinds");
  EXPECT_EQ(empty_end.offset(), 0);
  EXPECT_FALSE(empty_end.retryable());
  EXPECT_TRUE(empty_end.value().empty());
  EXPECT_TRUE(empty_end.Headers().empty());

  const std::vector<ConsumedMessage>& p0 = by_partition[0];
  ASSERT_EQ(p0.size(), 4u);
  const ConsumedMessage& record = p0[0];
  ASSERT_EQ(record.kind(), ConsumedMessage::Kind::kRecord) << record.error("poll").ToString();
  EXPECT_TRUE(record.error("poll").ok());
  EXPECT_FALSE(record.retryable());
  EXPECT_EQ(record.topic(), "kinds");
  EXPECT_EQ(record.offset(), 0);
  EXPECT_EQ(record.key(), "k1");
  EXPECT_EQ(record.value(), "v");
  EXPECT_FALSE(record.value_is_null());
  using Headers = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(record.Headers(), (Headers{{"trace", "abc"}, {"empty", ""}, {"trace", "def"}}));

  const ConsumedMessage& tombstone = p0[1];
  ASSERT_EQ(tombstone.kind(), ConsumedMessage::Kind::kRecord);
  EXPECT_EQ(tombstone.offset(), 1);
  EXPECT_EQ(tombstone.key(), "k2");
  EXPECT_TRUE(tombstone.value_is_null());
  EXPECT_TRUE(tombstone.value().empty());
  EXPECT_TRUE(tombstone.Headers().empty());

  const ConsumedMessage& empty = p0[2];  // an empty value is not a tombstone
  ASSERT_EQ(empty.kind(), ConsumedMessage::Kind::kRecord);
  EXPECT_EQ(empty.offset(), 2);
  EXPECT_FALSE(empty.value_is_null());
  EXPECT_TRUE(empty.value().empty());
  EXPECT_TRUE(empty.key().empty());

  EXPECT_EQ(p0[3].kind(), ConsumedMessage::Kind::kPartitionEnd);
  EXPECT_EQ(p0[3].offset(), 3);  // the next offset to be written
}

TEST(ConsumedMessage, OffsetOutOfRangeIsAnOffsetReset) {
  auto cluster = StartCluster("short", 1);
  Properties props = Consumer(*cluster, "g-reset");
  props["auto.offset.reset"] = "error";
  auto consumer = KafkaConsumer::Make(props);
  ASSERT_TRUE(consumer.ok());
  ASSERT_TRUE((*consumer)->Assign("short", {{0, 100}}).ok());
  std::optional<ConsumedMessage> m = Next(**consumer);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->kind(), ConsumedMessage::Kind::kOffsetReset) << m->error("poll").ToString();
  EXPECT_FALSE(m->retryable());
  Status st = m->error("consume topic 'short'");
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.message().find("consume topic 'short'"), std::string::npos) << st.ToString();
  EXPECT_TRUE(m->value_is_null());  // an event's payload (its error text) is not a value
}

TEST(KafkaConsumer, AssignAllReadsSeveralTopicsAndReplacesTheAssignment) {
  auto cluster = StartCluster("left", 2);
  ASSERT_TRUE(cluster->CreateTopic("right", 1).ok());
  auto producer = KafkaProducer::Make({{"bootstrap.servers", cluster->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*producer)->Produce("left", i % 2, "l" + std::to_string(i)).ok());
    ASSERT_TRUE((*producer)->Produce("right", 0, "r" + std::to_string(i)).ok());
  }
  ASSERT_TRUE((*producer)->Flush(kTimeout).ok());

  auto consumer = KafkaConsumer::Make(Consumer(*cluster, "g-all"));
  ASSERT_TRUE(consumer.ok());
  // Reads every assigned partition to its end: "topic/partition@offset=value", ends counted.
  auto read = [&](size_t partitions) {
    std::vector<std::string> out;
    std::map<std::pair<std::string, int32_t>, bool> ends;
    while (ends.size() < partitions) {
      std::optional<ConsumedMessage> m = Next(**consumer);
      if (!m.has_value()) break;
      std::pair<std::string, int32_t> where(std::string(m->topic()), m->partition());
      if (m->kind() == ConsumedMessage::Kind::kPartitionEnd) {
        ends[where] = true;
        continue;
      }
      EXPECT_EQ(m->kind(), ConsumedMessage::Kind::kRecord) << m->error("poll").ToString();
      ends.erase(where);
      out.push_back(where.first + "/" + std::to_string(where.second) + "@" +
                    std::to_string(m->offset()) + "=" + std::string(m->value()));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  ASSERT_TRUE((*consumer)->AssignAll({{"left", {{0, 0}, {1, 0}}}, {"right", {{0, 1}}}}).ok());
  EXPECT_EQ(read(3), (std::vector<std::string>{"left/0@0=l0", "left/0@1=l2", "left/1@0=l1",
                                               "right/0@1=r1", "right/0@2=r2"}));
  ASSERT_TRUE((*consumer)->AssignAll({{"right", {{0, 2}}}}).ok());
  EXPECT_EQ(read(1), (std::vector<std::string>{"right/0@2=r2"}));
}

// PollWaiting hands out what is queued, at most `max` at a time and without waiting: every
// record once, in order within its partition, and each partition's end. A group member is refused.
TEST(KafkaConsumer, PollWaitingHandsOutEveryRecordOnceInPartitionOrder) {
  auto cluster = StartCluster("batched", 3);
  auto producer = KafkaProducer::Make({{"bootstrap.servers", cluster->bootstrap_servers()}});
  ASSERT_TRUE(producer.ok());
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE((*producer)->Produce("batched", i % 3, std::to_string(i)).ok());
  }
  ASSERT_TRUE((*producer)->Flush(kTimeout).ok());
  auto consumer = KafkaConsumer::Make(Consumer(*cluster, "g-batched"));
  ASSERT_TRUE(consumer.ok());
  ASSERT_TRUE((*consumer)->Assign("batched", {{0, 0}, {1, 0}, {2, 0}}).ok());
  std::map<int32_t, std::vector<std::string>> values;
  std::map<int32_t, bool> ends;
  size_t largest = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ends.size() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::vector<ConsumedMessage> got;
    ASSERT_TRUE((*consumer)->PollWaiting(7, &got).ok());
    largest = std::max(largest, got.size());
    if (got.empty()) std::this_thread::sleep_for(milliseconds(20));
    for (const ConsumedMessage& m : got) {
      if (m.kind() == ConsumedMessage::Kind::kPartitionEnd) {
        ends[m.partition()] = true;
        continue;
      }
      ASSERT_EQ(m.kind(), ConsumedMessage::Kind::kRecord) << m.error("poll").ToString();
      EXPECT_EQ(m.offset(), static_cast<int64_t>(values[m.partition()].size()));
      values[m.partition()].emplace_back(m.value());
    }
  }
  EXPECT_EQ(ends.size(), 3u) << "timed out before every partition's end";
  EXPECT_EQ(largest, 7u);  // 300 records queued: some poll found more than 7 waiting
  for (int32_t p = 0; p < 3; ++p) {
    ASSERT_EQ(values[p].size(), 100u) << "partition " << p;
    for (int k = 0; k < 100; ++k) EXPECT_EQ(values[p][k], std::to_string(3 * k + p));
  }

  auto member = KafkaConsumer::MakeMember(Consumer(*cluster, "g-member"), [](const GroupChange&) {
    return Result<PartitionOffsets>(PartitionOffsets{});
  });
  ASSERT_TRUE(member.ok());
  std::vector<ConsumedMessage> got;
  EXPECT_EQ((*member)->PollWaiting(7, &got).code(), StatusCode::kInternal);
}

// Purged records never reach the brokers: their delivery reports fail with _PURGE_QUEUE, the
// next Flush reports them, and the partition stays empty.
TEST(KafkaProducer, PurgeQueuedDropsRecordsNotYetSent) {
  auto cluster = StartCluster("purged", 1);
  auto producer = KafkaProducer::Make({{"bootstrap.servers", cluster->bootstrap_servers()},
                                       {"linger.ms", "60000"}},  // records stay queued
                                      /*keep_deliveries=*/true);
  ASSERT_TRUE(producer.ok());
  KafkaProducer& p = **producer;
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(p.Produce("purged", 0, "x", {}, i).ok());
  p.PurgeQueued();
  std::vector<Delivery> d = p.TakeDeliveries();
  ASSERT_EQ(d.size(), 10u);
  for (const Delivery& r : d) {
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.status.message().find("_PURGE_QUEUE"), std::string::npos) << r.status.ToString();
  }
  Status flushed = p.Flush(kTimeout);
  EXPECT_FALSE(flushed.ok());
  EXPECT_NE(flushed.message().find("10 record(s) not delivered"), std::string::npos)
      << flushed.ToString();
  EXPECT_TRUE(p.Flush(kTimeout).ok());  // reported once

  auto consumer = KafkaConsumer::Make(Consumer(*cluster, "g-purged"));
  ASSERT_TRUE(consumer.ok());
  auto wm = (*consumer)->Watermarks("purged", 0, kTimeout);
  ASSERT_TRUE(wm.ok()) << wm.status().ToString();
  EXPECT_EQ(wm->second, 0);
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
