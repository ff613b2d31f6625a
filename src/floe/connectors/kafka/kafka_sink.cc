#include "floe/connectors/kafka/kafka_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>
#include <thread>

#include "floe/common/crash_point.h"
#include "floe/common/log.h"
#include "floe/connectors/connector_options.h"
#include "floe/format/avro/record_encoder.h"
#include "floe/format/json/json_lines.h"

namespace floe::connectors {
namespace {

const std::vector<std::string> kKafkaSinkOptions = {"topic",
                                                    "format",
                                                    "value.format",
                                                    "sink.delivery-guarantee",
                                                    "sink.transactional-id-prefix",
                                                    "sink.parallelism",
                                                    "sink.partitioner",
                                                    "json.timestamp-format.standard",
                                                    "json.encode.decimal-as-plain-number",
                                                    "avro-confluent.url",
                                                    "avro-confluent.subject",
                                                    "avro-confluent.basic-auth.credentials-source",
                                                    "avro-confluent.basic-auth.user-info",
                                                    "avro.encoding",
                                                    "avro.timestamp_mapping.legacy",
                                                    "avro.codec"};

constexpr uint32_t kStateVersion = 1;
constexpr std::string_view kProperties = "properties.";
constexpr int kCommitAttempts = 3;  // retriable commit errors are retried this often
// Open fences this many slots per subtask even when the pool is smaller, so ids of a larger
// pool of an earlier run (a lower 'max-concurrent-checkpoints' now) do not keep a transaction
// open until transaction.timeout.ms (docs/kafka.md, exactly-once, "Open").
constexpr int kFencedSlots = 8;
// Close aborts what is still open on the broker, best-effort, this long per transaction.
constexpr int64_t kCloseAbortTimeoutMs = 2000;
// Smallest encoding of a transaction (id length, checkpoint, record count) and of a record
// (partition, offset, value length): bounds the counts read from a blob.
constexpr size_t kMinTransactionBytes = 4 + 8 + 4;
constexpr size_t kMinRecordBytes = 4 + 8 + 4;

std::string Ms(int64_t ms) { return std::to_string(ms) + " ms"; }

// Test hook: with FLOE_KAFKA_SINK_COMMIT_LOG=<file>, one JSON line per transaction known to be
// committed (by this run's commit, or found committed by a restore):
//   {"task":"sink-out/0","transactional_id":"p-0-1","checkpoint":7,"how":"commit",
//    "offsets":{"0":[12,13,...],...}}
// librdkafka's mock cluster shows aborted records to every reader (no read_committed), so the
// multi-process tests rebuild what a read_committed reader would see from this log
// (tests/integration/kafka_sink.test.mjs). One write() per line, O_APPEND.
//
// The log also stands in for the transaction markers the mock does not keep: when it is set, a
// restore judges a transaction landed only if the log holds its "commit" line (CommittedInLog),
// so the re-send path runs across processes on the dev cluster too.
const char* CommitLogPath() {
  const char* path = std::getenv("FLOE_KAFKA_SINK_COMMIT_LOG");
  return path == nullptr || *path == '\0' ? nullptr : path;
}

void LogCommitted(const std::string& task, const KafkaSinkTransaction& txn, const char* how) {
  const char* path = CommitLogPath();
  if (path == nullptr) return;
  std::map<int32_t, std::vector<int64_t>> offsets;
  for (const KafkaSinkRecord& r : txn.records) offsets[r.partition].push_back(r.offset);
  std::string line = "{\"task\":\"" + task + "\",\"transactional_id\":\"" + txn.transactional_id +
                     "\",\"checkpoint\":" + std::to_string(txn.checkpoint_id) + ",\"how\":\"" +
                     how + "\",\"offsets\":{";
  bool first_partition = true;
  for (const auto& [p, list] : offsets) {
    line += (first_partition ? "\"" : ",\"") + std::to_string(p) + "\":[";
    first_partition = false;
    for (size_t i = 0; i < list.size(); ++i) line += (i ? "," : "") + std::to_string(list[i]);
    line += "]";
  }
  line += "}}\n";
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}

// Whether the commit log holds a "commit" line for `txn` (written by this run or an earlier
// attempt). A missing log holds none.
Result<bool> CommittedInLog(const char* path, const KafkaSinkTransaction& txn) {
  std::string key = "\"transactional_id\":\"" + txn.transactional_id +
                    "\",\"checkpoint\":" + std::to_string(txn.checkpoint_id) +
                    ",\"how\":\"commit\"";
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    return Status::IOError(std::string("commit log '") + path + "': " + std::strerror(errno));
  }
  std::string text;
  char buf[1 << 16];
  for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return text.find(key) != std::string::npos;
}

// Properties a consumer needs to reach the cluster (the sink's producer-only properties would
// only make librdkafka warn).
kafka::Properties ConnectionProperties(const kafka::Properties& all) {
  kafka::Properties out;
  for (const auto& [k, v] : all) {
    if (k == "bootstrap.servers" || k == "client.id" || k.rfind("security.", 0) == 0 ||
        k.rfind("sasl.", 0) == 0 || k.rfind("ssl.", 0) == 0 || k.rfind("socket.", 0) == 0 ||
        k.rfind("broker.", 0) == 0) {
      out[k] = v;
    }
  }
  return out;
}

Status CheckTransactionTimeout(const TableDescriptor& table, const KafkaSinkConfig& config,
                               const KafkaSinkJobSettings& job) {
  const runtime::CheckpointConfig& c = job.checkpointing;
  std::string head = "table '" + table.name + "': 'sink.delivery-guarantee' = 'exactly-once' ";
  if (!c.periodic()) {
    return Status::InvalidArgument(
        head +
        "needs checkpointing: one Kafka transaction is committed per checkpoint (as in "
        "Flink). Set 'execution.checkpointing.interval' (e.g. '10 s') or use "
        "'at-least-once'");
  }
  if (c.mode != runtime::CheckpointingMode::kExactlyOnce) {
    return Status::InvalidArgument(
        head +
        "needs 'execution.checkpointing.mode' = 'EXACTLY_ONCE' (AT_LEAST_ONCE "
        "checkpoints may hold records of the next checkpoint, which would then be "
        "committed twice); or use 'sink.delivery-guarantee' = 'at-least-once'");
  }
  int64_t interval = c.interval.count(), timeout = c.timeout.count();
  int64_t needed = interval + timeout + job.restart_delay_ms;
  if (needed < config.transaction_timeout_ms) return Status::OK();
  bool defaulted = config.properties.count("transaction.timeout.ms") == 0;
  std::string msg =
      head +
      "needs checkpoint interval + checkpoint timeout + restart delay < transaction.timeout.ms, "
      "or the broker may abort a transaction before floe commits it: the commit then fails "
      "(the broker bumped the producer epoch), the task fails, and the job restarts and "
      "re-sends its records (a restart loop while checkpoints take that long): " +
      Ms(interval) + " ('execution.checkpointing.interval') + " + Ms(timeout) +
      " ('execution.checkpointing.timeout') + " + Ms(job.restart_delay_ms) +
      " ('restart-strategy.fixed-delay.delay') = " + Ms(needed) + ", which is not below " +
      Ms(config.transaction_timeout_ms) + " ('properties.transaction.timeout.ms'" +
      (defaulted ? ", librdkafka's default" : "") + "). ";
  if (needed < kBrokerMaxTransactionTimeoutMs) {
    msg += "Set 'properties.transaction.timeout.ms' above " + Ms(needed) +
           " (brokers refuse more than their transaction.max.timeout.ms, usually " +
           Ms(kBrokerMaxTransactionTimeoutMs) + " = 15 min), or lower " +
           "'execution.checkpointing.timeout' (Flink's default is 10 min)";
  } else {
    msg += "That sum is not below the brokers' usual maximum transaction.max.timeout.ms = " +
           Ms(kBrokerMaxTransactionTimeoutMs) +
           " (15 min): lower 'execution.checkpointing.timeout' (Flink's default is 10 min) or "
           "'execution.checkpointing.interval', then set 'properties.transaction.timeout.ms' "
           "above the new sum (or raise transaction.max.timeout.ms on the brokers)";
  }
  return Status::InvalidArgument(msg);
}

}  // namespace

Result<KafkaSinkConfig> MakeKafkaSinkConfig(const TableDescriptor& table,
                                            const KafkaSinkJobSettings& job) {
  KafkaSinkConfig config;
  config.table = table.name;
  TableDescriptor plain = table;  // without properties.*, which go to librdkafka as they are
  for (const auto& [key, value] : table.options) {
    if (key.rfind(kProperties, 0) == 0 && key.size() > kProperties.size()) {
      config.properties[key.substr(kProperties.size())] = value;
      plain.options.erase(key);
    }
  }
  FLOE_RETURN_NOT_OK(CheckSupportedOptions(plain, "kafka (sink)", kKafkaSinkOptions));
  config.topic = StringOption(table, "topic", "");
  if (config.topic.empty() || config.topic.find(';') != std::string::npos) {
    return Status::InvalidArgument(
        OptionError(table, "topic", "must name the one topic the kafka sink writes", config.topic));
  }
  FLOE_RETURN_NOT_OK(CheckKafkaClientProperties(table, config.properties));
  std::string format = StringOption(table, "value.format", StringOption(table, "format", ""));
  if (format != "json" && format != "avro-confluent" && format != "avro") {
    return Status::InvalidArgument(OptionError(
        table, "format",
        "must be 'json', 'avro-confluent' or 'avro' for a kafka sink (other formats are not "
        "supported yet)",
        format));
  }
  // The other formats' options are refused: an option floe does not apply is never accepted.
  for (const std::string other : {"json.", "avro-confluent.", "avro."}) {
    if (other == format + ".") continue;
    for (const auto& [key, value] : plain.options) {
      if (key.rfind(other, 0) == 0) {
        return Status::InvalidArgument(
            OptionError(table, key, "does not apply to 'format' = '" + format + "'", value));
      }
    }
  }
  if (format != "json") {
    config.avro_confluent = format == "avro-confluent";
    if (config.avro_confluent) {
      FLOE_ASSIGN_OR_RAISE(config.registry, RegistryOptions(table));
      config.subject = StringOption(table, "avro-confluent.subject", config.topic + "-value");
    } else {
      FLOE_RETURN_NOT_OK(CheckPlainAvroOptions(table));
    }
    auto schema = avro::AvroSchemaForColumns(*table.schema);
    if (!schema.ok()) return schema.status().WithContext("table '" + table.name + "'");
    config.avro_schema = *schema;
  }
  FLOE_ASSIGN_OR_RAISE(config.encoding.timestamp_standard,
                       TimestampStandardOption(table, "json.timestamp-format.standard"));
  // Validated only: floe writes every DECIMAL as a plain number with all its fractional digits,
  // which is what 'true' asks of Flink; with 'false' Flink may use an exponent (4.5E+17), which
  // readers parse to the same value.
  FLOE_RETURN_NOT_OK(BoolOption(table, "json.encode.decimal-as-plain-number", false).status());
  FLOE_ASSIGN_OR_RAISE(int64_t p, IntOption(table, "sink.parallelism", 0, 1, 1 << 15));
  config.parallelism = static_cast<uint32_t>(p);
  // Choices are listed in the enums' order.
  FLOE_ASSIGN_OR_RAISE(size_t guarantee,
                       ChoiceOption(table, "sink.delivery-guarantee", "at-least-once",
                                    {"none", "at-least-once", "exactly-once"}));
  config.guarantee = static_cast<KafkaDeliveryGuarantee>(guarantee);
  FLOE_ASSIGN_OR_RAISE(
      size_t partitioner,
      ChoiceOption(table, "sink.partitioner", "default", {"default", "fixed", "round-robin"},
                   " (custom partitioner classes do not exist in floe)"));
  config.partitioner = static_cast<KafkaSinkPartitioner>(partitioner);
  config.transactional_id_prefix = StringOption(table, "sink.transactional-id-prefix", "");
  if (config.properties.count("transactional.id") != 0) {
    return Status::InvalidArgument(
        "table '" + table.name +
        "': 'properties.transactional.id' is set by floe (one id per subtask and checkpoint "
        "slot); use 'sink.transactional-id-prefix' and 'sink.delivery-guarantee' = "
        "'exactly-once'");
  }
  if (auto t = config.properties.find("transaction.timeout.ms"); t != config.properties.end()) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(t->second.data(), t->second.data() + t->second.size(), v);
    if (ec != std::errc() || end != t->second.data() + t->second.size() || v <= 0) {
      return Status::InvalidArgument(OptionError(table, "properties.transaction.timeout.ms",
                                                 "must be a positive number of milliseconds",
                                                 t->second));
    }
    config.transaction_timeout_ms = v;
  }
  if (config.guarantee == KafkaDeliveryGuarantee::kExactlyOnce) {
    if (config.transactional_id_prefix.empty()) {
      return Status::InvalidArgument(OptionError(
          table, "sink.transactional-id-prefix",
          "is required when 'sink.delivery-guarantee' = 'exactly-once' (a prefix unique on the "
          "Kafka cluster: floe derives '<prefix>-<subtask>-<slot>' transactional ids from it)",
          ""));
    }
    FLOE_RETURN_NOT_OK(CheckTransactionTimeout(table, config, job));
    // The open transaction, max-concurrent checkpoints' pending ones, and a savepoint's: a
    // savepoint commits nothing, its transaction waits for the next checkpoint to complete.
    config.pool_size = job.checkpointing.max_concurrent + 2;
  } else if (!config.transactional_id_prefix.empty()) {
    return Status::InvalidArgument(
        OptionError(table, "sink.transactional-id-prefix",
                    "only applies to 'sink.delivery-guarantee' = 'exactly-once'",
                    StringOption(table, "sink.delivery-guarantee", "at-least-once")));
  }
  kafka::Properties check = config.properties;
  if (config.guarantee == KafkaDeliveryGuarantee::kExactlyOnce) {
    check["transactional.id"] = config.transactional_id_prefix + "-0-0";
  }
  if (Status st = kafka::CheckProperties(check); !st.ok()) {
    return Status::InvalidArgument("table '" + table.name + "': " + st.message() +
                                   " (from 'properties.*')");
  }
  if (table.schema == nullptr || table.schema->fields.empty()) {
    return Status::InvalidArgument("table '" + table.name + "' declares no columns");
  }
  config.schema = table.schema;
  return config;
}

void EncodeKafkaSinkState(const std::vector<KafkaSinkTransaction>& pending,
                          runtime::StateWriter& out) {
  out.PutU32(kStateVersion);
  out.PutU32(static_cast<uint32_t>(pending.size()));
  for (const KafkaSinkTransaction& t : pending) {
    out.PutString(t.transactional_id);
    out.PutU64(t.checkpoint_id);
    out.PutU32(static_cast<uint32_t>(t.records.size()));
    for (const KafkaSinkRecord& r : t.records) {
      out.PutU32(static_cast<uint32_t>(r.partition));
      out.PutI64(r.offset);
      out.PutString(r.value);
    }
  }
}

Result<std::vector<KafkaSinkTransaction>> DecodeKafkaSinkState(runtime::StateReader& in) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, in.GetU32());
  if (version != kStateVersion) {
    return Status::Corruption("kafka sink state: unknown version " + std::to_string(version));
  }
  // Counts come from the blob: bound them by the bytes left before sizing anything, so a
  // garbled count is Corruption rather than a huge allocation.
  auto check_count = [&](uint32_t count, size_t min_bytes, const char* what) -> Status {
    if (count > in.remaining() / min_bytes) {
      return Status::Corruption("kafka sink state: " + std::to_string(count) + " " + what +
                                " at byte " + std::to_string(in.position()) +
                                " cannot fit in the " + std::to_string(in.remaining()) +
                                " bytes left");
    }
    return Status::OK();
  };
  FLOE_ASSIGN_OR_RAISE(uint32_t n, in.GetU32());
  FLOE_RETURN_NOT_OK(check_count(n, kMinTransactionBytes, "transactions"));
  std::vector<KafkaSinkTransaction> out(n);
  for (KafkaSinkTransaction& t : out) {
    FLOE_ASSIGN_OR_RAISE(t.transactional_id, in.GetString());
    FLOE_ASSIGN_OR_RAISE(t.checkpoint_id, in.GetU64());
    FLOE_ASSIGN_OR_RAISE(uint32_t records, in.GetU32());
    FLOE_RETURN_NOT_OK(check_count(records, kMinRecordBytes, "records"));
    t.records.resize(records);
    for (KafkaSinkRecord& r : t.records) {
      FLOE_ASSIGN_OR_RAISE(uint32_t partition, in.GetU32());
      r.partition = static_cast<int32_t>(partition);
      FLOE_ASSIGN_OR_RAISE(r.offset, in.GetI64());
      FLOE_ASSIGN_OR_RAISE(r.value, in.GetString());
    }
  }
  FLOE_RETURN_NOT_OK(in.ExpectEnd());
  return out;
}

std::string KafkaSink::TransactionalId(const std::string& prefix, uint32_t subtask, int slot) {
  return prefix + "-" + std::to_string(subtask) + "-" + std::to_string(slot);
}

KafkaSink::KafkaSink(KafkaSinkConfig config,
                     std::shared_ptr<runtime::SourcePositionBoard> positions)
    : config_(std::move(config)), positions_(std::move(positions)) {
  if (config_.guarantee != KafkaDeliveryGuarantee::kExactlyOnce) positions_.reset();
}
KafkaSink::~KafkaSink() = default;

Result<std::unique_ptr<kafka::KafkaProducer>> KafkaSink::MakeTransactionalProducer(
    const std::string& transactional_id) {
  kafka::Properties props = config_.properties;
  props["transactional.id"] = transactional_id;
  FLOE_ASSIGN_OR_RAISE(auto producer, kafka::KafkaProducer::Make(props, /*keep_deliveries=*/true));
  // Fences older instances of the id; the broker aborts the transaction they left open (or
  // completes one whose commit it already received) before answering.
  kafka::TxnResult init = producer->InitTransactions(std::chrono::milliseconds(config_.timeout_ms));
  if (!init.ok()) {
    Status st = init.status;
    if (st.message().find("INVALID_TRANSACTION_TIMEOUT") != std::string::npos) {
      // The broker's own cap (Flink's 1 h builder default fails here the same way).
      st = Status(st.code(), st.message() + "; 'properties.transaction.timeout.ms' = " +
                                 std::to_string(config_.transaction_timeout_ms) +
                                 " ms exceeds the brokers' transaction.max.timeout.ms (usually " +
                                 Ms(kBrokerMaxTransactionTimeoutMs) +
                                 "): lower it, or raise the brokers' maximum");
    }
    return st.WithContext("kafka sink '" + task_ + "': transactional id '" + transactional_id +
                          "'");
  }
  if (std::find(fenced_ids_.begin(), fenced_ids_.end(), transactional_id) == fenced_ids_.end()) {
    fenced_ids_.push_back(transactional_id);
  }
  return producer;
}

Status KafkaSink::Open(const runtime::OperatorContext& ctx) {
  task_ = ctx.task.name();
  subtask_ = ctx.task.subtask.value;
  parallelism_ = ctx.task.parallelism;
  txn_committed_ = &ctx.metrics->Counter("KafkaSink_transactionsCommitted");
  txn_aborted_ = &ctx.metrics->Counter("KafkaSink_transactionsAborted");
  if (ctx.restored_from) last_barrier_ = ctx.restored_from->value;
  // Registered before any checkpoint can complete (that needs this task's acknowledgement).
  if (positions_ != nullptr) positions_->RegisterCommitter(task_);
  kafka::KafkaProducer* producer = nullptr;
  if (config_.guarantee != KafkaDeliveryGuarantee::kExactlyOnce) {
    FLOE_ASSIGN_OR_RAISE(producer_, kafka::KafkaProducer::Make(config_.properties));
    producer = producer_.get();
  } else {
    for (int slot = 0; slot < config_.pool_size; ++slot) {
      Slot s;
      s.transactional_id = TransactionalId(config_.transactional_id_prefix, subtask_, slot);
      FLOE_ASSIGN_OR_RAISE(s.producer, MakeTransactionalProducer(s.transactional_id));
      slots_.push_back(std::move(s));
    }
    // Ids beyond the pool: an earlier run may have had a larger pool and left a transaction
    // open there; initialising the id aborts it (restored ids are fenced again in Restore).
    for (int slot = config_.pool_size; slot < kFencedSlots; ++slot) {
      FLOE_RETURN_NOT_OK(MakeTransactionalProducer(
                             TransactionalId(config_.transactional_id_prefix, subtask_, slot))
                             .status());
    }
    producer = slots_[0].producer.get();
  }
  // A misspelt topic would otherwise be auto-created by brokers that allow it.
  Result<int32_t> partitions =
      producer->PartitionCount(config_.topic, std::chrono::milliseconds(config_.timeout_ms));
  if (!partitions.ok()) return partitions.status().WithContext("kafka sink '" + task_ + "'");
  partitions_ = *partitions;
  if (config_.avro_confluent) {
    FLOE_ASSIGN_OR_RAISE(auto registry, SchemaRegistryClient::Make(config_.registry));
    auto id = registry->RegisterAvroSchema(config_.subject, config_.avro_schema);
    if (!id.ok()) return id.status().WithContext("kafka sink '" + task_ + "'");
    avro_header_ = ConfluentHeader(*id);
  }
  return Status::OK();
}

std::string KafkaSink::Describe(const KafkaSinkTransaction& txn) const {
  return "transaction '" + txn.transactional_id + "' of checkpoint " +
         std::to_string(txn.checkpoint_id) + " (" + std::to_string(txn.records.size()) +
         " records to topic '" + config_.topic + "')";
}

kafka::Properties KafkaSink::ReadBackProperties(const kafka::Properties& sink_properties,
                                                bool read_committed) {
  kafka::Properties props = ConnectionProperties(sink_properties);
  props["enable.partition.eof"] = "true";
  props["group.id"] = "floe-kafka-sink-check";  // never commits
  // If retention removes the record between the watermark check and the fetch, fail like the
  // check does: librdkafka's default ('latest') would jump to the end and answer "not landed"
  // (a duplicate).
  props["auto.offset.reset"] = "error";
  props["isolation.level"] = read_committed ? "read_committed" : "read_uncommitted";
  return props;
}

Status KafkaSink::RemovedError(const KafkaSinkTransaction& txn, int32_t partition, int64_t offset,
                               const std::string& detail) const {
  return Status::IOError("kafka sink '" + task_ + "': cannot tell whether " + Describe(txn) +
                         " was committed: its first offset " + std::to_string(offset) +
                         " in partition " + std::to_string(partition) +
                         (detail.empty() ? " is no longer in the partition" : detail) +
                         " (retention removed it)");
}

Result<bool> KafkaSink::Landed(const KafkaSinkTransaction& txn) {
  // The first recorded record of each partition the transaction wrote.
  std::map<int32_t, const KafkaSinkRecord*> first;
  for (const KafkaSinkRecord& r : txn.records) {
    auto [it, inserted] = first.emplace(r.partition, &r);
    if (!inserted && r.offset < it->second->offset) it->second = &r;
  }
  if (first.empty()) return true;
  std::chrono::milliseconds timeout(config_.timeout_ms);
  FLOE_ASSIGN_OR_RAISE(auto uncommitted,
                       kafka::KafkaConsumer::Make(ReadBackProperties(config_.properties, false)));
  FLOE_ASSIGN_OR_RAISE(auto committed,
                       kafka::KafkaConsumer::Make(ReadBackProperties(config_.properties, true)));

  std::map<int32_t, bool> found;  // partition -> the kept value is at its offset
  kafka::PartitionOffsets assign;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& [p, r] : first) {
    FLOE_ASSIGN_OR_RAISE(auto written, uncommitted->Watermarks(config_.topic, p, timeout));
    if (r->offset < written.first) {
      return RemovedError(
          txn, p, r->offset,
          " is below the partition's earliest offset " + std::to_string(written.first));
    }
    if (r->offset >= written.second) {
      found[p] = false;  // never written there (e.g. the topic was recreated)
      continue;
    }
    // A read_committed reader sees up to the last stable offset. Another producer's open
    // transaction can hold it below our records: wait for it rather than guess.
    for (;;) {
      FLOE_ASSIGN_OR_RAISE(auto stable, committed->Watermarks(config_.topic, p, timeout));
      if (r->offset < stable.second) break;
      if (std::chrono::steady_clock::now() > deadline) {
        return Status::Unavailable(
            "kafka sink '" + task_ + "': cannot tell yet whether " + Describe(txn) +
            " was committed: partition " + std::to_string(p) + "'s last stable offset " +
            std::to_string(stable.second) + " is still at or below its first offset " +
            std::to_string(r->offset) + " (an open transaction holds it)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    assign[p] = r->offset;
  }
  if (!assign.empty()) FLOE_RETURN_NOT_OK(committed->Assign(config_.topic, assign));
  while (found.size() < first.size()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Unavailable("kafka sink '" + task_ + "': reading back " + Describe(txn) +
                                 " timed out");
    }
    FLOE_ASSIGN_OR_RAISE(auto m, committed->Poll(std::chrono::milliseconds(100)));
    if (!m.has_value()) continue;
    int32_t p = (*m).partition();
    if (first.count(p) == 0 || found.count(p) != 0) continue;
    if (m->kind() == kafka::ConsumedMessage::Kind::kPartitionEnd) {
      found[p] = false;
    } else if (m->kind() == kafka::ConsumedMessage::Kind::kOffsetReset) {
      return RemovedError(txn, p, first[p]->offset);
    } else if (m->kind() == kafka::ConsumedMessage::Kind::kError) {
      if (m->retryable()) continue;
      return m->error("kafka sink '" + task_ + "': reading back " + Describe(txn) +
                      " in partition " + std::to_string(p));
    } else {
      // Aborted records are skipped by a read_committed reader: the first record it returns
      // at or after the offset is ours only if the transaction committed.
      found[p] = (*m).offset() == first[p]->offset && (*m).value() == first[p]->value;
    }
  }
  size_t hits = std::count_if(found.begin(), found.end(), [](const auto& kv) { return kv.second; });
  if (hits == found.size()) {
    // Test hook: on the dev cluster aborted records stay visible, so the commit log stands in
    // for the transaction markers (LogCommitted).
    if (const char* log = CommitLogPath()) return CommittedInLog(log, txn);
    return true;
  }
  if (hits == 0) return false;
  std::string detail;
  for (const auto& [p, hit] : found) {
    detail += (detail.empty() ? "" : ", ") + std::string("partition ") + std::to_string(p) +
              " at " + std::to_string(first[p]->offset) + (hit ? ": found" : ": not found");
  }
  return Status::Corruption("kafka sink '" + task_ + "': " + Describe(txn) +
                            " is only partly visible to a read_committed reader (" + detail +
                            "); a transaction is all or nothing, so the topic was changed "
                            "behind the job's back");
}

Status KafkaSink::Restore(runtime::StateReader& state) {
  // An empty blob is what none / at-least-once checkpoints hold (also when this run is
  // exactly-once: the guarantee was raised). A non-empty one is an exactly-once checkpoint's,
  // whatever the guarantee is now: its pending transactions are settled the same way, and what
  // did not land is re-sent (as ordinary records when the guarantee was lowered), or it would
  // be lost.
  if (state.AtEnd()) return Status::OK();
  FLOE_ASSIGN_OR_RAISE(std::vector<KafkaSinkTransaction> restored, DecodeKafkaSinkState(state));
  return SettleRestored(restored);
}

Status KafkaSink::RestoreRescaled(const std::vector<std::string>& states) {
  if (subtask_ != 0) return Status::OK();
  std::vector<KafkaSinkTransaction> restored;
  for (const std::string& blob : states) {
    if (blob.empty()) continue;
    runtime::StateReader reader(blob);
    FLOE_ASSIGN_OR_RAISE(std::vector<KafkaSinkTransaction> txns, DecodeKafkaSinkState(reader));
    restored.insert(restored.end(), txns.begin(), txns.end());
  }
  if (config_.guarantee == KafkaDeliveryGuarantee::kExactlyOnce) {
    // Old subtasks beyond this run's parallelism: no Open fences their ids, and a transaction
    // they left open would hold back every read_committed reader until it times out.
    for (uint32_t old = parallelism_; old < states.size(); ++old) {
      for (int slot = 0; slot < std::max(kFencedSlots, config_.pool_size); ++slot) {
        FLOE_RETURN_NOT_OK(
            MakeTransactionalProducer(TransactionalId(config_.transactional_id_prefix, old, slot))
                .status());
      }
    }
  }
  return SettleRestored(restored);
}

Status KafkaSink::SettleRestored(const std::vector<KafkaSinkTransaction>& restored) {
  bool exactly_once = config_.guarantee == KafkaDeliveryGuarantee::kExactlyOnce;
  std::vector<KafkaSinkRecord> resend;
  for (const KafkaSinkTransaction& txn : restored) {
    // Ids outside this run's pool (the pool or the subtask changed): fence them too, so the
    // transaction they left open is settled before the read-back.
    bool in_pool = std::any_of(slots_.begin(), slots_.end(), [&](const Slot& s) {
      return s.transactional_id == txn.transactional_id;
    });
    if (!in_pool) FLOE_RETURN_NOT_OK(MakeTransactionalProducer(txn.transactional_id).status());
    FLOE_ASSIGN_OR_RAISE(bool landed, Landed(txn));
    LogInfo("kafka sink '%s': restored %s: %s", task_.c_str(), Describe(txn).c_str(),
            landed         ? "committed before the failure, nothing to do"
            : exactly_once ? "not committed, re-sending its records in the next transaction"
                           : "not committed, re-sending its records (as ordinary records: "
                             "'sink.delivery-guarantee' is no longer exactly-once)");
    if (landed) {
      LogCommitted(task_, txn, "found at restore");
    } else {
      resend.insert(resend.end(), txn.records.begin(), txn.records.end());
    }
  }
  if (resend.empty()) return Status::OK();
  // Exactly-once: re-sent as the start of the next checkpoint's transaction, not committed on
  // their own: if the job fails again before that checkpoint completes, they are aborted with
  // it and this restore runs again, so they land exactly once. Otherwise the next barrier (or
  // end of input) flushes them with the rest; a failure before it re-sends them again.
  for (const KafkaSinkRecord& r : resend) FLOE_RETURN_NOT_OK(Send(r.value, r.partition));
  resent_records_ = static_cast<int64_t>(resend.size());
  return Status::OK();
}

Status KafkaSink::BeginTransaction() {
  int n = static_cast<int>(slots_.size());
  int start = static_cast<int>((last_barrier_ + 1) % static_cast<uint64_t>(n));
  for (int k = 0; k < n; ++k) {
    int slot = (start + k) % n;
    if (slots_[slot].pending) continue;
    kafka::TxnResult begin = slots_[slot].producer->BeginTransaction();
    if (!begin.ok()) {
      return begin.status.WithContext("kafka sink '" + task_ + "': transactional id '" +
                                      slots_[slot].transactional_id + "'");
    }
    open_ = OpenTransaction{slot, {}};
    return Status::OK();
  }
  // Every id holds a transaction waiting for its checkpoint. Savepoints make this normal, not
  // a failure: a savepoint's completion is not delivered (docs/exactly-once.md), so each
  // savepoint within one checkpoint interval keeps an id until the next checkpoint completes.
  // Take the next id, up to the bound Open fenced (so a restarted run's Open still aborts
  // whatever this one leaves open there).
  const int bound = std::max(kFencedSlots, config_.pool_size);
  if (n < bound) {
    Slot s;
    s.transactional_id = TransactionalId(config_.transactional_id_prefix, subtask_, n);
    FLOE_ASSIGN_OR_RAISE(s.producer, MakeTransactionalProducer(s.transactional_id));
    kafka::TxnResult begin = s.producer->BeginTransaction();
    if (!begin.ok()) {
      return begin.status.WithContext("kafka sink '" + task_ + "': transactional id '" +
                                      s.transactional_id + "'");
    }
    slots_.push_back(std::move(s));
    open_ = OpenTransaction{n, {}};
    return Status::OK();
  }
  std::string busy;
  for (const Slot& s : slots_) {
    busy += (busy.empty() ? "" : ", ") + s.transactional_id + " (checkpoint " +
            std::to_string(*s.pending) + ")";
  }
  return Status::Unavailable(
      "kafka sink '" + task_ + "': all " + std::to_string(n) +
      " transactional ids hold a transaction waiting for its checkpoint to complete: " + busy +
      ". Checkpoints failed or their completion is late, or more savepoints than that were "
      "taken since the last completed checkpoint; the pool has "
      "'execution.checkpointing.max-concurrent-checkpoints' + 2 ids and grows on demand up to " +
      std::to_string(bound) +
      " (the ids Open fences). The job restarts from the last completed checkpoint");
}

Status KafkaSink::Send(std::string_view value, int32_t partition) {
  if (config_.guarantee != KafkaDeliveryGuarantee::kExactlyOnce) {
    return producer_->Produce(config_.topic, partition, value);
  }
  if (!open_) FLOE_RETURN_NOT_OK(BeginTransaction());
  uint64_t tag = open_->records.size();  // the delivery report fills in partition and offset
  FLOE_RETURN_NOT_OK(
      slots_[open_->slot].producer->Produce(config_.topic, partition, value, {}, tag));
  open_->records.push_back(KafkaSinkRecord{-1, -1, std::string(value)});
  return Status::OK();
}

Status KafkaSink::ProcessBatch(const RecordBatch& batch, int, runtime::Collector&) {
  for (size_t i = 0; i < batch.num_rows(); ++i) {
    if (!config_.avro_schema.empty()) {
      row_ = avro_header_;
      avro::AppendRowAsAvro(batch, i, &row_);
    } else {
      row_.clear();
      json::AppendRowAsJson(batch, i, &row_, config_.encoding);
      if (!row_.empty() && row_.back() == '\n') row_.pop_back();
    }
    int32_t partition = kafka::KafkaProducer::kAnyPartition;
    if (config_.partitioner == KafkaSinkPartitioner::kFixed) {
      partition = static_cast<int32_t>(subtask_ % static_cast<uint32_t>(partitions_));
    } else if (config_.partitioner == KafkaSinkPartitioner::kRoundRobin) {
      partition = static_cast<int32_t>(rows_sent_++ % static_cast<uint64_t>(partitions_));
    }
    FLOE_RETURN_NOT_OK(Send(row_, partition));
  }
  return Status::OK();
}

Status KafkaSink::OnWatermark(runtime::Watermark, runtime::Collector&) { return Status::OK(); }

Status KafkaSink::StageTransaction(uint64_t checkpoint_id) {
  Slot& slot = slots_[open_->slot];
  Status flushed = slot.producer->Flush(std::chrono::milliseconds(config_.timeout_ms));
  if (!flushed.ok()) {
    return flushed.WithContext("kafka sink '" + task_ + "': flushing transaction '" +
                               slot.transactional_id + "' of checkpoint " +
                               std::to_string(checkpoint_id));
  }
  KafkaSinkTransaction txn;
  txn.transactional_id = slot.transactional_id;
  txn.checkpoint_id = checkpoint_id;
  txn.records = std::move(open_->records);
  size_t reported = 0;
  for (const kafka::Delivery& d : slot.producer->TakeDeliveries()) {
    if (d.tag >= txn.records.size() || !d.ok()) continue;
    txn.records[d.tag].partition = d.partition;
    txn.records[d.tag].offset = d.offset;
    ++reported;
  }
  if (reported != txn.records.size()) {
    return Status::Internal("kafka sink '" + task_ + "': " + std::to_string(reported) + " of " +
                            std::to_string(txn.records.size()) + " delivery reports arrived for " +
                            Describe(txn));
  }
  slot.pending = checkpoint_id;
  pending_[checkpoint_id] = std::move(txn);
  open_.reset();
  return Status::OK();
}

Status KafkaSink::OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                            runtime::Collector&) {
  last_barrier_ = id.value;
  switch (config_.guarantee) {
    case KafkaDeliveryGuarantee::kNone:
      return Status::OK();
    case KafkaDeliveryGuarantee::kAtLeastOnce: {
      // Every record of this checkpoint acknowledged before the barrier is acked.
      Status st = producer_->Flush(std::chrono::milliseconds(config_.timeout_ms));
      return st.WithContext("kafka sink '" + task_ + "': checkpoint " + id.ToString());
    }
    case KafkaDeliveryGuarantee::kExactlyOnce:
      break;
  }
  if (open_) FLOE_RETURN_NOT_OK(StageTransaction(id.value));
  std::vector<KafkaSinkTransaction> pending;
  for (const auto& [n, txn] : pending_) pending.push_back(txn);
  EncodeKafkaSinkState(pending, state);
  return Status::OK();
}

Status KafkaSink::Commit(uint64_t checkpoint_id) {
  KafkaSinkTransaction& txn = pending_.at(checkpoint_id);
  auto slot = std::find_if(slots_.begin(), slots_.end(), [&](const Slot& s) {
    return s.transactional_id == txn.transactional_id;
  });
  if (slot == slots_.end()) {
    return Status::Internal("kafka sink '" + task_ + "': no producer for " + Describe(txn));
  }
  CrashPoint("kafka-sink-after-checkpoint-before-commit");
  kafka::TxnResult r;
  for (int attempt = 1; attempt <= kCommitAttempts; ++attempt) {
    r = slot->producer->CommitTransaction(std::chrono::milliseconds(config_.timeout_ms));
    if (r.kind != kafka::TxnErrorKind::kRetriable) break;
  }
  if (!r.ok()) {
    if (r.kind == kafka::TxnErrorKind::kRequiresAbort &&
        slot->producer->AbortTransaction(std::chrono::milliseconds(config_.timeout_ms)).ok()) {
      txn_aborted_->Add(1);
    }
    return Status(r.status.code(),
                  "kafka sink '" + task_ + "': committing " + Describe(txn) + " failed (" +
                      std::string(kafka::TxnErrorKindName(r.kind)) + "): " + r.status.message() +
                      ". The job restarts from checkpoint " + std::to_string(checkpoint_id) +
                      " (complete); the restore checks whether this transaction landed and "
                      "re-sends its records if it did not");
  }
  LogCommitted(task_, txn, "commit");
  txn_committed_->Add(1);
  slot->pending.reset();
  pending_.erase(checkpoint_id);
  return Status::OK();
}

Status KafkaSink::OnCheckpointComplete(runtime::CheckpointId id) {
  // In checkpoint order: a failed checkpoint's transaction is committed by a later one.
  while (!pending_.empty() && pending_.begin()->first <= id.value) {
    FLOE_RETURN_NOT_OK(Commit(pending_.begin()->first));
  }
  // Everything of checkpoints <= id is committed (or there was nothing): sources may now
  // publish id's group offsets.
  if (positions_ != nullptr) positions_->ReportCommitted(task_, id);
  return Status::OK();
}

Status KafkaSink::OnEndOfInput(runtime::Collector&) {
  if (config_.guarantee == KafkaDeliveryGuarantee::kExactlyOnce) return Status::OK();
  Status st = producer_->Flush(std::chrono::milliseconds(config_.timeout_ms));
  return st.WithContext("kafka sink '" + task_ + "': end of input");
}

Status KafkaSink::Close() {
  // Nothing is committed here; what is still queued is dropped. The open and the pending
  // transactions are aborted, best-effort and briefly: left open they would hold the last
  // stable offset (read_committed readers stall) until transaction.timeout.ms. Aborting a
  // pending transaction of a completed checkpoint is safe: the next run's restore finds it
  // did not land and re-sends its records.
  auto drop = [](kafka::KafkaProducer* p) {
    if (p != nullptr) p->PurgeQueued();
  };
  drop(producer_.get());
  std::chrono::milliseconds abort_timeout(std::min(config_.timeout_ms, kCloseAbortTimeoutMs));
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    drop(s.producer.get());
    bool open = open_ && open_->slot == static_cast<int>(i);
    if (!open && !s.pending) continue;
    kafka::TxnResult aborted = s.producer->AbortTransaction(abort_timeout);
    if (aborted.ok()) {
      ++aborted_at_close_;
      txn_aborted_->Add(1);
    } else if (aborted.kind != kafka::TxnErrorKind::kFatal) {  // fatal: fenced, said before
      LogWarn("kafka sink '%s': aborting transaction '%s' at close: %s", task_.c_str(),
              s.transactional_id.c_str(), aborted.status.ToString().c_str());
    }
  }
  producer_.reset();
  slots_.clear();
  open_.reset();
  if (positions_ != nullptr) positions_->ReportClosed(task_);
  return Status::OK();
}

Status AddKafkaSink(runtime::JobGraph& graph, runtime::VertexId input, const std::string& name,
                    const TableDescriptor& table, const KafkaSinkJobSettings& job,
                    uint32_t default_parallelism) {
  FLOE_ASSIGN_OR_RAISE(KafkaSinkConfig config, MakeKafkaSinkConfig(table, job));
  uint32_t parallelism = config.parallelism == 0 ? default_parallelism : config.parallelism;
  runtime::VertexId sink = graph.AddOperator(
      name, parallelism,
      [config, positions = job.positions](
          const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        return std::unique_ptr<runtime::Operator>(std::make_unique<KafkaSink>(config, positions));
      });
  bool forward = graph.vertex(input).parallelism == parallelism;
  graph.Connect(input, sink,
                forward ? runtime::Partitioning::Forward() : runtime::Partitioning::Rebalance());
  return Status::OK();
}

const std::vector<std::string>& KafkaSinkOptionNames() { return kKafkaSinkOptions; }

Status CheckKafkaClientProperties(const TableDescriptor& table,
                                  const kafka::Properties& properties) {
  // A misspelt name first: 'properties.bootstrap.servrs' should not read as a missing one.
  if (Status st = kafka::CheckProperties(properties); !st.ok()) {
    return Status::InvalidArgument("table '" + table.name + "': " + st.message() +
                                   " (from 'properties.*')");
  }
  auto servers = properties.find("bootstrap.servers");
  if (servers == properties.end() || servers->second.empty()) {
    return Status::InvalidArgument("table '" + table.name +
                                   "': the kafka connector needs 'properties.bootstrap.servers'");
  }
  return Status::OK();
}

}  // namespace floe::connectors
