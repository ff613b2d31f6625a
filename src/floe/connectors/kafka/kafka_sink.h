#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/connectors/kafka/schema_registry.h"
#include "floe/format/json/json_lines.h"
#include "floe/kafka/kafka_client.h"
#include "floe/runtime/checkpoint_config.h"
#include "floe/runtime/job_graph.h"
#include "floe/runtime/operator.h"

namespace floe::connectors {

// 'sink.delivery-guarantee' (Flink's names; Flink's default is at-least-once).
enum class KafkaDeliveryGuarantee { kNone, kAtLeastOnce, kExactlyOnce };

// 'sink.partitioner' (Flink's names): librdkafka's partitioner, subtask -> one partition, or
// rows spread round-robin.
enum class KafkaSinkPartitioner { kDefault, kFixed, kRoundRobin };

// librdkafka's default 'transaction.timeout.ms' and the broker's usual
// 'transaction.max.timeout.ms' (15 min), for the timeout rule.
constexpr int64_t kDefaultTransactionTimeoutMs = 60000;
constexpr int64_t kBrokerMaxTransactionTimeoutMs = 900000;

// Settings of a 'connector' = 'kafka' table used as a sink (docs/kafka.md).
struct KafkaSinkConfig {
  std::string table;             // the SQL table name, for messages
  std::string topic;             // 'topic'
  kafka::Properties properties;  // 'properties.*' without the prefix, handed to librdkafka
  KafkaDeliveryGuarantee guarantee = KafkaDeliveryGuarantee::kAtLeastOnce;
  std::string transactional_id_prefix;  // 'sink.transactional-id-prefix' (exactly-once)
  KafkaSinkPartitioner partitioner = KafkaSinkPartitioner::kDefault;  // 'sink.partitioner'
  int pool_size = 3;         // transactional ids per subtask: max-concurrent-checkpoints + 2
  uint32_t parallelism = 0;  // 'sink.parallelism'; 0 = the job's default
  int64_t transaction_timeout_ms = kDefaultTransactionTimeoutMs;  // for messages
  int64_t timeout_ms = 120000;  // flush, commit, init and read-back calls
  std::shared_ptr<const BatchSchema> schema;
  // Flink's json format: TIMESTAMP text per 'json.timestamp-format.standard' (default 'SQL'),
  // DECIMAL as a plain JSON number.
  json::EncodeOptions encoding{json::TimestampStandard::kSql, /*decimal_as_number=*/true};
  // 'format' = 'avro' or 'avro-confluent': each row an Avro datum of the schema Flink derives
  // from the columns (avro::AvroSchemaForColumns; its JSON text, "" for 'json'). avro-confluent
  // registers it under `subject` ('avro-confluent.subject', default '<topic>-value', Confluent's
  // TopicNameStrategy) and frames each datum with its id; avro writes the bare datum.
  std::string avro_schema;
  bool avro_confluent = false;
  SchemaRegistryOptions registry;
  std::string subject;
};

// What the timeout rule needs from the job's configuration.
struct KafkaSinkJobSettings {
  runtime::CheckpointConfig checkpointing;
  int64_t restart_delay_ms = 0;  // fixed-delay restart delay; 0 when restarts are off
  // The job's board (JobContext::positions): an exactly-once sink registers as a committer and
  // reports its commits, so sources publish group offsets only after them. May be null.
  std::shared_ptr<runtime::SourcePositionBoard> positions;
};

// Validates the options ('topic', 'properties.bootstrap.servers' required, 'format' = 'json',
// 'json.timestamp-format.standard', 'json.encode.decimal-as-plain-number',
// 'sink.delivery-guarantee', 'sink.transactional-id-prefix', 'sink.parallelism') and, for
// exactly-once, the job: checkpointing must be on and EXACTLY_ONCE, and
//   checkpoint interval + checkpoint timeout + restart delay < transaction.timeout.ms
// (else the broker may abort a transaction before floe commits it: the commit fails, the job
// restarts and re-sends, possibly in a loop). Errors name the table, the option, the rule and
// the numbers.
Result<KafkaSinkConfig> MakeKafkaSinkConfig(const TableDescriptor& table,
                                            const KafkaSinkJobSettings& job);

// One record of a transaction kept in checkpoint state: where it landed and its value.
struct KafkaSinkRecord {
  int32_t partition = -1;
  int64_t offset = -1;
  std::string value;
  bool operator==(const KafkaSinkRecord&) const = default;
};

// A transaction flushed at barrier `checkpoint_id` and not yet known to be committed.
struct KafkaSinkTransaction {
  std::string transactional_id;
  uint64_t checkpoint_id = 0;
  std::vector<KafkaSinkRecord> records;
  bool operator==(const KafkaSinkTransaction&) const = default;
};

// The sink's state blob (little-endian): u32 version = 1, u32 transaction count, then per
// transaction: string transactional id, u64 checkpoint id, u32 record count, per record:
// i32 partition, i64 offset, string value. Empty for none / at-least-once.
void EncodeKafkaSinkState(const std::vector<KafkaSinkTransaction>& pending,
                          runtime::StateWriter& out);
Result<std::vector<KafkaSinkTransaction>> DecodeKafkaSinkState(runtime::StateReader& in);

// KafkaSink writes each row as one JSON object (json::AppendRowAsJson with config.encoding:
// Flink's json format, no newline) to 'topic',
// partitioned per 'sink.partitioner' (default: librdkafka's partitioner; 'fixed': subtask i
// writes partition i mod partitions; 'round-robin': rows in turn).
// * none: records are sent as they come; OnEndOfInput flushes.
// * at-least-once: OnBarrier flushes and waits for every acknowledgement, so a completed
//   checkpoint never lacks its records (a restore replays what followed: duplicates).
// * exactly-once: one Kafka transaction per checkpoint. Transactional ids come from a fixed
//   pool per subtask, '<prefix>-<subtask>-<slot>' (pool_size slots). Open initialises every id
//   of the pool (fencing older instances; the broker aborts what they left open, or finishes a
//   commit whose EndTxn it already has). A transaction begins with the first record after a
//   barrier; OnBarrier(N) flushes it and keeps it pending, with its records (partition, offset,
//   value) in the state blob, because librdkafka cannot resume another producer's transaction.
//   OnCheckpointComplete(N) commits every pending transaction <= N; a failed commit fails the
//   task (message: transactional id, checkpoint, records, librdkafka's classification). With a
//   position board the subtask is a registered committer (Open) and reports N committed after
//   those commits (also when there was none), so Kafka sources publish N's group offsets only
//   then; Close reports it closed.
//   Restore settles each restored pending transaction: it landed if a read_committed consumer
//   finds, in every partition it wrote, the kept value at its first recorded offset; if not,
//   its records are re-sent as the start of the next transaction (committed with the next
//   checkpoint, so a crash before that re-sends them again instead of duplicating them).
//   Open also fences slots up to kFencedSlots (8) beyond a smaller pool. Close aborts the open
//   and the pending transactions (best-effort, 2 s each), never commits.
// * A guarantee changed across a restore: an exactly-once blob restored by none / at-least-once
//   is settled the same way (ids fenced, read-back) and what did not land is re-sent as
//   ordinary records; an empty blob (none / at-least-once) restores nothing in any mode.
// Single-threaded, like every operator.
class KafkaSink final : public runtime::Operator {
 public:
  explicit KafkaSink(KafkaSinkConfig config,
                     std::shared_ptr<runtime::SourcePositionBoard> positions = nullptr);
  ~KafkaSink() override;

  Status Open(const runtime::OperatorContext& ctx) override;
  Status Restore(runtime::StateReader& state) override;
  // Another parallelism: subtask 0 settles every old subtask's pending transactions (fencing
  // their ids, re-sending what did not land) and aborts what old subtasks this run no longer has
  // may have left open; the others start clean (their Open fenced their own ids).
  Status RestoreRescaled(const std::vector<std::string>& states) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;
  Status OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                   runtime::Collector& out) override;
  Status OnCheckpointComplete(runtime::CheckpointId id) override;
  Status OnEndOfInput(runtime::Collector& out) override;
  Status Close() override;

  // Test hooks: transactions pending commit, and how the last Restore settled.
  const std::map<uint64_t, KafkaSinkTransaction>& pending() const { return pending_; }
  int64_t resent_records() const { return resent_records_; }
  // Transactions Close aborted (open or pending at close).
  int aborted_at_close() const { return aborted_at_close_; }
  // Every transactional id initialised (fenced) so far, in order.
  const std::vector<std::string>& fenced_ids() const { return fenced_ids_; }
  // The read-back consumers' properties: the connection ones of the sink, partition EOF on,
  // auto.offset.reset = error (a record removed under the read-back is an error, never a jump).
  static kafka::Properties ReadBackProperties(const kafka::Properties& sink_properties,
                                              bool read_committed);

  // The transactional id of `slot` for `subtask`: '<prefix>-<subtask>-<slot>'.
  static std::string TransactionalId(const std::string& prefix, uint32_t subtask, int slot);

 private:
  // Settles restored pending transactions: fences their ids, re-sends what did not land.
  Status SettleRestored(const std::vector<KafkaSinkTransaction>& restored);
  struct Slot {
    std::string transactional_id;
    std::unique_ptr<kafka::KafkaProducer> producer;
    std::optional<uint64_t> pending;  // checkpoint id of its transaction pending commit
  };
  struct OpenTransaction {
    int slot = -1;
    std::vector<KafkaSinkRecord> records;
  };

  Result<std::unique_ptr<kafka::KafkaProducer>> MakeTransactionalProducer(
      const std::string& transactional_id);
  Status BeginTransaction();
  Status Send(std::string_view value, int32_t partition);
  Status StageTransaction(uint64_t checkpoint_id);
  Status Commit(uint64_t checkpoint_id);
  // True when `txn` is visible to read_committed readers (see the class comment).
  Result<bool> Landed(const KafkaSinkTransaction& txn);
  Status RemovedError(const KafkaSinkTransaction& txn, int32_t partition, int64_t offset,
                      const std::string& detail = "") const;
  std::string Describe(const KafkaSinkTransaction& txn) const;

  KafkaSinkConfig config_;
  std::shared_ptr<runtime::SourcePositionBoard> positions_;  // registered when exactly-once
  std::string task_;
  uint32_t subtask_ = 0;
  uint32_t parallelism_ = 1;
  std::unique_ptr<kafka::KafkaProducer> producer_;  // none / at-least-once
  std::vector<Slot> slots_;                         // exactly-once
  std::optional<OpenTransaction> open_;
  std::map<uint64_t, KafkaSinkTransaction> pending_;  // by checkpoint id
  uint64_t last_barrier_ = 0;
  int32_t partitions_ = 0;  // of the topic, when the sink opened
  uint64_t rows_sent_ = 0;  // for 'round-robin'
  int64_t resent_records_ = 0;
  int aborted_at_close_ = 0;
  runtime::Metric* txn_committed_ = nullptr;  // KafkaSink_transactionsCommitted
  runtime::Metric* txn_aborted_ = nullptr;    // KafkaSink_transactionsAborted
  std::vector<std::string> fenced_ids_;
  std::string row_;
  std::string avro_header_;  // avro-confluent: magic byte 0 and the registered id; avro: none
};

// Adds the Kafka sink vertex `name` after `input`: parallelism 'sink.parallelism' or
// `default_parallelism`, FORWARD edge when parallelisms match, else REBALANCE.
Status AddKafkaSink(runtime::JobGraph& graph, runtime::VertexId input, const std::string& name,
                    const TableDescriptor& table, const KafkaSinkJobSettings& job,
                    uint32_t default_parallelism);

// The sink's WITH options (besides 'properties.*'), for the registry.
const std::vector<std::string>& KafkaSinkOptionNames();

// The 'properties.*' of a Kafka table (prefix removed): a name librdkafka does not know is
// refused with the closest known one, then 'bootstrap.servers' must be set. Errors name the
// table.
Status CheckKafkaClientProperties(const TableDescriptor& table,
                                  const kafka::Properties& properties);

}  // namespace floe::connectors
