#pragma once

// Internal to floe/kafka: the librdkafka side of the adapter. Included only by
// src/floe/kafka/*.cc and the kafka tests; never by another module, never installed.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "floe/common/status.h"
#include "floe/kafka/kafka_client.h"

namespace floe::kafka {

// The Status for a librdkafka error code; `what` says which call failed.
Status KafkaStatus(rd_kafka_resp_err_t err, std::string_view what);
// The Status for an rd_kafka_error_t (destroys it); OK for null.
Status KafkaStatus(rd_kafka_error_t* error, std::string_view what);
// True for the codes KafkaStatus maps to Unavailable because librdkafka retries them itself.
bool IsRetryable(rd_kafka_resp_err_t err);
// The TxnResult of an rd_kafka_error_t (destroys it); `what` says which call failed.
TxnResult KafkaTxnResult(rd_kafka_error_t* error, std::string_view what);

// Closes a consumer (leaving its assignment) before destroying it.
struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const;
};
using HandlePtr = std::unique_ptr<rd_kafka_t, HandleDeleter>;

struct QueueDeleter {
  void operator()(rd_kafka_queue_t* queue) const { rd_kafka_queue_destroy(queue); }
};
using QueuePtr = std::unique_ptr<rd_kafka_queue_t, QueueDeleter>;

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
using PartitionListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

// The number of partitions of `topic` (metadata request). NotFound if the topic is unknown.
Result<int32_t> PartitionCount(rd_kafka_t* rk, const std::string& topic,
                               std::chrono::milliseconds timeout);

}  // namespace floe::kafka
