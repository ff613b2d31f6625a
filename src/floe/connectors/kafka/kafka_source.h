#pragma once

#include <atomic>
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

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/connectors/dead_letter.h"
#include "floe/connectors/debezium_avro.h"
#include "floe/connectors/debezium_json.h"
#include "floe/connectors/kafka/schema_registry.h"
#include "floe/connectors/partition_claims.h"
#include "floe/connectors/registry.h"
#include "floe/connectors/source_start.h"
#include "floe/format/avro/record_decoder.h"
#include "floe/format/json/json_lines.h"
#include "floe/format/protobuf/message_decoder.h"
#include "floe/kafka/kafka_client.h"
#include "floe/runtime/job_graph.h"
#include "floe/runtime/operator.h"
#include "floe/runtime/source_positions.h"
#include "floe/runtime/watermark_generator.h"

namespace floe::connectors {

// 'scan.startup.mode': where a job starts when neither a checkpoint nor the table holds
// positions.
enum class KafkaStartupMode { kEarliest, kLatest, kGroupOffsets, kSpecificOffsets, kTimestamp };

// 'format' (or 'value.format').
enum class KafkaFormat {
  kJson,
  kDebeziumJson,
  kAvroConfluent,
  kAvro,
  kDebeziumAvroConfluent,
  kProtobufConfluent
};

// Offsets by topic, then partition.
using TopicOffsets = std::map<std::string, kafka::PartitionOffsets, std::less<>>;

// Settings of a 'connector' = 'kafka' table used as a source (docs/kafka.md).
// The metadata keys a Kafka source gives (Flink's names) and the type a METADATA column of
// each must declare, in KafkaSourceConfig::MetadataKey's order.
const std::vector<std::pair<std::string, std::string>>& KafkaMetadataKeys();

struct KafkaSourceConfig {
  std::vector<std::string> topics;  // 'topic': one name or a ';' list, in the order written
  kafka::Properties properties;     // 'properties.*' without the prefix, handed to librdkafka
  std::string group_id;             // 'properties.group.id' ("" = none: no offsets committed)
  KafkaStartupMode startup = KafkaStartupMode::kGroupOffsets;  // Flink's default
  kafka::PartitionOffsets specific_offsets;                    // 'scan.startup.specific-offsets'
  int64_t startup_timestamp_ms = 0;                            // 'scan.startup.timestamp-millis'
  bool bounded_latest = false;  // 'scan.bounded.mode' = 'latest-offset'
  uint32_t parallelism = 0;     // 'scan.parallelism'; 0 = the job's 'parallelism.default'
  KafkaFormat format = KafkaFormat::kJson;
  bool ignore_parse_errors = false;  // 'json.ignore-parse-errors' / 'debezium-json.ignore-...'
  // 'scan.bad-records': a record the format cannot read fails the job, is skipped, or goes to
  // side output 1 as a dead-letter row (connectors/dead_letter.h) naming `table_name`.
  BadRecordPolicy bad_records = BadRecordPolicy::kFail;
  std::string table_name;
  bool debezium_schema_include = false;  // 'debezium-json.schema-include'
  SchemaRegistryOptions registry;  // '<format>.url' and its basic auth (the *-confluent formats)
  size_t batch_rows = 1000;        // records per emitted batch (at most)
  int64_t request_timeout_ms = 30000;  // metadata / offsets requests at start
  // The columns the format decodes: the declared ones but the metadata columns.
  std::shared_ptr<const BatchSchema> schema;
  // The METADATA columns (KafkaMetadataKeys()): their index among the declared columns and what
  // they hold, in declared order.
  enum class MetadataKey { kTopic, kPartition, kOffset, kTimestamp, kTimestampType };
  struct MetadataSlot {
    size_t index = 0;
    MetadataKey key = MetadataKey::kTopic;
  };
  std::vector<MetadataSlot> metadata;
  // The table's WATERMARK (column of the declared ones, delay): the source makes per-partition
  // watermarks (runtime::WatermarkGenerator). Unset: no watermarks.
  std::optional<WatermarkSpec> watermark;
  // 'scan.watermark.idle-timeout', else the job's 'table.exec.source.idle-timeout'; 0 = never.
  std::chrono::milliseconds idle_timeout{0};
  std::chrono::milliseconds watermark_interval{200};  // pipeline.auto-watermark-interval
  // What the source emits: the declared columns, plus kRowKindColumn for a changelog format, plus
  // kSourceSplitColumn for a group member.
  std::shared_ptr<const BatchSchema> output_schema;
  // TableDescriptor::undeclared_fields: `schema` and `output_schema` end with
  // runtime::kUndeclaredFieldsColumn, which the json, avro-confluent or protobuf-confluent
  // decoder fills.
  bool undeclared_fields = false;
  bool changelog() const {
    return format == KafkaFormat::kDebeziumJson || format == KafkaFormat::kDebeziumAvroConfluent;
  }

  // Scale-out (docs/architecture.md, "Scale-out across machines"; being built): the subtask
  // joins 'properties.group.id' as a group member (cooperative-sticky) and reads the partitions
  // the group gives it. Each partition it is given starts a claim (PartitionClaim) at
  // `table_start` (the committing sink's table), else at 'scan.startup.mode'; its rows carry
  // the claim's split name in kSourceSplitColumn, and its positions are the claims
  // (ClaimsToJson). A fence reported on the board fails Poll: the instance restarts and rejoins.
  // Use EnableGroupMember.
  bool group_member = false;
  std::function<Result<iceberg::PartitionStart>(const iceberg::SourcePartition&)> table_start;
  // 'floe.partition-key' is set: the producer chose each record's partition from its key, so a
  // keyed job's state follows the topic's partition count. A member refuses a claim when the
  // count differs from the one it first saw or the one the table's state was read under.
  bool key_partitioned = false;
};

// Makes `config` a group member's (see KafkaSourceConfig::group_member). InvalidArgument, with
// the reason, for what a member cannot do yet: no 'properties.group.id', a changelog format,
// 'scan.bounded.mode'. A WATERMARK is kept per claimed partition, and the source's watermark is
// the minimum over the partitions this instance holds (docs/kafka.md).
Status EnableGroupMember(
    KafkaSourceConfig& config,
    std::function<Result<iceberg::PartitionStart>(const iceberg::SourcePartition&)> table_start);

// Validates the options ('topic' and 'properties.bootstrap.servers' required, 'format' = 'json'
// or 'debezium-json', unknown non-'properties.' options refused, 'topic-pattern' refused).
Result<KafkaSourceConfig> MakeKafkaSourceConfig(const TableDescriptor& table);

// True when the table is a Kafka table whose format produces a changelog (debezium-json): its
// rows carry kRowKindColumn. Does not validate anything else.
bool IsKafkaChangelogSource(const TableDescriptor& table);

// The source subtask (of `parallelism`) that reads `partition` of `topic`. Flink's
// KafkaSourceEnumerator rule: start = ((hash(topic) * 31) & 0x7FFFFFFF) % parallelism, owner =
// (start + partition) % parallelism, with hash = Java's String.hashCode over the topic's bytes
// (equal to Java's for ASCII names). The partitions of one topic go round robin from a
// topic-dependent start, so several topics do not all pile onto subtask 0. Stable: the same
// (topic, partition, parallelism) always gives the same subtask.
uint32_t KafkaSplitOwner(std::string_view topic, int32_t partition, uint32_t parallelism);

// A Kafka source subtask's position: the next offset per topic and partition it owns, and the
// source parallelism of the job that wrote it (which decides the owners). JSON:
//   {"parallelism":2,"topics":{"a":{"0":4000,"2":4000},"b":{"1":17}}}
// FromJson also reads the single-topic form of earlier versions,
//   {"topic":"roster","partitions":{"0":4000,"1":4000}}  (parallelism 1)
// so checkpoints and tables written before topic lists still restore.
struct KafkaPosition {
  TopicOffsets next;
  uint32_t parallelism = 1;
  bool operator==(const KafkaPosition&) const = default;
  std::string ToJson() const;
  static Result<KafkaPosition> FromJson(const std::string& json);
};

// Rescaling: the next offsets subtask `subtask` of `parallelism` takes over from `old`, every
// old subtask's position by old subtask index (a restore at another parallelism, from checkpoint
// blobs or the table's floe.source-offsets). Each must say it was written with old.size()
// subtasks (else some old subtask's positions are missing: Corruption); the union of their
// splits, a split held by two of them with different offsets being Corruption naming both, is
// restricted to the splits KafkaSplitOwner gives `subtask`.
Result<TopicOffsets> RedistributeKafkaPositions(const std::vector<KafkaPosition>& old,
                                                uint32_t subtask, uint32_t parallelism);

// KafkaSource is one subtask of a Kafka source. It reads the (topic, partition) splits that
// KafkaSplitOwner gives it, assigned explicitly (KafkaConsumer::AssignAll: no group membership, no
// rebalancing); a subtask that owns none idles (bounded: ends at once) and still takes part in
// checkpoints. Each record's value is decoded as one JSON object into the declared columns
// ('json'), or as a Debezium change event into changelog rows with kRowKindColumn
// ('debezium-json', see DebeziumJsonDecoder).
// Position = the next offset per owned split: kept in the state blob, recorded on the position
// board in SnapshotPosition (KafkaPosition JSON). The start is resolved lazily (first Poll or
// SnapshotPosition): the board's start override (the table is ahead), else the restored state,
// else 'scan.startup.mode'. Splits absent from a restored position start at their earliest
// offset. Restored at another source parallelism (from checkpoint blobs in RestoreRescaled, or
// from the table's positions of the vertex's old subtasks), the old positions and bounded end
// offsets are redistributed over the new subtasks (RedistributeKafkaPositions). With
// 'scan.bounded.mode' = 'latest-offset' the end offsets are captured when the job first starts (and
// kept in state across restores); Poll returns kEnd once every owned split reached them. A record
// that does not decode fails Poll with topic, partition, offset and an excerpt (unless
// ignore-parse- errors), so nothing past it is committed. Group offsets ('properties.group.id') of
// checkpoint N are committed once N completed and every committing sink of the job reported N
// committed (SourcePositionBoard; checked in Poll, OnCheckpointComplete, and Close, which waits for
// the sinks' report of the last completed checkpoint, bounded). The job never restores from them;
// they serve monitoring and a fresh job started with 'group-offsets' (at worst it repeats the
// last commit). Single-threaded, like every operator.
class KafkaSource final : public runtime::SourceOperator {
 public:
  KafkaSource(KafkaSourceConfig config, std::shared_ptr<runtime::SourcePositionBoard> positions);

  Status Open(const runtime::OperatorContext& ctx) override;
  Status Restore(runtime::StateReader& state) override;
  // Every old subtask's blob: their positions and end offsets, redistributed.
  Status RestoreRescaled(const std::vector<std::string>& states) override;
  Result<runtime::SourceStatus> Poll(runtime::Collector& out) override;
  Status SnapshotPosition(runtime::CheckpointId id, runtime::StateWriter& state) override;
  Status OnCheckpointComplete(runtime::CheckpointId id) override;
  Status Close() override;

  const KafkaPosition& position() const { return position_; }
  // Checkpoints whose group offsets were handed to the consumer to commit (sync or async).
  uint64_t group_offset_commits() const { return group_offset_commits_; }

 private:
  Status EnsureStarted();
  // Group member: a rebalance moved partitions (KafkaSourceConfig::group_member).
  Result<kafka::PartitionOffsets> OnGroupChange(const kafka::GroupChange& change);
  // Key-partitioned member: the topic's partition count now, checked against the count this
  // source first saw and the one `start` (the table's) was read under.
  Result<int32_t> CheckPartitionCount(const std::string& topic,
                                      const std::map<int32_t, iceberg::PartitionStart>& starts);
  // Group member: fails when the board reports a fence of a claim this source holds.
  Status CheckFences();
  std::vector<PartitionClaim> Claims() const;
  // The table's positions of this source vertex, redistributed when they were written with
  // another parallelism.
  Result<TopicOffsets> TablePositions(const SourceStart::Start& from) const;
  Result<kafka::PartitionOffsets> StartupOffsets(const std::string& topic,
                                                 const std::vector<int32_t>& partitions);
  bool Done(const std::string& topic, int32_t partition) const;
  bool AllDone() const;
  // A topic partition, the topic's name owned by `position_`.
  using PartitionRef = std::pair<std::string_view, int32_t>;
  // Reads one record: a JSON value is held for DecodeHeld, a debezium one (or any with
  // 'json.ignore-parse-errors') decoded now. Row r's partition goes to (*row_splits)[r] with a
  // WATERMARK, its claim's split to splits_ in a group.
  // A held record's message is kept (held_messages_) for its dead letter.
  Status ReadRecord(kafka::ConsumedMessage& m, std::string_view topic,
                    std::vector<PartitionRef>* row_splits);
  // The next message or partition event: the next fetched one, else those waiting now, else
  // one waited for up to `wait`.
  Result<std::optional<kafka::ConsumedMessage>> NextMessage(std::chrono::milliseconds wait);
  // Decodes the held records in one call (record by record when one is not a JSON object on
  // its own, for its exact error).
  Status DecodeHeld(std::vector<PartitionRef>* row_splits);
  // An 'avro-confluent', 'debezium-avro-confluent' or 'protobuf-confluent' value (its writer
  // schema fetched once per id) or an 'avro' one, decoded into rows_.
  Status DecodeBinary(std::string_view value);
  Status DecodeValue(std::string_view value, std::string_view topic, int32_t partition,
                     int64_t offset);
  // DecodeValue under 'scan.bad-records': a bad record's rows are taken back and, unless the
  // policy is to fail, it is counted, logged and (dead-letter) kept for side output 1. A registry
  // that cannot be reached fails the job whatever the policy (the records are not bad).
  Status ReadValue(std::string_view value, std::string_view topic, const kafka::ConsumedMessage& m);
  // Where a record came from: its metadata columns' values.
  struct RecordCoordinates {
    std::string_view topic;
    int32_t partition = 0;
    int64_t offset = 0;
    std::optional<int64_t> timestamp_ms;
    std::string_view timestamp_type;  // a constant (ConsumedMessage::timestamp_type)
  };
  static RecordCoordinates CoordinatesOf(const kafka::ConsumedMessage& m, std::string_view topic);
  // Notes the partition (and claim split) of rows [rows_before, rows), and their metadata.
  void NoteRows(const RecordCoordinates& record, size_t rows_before, size_t rows,
                std::vector<PartitionRef>* row_splits);
  // The rows read so far as one batch (with the change kinds of a debezium table); empties them.
  RecordBatch TakeBatch();
  // Whether the fields a new writer schema captures agree with the types earlier ones gave them.
  Status AgreeOnCapturedTypes(const BatchSchema& captured);
  Status EmitBatch(runtime::Collector& out);
  // Emits the rows read (row r from partition row_splits[r]) with the watermarks the generator
  // makes due after each of them, between the rows, then what its Poll gives; `input_quiet`: the
  // poll brought no records. Returns the newest event time emitted (INT64_MIN: none).
  Result<int64_t> EmitWithWatermarks(const std::vector<PartitionRef>& row_splits, bool input_quiet,
                                     runtime::Collector& out);
  // Sends the rows read so far, then the pending claim changes.
  Status EmitClaimChanges(std::vector<PartitionRef>& row_splits, runtime::Collector& out);
  // Group member with a WATERMARK: one watermark per claimed partition.
  void SyncWatermarkSplits();
  // Commits the group offsets of the highest checkpoint that completed and that every committing
  // sink reported committed (see SourcePositionBoard); drops the older ones.
  void CommitGroupOffsets(bool sync);
  // Flink's Kafka source metrics: offset and lag per split, pending records, idle time, event
  // time lags. `newest_event_micros`: the highest event time in the batch just emitted.
  void UpdateMetrics(bool emitted, int64_t newest_event_micros);

  KafkaSourceConfig config_;
  std::shared_ptr<runtime::SourcePositionBoard> positions_;  // committed-by-sinks reports
  SourceStart start_;
  std::string task_;
  uint32_t subtask_ = 0;
  uint32_t parallelism_ = 1;
  std::unique_ptr<kafka::KafkaConsumer> consumer_;
  // Not a group member: the messages taken from librdkafka at once and not read yet (declared
  // after consumer_: they go back before it closes).
  std::vector<kafka::ConsumedMessage> fetched_;
  size_t fetched_next_ = 0;
  std::unique_ptr<json::JsonLinesDecoder> decoder_;
  std::unique_ptr<DebeziumJsonDecoder> debezium_;
  std::unique_ptr<SchemaRegistryClient> registry_;                         // avro-confluent
  std::map<int32_t, std::unique_ptr<avro::RecordDecoder>> avro_decoders_;  // by schema id
  // The type each undeclared field captured so far has (config_.undeclared_fields): a writer
  // schema that gives one a type its column cannot take makes its records bad records.
  std::map<std::string, DataType> captured_types_;
  // 'debezium-avro-confluent': the envelope decoders, by schema id.
  std::map<int32_t, std::unique_ptr<DebeziumAvroDecoder>> debezium_avro_decoders_;
  // 'protobuf-confluent': by schema id and message indexes.
  std::map<std::pair<int32_t, std::vector<int64_t>>, std::unique_ptr<protobuf::MessageDecoder>>
      protobuf_decoders_;
  // The record's message indexes (reused), and the decoder the last record used with its key:
  // records of one schema and message skip the map and allocate nothing.
  std::vector<int64_t> protobuf_indexes_;
  const protobuf::MessageDecoder* last_protobuf_ = nullptr;
  std::pair<int32_t, std::vector<int64_t>> last_protobuf_key_;
  std::unique_ptr<avro::RecordDecoder> avro_plain_;  // 'avro': the columns' own schema
  RecordBatch rows_;                                 // declared columns
  // The records of this poll not yet decoded: their values one per line, and where each is.
  struct HeldRecord {
    RecordCoordinates record;    // its topic owned by position_
    size_t begin = 0, size = 0;  // in held_values_
  };
  std::string held_values_;
  std::vector<HeldRecord> held_;
  std::vector<kafka::ConsumedMessage> held_messages_;  // held_'s, unless bad records fail
  DeadLetterRows dead_letters_;                        // of this poll, for side output 1
  uint64_t bad_records_logged_ = 0;
  std::unique_ptr<runtime::WatermarkGenerator> watermarks_;  // with a WATERMARK only
  Column kinds_{DataType::String()};
  std::vector<Column> metadata_;  // per config_.metadata slot, a value per row of rows_
  // Group member: the claims held now and the claim split of each row read; generations count
  // per partition over this source's life.
  std::map<std::pair<std::string, int32_t>, PartitionClaim> claims_;
  // Claim changes the group made during a consumer poll, sent after the rows read before it
  // (EmitClaimChanges): a keyed task moves the partition's state between the two.
  std::vector<runtime::ClaimChange> pending_claims_;
  std::map<std::pair<std::string, int32_t>, uint64_t> generations_;
  std::map<std::string, int32_t> first_partition_counts_;  // key-partitioned: per topic
  Column splits_{DataType::String()};
  struct SplitCache {  // the split of the partition read last (NoteRows)
    std::string topic;
    int32_t partition = -1;
    std::string split;
  };
  std::optional<SplitCache> split_cache_;
  KafkaPosition position_;
  TopicOffsets stop_;  // bounded: end offset (exclusive) per owned split
  bool started_ = false;
  bool ended_ = false;
  std::map<runtime::CheckpointId, TopicOffsets> to_commit_;
  uint64_t completed_ = 0;  // highest checkpoint reported complete
  uint64_t group_offset_commits_ = 0;
  const std::atomic<bool>* cancel_flag_ = nullptr;
  runtime::MetricGroup* metrics_ = nullptr;
  runtime::Metric* pending_records_ = nullptr;
  runtime::Metric* bytes_in_ = nullptr;   // keys and values read
  runtime::Metric* errors_in_ = nullptr;  // records 'scan.bad-records' skipped or dead-lettered
  runtime::Metric* idle_time_ = nullptr;
  runtime::Metric* emit_event_time_lag_ = nullptr;
  runtime::Metric* watermark_lag_ = nullptr;
  struct SplitMetrics {
    runtime::Metric* offset = nullptr;
    runtime::Metric* lag = nullptr;
  };
  std::map<std::pair<std::string, int32_t>, SplitMetrics> split_metrics_;
  int64_t last_record_millis_ = 0;             // wall clock
  int64_t last_watermark_micros_ = INT64_MIN;  // emitted
};

// Adds the Kafka source vertex `name` for `table` to `graph`, with 'scan.parallelism' subtasks,
// else `default_parallelism` (the job's 'parallelism.default').
Result<runtime::VertexId> AddKafkaSource(runtime::JobGraph& graph, const std::string& name,
                                         const TableDescriptor& table, const JobContext& context,
                                         uint32_t default_parallelism = 1);

// 'connector' = 'kafka' for the registry: the source above and the sink of kafka_sink.h.
Connector KafkaConnector();

}  // namespace floe::connectors
