#include "floe/kafka/mock_cluster.h"

#include <librdkafka/rdkafka_mock.h>

namespace floe::kafka {

Result<std::unique_ptr<MockCluster>> MockCluster::Make(int brokers) {
  if (brokers < 1 || brokers > 64) {
    return Status::InvalidArgument("a mock cluster has 1..64 brokers, got " +
                                   std::to_string(brokers));
  }
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // Quiet: the handle only hosts the cluster.
  (void)rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
  rd_kafka_t* raw = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (raw == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::Internal(std::string("mock cluster host handle: ") + err);
  }
  HandlePtr rk(raw);
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(rk.get(), brokers);
  if (cluster == nullptr) return Status::Unavailable("rd_kafka_mock_cluster_new failed");
  return std::make_unique<MockCluster>(std::move(rk), cluster, brokers);
}

MockCluster::MockCluster(HandlePtr rk, rd_kafka_mock_cluster_s* cluster, int brokers)
    : rk_(std::move(rk)), cluster_(cluster), brokers_(brokers) {
  bootstraps_ = rd_kafka_mock_cluster_bootstraps(cluster_);
}

MockCluster::~MockCluster() { rd_kafka_mock_cluster_destroy(cluster_); }

Status MockCluster::CreateTopic(const std::string& name, int partitions, int replication_factor) {
  if (partitions < 1) {
    return Status::InvalidArgument("topic '" + name + "' needs at least one partition");
  }
  if (replication_factor < 1 || replication_factor > brokers_) replication_factor = brokers_;
  return KafkaStatus(
      rd_kafka_mock_topic_create(cluster_, name.c_str(), partitions, replication_factor),
      "create mock topic '" + name + "'");
}

Status MockCluster::SetRtt(int broker_id, int rtt_ms) {
  return KafkaStatus(rd_kafka_mock_broker_set_rtt(cluster_, broker_id, rtt_ms),
                     "set mock broker rtt");
}

}  // namespace floe::kafka
