#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/kafka/kafka_client.h"  // MockCluster's users produce and consume

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
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  // "127.0.0.1:PORT,127.0.0.1:PORT,..."
  const std::string& bootstrap_servers() const { return bootstraps_; }
  Status CreateTopic(const std::string& name, int partitions, int replication_factor = 1);
  // Adds `rtt_ms` of latency to every response of broker `broker_id` (1-based).
  Status SetRtt(int broker_id, int rtt_ms);
  // The next `error_names.size()` requests of Kafka protocol API `api_key` (any broker) fail
  // with these errors, in order (rd_kafka_mock_push_request_errors_array). Names as
  // ErrorCodeByName takes them. E.g. EndTxn (26) with "PRODUCER_FENCED" makes the next
  // transaction commit fail as fenced. InvalidArgument (nothing pushed) for an unknown name.
  Status PushRequestErrors(int16_t api_key, const std::vector<std::string>& error_names);
  // Drops the errors still queued for `api_key`.
  void ClearRequestErrors(int16_t api_key);
  int brokers() const { return brokers_; }

  struct Impl;                                           // defined in mock_cluster.cc
  MockCluster(std::unique_ptr<Impl> impl, int brokers);  // use Make

 private:
  std::unique_ptr<Impl> impl_;
  int brokers_;
  std::string bootstraps_;
};

// A Kafka protocol API key by name ("EndTxn", "Produce", ... as in the protocol guide) or
// number ("26"). InvalidArgument listing the known names otherwise.
Result<int16_t> ApiKeyByName(std::string_view name);
// A librdkafka error code by name, as rd_kafka_err2name spells it ("PRODUCER_FENCED",
// "_TRANSPORT"; an "ERR_" prefix is accepted) or by number ("90"). InvalidArgument otherwise.
Result<int> ErrorCodeByName(std::string_view name);
// The same error's name as rd_kafka_err2name spells it ("ERR_PRODUCER_FENCED" and "90" give
// "PRODUCER_FENCED"), for messages.
Result<std::string> CanonicalErrorName(std::string_view name);

}  // namespace floe::kafka
