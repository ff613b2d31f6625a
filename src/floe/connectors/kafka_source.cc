#include "floe/connectors/kafka_source.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "floe/connectors/connector_options.h"

namespace floe::connectors {
namespace {

constexpr uint32_t kStateVersion = 1;
constexpr std::string_view kProperties = "properties.";
constexpr size_t kExcerptBytes = 120;

std::string Excerpt(std::string_view value) {
  std::string out(value.substr(0, kExcerptBytes));
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (value.size() > kExcerptBytes) out += "...";
  return out;
}

}  // namespace

std::string KafkaPosition::ToJson() const {
  nlohmann::json partitions = nlohmann::json::object();
  for (const auto& [p, offset] : next) partitions[std::to_string(p)] = offset;
  nlohmann::json j = {{"topic", topic}, {"partitions", partitions}};
  return j.dump();
}

Result<KafkaPosition> KafkaPosition::FromJson(const std::string& json) {
  auto bad = [&] {
    return Status::InvalidArgument(
        "kafka source position must look like {\"topic\":\"t\",\"partitions\":{\"0\":N}}, got " +
        json);
  };
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("topic") || !j["topic"].is_string() ||
      !j.contains("partitions") || !j["partitions"].is_object()) {
    return bad();
  }
  KafkaPosition p;
  p.topic = j["topic"].get<std::string>();
  for (const auto& [key, value] : j["partitions"].items()) {
    int32_t partition = -1;
    auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), partition);
    if (ec != std::errc() || ptr != key.data() + key.size() || partition < 0 ||
        !value.is_number_integer() || value.get<int64_t>() < 0) {
      return bad();
    }
    p.next[partition] = value.get<int64_t>();
  }
  return p;
}

Result<KafkaSourceConfig> MakeKafkaSourceConfig(const TableDescriptor& table) {
  KafkaSourceConfig config;
  TableDescriptor plain = table;  // without properties.*, which go to librdkafka as they are
  for (const auto& [key, value] : table.options) {
    if (key.rfind(kProperties, 0) == 0 && key.size() > kProperties.size()) {
      config.properties[key.substr(kProperties.size())] = value;
      plain.options.erase(key);
    }
  }
  FLOE_RETURN_NOT_OK(CheckSupportedOptions(
      plain, "kafka",
      {"topic", "format", "value.format", "scan.startup.mode", "scan.startup.specific-offsets",
       "scan.startup.timestamp-millis", "scan.bounded.mode", "json.ignore-parse-errors"}));
  config.topic = StringOption(table, "topic", "");
  if (config.topic.empty()) {
    return Status::InvalidArgument("table '" + table.name + "': the kafka connector needs 'topic'");
  }
  if (config.topic.find(';') != std::string::npos) {
    return Status::InvalidArgument(
        OptionError(table, "topic", "must name one topic (a list of topics is not supported yet)",
                    config.topic));
  }
  if (config.properties.count("bootstrap.servers") == 0 ||
      config.properties["bootstrap.servers"].empty()) {
    return Status::InvalidArgument("table '" + table.name +
                                   "': the kafka connector needs 'properties.bootstrap.servers'");
  }
  auto group = config.properties.find("group.id");
  if (group != config.properties.end()) config.group_id = group->second;
  std::string format = StringOption(table, "value.format", StringOption(table, "format", ""));
  if (format != "json") {
    return Status::InvalidArgument(OptionError(
        table, "format",
        "must be 'json' (debezium-json and the other formats are not supported yet)", format));
  }
  FLOE_ASSIGN_OR_RAISE(config.ignore_parse_errors,
                       BoolOption(table, "json.ignore-parse-errors", false));

  std::string mode = StringOption(table, "scan.startup.mode", "group-offsets");
  if (mode == "earliest-offset") {
    config.startup = KafkaStartupMode::kEarliest;
  } else if (mode == "latest-offset") {
    config.startup = KafkaStartupMode::kLatest;
  } else if (mode == "group-offsets") {
    config.startup = KafkaStartupMode::kGroupOffsets;
    if (config.group_id.empty()) {
      return Status::InvalidArgument(OptionError(
          table, "scan.startup.mode", "'group-offsets' needs 'properties.group.id'", mode));
    }
  } else if (mode == "specific-offsets") {
    config.startup = KafkaStartupMode::kSpecificOffsets;
    std::string text = StringOption(table, "scan.startup.specific-offsets", "");
    Result<kafka::PartitionOffsets> offsets = kafka::ParseSpecificOffsets(text);
    if (!offsets.ok()) {
      return Status::InvalidArgument(
          OptionError(table, "scan.startup.specific-offsets",
                      "must look like 'partition:0,offset:42;partition:1,offset:300' when "
                      "'scan.startup.mode' = 'specific-offsets'",
                      text));
    }
    config.specific_offsets = std::move(*offsets);
  } else if (mode == "timestamp") {
    config.startup = KafkaStartupMode::kTimestamp;
    if (table.options.count("scan.startup.timestamp-millis") == 0) {
      return Status::InvalidArgument(
          OptionError(table, "scan.startup.timestamp-millis",
                      "is required when 'scan.startup.mode' = 'timestamp'", ""));
    }
    FLOE_ASSIGN_OR_RAISE(config.startup_timestamp_ms,
                         IntOption(table, "scan.startup.timestamp-millis", 0, 0, INT64_MAX));
  } else {
    return Status::InvalidArgument(OptionError(
        table, "scan.startup.mode",
        "must be one of earliest-offset, latest-offset, group-offsets, specific-offsets, "
        "timestamp",
        mode));
  }
  std::string bounded = StringOption(table, "scan.bounded.mode", "unbounded");
  if (bounded == "latest-offset") {
    config.bounded_latest = true;
  } else if (bounded != "unbounded") {
    return Status::InvalidArgument(
        OptionError(table, "scan.bounded.mode",
                    "must be 'unbounded' or 'latest-offset' (group-offsets, timestamp and "
                    "specific-offsets bounds are not supported yet)",
                    bounded));
  }
  // A data gap (retention dropped records the job still needed) must fail the job, not skip.
  if (config.properties.count("auto.offset.reset") == 0) {
    config.properties["auto.offset.reset"] = "error";
  }
  if (config.bounded_latest && config.properties.count("enable.partition.eof") == 0) {
    config.properties["enable.partition.eof"] = "true";
  }
  if (Status st = kafka::CheckProperties(config.properties); !st.ok()) {
    return Status::InvalidArgument("table '" + table.name + "': " + st.message() +
                                   " (from 'properties.*')");
  }
  if (table.schema == nullptr || table.schema->fields.empty()) {
    return Status::InvalidArgument("table '" + table.name + "' declares no columns");
  }
  config.schema = table.schema;
  FLOE_ASSIGN_OR_RAISE(auto decoder, json::JsonLinesDecoder::Make(config.schema));
  (void)decoder;
  return config;
}

KafkaSource::KafkaSource(KafkaSourceConfig config,
                         std::shared_ptr<runtime::SourcePositionBoard> positions)
    : config_(std::move(config)), positions_(std::move(positions)) {}

Status KafkaSource::Open(const runtime::OperatorContext& ctx) {
  task_ = ctx.task.name();
  if (ctx.task.parallelism != 1) {
    return Status::InvalidArgument("the kafka source runs with parallelism 1 for now, got " +
                                   std::to_string(ctx.task.parallelism));
  }
  json::DecodeOptions options;
  options.ignore_parse_errors = config_.ignore_parse_errors;
  FLOE_ASSIGN_OR_RAISE(decoder_, json::JsonLinesDecoder::Make(config_.schema, options));
  FLOE_ASSIGN_OR_RAISE(consumer_, kafka::KafkaConsumer::Make(config_.properties));
  position_.topic = config_.topic;
  return Status::OK();
}

Status KafkaSource::Restore(runtime::StateReader& state) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, state.GetU32());
  if (version != kStateVersion) {
    return Status::Corruption("kafka source state: unknown version " + std::to_string(version));
  }
  FLOE_ASSIGN_OR_RAISE(position_.topic, state.GetString());
  FLOE_ASSIGN_OR_RAISE(uint32_t n, state.GetU32());
  position_.next.clear();
  stop_.clear();
  for (uint32_t i = 0; i < n; ++i) {
    FLOE_ASSIGN_OR_RAISE(uint32_t partition, state.GetU32());
    FLOE_ASSIGN_OR_RAISE(int64_t next, state.GetI64());
    FLOE_ASSIGN_OR_RAISE(int64_t stop, state.GetI64());
    position_.next[static_cast<int32_t>(partition)] = next;
    if (stop >= 0) stop_[static_cast<int32_t>(partition)] = stop;
  }
  FLOE_RETURN_NOT_OK(state.ExpectEnd());
  restored_ = true;
  return Status::OK();
}

Result<kafka::PartitionOffsets> KafkaSource::StartupOffsets(
    const std::vector<int32_t>& partitions) {
  std::chrono::milliseconds timeout(config_.request_timeout_ms);
  kafka::PartitionOffsets out;
  auto earliest = [&](int32_t p) -> Status {
    FLOE_ASSIGN_OR_RAISE(auto wm, consumer_->Watermarks(config_.topic, p, timeout));
    out[p] = wm.first;
    return Status::OK();
  };
  auto latest = [&](int32_t p) -> Status {
    FLOE_ASSIGN_OR_RAISE(auto wm, consumer_->Watermarks(config_.topic, p, timeout));
    out[p] = wm.second;
    return Status::OK();
  };
  switch (config_.startup) {
    case KafkaStartupMode::kEarliest:
      for (int32_t p : partitions) FLOE_RETURN_NOT_OK(earliest(p));
      break;
    case KafkaStartupMode::kLatest:
      for (int32_t p : partitions) FLOE_RETURN_NOT_OK(latest(p));
      break;
    case KafkaStartupMode::kSpecificOffsets:
      // Partitions not listed start at their earliest offset.
      for (int32_t p : partitions) {
        auto it = config_.specific_offsets.find(p);
        if (it != config_.specific_offsets.end()) {
          out[p] = it->second;
        } else {
          FLOE_RETURN_NOT_OK(earliest(p));
        }
      }
      break;
    case KafkaStartupMode::kGroupOffsets: {
      FLOE_ASSIGN_OR_RAISE(kafka::PartitionOffsets committed,
                           consumer_->Committed(config_.topic, partitions, timeout));
      std::string reset = config_.properties.count("auto.offset.reset") != 0
                              ? config_.properties.at("auto.offset.reset")
                              : "error";
      for (int32_t p : partitions) {
        int64_t c = committed.count(p) != 0 ? committed[p] : -1;
        if (c >= 0) {
          out[p] = c;
        } else if (reset == "earliest" || reset == "smallest" || reset == "beginning") {
          FLOE_RETURN_NOT_OK(earliest(p));
        } else if (reset == "latest" || reset == "largest" || reset == "end") {
          FLOE_RETURN_NOT_OK(latest(p));
        } else {
          return Status::InvalidArgument(
              "kafka source: group '" + config_.group_id + "' has no committed offset for topic '" +
              config_.topic + "' partition " + std::to_string(p) +
              "; set 'properties.auto.offset.reset' = 'earliest' or 'latest' to start anyway");
        }
      }
      break;
    }
    case KafkaStartupMode::kTimestamp: {
      FLOE_ASSIGN_OR_RAISE(kafka::PartitionOffsets found,
                           consumer_->OffsetsForTimes(config_.topic, partitions,
                                                      config_.startup_timestamp_ms, timeout));
      for (int32_t p : partitions) {
        // -1: no record at or after the timestamp: start at the end (Kafka's answer).
        if (found.count(p) != 0 && found[p] >= 0) {
          out[p] = found[p];
        } else {
          FLOE_RETURN_NOT_OK(latest(p));
        }
      }
      break;
    }
  }
  return out;
}

Status KafkaSource::EnsureStarted() {
  if (started_) return Status::OK();
  started_ = true;
  std::chrono::milliseconds timeout(config_.request_timeout_ms);
  FLOE_ASSIGN_OR_RAISE(int32_t count, consumer_->PartitionCount(config_.topic, timeout));
  std::vector<int32_t> partitions;
  for (int32_t p = 0; p < count; ++p) partitions.push_back(p);

  bool have_position = restored_;
  if (positions_ != nullptr) {
    if (std::optional<std::string> o = positions_->StartOverride(task_)) {
      FLOE_ASSIGN_OR_RAISE(position_, KafkaPosition::FromJson(*o));
      have_position = true;
    }
  }
  if (have_position) {
    if (position_.topic != config_.topic) {
      return Status::InvalidArgument("kafka source '" + task_ +
                                     "': the restored position is of topic '" + position_.topic +
                                     "', the table reads '" + config_.topic + "'");
    }
    // Partitions added since: from their beginning.
    std::vector<int32_t> missing;
    for (int32_t p : partitions) {
      if (position_.next.count(p) == 0) missing.push_back(p);
    }
    for (int32_t p : missing) {
      FLOE_ASSIGN_OR_RAISE(auto wm, consumer_->Watermarks(config_.topic, p, timeout));
      position_.next[p] = wm.first;
    }
  } else {
    position_.topic = config_.topic;
    FLOE_ASSIGN_OR_RAISE(position_.next, StartupOffsets(partitions));
  }
  // Where reading starts and why, so a restore's offsets can be checked against the log.
  std::fprintf(stderr, "floe: kafka source '%s': starts at %s (from %s)\n", task_.c_str(),
               position_.ToJson().c_str(),
               positions_ != nullptr && positions_->StartOverride(task_) ? "the table's positions"
               : restored_                                               ? "the restored checkpoint"
                                                                         : "'scan.startup.mode'");
  if (config_.bounded_latest) {
    // End offsets are those seen when the job first started; a restore keeps them.
    for (int32_t p : partitions) {
      if (stop_.count(p) != 0) continue;
      FLOE_ASSIGN_OR_RAISE(auto wm, consumer_->Watermarks(config_.topic, p, timeout));
      stop_[p] = wm.second;
    }
  }
  kafka::PartitionOffsets assign;
  for (const auto& [p, next] : position_.next) {
    if (!Done(p)) assign[p] = next;
  }
  if (assign.empty()) {
    ended_ = config_.bounded_latest;
    return Status::OK();
  }
  return consumer_->Assign(config_.topic, assign);
}

bool KafkaSource::Done(int32_t partition) const {
  if (!config_.bounded_latest) return false;
  auto stop = stop_.find(partition);
  auto next = position_.next.find(partition);
  return stop == stop_.end() || (next != position_.next.end() && next->second >= stop->second);
}

Status KafkaSource::DecodeRecord(const kafka::ConsumedMessage& m, RecordBatch* batch) {
  std::string_view value = m.value();
  if (m.message->payload == nullptr) return Status::OK();  // tombstone: nothing to append
  std::string source =
      config_.topic + "/" + std::to_string(m.partition()) + "@" + std::to_string(m.offset());
  // One record is one JSON object even when pretty-printed: the decoder reads lines, and a raw
  // line break can only be whitespace in valid JSON (inside strings it must be escaped).
  std::string flattened;
  if (value.find_first_of("\r\n") != std::string_view::npos) {
    flattened.assign(value);
    std::replace_if(
        flattened.begin(), flattened.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    value = flattened;
  }
  Status st = decoder_->Decode(value, source, 1, batch);
  if (st.ok()) return st;
  return Status(st.code(), "kafka record topic '" + config_.topic + "' partition " +
                               std::to_string(m.partition()) + " offset " +
                               std::to_string(m.offset()) + ": " + st.message() +
                               "; record: " + Excerpt(value));
}

Result<runtime::SourceStatus> KafkaSource::Poll(runtime::Collector& out) {
  FLOE_RETURN_NOT_OK(EnsureStarted());
  if (ended_) return runtime::SourceStatus::kEnd;
  RecordBatch batch(config_.schema);
  size_t records = 0;
  std::chrono::milliseconds wait(100);
  while (records < config_.batch_rows) {
    FLOE_ASSIGN_OR_RAISE(std::optional<kafka::ConsumedMessage> m, consumer_->Poll(wait));
    wait = std::chrono::milliseconds(0);
    if (!m.has_value()) break;
    int32_t p = m->partition();
    rd_kafka_resp_err_t err = m->err();
    if (err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      auto it = position_.next.find(p);
      if (it != position_.next.end()) it->second = std::max(it->second, m->offset());
    } else if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (kafka::IsRetryable(err)) continue;  // librdkafka retries on its own
      return kafka::KafkaStatus(err, "consume topic '" + config_.topic + "' partition " +
                                         std::to_string(p) + " at offset " +
                                         std::to_string(m->offset()));
    } else {
      auto it = position_.next.find(p);
      if (it == position_.next.end() || m->offset() < it->second || Done(p)) continue;
      ++records;
      FLOE_RETURN_NOT_OK(DecodeRecord(*m, &batch));
      it->second = m->offset() + 1;
    }
    if (config_.bounded_latest && std::all_of(position_.next.begin(), position_.next.end(),
                                              [&](const auto& kv) { return Done(kv.first); })) {
      ended_ = true;
      break;
    }
  }
  if (batch.num_rows() > 0) FLOE_RETURN_NOT_OK(out.Emit(std::move(batch)));
  if (records > 0) return runtime::SourceStatus::kMore;
  return ended_ ? runtime::SourceStatus::kEnd : runtime::SourceStatus::kIdle;
}

Status KafkaSource::SnapshotPosition(runtime::CheckpointId id, runtime::StateWriter& state) {
  FLOE_RETURN_NOT_OK(EnsureStarted());
  state.PutU32(kStateVersion);
  state.PutString(position_.topic);
  state.PutU32(static_cast<uint32_t>(position_.next.size()));
  for (const auto& [p, next] : position_.next) {
    state.PutU32(static_cast<uint32_t>(p));
    state.PutI64(next);
    auto stop = stop_.find(p);
    state.PutI64(stop == stop_.end() ? -1 : stop->second);
  }
  if (positions_ != nullptr) positions_->Record(id, task_, position_.ToJson());
  if (!config_.group_id.empty()) to_commit_[id] = position_.next;
  return Status::OK();
}

Status KafkaSource::OnCheckpointComplete(runtime::CheckpointId id) {
  auto last = to_commit_.upper_bound(id);
  if (last == to_commit_.begin()) return Status::OK();
  kafka::PartitionOffsets offsets = std::prev(last)->second;
  to_commit_.erase(to_commit_.begin(), last);
  // Monitoring only: a failure is logged, never fails the job. After the end (the last
  // checkpoint of a bounded job) wait for the outcome, since the task closes next.
  Status st = ended_ ? consumer_->CommitSync(config_.topic, offsets)
                     : consumer_->CommitAsync(config_.topic, offsets);
  if (!st.ok()) {
    std::fprintf(stderr,
                 "floe: kafka source '%s': committing group offsets failed (monitoring only): "
                 "%s\n",
                 task_.c_str(), st.ToString().c_str());
  }
  return Status::OK();
}

Status KafkaSource::Close() {
  consumer_.reset();
  return Status::OK();
}

Result<runtime::VertexId> AddKafkaSource(runtime::JobGraph& graph, const std::string& name,
                                         const TableDescriptor& table, const JobContext& context) {
  FLOE_ASSIGN_OR_RAISE(KafkaSourceConfig config, MakeKafkaSourceConfig(table));
  auto positions = context.positions;
  return graph.AddSource(
      name, 1,
      [config = std::move(config),
       positions](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::SourceOperator>> {
        return std::unique_ptr<runtime::SourceOperator>(
            std::make_unique<KafkaSource>(config, positions));
      });
}

}  // namespace floe::connectors
