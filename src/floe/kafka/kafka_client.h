#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

// A thin librdkafka adapter: RAII handles, and every librdkafka error turned into a Status at
// this boundary with "retryable" and "fatal" kept apart (STYLE rule 1):
//   Unavailable      transient (broker down, timeout, leader moving): retrying may succeed
//   InvalidArgument  configuration or input (bad property, unknown topic/partition)
//   Internal         fatal for the client instance (rd_kafka_fatal_error, fenced, ...)
//   IOError          any other broker error
namespace floe::kafka {

// Properties handed to librdkafka as they are ("bootstrap.servers", "group.id", ...).
using Properties = std::map<std::string, std::string>;

// The Status for a librdkafka error code; `what` says which call failed.
Status KafkaStatus(rd_kafka_resp_err_t err, std::string_view what);
// The Status for an rd_kafka_error_t (destroys it); OK for null.
Status KafkaStatus(rd_kafka_error_t* error, std::string_view what);
// True for the codes KafkaStatus maps to Unavailable.
bool IsRetryable(rd_kafka_resp_err_t err);

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const;
};
using HandlePtr = std::unique_ptr<rd_kafka_t, HandleDeleter>;
struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
using PartitionListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;
struct MessageDeleter {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};
using MessagePtr = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;

// Offsets of one topic by partition.
using PartitionOffsets = std::map<int32_t, int64_t>;

// InvalidArgument naming the property when librdkafka refuses one of `properties` (checked
// without creating a client; cross-property rules are only checked when a client is made).
Status CheckProperties(const Properties& properties);

// The number of partitions of `topic` (metadata request). NotFound if the topic is unknown.
Result<int32_t> PartitionCount(rd_kafka_t* rk, const std::string& topic,
                               std::chrono::milliseconds timeout);

// How a transactional call failed, per librdkafka's classification of the rd_kafka_error_t
// (rd_kafka_error_is_retriable / _txn_requires_abort / _is_fatal).
enum class TxnErrorKind {
  kNone,           // succeeded
  kRetriable,      // the same call may be repeated (e.g. a commit that timed out)
  kRequiresAbort,  // the transaction cannot commit: abort it, its records are not visible
  kFatal,          // the producer is unusable (fenced by a newer instance of its transactional id)
  kOther,          // anything else (state errors, bad arguments)
};
std::string_view TxnErrorKindName(TxnErrorKind kind);

// The outcome of a transactional call: OK, or the error as a Status (KafkaStatus's mapping)
// together with its classification.
struct [[nodiscard]] TxnResult {
  TxnErrorKind kind = TxnErrorKind::kNone;
  Status status;
  bool ok() const { return kind == TxnErrorKind::kNone; }
};

// One delivery report: the record's `tag` (given to Produce) and where it landed.
struct Delivery {
  uint64_t tag = 0;
  int32_t partition = -1;
  int64_t offset = -1;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
};

// KafkaProducer produces records to explicit partitions (or librdkafka's partitioner with
// kAnyPartition) and waits for their acknowledgements in Flush. With a 'transactional.id' it
// also runs transactions (InitTransactions once, then Begin -> Produce* -> Flush -> Commit |
// Abort). With `keep_deliveries`, every delivery report (tag, partition, offset) is kept until
// TakeDeliveries. Lifecycle: Make -> Produce* -> Flush. Not thread-safe.
class KafkaProducer {
 public:
  static constexpr int32_t kAnyPartition = RD_KAFKA_PARTITION_UA;

  static Result<std::unique_ptr<KafkaProducer>> Make(const Properties& properties,
                                                     bool keep_deliveries = false);

  // Queues one record (waits while the local queue is full). Delivery errors surface in Flush.
  Status Produce(const std::string& topic, int32_t partition, std::string_view value,
                 std::string_view key = {}, uint64_t tag = 0);
  // Waits until every queued record is acknowledged; the first delivery error otherwise
  // (the failure count is then reset, so a later Flush reports only new failures).
  Status Flush(std::chrono::milliseconds timeout);
  // The delivery reports received since the last call (only with `keep_deliveries`).
  std::vector<Delivery> TakeDeliveries();

  // Transactions. REQUIRES: 'transactional.id' was set. InitTransactions fences older
  // instances of the id and aborts (or completes) the transaction they left open.
  TxnResult InitTransactions(std::chrono::milliseconds timeout);
  TxnResult BeginTransaction();
  // Flushes, then commits. Retriable: call again; RequiresAbort: AbortTransaction; Fatal: the
  // producer must be destroyed.
  TxnResult CommitTransaction(std::chrono::milliseconds timeout);
  TxnResult AbortTransaction(std::chrono::milliseconds timeout);

  rd_kafka_t* handle() const { return rk_.get(); }

  struct DeliveryState {
    int64_t failed = 0;
    rd_kafka_resp_err_t first_error = RD_KAFKA_RESP_ERR_NO_ERROR;
    bool keep = false;
    std::vector<Delivery> reports;
  };
  explicit KafkaProducer(HandlePtr rk, std::unique_ptr<DeliveryState> delivery)
      : rk_(std::move(rk)), delivery_(std::move(delivery)) {}

 private:
  HandlePtr rk_;
  std::unique_ptr<DeliveryState> delivery_;  // written by the delivery callback (in poll)
};

// The TxnResult of an rd_kafka_error_t (destroys it); `what` says which call failed.
TxnResult KafkaTxnResult(rd_kafka_error_t* error, std::string_view what);

// One consumed record, or an event of a partition (end reached, error).
struct ConsumedMessage {
  MessagePtr message;
  rd_kafka_resp_err_t err() const { return message->err; }
  int32_t partition() const { return message->partition; }
  int64_t offset() const { return message->offset; }
  std::string_view value() const {
    return message->payload == nullptr
               ? std::string_view()
               : std::string_view(static_cast<const char*>(message->payload), message->len);
  }
};

// KafkaConsumer reads explicitly assigned partitions (rd_kafka_assign: no group membership, no
// rebalancing); the group id, when set, is only used to read and commit offsets. Commits are
// standalone commits, which the mock cluster refuses on a group that ever had a member.
// Lifecycle: Make -> Assign -> Poll* (Commit* anywhere). Not thread-safe.
class KafkaConsumer {
 public:
  static Result<std::unique_ptr<KafkaConsumer>> Make(const Properties& properties);

  Result<int32_t> PartitionCount(const std::string& topic, std::chrono::milliseconds timeout);
  // Low and high watermark (first offset, next offset to be written) of one partition.
  Result<std::pair<int64_t, int64_t>> Watermarks(const std::string& topic, int32_t partition,
                                                 std::chrono::milliseconds timeout);
  // The group's committed offsets (negative = none) of `partitions`.
  Result<PartitionOffsets> Committed(const std::string& topic,
                                     const std::vector<int32_t>& partitions,
                                     std::chrono::milliseconds timeout);
  // The first offset with a timestamp >= `timestamp_ms` per partition (-1 = none).
  Result<PartitionOffsets> OffsetsForTimes(const std::string& topic,
                                           const std::vector<int32_t>& partitions,
                                           int64_t timestamp_ms, std::chrono::milliseconds timeout);
  // Reads `topic` from the given next offsets (replaces any earlier assignment).
  Status Assign(const std::string& topic, const PartitionOffsets& next_offsets);
  // The next message or partition event; nullopt when none arrived within `timeout`.
  Result<std::optional<ConsumedMessage>> Poll(std::chrono::milliseconds timeout);
  // Commits next offsets for the group (async: the outcome goes to the commit callback, which
  // logs failures; offsets are for monitoring). REQUIRES: 'group.id' was set.
  Status CommitAsync(const std::string& topic, const PartitionOffsets& next_offsets);
  // The same, waiting for the outcome.
  Status CommitSync(const std::string& topic, const PartitionOffsets& next_offsets);

  rd_kafka_t* handle() const { return rk_.get(); }
  explicit KafkaConsumer(HandlePtr rk) : rk_(std::move(rk)) {}

 private:
  HandlePtr rk_;
};

// "partition:0,offset:42;partition:1,offset:300" (Flink's 'scan.startup.specific-offsets').
Result<PartitionOffsets> ParseSpecificOffsets(std::string_view text);

}  // namespace floe::kafka
