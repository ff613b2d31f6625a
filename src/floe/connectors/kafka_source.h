#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/format/json/json_lines.h"
#include "floe/kafka/kafka_client.h"
#include "floe/runtime/job_graph.h"
#include "floe/runtime/operator.h"
#include "floe/runtime/source_positions.h"

namespace floe::connectors {

// 'scan.startup.mode': where a job starts when neither a checkpoint nor the table holds
// positions.
enum class KafkaStartupMode { kEarliest, kLatest, kGroupOffsets, kSpecificOffsets, kTimestamp };

// Settings of a 'connector' = 'kafka' table used as a source (docs/kafka.md).
struct KafkaSourceConfig {
  std::string topic;             // 'topic' (one topic for now)
  kafka::Properties properties;  // 'properties.*' without the prefix, handed to librdkafka
  std::string group_id;          // 'properties.group.id' ("" = none: no offsets committed)
  KafkaStartupMode startup = KafkaStartupMode::kGroupOffsets;  // Flink's default
  kafka::PartitionOffsets specific_offsets;                    // 'scan.startup.specific-offsets'
  int64_t startup_timestamp_ms = 0;                            // 'scan.startup.timestamp-millis'
  bool bounded_latest = false;         // 'scan.bounded.mode' = 'latest-offset'
  bool ignore_parse_errors = false;    // 'json.ignore-parse-errors'
  size_t batch_rows = 1000;            // records per emitted batch (at most)
  int64_t request_timeout_ms = 30000;  // metadata / offsets requests at start
  std::shared_ptr<const BatchSchema> schema;
};

// Validates the options ('topic' and 'properties.bootstrap.servers' required, 'format' =
// 'json', unknown non-'properties.' options refused).
Result<KafkaSourceConfig> MakeKafkaSourceConfig(const TableDescriptor& table);

// {"topic":"t","partitions":{"0":next_offset,...}}: a Kafka source's position.
struct KafkaPosition {
  std::string topic;
  kafka::PartitionOffsets next;  // partition -> next offset to read
  bool operator==(const KafkaPosition&) const = default;
  std::string ToJson() const;
  static Result<KafkaPosition> FromJson(const std::string& json);
};

// KafkaSource reads every partition of one topic in a single subtask (parallelism 1), assigned
// explicitly (rd_kafka_assign: no group membership, no rebalancing), and decodes each record's
// value as one JSON object into the declared columns.
// Position = the next offset per partition: kept in the state blob, recorded on the position
// board in SnapshotPosition (KafkaPosition JSON). The start is resolved lazily (first Poll or
// SnapshotPosition): the board's start override (the table is ahead), else the restored state,
// else 'scan.startup.mode'. Partitions absent from a restored position start at their earliest
// offset. With 'scan.bounded.mode' = 'latest-offset' the end offsets are captured when the job
// first starts (and kept in state across restores); Poll returns kEnd once every partition
// reached them. A record that does not decode fails Poll with topic, partition, offset and an
// excerpt (unless 'json.ignore-parse-errors'), so nothing past it is committed. Committed group
// offsets (OnCheckpointComplete) are for monitoring only. Single-threaded, like every operator.
class KafkaSource final : public runtime::SourceOperator {
 public:
  KafkaSource(KafkaSourceConfig config, std::shared_ptr<runtime::SourcePositionBoard> positions);

  Status Open(const runtime::OperatorContext& ctx) override;
  Status Restore(runtime::StateReader& state) override;
  Result<runtime::SourceStatus> Poll(runtime::Collector& out) override;
  Status SnapshotPosition(runtime::CheckpointId id, runtime::StateWriter& state) override;
  Status OnCheckpointComplete(runtime::CheckpointId id) override;
  Status Close() override;

  const KafkaPosition& position() const { return position_; }

 private:
  Status EnsureStarted();
  Result<kafka::PartitionOffsets> StartupOffsets(const std::vector<int32_t>& partitions);
  bool Done(int32_t partition) const;
  Status DecodeRecord(const kafka::ConsumedMessage& m, RecordBatch* batch);

  KafkaSourceConfig config_;
  std::shared_ptr<runtime::SourcePositionBoard> positions_;
  std::string task_;
  std::unique_ptr<kafka::KafkaConsumer> consumer_;
  std::unique_ptr<json::JsonLinesDecoder> decoder_;
  KafkaPosition position_;
  kafka::PartitionOffsets stop_;  // bounded: partition -> end offset (exclusive)
  bool restored_ = false;
  bool started_ = false;
  bool ended_ = false;
  std::map<runtime::CheckpointId, kafka::PartitionOffsets> to_commit_;
};

// Adds the Kafka source vertex `name` (parallelism 1) for `table` to `graph`.
Result<runtime::VertexId> AddKafkaSource(runtime::JobGraph& graph, const std::string& name,
                                         const TableDescriptor& table, const JobContext& context);

}  // namespace floe::connectors
