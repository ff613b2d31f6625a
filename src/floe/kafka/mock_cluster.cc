#include "floe/kafka/mock_cluster.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>  // after rdkafka.h

#include <charconv>
#include <utility>

#include "floe/kafka/kafka_internal.h"

namespace floe::kafka {

struct MockCluster::Impl {
  // The handle that owns the mock: destroyed after the cluster.
  HandlePtr rk;
  rd_kafka_mock_cluster_t* cluster = nullptr;

  ~Impl() {
    if (cluster != nullptr) rd_kafka_mock_cluster_destroy(cluster);
  }
};

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
  auto impl = std::make_unique<Impl>();
  impl->rk = HandlePtr(raw);
  impl->cluster = rd_kafka_mock_cluster_new(impl->rk.get(), brokers);
  if (impl->cluster == nullptr) return Status::Unavailable("rd_kafka_mock_cluster_new failed");
  return std::make_unique<MockCluster>(std::move(impl), brokers);
}

MockCluster::MockCluster(std::unique_ptr<Impl> impl, int brokers)
    : impl_(std::move(impl)),
      brokers_(brokers),
      bootstraps_(rd_kafka_mock_cluster_bootstraps(impl_->cluster)) {}

MockCluster::~MockCluster() = default;

Status MockCluster::CreateTopic(const std::string& name, int partitions, int replication_factor) {
  if (partitions < 1) {
    return Status::InvalidArgument("topic '" + name + "' needs at least one partition");
  }
  if (replication_factor < 1 || replication_factor > brokers_) replication_factor = brokers_;
  return KafkaStatus(
      rd_kafka_mock_topic_create(impl_->cluster, name.c_str(), partitions, replication_factor),
      "create mock topic '" + name + "'");
}

Status MockCluster::SetRtt(int broker_id, int rtt_ms) {
  return KafkaStatus(rd_kafka_mock_broker_set_rtt(impl_->cluster, broker_id, rtt_ms),
                     "set mock broker rtt");
}

Status MockCluster::PushRequestErrors(int16_t api_key,
                                      const std::vector<std::string>& error_names) {
  std::vector<rd_kafka_resp_err_t> errors;
  errors.reserve(error_names.size());
  for (const std::string& name : error_names) {
    FLOE_ASSIGN_OR_RAISE(int code, ErrorCodeByName(name));
    errors.push_back(static_cast<rd_kafka_resp_err_t>(code));
  }
  rd_kafka_mock_push_request_errors_array(impl_->cluster, api_key, errors.size(), errors.data());
  return Status::OK();
}

void MockCluster::ClearRequestErrors(int16_t api_key) {
  rd_kafka_mock_clear_request_errors(impl_->cluster, api_key);
}

namespace {

// The Kafka protocol's API keys (kafka.apache.org/protocol#protocol_api_keys) floe's tests use.
constexpr std::pair<std::string_view, int16_t> kApiKeys[] = {
    {"Produce", 0},
    {"Fetch", 1},
    {"ListOffsets", 2},
    {"Metadata", 3},
    {"OffsetCommit", 8},
    {"OffsetFetch", 9},
    {"FindCoordinator", 10},
    {"JoinGroup", 11},
    {"Heartbeat", 12},
    {"LeaveGroup", 13},
    {"SyncGroup", 14},
    {"InitProducerId", 22},
    {"AddPartitionsToTxn", 24},
    {"AddOffsetsToTxn", 25},
    {"EndTxn", 26},
    {"TxnOffsetCommit", 28},
};

bool ParseInt(std::string_view s, int64_t* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

Result<int16_t> ApiKeyByName(std::string_view name) {
  int64_t n = 0;
  if (ParseInt(name, &n) && n >= 0 && n <= INT16_MAX) return static_cast<int16_t>(n);
  std::string known;
  for (const auto& [api, key] : kApiKeys) {
    if (api == name) return key;
    known += (known.empty() ? "" : ", ") + std::string(api);
  }
  return Status::InvalidArgument("unknown Kafka API '" + std::string(name) +
                                 "' (a number or one of " + known + ")");
}

Result<int> ErrorCodeByName(std::string_view name) {
  int64_t n = 0;
  if (ParseInt(name, &n) && n >= INT32_MIN && n <= INT32_MAX) return static_cast<int>(n);
  if (name.substr(0, 4) == "ERR_") name.remove_prefix(4);
  const rd_kafka_err_desc* descs = nullptr;
  size_t count = 0;
  rd_kafka_get_err_descs(&descs, &count);
  for (size_t i = 0; i < count; ++i) {
    if (descs[i].name != nullptr && name == descs[i].name) return static_cast<int>(descs[i].code);
  }
  return Status::InvalidArgument("unknown Kafka error '" + std::string(name) +
                                 "' (a number or a name such as PRODUCER_FENCED, "
                                 "INVALID_PRODUCER_EPOCH, _TRANSPORT)");
}

Result<std::string> CanonicalErrorName(std::string_view name) {
  FLOE_ASSIGN_OR_RAISE(int code, ErrorCodeByName(name));
  return std::string(rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(code)));
}

}  // namespace floe::kafka
