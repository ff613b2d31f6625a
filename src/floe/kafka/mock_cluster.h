#pragma once

#include <memory>
#include <string>

#include "floe/common/status.h"
#include "floe/kafka/kafka_client.h"

struct rd_kafka_mock_cluster_s;

namespace floe::kafka {

// MockCluster is librdkafka's in-process mock Kafka cluster (rdkafka_mock.h): real brokers on
// loopback ports that any Kafka client in any process can reach while this object lives. What it
// does and does not emulate (librdkafka 2.0.2) is listed in docs/kafka.md; notably no offsets by
// timestamp, no read_committed isolation, no fencing, and per-partition retention of ~5 MiB.
// Topics must be created with CreateTopic (the CreateTopics API times out on the mock).
// Lifecycle: Make -> CreateTopic* -> destroyed. The port cannot be chosen (2.0.2): read
// bootstrap_servers(). Thread-safe (the mock runs on its own thread).
class MockCluster {
 public:
  static Result<std::unique_ptr<MockCluster>> Make(int brokers);
  ~MockCluster();

  // "127.0.0.1:PORT,127.0.0.1:PORT,..."
  const std::string& bootstrap_servers() const { return bootstraps_; }
  Status CreateTopic(const std::string& name, int partitions, int replication_factor = 1);
  // Adds `rtt_ms` of latency to every response of broker `broker_id` (1-based).
  Status SetRtt(int broker_id, int rtt_ms);
  int brokers() const { return brokers_; }

  MockCluster(HandlePtr rk, rd_kafka_mock_cluster_s* cluster, int brokers);

 private:
  HandlePtr rk_;  // the handle that owns the mock; destroyed after the cluster
  rd_kafka_mock_cluster_s* cluster_;
  int brokers_;
  std::string bootstraps_;
};

}  // namespace floe::kafka
