#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/status.h"

// librdkafka's message struct, held (never dereferenced) by ConsumedMessage so that polling a
// record costs no allocation of its own. Only kafka_client.cc sees its definition.
struct rd_kafka_message_s;

// A thin librdkafka adapter, and the only module that includes librdkafka: no librdkafka type
// appears in this header. Every librdkafka error is turned into a Status at this boundary with
// "retryable" and "fatal" kept apart, so callers retry what may succeed and stop on the rest:
//   Unavailable      transient (broker down, timeout, leader moving): retrying may succeed
//   InvalidArgument  configuration or input (bad property, unknown topic/partition)
//   Internal         fatal for the client instance (rd_kafka_fatal_error, fenced, ...)
//   IOError          any other broker error
namespace floe::kafka {

// Properties handed to librdkafka as they are ("bootstrap.servers", "group.id", ...).
using Properties = std::map<std::string, std::string>;

// Offsets of one topic by partition.
using PartitionOffsets = std::map<int32_t, int64_t>;

// InvalidArgument naming the property when librdkafka refuses one of `properties` (checked
// without creating a client; cross-property rules are only checked when a client is made).
Status CheckProperties(const Properties& properties);

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

// The outcome of a transactional call: OK, or the error as a Status (the mapping above)
// together with its classification.
struct [[nodiscard]] TxnResult {
  TxnErrorKind kind = TxnErrorKind::kNone;
  Status status;
  bool ok() const { return kind == TxnErrorKind::kNone; }
};

// One delivery report: the record's `tag` (given to Produce), where it landed, and whether it
// was delivered (`status`: the mapping above; e.g. IOError for a record dropped by PurgeQueued).
struct Delivery {
  uint64_t tag = 0;
  int32_t partition = -1;
  int64_t offset = -1;
  Status status;
  bool ok() const { return status.ok(); }
};

// KafkaProducer produces records to explicit partitions (or librdkafka's partitioner with
// kAnyPartition) and waits for their acknowledgements in Flush. With a 'transactional.id' it
// also runs transactions (InitTransactions once, then Begin -> Produce* -> Flush -> Commit |
// Abort). With `keep_deliveries`, every delivery report (tag, partition, offset) is kept until
// TakeDeliveries. Lifecycle: Make -> Produce* -> Flush. Not thread-safe.
class KafkaProducer {
 public:
  // librdkafka's partitioner chooses (RD_KAFKA_PARTITION_UA).
  static constexpr int32_t kAnyPartition = -1;

  static Result<std::unique_ptr<KafkaProducer>> Make(const Properties& properties,
                                                     bool keep_deliveries = false);
  ~KafkaProducer();
  KafkaProducer(const KafkaProducer&) = delete;
  KafkaProducer& operator=(const KafkaProducer&) = delete;

  // The number of partitions of `topic` (metadata request). NotFound if the topic is unknown.
  Result<int32_t> PartitionCount(const std::string& topic, std::chrono::milliseconds timeout);

  // Queues one record (waits while the local queue is full). Delivery errors surface in Flush.
  Status Produce(const std::string& topic, int32_t partition, std::string_view value,
                 std::string_view key = {}, uint64_t tag = 0);
  // Queues a record with a null value (a tombstone: a compacted topic's delete of `key`).
  Status ProduceTombstone(const std::string& topic, int32_t partition, std::string_view key);
  // Waits until every queued record is acknowledged; the first delivery error otherwise
  // (the failure count is then reset, so a later Flush reports only new failures).
  Status Flush(std::chrono::milliseconds timeout);
  // Drops the records still queued (never sent) and stops waiting for those in flight (which
  // may still land on the brokers). Their delivery reports, served here, fail (_PURGE_QUEUE,
  // _PURGE_INFLIGHT), so a later Flush reports them. For closing without delivering, e.g.
  // before aborting a transaction.
  void PurgeQueued();
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

  struct Impl;                                         // defined in kafka_client.cc
  explicit KafkaProducer(std::unique_ptr<Impl> impl);  // use Make

 private:
  Status ProduceValue(const std::string& topic, int32_t partition, const char* value,
                      size_t value_size, std::string_view key, uint64_t tag);

  std::unique_ptr<Impl> impl_;
};

// One consumed record, or an event of a partition (end reached, offset reset, error). Owns the
// librdkafka message: the views it returns live as long as it. Move-only.
class ConsumedMessage {
 public:
  enum class Kind {
    kRecord,        // a record (the views below are its contents)
    kPartitionEnd,  // the partition has no more records for now (with 'enable.partition.eof')
    kOffsetReset,   // the requested offset is out of range (auto.offset.reset = error)
    kError,         // any other error of the partition or the consumer
  };

  ConsumedMessage(ConsumedMessage&&) noexcept = default;
  ConsumedMessage& operator=(ConsumedMessage&&) noexcept = default;
  ~ConsumedMessage() = default;

  Kind kind() const { return kind_; }
  // kError only: librdkafka retries it on its own, so a poll loop may skip it.
  bool retryable() const;
  // The error as a Status (the mapping above) with `what` as context; OK for a record.
  Status error(std::string_view what) const;

  // The record's topic ("" if none).
  std::string_view topic() const;
  int32_t partition() const { return partition_; }
  // The record's offset; for kPartitionEnd the next offset to be written.
  int64_t offset() const { return offset_; }
  std::string_view value() const { return value_; }
  // A tombstone (null value), as opposed to an empty value.
  bool value_is_null() const { return value_is_null_; }
  std::string_view key() const { return key_; }
  bool key_is_null() const;
  // The record's timestamp in ms since the epoch (create or log-append time), if it has one.
  std::optional<int64_t> timestamp_ms() const;
  // What the timestamp is, in Flink's words: "CreateTime", "LogAppendTime" or "NoTimestampType".
  std::string_view timestamp_type() const;
  // All headers in order (name, value); a null header value as "".
  std::vector<std::pair<std::string, std::string>> Headers() const;

 private:
  friend class KafkaConsumer;
  struct MessageDeleter {
    void operator()(rd_kafka_message_s* m) const;
  };
  explicit ConsumedMessage(rd_kafka_message_s* m);

  std::unique_ptr<rd_kafka_message_s, MessageDeleter> message_;
  Kind kind_ = Kind::kError;
  int32_t partition_ = -1;
  int64_t offset_ = -1;
  bool value_is_null_ = true;
  std::string_view value_;
  std::string_view key_;
};

// What one rebalance moved for this group member, per topic (cooperative: only the partitions
// that change owner; a member keeps the rest and goes on reading them).
struct GroupChange {
  enum class Kind {
    kAssigned,  // the member now owns `partitions`
    kRevoked,   // the member gives them up in an orderly rebalance
    kLost,      // the group took them away already (the member's session expired)
  };
  Kind kind = Kind::kAssigned;
  std::string topic;
  std::vector<int32_t> partitions;
};

// Called on the polling thread during Poll, for every change. For kAssigned it returns the next
// offset to read of each of `partitions` (a partition it leaves out starts at the group's
// committed offset, else 'auto.offset.reset'); for the others its offsets are ignored. An error
// makes that Poll fail with it.
using RebalanceListener = std::function<Result<PartitionOffsets>(const GroupChange&)>;

// KafkaConsumer reads explicitly assigned partitions (rd_kafka_assign: no group membership, no
// rebalancing); the group id, when set, is only used to read and commit offsets. Commits are
// standalone commits, which the mock cluster refuses on a group that ever had a member.
// Lifecycle: Make -> Assign -> Poll* (Commit* anywhere). Not thread-safe.
//
// A group member (MakeMember) instead joins 'group.id' with the cooperative-sticky assignor and
// gets its partitions from the group: Subscribe -> Poll* -> Close. Rebalances happen inside
// Poll and reach the listener.
class KafkaConsumer {
 public:
  static Result<std::unique_ptr<KafkaConsumer>> Make(const Properties& properties);
  // REQUIRES: 'group.id' in `properties`. 'partition.assignment.strategy' is floe's
  // (cooperative-sticky): InvalidArgument when `properties` ask for another.
  static Result<std::unique_ptr<KafkaConsumer>> MakeMember(const Properties& properties,
                                                           RebalanceListener listener);
  ~KafkaConsumer();
  KafkaConsumer(const KafkaConsumer&) = delete;
  KafkaConsumer& operator=(const KafkaConsumer&) = delete;

  Result<int32_t> PartitionCount(const std::string& topic, std::chrono::milliseconds timeout);
  // Low and high watermark (first offset, next offset to be written) of one partition.
  Result<std::pair<int64_t, int64_t>> Watermarks(const std::string& topic, int32_t partition,
                                                 std::chrono::milliseconds timeout);
  // The partition's high watermark as of the last fetch from it: no request (nullopt before the
  // first fetch). What the lag metrics use.
  std::optional<int64_t> CachedHighWatermark(const std::string& topic, int32_t partition);
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
  // Reads every topic's partitions from the given next offsets, in one assignment (replaces
  // any earlier assignment).
  Status AssignAll(const std::map<std::string, PartitionOffsets>& next_offsets_by_topic);
  // The next message or partition event; nullopt when none arrived within `timeout`.
  Result<std::optional<ConsumedMessage>> Poll(std::chrono::milliseconds timeout);
  // Appends the messages and partition events waiting now, up to `max`, without waiting (one
  // queue lock for all: rd_kafka_consume_batch_queue). Not for a group member: a rebalance
  // served inside the batch could not be placed between its messages.
  Status PollWaiting(size_t max, std::vector<ConsumedMessage>* out);
  // Commits next offsets for the group (async: the outcome goes to the commit callback, which
  // logs failures; offsets are for monitoring). REQUIRES: 'group.id' was set.
  Status CommitAsync(const std::string& topic, const PartitionOffsets& next_offsets);
  // The same, waiting for the outcome.
  Status CommitSync(const std::string& topic, const PartitionOffsets& next_offsets);

  // Group members only: joins the group for `topics` (the first Poll calls start the join).
  Status Subscribe(const std::vector<std::string>& topics);
  // Group members only: the partitions this member owns now, by topic.
  Result<std::map<std::string, std::vector<int32_t>>> Assignment();
  // Group members only: leaves the group (its partitions are revoked through the listener and
  // go to the other members at once, without waiting for the session timeout).
  Status Close();

  struct Impl;                                         // defined in kafka_client.cc
  explicit KafkaConsumer(std::unique_ptr<Impl> impl);  // use Make

 private:
  std::unique_ptr<Impl> impl_;
};

// "partition:0,offset:42;partition:1,offset:300" (Flink's 'scan.startup.specific-offsets').
Result<PartitionOffsets> ParseSpecificOffsets(std::string_view text);

}  // namespace floe::kafka
