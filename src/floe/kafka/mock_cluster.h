#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
  // The next `errors.size()` requests of Kafka protocol API `api_key` (any broker) fail with
  // these errors, in order (rd_kafka_mock_push_request_errors_array). E.g. EndTxn (26) with
  // PRODUCER_FENCED makes the next transaction commit fail as fenced.
  void PushRequestErrors(int16_t api_key, const std::vector<rd_kafka_resp_err_t>& errors);
  // Drops the errors still queued for `api_key`.
  void ClearRequestErrors(int16_t api_key);
  int brokers() const { return brokers_; }

  MockCluster(HandlePtr rk, rd_kafka_mock_cluster_s* cluster, int brokers);

 private:
  HandlePtr rk_;  // the handle that owns the mock; destroyed after the cluster
  rd_kafka_mock_cluster_s* cluster_;
  int brokers_;
  std::string bootstraps_;
};

// A Kafka protocol API key by name ("EndTxn", "Produce", ... as in the protocol guide) or
// number ("26"). InvalidArgument listing the known names otherwise.
Result<int16_t> ApiKeyByName(std::string_view name);
// A librdkafka error code by name, as rd_kafka_err2name spells it ("PRODUCER_FENCED",
// "_TRANSPORT"; an "ERR_" prefix is accepted) or by number ("90").
Result<rd_kafka_resp_err_t> ErrorCodeByName(std::string_view name);

}  // namespace floe::kafka
