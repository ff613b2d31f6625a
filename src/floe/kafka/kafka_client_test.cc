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
  EXPECT_TRUE(IsRetryable(RD_KAFKA_RESP_ERR__TIMED_OUT));
  EXPECT_FALSE(IsRetryable(RD_KAFKA_RESP_ERR__FENCED));
  Status st = KafkaStatus(RD_KAFKA_RESP_ERR__TIMED_OUT, "poll topic 't'");
  EXPECT_NE(st.message().find("poll topic 't'"), std::string::npos);
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
