#include "floe/connectors/kafka/kafka_source.h"

#include "floe/runtime/checkpoint_config.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/json.h"
#include "floe/common/log.h"
#include "floe/common/undeclared_fields.h"
#include "floe/connectors/connector_options.h"
#include "floe/connectors/kafka/kafka_sink.h"
#include "floe/format/avro/record_encoder.h"
#include "floe/runtime/row_kind.h"

namespace floe::connectors {
namespace {

// 'floe.partition-key' is the planner's to check (a keyed job scaled out by Kafka partition).
const std::vector<std::string> kKafkaSourceOptions = {
    "topic",
    "format",
    "value.format",
    "scan.startup.mode",
    "scan.startup.specific-offsets",
    "scan.startup.timestamp-millis",
    "scan.bounded.mode",
    "scan.parallelism",
    "json.ignore-parse-errors",
    "json.timestamp-format.standard",
    "debezium-json.schema-include",
    "debezium-json.ignore-parse-errors",
    "debezium-json.timestamp-format.standard",
    "debezium-avro-confluent.url",
    "debezium-avro-confluent.basic-auth.credentials-source",
    "debezium-avro-confluent.basic-auth.user-info",
    "protobuf-confluent.url",
    "protobuf-confluent.basic-auth.credentials-source",
    "protobuf-confluent.basic-auth.user-info",
    "avro-confluent.url",
    "avro-confluent.basic-auth.credentials-source",
    "avro-confluent.basic-auth.user-info",
    "avro.encoding",
    "avro.timestamp_mapping.legacy",
    "avro.codec",
    "scan.watermark.idle-timeout",
    "scan.bad-records",
    "scan.bad-records.table",
    "floe.partition-key"};

// State blob versions: 1 = one topic, parallelism 1 (read only); 2 = topic list and the
// parallelism that wrote it (connectors/README.md).
constexpr uint32_t kStateVersion = 2;
constexpr std::string_view kProperties = "properties.";
constexpr size_t kExcerptBytes = 120;
// Messages taken from librdkafka's queue at once (not a group member).
constexpr size_t kFetchedMax = 1024;
// librdkafka consumer properties floe sets when the table does not (see MakeKafkaSourceConfig).
constexpr std::pair<const char*, const char*> kKafkaSourceQueueDefaults[] = {
    {"queued.min.messages", "500000"},          // librdkafka 2.0.2: 100,000
    {"queued.max.messages.kbytes", "131072"}};  // 128 MiB; librdkafka 2.0.2: 65,536 (64 MiB)

// The first bytes of a binary value, for an error message.
std::string HexExcerpt(std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < std::min<size_t>(value.size(), 32); ++i) {
    if (i > 0) out += ' ';
    out += kHex[static_cast<uint8_t>(value[i]) >> 4];
    out += kHex[static_cast<uint8_t>(value[i]) & 15];
  }
  if (value.size() > 32) out += " ...";
  return out;
}

std::string Excerpt(std::string_view value) {
  std::string out(value.substr(0, kExcerptBytes));
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (value.size() > kExcerptBytes) out += "...";
  return out;
}

}  // namespace

uint32_t KafkaSplitOwner(std::string_view topic, int32_t partition, uint32_t parallelism) {
  if (parallelism <= 1) return 0;
  int32_t hash = 0;  // Java's String.hashCode, with its int32 wrap-around
  for (char c : topic) {
    hash = static_cast<int32_t>(static_cast<uint32_t>(hash) * 31u +
                                static_cast<uint32_t>(static_cast<unsigned char>(c)));
  }
  uint32_t start = (static_cast<uint32_t>(hash) * 31u & 0x7FFFFFFFu) % parallelism;
  return static_cast<uint32_t>((start + static_cast<uint64_t>(partition)) % parallelism);
}

std::string KafkaPosition::ToJson() const {
  Json topics = Json::object();
  for (const auto& [topic, offsets] : next) {
    Json partitions = Json::object();
    for (const auto& [p, offset] : offsets) partitions[std::to_string(p)] = offset;
    topics[topic] = std::move(partitions);
  }
  Json j = {{"parallelism", parallelism}, {"topics", std::move(topics)}};
  return DumpJson(j);
}

Result<KafkaPosition> KafkaPosition::FromJson(const std::string& json) {
  auto bad = [&] {
    return Status::InvalidArgument(
        "kafka source position must look like "
        "{\"parallelism\":1,\"topics\":{\"t\":{\"0\":N}}} (or, as written before topic lists, "
        "{\"topic\":\"t\",\"partitions\":{\"0\":N}}), got " +
        json);
  };
  Result<Json> parsed = ParseJson(json, JsonPath("kafka source position"));
  if (!parsed.ok() || !parsed->is_object()) return bad();
  const Json& j = *parsed;
  auto read_partitions = [&](const Json& obj, kafka::PartitionOffsets* out) -> bool {
    if (!obj.is_object()) return false;
    for (const auto& [key, value] : obj.items()) {
      int32_t partition = -1;
      auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), partition);
      if (ec != std::errc() || ptr != key.data() + key.size() || partition < 0 ||
          !value.is_number_integer() || value.get<int64_t>() < 0) {
        return false;
      }
      (*out)[partition] = value.get<int64_t>();
    }
    return true;
  };
  KafkaPosition p;
  if (j.contains("topics")) {
    if (!j["topics"].is_object()) return bad();
    if (j.contains("parallelism")) {
      if (!j["parallelism"].is_number_unsigned() || j["parallelism"].get<uint64_t>() < 1 ||
          j["parallelism"].get<uint64_t>() > 32768) {
        return bad();
      }
      p.parallelism = j["parallelism"].get<uint32_t>();
    }
    for (const auto& [topic, partitions] : j["topics"].items()) {
      if (topic.empty() || !read_partitions(partitions, &p.next[topic])) return bad();
    }
    return p;
  }
  // The single-topic form (parallelism was always 1 then).
  if (!j.contains("topic") || !j["topic"].is_string() || j["topic"].get<std::string>().empty() ||
      !j.contains("partitions")) {
    return bad();
  }
  if (!read_partitions(j["partitions"], &p.next[j["topic"].get<std::string>()])) return bad();
  return p;
}

// What format the table's values are in ('value.format', else 'format').
std::string ValueFormat(const TableDescriptor& table) {
  auto get = [&](const char* key) {
    auto it = table.options.find(key);
    return it == table.options.end() ? std::string() : it->second;
  };
  std::string format = get("value.format");
  return format.empty() ? get("format") : format;
}

bool IsKafkaChangelogSource(const TableDescriptor& table) {
  auto connector = table.options.find("connector");
  if (connector == table.options.end() || connector->second != "kafka") return false;
  const std::string format = ValueFormat(table);
  return format == "debezium-json" || format == "debezium-avro-confluent";
}

namespace {

// The declared columns a format decodes: all but the METADATA ones.
std::shared_ptr<const BatchSchema> DecodedColumns(const TableDescriptor& table) {
  if (table.metadata.empty()) return table.schema;
  auto decoded = std::make_shared<BatchSchema>();
  for (const Field& f : table.schema->fields) {
    const bool metadata = std::any_of(table.metadata.begin(), table.metadata.end(),
                                      [&](const auto& m) { return m.column == f.name; });
    if (!metadata) decoded->fields.push_back(f);
  }
  return decoded;
}

// Moves the 'properties.*' options, which go to librdkafka as they are, into config->properties;
// returns the table without them.
TableDescriptor TakeClientProperties(const TableDescriptor& table, KafkaSourceConfig* config) {
  TableDescriptor plain = table;
  for (const auto& [key, value] : table.options) {
    if (key.rfind(kProperties, 0) == 0 && key.size() > kProperties.size()) {
      config->properties[key.substr(kProperties.size())] = value;
      plain.options.erase(key);
    }
  }
  return plain;
}

// Refuses options the source does not know (`plain`: the table without 'properties.*').
Status CheckOptionNames(const TableDescriptor& table, const TableDescriptor& plain) {
  if (table.options.count("topic-pattern") != 0) {
    return Status::InvalidArgument(OptionError(
        table, "topic-pattern",
        "is not supported (floe reads the partitions of named topics, found once at start): "
        "list the topics in 'topic', separated by ';'",
        table.options.at("topic-pattern")));
  }
  return CheckSupportedOptions(plain, "kafka", kKafkaSourceOptions);
}

// 'topic', in Flink's list syntax: 'a;b' (blanks around names are ignored; a trailing ';' is
// allowed).
Status ParseTopics(const TableDescriptor& table, KafkaSourceConfig* config) {
  std::string topic_list = StringOption(table, "topic", "");
  if (topic_list.empty()) {
    return Status::InvalidArgument("table '" + table.name + "': the kafka connector needs 'topic'");
  }
  for (size_t start = 0; start <= topic_list.size();) {
    size_t end = topic_list.find(';', start);
    if (end == std::string::npos) end = topic_list.size();
    std::string name = topic_list.substr(start, end - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    start = end + 1;
    if (name.empty()) {
      if (end == topic_list.size() && !config->topics.empty()) break;  // trailing ';'
      return Status::InvalidArgument(OptionError(
          table, "topic", "must be a topic name or a list 'a;b' without empty names", topic_list));
    }
    if (std::find(config->topics.begin(), config->topics.end(), name) != config->topics.end()) {
      return Status::InvalidArgument(
          OptionError(table, "topic", "names topic '" + name + "' twice", topic_list));
    }
    config->topics.push_back(std::move(name));
  }
  return Status::OK();
}

// Options of the formats other than `format` ("json.", "debezium-json.", "avro-confluent.",
// "avro.") are refused: an option floe does not apply is never accepted silently.
Status RefuseOptionsOfOtherFormats(const TableDescriptor& table, std::string_view format) {
  for (std::string_view other : {"json", "debezium-json", "avro-confluent", "avro",
                                 "debezium-avro-confluent", "protobuf-confluent"}) {
    if (other == format) continue;
    for (const auto& [key, value] : table.options) {
      if (key.size() > other.size() && key.compare(0, other.size(), other) == 0 &&
          key[other.size()] == '.') {
        return Status::InvalidArgument(OptionError(
            table, key, "does not apply to 'format' = '" + std::string(format) + "'", value));
      }
    }
  }
  return Status::OK();
}

// 'format' (or 'value.format') and that format's options; the other format's are refused.
Status ParseFormatOptions(const TableDescriptor& table, KafkaSourceConfig* config) {
  std::string format = StringOption(table, "value.format", StringOption(table, "format", ""));
  if (format == "json") {
    config->format = KafkaFormat::kJson;
    FLOE_ASSIGN_OR_RAISE(config->ignore_parse_errors,
                         BoolOption(table, "json.ignore-parse-errors", false));
    // Validated only: the decoder takes both spellings ("2020-12-30 12:13:14" and
    // "2020-12-30T12:13:14", TIMESTAMP_LTZ with 'Z' or an offset) whatever the standard is set
    // to, so data written with either standard reads back. Flink accepts only the configured one.
    FLOE_RETURN_NOT_OK(TimestampStandardOption(table, "json.timestamp-format.standard").status());
    for (const char* key : {"debezium-json.schema-include", "debezium-json.ignore-parse-errors",
                            "debezium-json.timestamp-format.standard"}) {
      if (table.options.count(key) != 0) {
        return Status::InvalidArgument(OptionError(
            table, key, "applies to 'format' = 'debezium-json' only", table.options.at(key)));
      }
    }
    return RefuseOptionsOfOtherFormats(table, "json");
  }
  if (format == "debezium-json") {
    config->format = KafkaFormat::kDebeziumJson;
    for (std::string key : {"json.ignore-parse-errors", "json.timestamp-format.standard"}) {
      if (table.options.count(key) != 0) {
        return Status::InvalidArgument(
            OptionError(table, key, "applies to 'format' = 'json'; use 'debezium-" + key + "'",
                        table.options.at(key)));
      }
    }
    // Validated only, as for 'json' above: both spellings are accepted.
    FLOE_RETURN_NOT_OK(
        TimestampStandardOption(table, "debezium-json.timestamp-format.standard").status());
    FLOE_ASSIGN_OR_RAISE(config->ignore_parse_errors,
                         BoolOption(table, "debezium-json.ignore-parse-errors", false));
    FLOE_ASSIGN_OR_RAISE(config->debezium_schema_include,
                         BoolOption(table, "debezium-json.schema-include", false));
    return RefuseOptionsOfOtherFormats(table, "debezium-json");
  }
  if (format == "avro-confluent") {
    config->format = KafkaFormat::kAvroConfluent;
    FLOE_RETURN_NOT_OK(RefuseOptionsOfOtherFormats(table, "avro-confluent"));
    FLOE_ASSIGN_OR_RAISE(config->registry, RegistryOptions(table));
    return Status::OK();
  }
  if (format == "protobuf-confluent") {
    config->format = KafkaFormat::kProtobufConfluent;
    FLOE_RETURN_NOT_OK(RefuseOptionsOfOtherFormats(table, format));
    FLOE_ASSIGN_OR_RAISE(config->registry, RegistryOptions(table, format));
    return Status::OK();
  }
  if (format == "debezium-avro-confluent") {
    config->format = KafkaFormat::kDebeziumAvroConfluent;
    FLOE_RETURN_NOT_OK(RefuseOptionsOfOtherFormats(table, format));
    FLOE_ASSIGN_OR_RAISE(config->registry, RegistryOptions(table, format));
    return Status::OK();
  }
  if (format == "avro") {
    config->format = KafkaFormat::kAvro;
    FLOE_RETURN_NOT_OK(RefuseOptionsOfOtherFormats(table, "avro"));
    FLOE_RETURN_NOT_OK(CheckPlainAvroOptions(table));
    auto schema = avro::AvroSchemaForColumns(*DecodedColumns(table));
    return schema.ok() ? Status::OK() : schema.status().WithContext("table '" + table.name + "'");
  }
  return Status::InvalidArgument(
      OptionError(table, "format",
                  "must be 'json', 'debezium-json', 'avro-confluent', 'debezium-avro-confluent', "
                  "'protobuf-confluent' or 'avro' (other formats are "
                  "not supported yet)",
                  format));
}

// 'scan.startup.mode' and the options of the mode chosen.
Status ParseStartupMode(const TableDescriptor& table, KafkaSourceConfig* config) {
  // Choices are listed in KafkaStartupMode's order.
  FLOE_ASSIGN_OR_RAISE(size_t mode,
                       ChoiceOption(table, "scan.startup.mode", "group-offsets",
                                    {"earliest-offset", "latest-offset", "group-offsets",
                                     "specific-offsets", "timestamp"}));
  config->startup = static_cast<KafkaStartupMode>(mode);
  if (config->startup == KafkaStartupMode::kGroupOffsets && config->group_id.empty()) {
    return Status::InvalidArgument(OptionError(table, "scan.startup.mode",
                                               "'group-offsets' needs 'properties.group.id'",
                                               "group-offsets"));
  }
  if (config->startup == KafkaStartupMode::kSpecificOffsets) {
    std::string text = StringOption(table, "scan.startup.specific-offsets", "");
    Result<kafka::PartitionOffsets> offsets = kafka::ParseSpecificOffsets(text);
    if (!offsets.ok()) {
      return Status::InvalidArgument(
          OptionError(table, "scan.startup.specific-offsets",
                      "must look like 'partition:0,offset:42;partition:1,offset:300' when "
                      "'scan.startup.mode' = 'specific-offsets'",
                      text));
    }
    config->specific_offsets = std::move(*offsets);
    if (config->topics.size() > 1) {
      // Flink's syntax names partitions only, so it cannot say which topic's partition it means.
      return Status::InvalidArgument(
          OptionError(table, "scan.startup.specific-offsets",
                      "names partitions of one topic and cannot be used with a topic list",
                      StringOption(table, "topic", "")));
    }
  }
  if (config->startup == KafkaStartupMode::kTimestamp) {
    if (table.options.count("scan.startup.timestamp-millis") == 0) {
      return Status::InvalidArgument(
          OptionError(table, "scan.startup.timestamp-millis",
                      "is required when 'scan.startup.mode' = 'timestamp'", ""));
    }
    FLOE_ASSIGN_OR_RAISE(config->startup_timestamp_ms,
                         IntOption(table, "scan.startup.timestamp-millis", 0, 0, INT64_MAX));
  }
  return Status::OK();
}

// 'scan.bounded.mode'.
Status ParseBoundedMode(const TableDescriptor& table, KafkaSourceConfig* config) {
  FLOE_ASSIGN_OR_RAISE(
      size_t bounded,
      ChoiceOption(
          table, "scan.bounded.mode", "unbounded", {"unbounded", "latest-offset"},
          " (group-offsets, timestamp and specific-offsets bounds are not supported yet)"));
  config->bounded_latest = bounded == 1;
  return Status::OK();
}

// The librdkafka consumer properties floe sets when the table does not, then all of them
// checked.
Status SetConsumerDefaults(const TableDescriptor& table, KafkaSourceConfig* config) {
  kafka::Properties& properties = config->properties;
  // A data gap (retention dropped records the job still needed) must fail the job, not skip.
  if (properties.count("auto.offset.reset") == 0) properties["auto.offset.reset"] = "error";
  if (config->bounded_latest && properties.count("enable.partition.eof") == 0) {
    properties["enable.partition.eof"] = "true";
  }
  // librdkafka 2.0.2 marks a partition "not fetchable" once the consumer's pre-fetch queue
  // holds queued.min.messages (100,000) or queued.max.messages.kbytes (64 MiB), and fetches it
  // again only ~1 s later: a source that drains 100,000 records in well under a second then
  // reads in 1 s bursts (docs/kafka.md). floe's defaults make the queue hold more than a second
  // of reading; the kbytes limit bounds the memory (the queue is one per source subtask).
  for (const auto& [key, value] : kKafkaSourceQueueDefaults) {
    if (properties.count(key) == 0) properties[key] = value;
  }
  if (Status st = kafka::CheckProperties(properties); !st.ok()) {
    return Status::InvalidArgument("table '" + table.name + "': " + st.message() +
                                   " (from 'properties.*')");
  }
  return Status::OK();
}

// The declared columns, and what the source emits.
Status SetSchema(const TableDescriptor& table, KafkaSourceConfig* config) {
  if (table.schema == nullptr || table.schema->fields.empty()) {
    return Status::InvalidArgument("table '" + table.name + "' declares no columns");
  }
  if (runtime::RowKindIndex(*table.schema) >= 0) {
    return Status::InvalidArgument("table '" + table.name + "': column name '" +
                                   runtime::kRowKindColumn + "' is reserved for row kinds");
  }
  config->schema = DecodedColumns(table);
  if (config->schema->fields.empty()) {
    return Status::InvalidArgument("table '" + table.name +
                                   "' declares metadata columns only; the format needs a column");
  }
  for (const TableDescriptor::MetadataColumn& m : table.metadata) {
    KafkaSourceConfig::MetadataSlot slot;
    slot.index = static_cast<size_t>(table.schema->FieldIndex(m.column));
    auto key = std::find_if(KafkaMetadataKeys().begin(), KafkaMetadataKeys().end(),
                            [&](const auto& k) { return k.first == m.key; });
    if (key == KafkaMetadataKeys().end()) {
      return Status::InvalidArgument("table '" + table.name + "': metadata key '" + m.key +
                                     "' is not one a Kafka source gives");
    }
    slot.key = static_cast<KafkaSourceConfig::MetadataKey>(key - KafkaMetadataKeys().begin());
    config->metadata.push_back(slot);
  }
  std::sort(config->metadata.begin(), config->metadata.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  config->output_schema =
      config->changelog() ? runtime::WithRowKindColumn(*table.schema) : table.schema;
  FLOE_ASSIGN_OR_RAISE(auto decoder, json::JsonLinesDecoder::Make(config->schema));
  (void)decoder;
  if (table.undeclared_fields) {
    if (config->format != KafkaFormat::kJson && config->format != KafkaFormat::kAvroConfluent &&
        config->format != KafkaFormat::kProtobufConfluent) {
      return Status::InvalidArgument("table '" + table.name +
                                     "': only 'format' = 'json', 'avro-confluent' and "
                                     "'protobuf-confluent' carry undeclared fields");
    }
    // Decoded last, so TakeBatch puts it after every declared column.
    config->undeclared_fields = true;
    config->schema = runtime::WithUndeclaredFieldsColumn(*config->schema);
    config->output_schema = runtime::WithUndeclaredFieldsColumn(*config->output_schema);
  }
  return Status::OK();
}

// The table's WATERMARK and 'scan.watermark.idle-timeout'.
Status ParseWatermarkOptions(const TableDescriptor& table, KafkaSourceConfig* config) {
  if (table.watermark && (table.watermark->column >= 0 || table.watermark->computed)) {
    config->watermark = table.watermark;
  }
  if (auto it = table.options.find("scan.watermark.idle-timeout"); it != table.options.end()) {
    Result<std::chrono::milliseconds> idle = runtime::ParseDuration(it->second);
    if (!idle.ok()) {
      return Status::InvalidArgument(OptionError(table, "scan.watermark.idle-timeout",
                                                 "must be a duration such as '30 s'", it->second));
    }
    config->idle_timeout = *idle;
  }
  return Status::OK();
}

}  // namespace

Result<KafkaSourceConfig> MakeKafkaSourceConfig(const TableDescriptor& table) {
  KafkaSourceConfig config;
  TableDescriptor plain = TakeClientProperties(table, &config);
  FLOE_RETURN_NOT_OK(CheckOptionNames(table, plain));
  FLOE_RETURN_NOT_OK(ParseTopics(table, &config));
  FLOE_ASSIGN_OR_RAISE(int64_t scan_parallelism, IntOption(table, "scan.parallelism", 0, 1, 32768));
  config.parallelism = static_cast<uint32_t>(scan_parallelism);
  FLOE_RETURN_NOT_OK(CheckKafkaClientProperties(table, config.properties));
  auto group = config.properties.find("group.id");
  if (group != config.properties.end()) config.group_id = group->second;
  config.key_partitioned = table.options.count("floe.partition-key") != 0;
  FLOE_RETURN_NOT_OK(ParseFormatOptions(table, &config));
  FLOE_ASSIGN_OR_RAISE(config.bad_records, ParseBadRecordPolicy(table));
  if (config.ignore_parse_errors && table.options.count(std::string(kBadRecordsOption)) != 0) {
    // Flink's option nulls what it cannot read and keeps the row; the two would disagree.
    return Status::InvalidArgument(
        "table '" + table.name + "': '" + std::string(kBadRecordsOption) +
        "' and '<format>.ignore-parse-errors' = 'true' both say what to do with a bad record; "
        "set one of them");
  }
  config.table_name = table.name;
  FLOE_RETURN_NOT_OK(ParseStartupMode(table, &config));
  FLOE_RETURN_NOT_OK(ParseBoundedMode(table, &config));
  FLOE_RETURN_NOT_OK(SetConsumerDefaults(table, &config));
  FLOE_RETURN_NOT_OK(SetSchema(table, &config));
  FLOE_RETURN_NOT_OK(ParseWatermarkOptions(table, &config));
  return config;
}

KafkaSource::KafkaSource(KafkaSourceConfig config,
                         std::shared_ptr<runtime::SourcePositionBoard> positions)
    : config_(std::move(config)),
      positions_(positions),
      start_("kafka source", "'scan.startup.mode'", kStateVersion, 1, std::move(positions)) {}

Status KafkaSource::Open(const runtime::OperatorContext& ctx) {
  task_ = ctx.task.name();
  start_.SetTask(task_);
  subtask_ = ctx.task.subtask.value;
  parallelism_ = std::max<uint32_t>(1, ctx.task.parallelism);
  cancel_flag_ = ctx.cancel_flag;
  metrics_ = ctx.metrics;
  pending_records_ = &metrics_->Gauge("pendingRecords");
  bytes_in_ = &metrics_->Counter("numBytesIn");
  errors_in_ = &metrics_->Counter("numRecordsInErrors");
  idle_time_ = &metrics_->Gauge("sourceIdleTime");
  emit_event_time_lag_ = &metrics_->Gauge("currentEmitEventTimeLag");
  watermark_lag_ = &metrics_->Gauge("watermarkLag");
  if (config_.format == KafkaFormat::kDebeziumAvroConfluent ||
      config_.format == KafkaFormat::kProtobufConfluent) {
    FLOE_ASSIGN_OR_RAISE(registry_, SchemaRegistryClient::Make(config_.registry));
  } else if (config_.changelog()) {
    DebeziumJsonOptions options;
    options.schema_include = config_.debezium_schema_include;
    options.ignore_parse_errors = config_.ignore_parse_errors;
    FLOE_ASSIGN_OR_RAISE(debezium_, DebeziumJsonDecoder::Make(config_.schema, options));
  } else if (config_.format == KafkaFormat::kAvroConfluent) {
    FLOE_ASSIGN_OR_RAISE(registry_, SchemaRegistryClient::Make(config_.registry));
  } else if (config_.format == KafkaFormat::kAvro) {
    FLOE_ASSIGN_OR_RAISE(std::string text, avro::AvroSchemaForColumns(*config_.schema));
    FLOE_ASSIGN_OR_RAISE(auto schema, avro::ParseSchema(text));
    FLOE_ASSIGN_OR_RAISE(avro_plain_, avro::RecordDecoder::Make(schema, config_.schema));
  } else {
    json::DecodeOptions options;
    options.ignore_parse_errors = config_.ignore_parse_errors;
    options.capture_undeclared = config_.undeclared_fields;
    FLOE_ASSIGN_OR_RAISE(decoder_, json::JsonLinesDecoder::Make(config_.schema, options));
  }
  rows_ = RecordBatch(config_.schema);
  for (const KafkaSourceConfig::MetadataSlot& slot : config_.metadata) {
    metadata_.emplace_back(config_.output_schema->fields[slot.index].type);
  }
  if (config_.group_member) {
    FLOE_ASSIGN_OR_RAISE(consumer_, kafka::KafkaConsumer::MakeMember(
                                        config_.properties, [this](const kafka::GroupChange& c) {
                                          return OnGroupChange(c);
                                        }));
  } else {
    FLOE_ASSIGN_OR_RAISE(consumer_, kafka::KafkaConsumer::Make(config_.properties));
  }
  position_.parallelism = parallelism_;
  return Status::OK();
}

Status EnableGroupMember(
    KafkaSourceConfig& config,
    std::function<Result<iceberg::PartitionStart>(const iceberg::SourcePartition&)> table_start) {
  const char* refused = nullptr;
  if (config.group_id.empty()) refused = "it needs 'properties.group.id' (the job's identity)";
  if (config.changelog()) refused = "a changelog format ('debezium-json') is not supported yet";
  if (config.bounded_latest) refused = "'scan.bounded.mode' is not supported (the group decides)";
  if (refused != nullptr) {
    return Status::InvalidArgument(
        std::string("kafka source: instances sharing the topic through the consumer group: ") +
        refused);
  }
  config.group_member = true;
  config.table_start = std::move(table_start);
  config.output_schema = runtime::WithSourceSplitColumn(*config.output_schema);
  return Status::OK();
}

Result<kafka::PartitionOffsets> KafkaSource::OnGroupChange(const kafka::GroupChange& change) {
  split_cache_.reset();  // claims change
  kafka::PartitionOffsets& next = position_.next[change.topic];
  if (change.kind != kafka::GroupChange::Kind::kAssigned) {
    // Rows read of these partitions stay in their old claim's split, which the commit that
    // sees the claim gone leaves out: the new holder reads them again from the table.
    for (int32_t p : change.partitions) {
      next.erase(p);
      auto held = claims_.find({change.topic, p});
      if (held != claims_.end()) {
        pending_claims_.push_back(
            runtime::ClaimChange{ClaimSplit(held->second), static_cast<uint32_t>(p), false, ""});
        claims_.erase(held);
      }
      // No longer reported: /metrics, `floe status` and the web UI list the partitions this
      // instance reads now.
      auto metrics = split_metrics_.find({change.topic, p});
      if (metrics != split_metrics_.end()) {
        metrics->second.offset->Set(runtime::Metric::kUnset);
        metrics->second.lag->Set(runtime::Metric::kUnset);
      }
    }
    LogInfo("kafka source '%s': the group took %zu partition(s) of '%s' (%s)", task_.c_str(),
            change.partitions.size(), change.topic.c_str(),
            change.kind == kafka::GroupChange::Kind::kLost ? "lost" : "revoked");
    SyncWatermarkSplits();
    return kafka::PartitionOffsets{};
  }
  kafka::PartitionOffsets start;
  std::map<int32_t, iceberg::PartitionStart> table;  // where the table has each partition
  std::vector<int32_t> without;                      // no table position yet: 'scan.startup.mode'
  for (int32_t p : change.partitions) {
    FLOE_ASSIGN_OR_RAISE(table[p], config_.table_start(iceberg::SourcePartition{change.topic, p}));
    if (table[p].position) {
      start[p] = *table[p].position;
    } else {
      without.push_back(p);
    }
  }
  int32_t topic_partitions = 0;
  if (config_.key_partitioned) {
    FLOE_ASSIGN_OR_RAISE(topic_partitions, CheckPartitionCount(change.topic, table));
  }
  if (!without.empty()) {
    FLOE_ASSIGN_OR_RAISE(kafka::PartitionOffsets startup, StartupOffsets(change.topic, without));
    for (const auto& [p, offset] : startup) start[p] = offset;
  }
  for (const auto& [p, offset] : start) {
    const std::optional<int64_t> from = table[p].position;
    PartitionClaim claim{iceberg::SourcePartition{change.topic, p},
                         ++generations_[{change.topic, p}], from, offset, topic_partitions};
    claims_[{change.topic, p}] = claim;
    // The partition is the key group of its rows' state (one topic per keyed scaled-out job).
    pending_claims_.push_back(runtime::ClaimChange{ClaimSplit(claim), static_cast<uint32_t>(p),
                                                   true, std::move(table[p].state)});
    next[p] = offset;
    LogInfo("kafka source '%s': the group gave it %s; claim %s starts at offset %lld (%s)",
            task_.c_str(), claim.partition.ToString().c_str(), ClaimSplit(claim).c_str(),
            static_cast<long long>(offset),
            from ? "the table's position" : "'scan.startup.mode': the table has none");
  }
  SyncWatermarkSplits();
  return start;
}

Result<int32_t> KafkaSource::CheckPartitionCount(
    const std::string& topic, const std::map<int32_t, iceberg::PartitionStart>& starts) {
  FLOE_ASSIGN_OR_RAISE(
      int32_t now,
      consumer_->PartitionCount(topic, std::chrono::milliseconds(config_.request_timeout_ms)));
  auto refuse = [&](const std::string& before) {
    return Status::InvalidArgument(
        "kafka source '" + task_ + "': topic '" + topic + "' has " + std::to_string(now) +
        " partitions, but " + before +
        ": with 'floe.partition-key' each key's state lives with the partition the producer "
        "chose by the partition count, so a key's new rows would reach a partition without its "
        "state. A keyed scaled-out job cannot follow a partition change (docs/kafka.md)");
  };
  auto first = first_partition_counts_.try_emplace(topic, now).first;
  if (first->second != now) {
    return refuse("this instance first saw " + std::to_string(first->second));
  }
  for (const auto& [p, start] : starts) {
    if (start.topic_partitions && *start.topic_partitions != now) {
      return refuse("the table holds partition " + std::to_string(p) + "'s state as read with " +
                    std::to_string(*start.topic_partitions) +
                    " (table property 'floe.partitions.<sink>." + topic + "')");
    }
  }
  return now;
}

void KafkaSource::SyncWatermarkSplits() {
  if (!watermarks_) return;
  std::vector<std::string> splits;
  for (const auto& [key, claim] : claims_) {
    splits.push_back(key.first + "/" + std::to_string(key.second));
  }
  watermarks_->SetSplits(splits);
}

Status KafkaSource::EmitClaimChanges(std::vector<PartitionRef>& row_splits,
                                     runtime::Collector& out) {
  if (watermarks_) {
    FLOE_RETURN_NOT_OK(EmitWithWatermarks(row_splits, /*input_quiet=*/false, out).status());
  } else {
    FLOE_RETURN_NOT_OK(EmitBatch(out));
  }
  row_splits.clear();
  std::vector<runtime::ClaimChange> changes = std::move(pending_claims_);
  pending_claims_.clear();
  for (const runtime::ClaimChange& change : changes) {
    FLOE_RETURN_NOT_OK(out.EmitClaimChange(change));
  }
  return Status::OK();
}

Status KafkaSource::CheckFences() {
  if (positions_ == nullptr) return Status::OK();
  for (const std::string& split : positions_->TakeFenced()) {
    for (const auto& [key, claim] : claims_) {
      if (ClaimSplit(claim) != split) continue;
      return Status::Conflict(
          "kafka source '" + task_ + "': partition " + claim.partition.ToString() +
          " was committed by another instance while this one held it (claim " + split +
          ", fenced by the table): this instance restarts and rejoins the group");
    }
  }
  return Status::OK();
}

std::vector<PartitionClaim> KafkaSource::Claims() const {
  std::vector<PartitionClaim> out;
  for (const auto& [key, claim] : claims_) {
    PartitionClaim c = claim;
    auto topic = position_.next.find(key.first);
    if (topic != position_.next.end()) {
      auto it = topic->second.find(key.second);
      if (it != topic->second.end()) c.next = it->second;
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// What one subtask's state blob holds.
struct KafkaState {
  uint32_t written_with = 1;  // the source parallelism that wrote it
  TopicOffsets next;
  TopicOffsets stop;  // bounded: end offset per split
};

// Reads a blob of any version in [1, kStateVersion].
Result<KafkaState> ReadKafkaState(SourceStart& start, runtime::StateReader& state) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, start.BeginRestore(state));
  KafkaState out;
  auto read_partitions = [&](const std::string& topic) -> Status {
    FLOE_ASSIGN_OR_RAISE(uint32_t n, state.GetU32());
    kafka::PartitionOffsets& next = out.next[topic];
    for (uint32_t i = 0; i < n; ++i) {
      FLOE_ASSIGN_OR_RAISE(uint32_t partition, state.GetU32());
      FLOE_ASSIGN_OR_RAISE(int64_t offset, state.GetI64());
      FLOE_ASSIGN_OR_RAISE(int64_t stop, state.GetI64());
      next[static_cast<int32_t>(partition)] = offset;
      if (stop >= 0) out.stop[topic][static_cast<int32_t>(partition)] = stop;
    }
    return Status::OK();
  };
  if (version == 1) {  // one topic, parallelism 1
    FLOE_ASSIGN_OR_RAISE(std::string topic, state.GetString());
    FLOE_RETURN_NOT_OK(read_partitions(topic));
  } else {
    FLOE_ASSIGN_OR_RAISE(out.written_with, state.GetU32());
    FLOE_ASSIGN_OR_RAISE(uint32_t topics, state.GetU32());
    for (uint32_t t = 0; t < topics; ++t) {
      FLOE_ASSIGN_OR_RAISE(std::string topic, state.GetString());
      FLOE_RETURN_NOT_OK(read_partitions(topic));
    }
  }
  FLOE_RETURN_NOT_OK(state.ExpectEnd());
  return out;
}

// The union of `old` (by old subtask index), each split in at most one of them unless with the
// same value, restricted to the splits `subtask` of `parallelism` owns. `what` names the values.
Result<TopicOffsets> MergeOwnedSplits(const std::vector<const TopicOffsets*>& old, uint32_t subtask,
                                      uint32_t parallelism, std::string_view what) {
  TopicOffsets out;
  std::map<std::pair<std::string, int32_t>, size_t> holder;  // split -> old subtask
  for (size_t i = 0; i < old.size(); ++i) {
    for (const auto& [topic, offsets] : *old[i]) {
      for (const auto& [p, offset] : offsets) {
        auto [it, fresh] = holder.try_emplace({topic, p}, i);
        const size_t first = it->second;
        if (!fresh && old[first]->at(topic).at(p) != offset) {
          return Status::Corruption(
              "topic '" + topic + "' partition " + std::to_string(p) + ": old subtask " +
              std::to_string(first) + " holds " + std::string(what) + " " +
              std::to_string(old[first]->at(topic).at(p)) + " and old subtask " +
              std::to_string(i) + " holds " + std::to_string(offset) +
              " (a partition belongs to one subtask)");
        }
        if (KafkaSplitOwner(topic, p, parallelism) == subtask) out[topic][p] = offset;
      }
    }
  }
  return out;
}

}  // namespace

Result<TopicOffsets> RedistributeKafkaPositions(const std::vector<KafkaPosition>& old,
                                                uint32_t subtask, uint32_t parallelism) {
  std::vector<const TopicOffsets*> next;
  for (size_t i = 0; i < old.size(); ++i) {
    if (old[i].parallelism != old.size()) {
      return Status::Corruption(
          "old subtask " + std::to_string(i) + "'s position was written with source parallelism " +
          std::to_string(old[i].parallelism) + " but the positions of " +
          std::to_string(old.size()) + " old subtasks were found: some old subtask's are missing");
    }
    next.push_back(&old[i].next);
  }
  return MergeOwnedSplits(next, subtask, parallelism, "next offset");
}

Status KafkaSource::RestoreRescaled(const std::vector<std::string>& states) {
  const std::string where = "kafka source '" + task_ + "': the restored checkpoint";
  std::vector<KafkaPosition> old(states.size());
  std::vector<TopicOffsets> stops(states.size());
  for (size_t i = 0; i < states.size(); ++i) {
    runtime::StateReader reader(states[i]);
    Result<KafkaState> read = ReadKafkaState(start_, reader);
    if (!read.ok()) return read.status().WithContext(where + ", old subtask " + std::to_string(i));
    old[i].next = std::move(read->next);
    old[i].parallelism = read->written_with;
    stops[i] = std::move(read->stop);
  }
  Result<TopicOffsets> next = RedistributeKafkaPositions(old, subtask_, parallelism_);
  if (!next.ok()) return next.status().WithContext(where);
  std::vector<const TopicOffsets*> stop_parts;
  for (const TopicOffsets& s : stops) stop_parts.push_back(&s);
  Result<TopicOffsets> stop = MergeOwnedSplits(stop_parts, subtask_, parallelism_, "end offset");
  if (!stop.ok()) return stop.status().WithContext(where);
  position_.next = std::move(*next);
  stop_ = std::move(*stop);
  return Status::OK();
}

Status KafkaSource::Restore(runtime::StateReader& state) {
  if (config_.group_member) return Status::OK();  // the group and the table decide
  FLOE_ASSIGN_OR_RAISE(KafkaState read, ReadKafkaState(start_, state));
  if (read.written_with != parallelism_) {
    // The runtime calls Restore only when the checkpoint holds as many subtasks as this run.
    return Status::Corruption("kafka source '" + task_ +
                              "': the restored checkpoint's position was written with source "
                              "parallelism " +
                              std::to_string(read.written_with) + " but the checkpoint holds " +
                              std::to_string(parallelism_) + " subtasks' positions");
  }
  position_.next = std::move(read.next);
  stop_ = std::move(read.stop);
  return Status::OK();
}

Result<TopicOffsets> KafkaSource::TablePositions(const SourceStart::Start& from) const {
  const std::string where =
      "kafka source '" + task_ + "': the table's positions (floe.source-offsets)";
  std::vector<KafkaPosition> old;
  for (const std::string& json : from.table_positions) {
    Result<KafkaPosition> p = KafkaPosition::FromJson(json);
    if (!p.ok()) return p.status().WithContext(where);
    old.push_back(std::move(*p));
  }
  if (old.empty()) {  // an override for this task without one for "<vertex>/0"
    return Status::Corruption(where + " lack the vertex's subtask 0 (holds this task's only)");
  }
  Result<TopicOffsets> mine = RedistributeKafkaPositions(old, subtask_, parallelism_);
  if (!mine.ok()) return mine.status().WithContext(where);
  if (old.size() != parallelism_) {
    LogInfo("%s: written with source parallelism %zu, redistributed over %u subtasks",
            where.c_str(), old.size(), parallelism_);
  }
  return mine;
}

Result<kafka::PartitionOffsets> KafkaSource::StartupOffsets(
    const std::string& topic, const std::vector<int32_t>& partitions) {
  std::chrono::milliseconds timeout(config_.request_timeout_ms);
  kafka::PartitionOffsets out;
  if (partitions.empty()) return out;
  auto earliest = [&](int32_t p) -> Status {
    FLOE_ASSIGN_OR_RAISE(auto wm, consumer_->Watermarks(topic, p, timeout));
    out[p] = wm.first;
    return Status::OK();
  };
  auto latest = [&](int32_t p) -> Status {
    FLOE_ASSIGN_OR_RAISE(auto wm, consumer_->Watermarks(topic, p, timeout));
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
                           consumer_->Committed(topic, partitions, timeout));
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
              topic + "' partition " + std::to_string(p) +
              "; set 'properties.auto.offset.reset' = 'earliest' or 'latest' to start anyway");
        }
      }
      break;
    }
    case KafkaStartupMode::kTimestamp: {
      FLOE_ASSIGN_OR_RAISE(
          kafka::PartitionOffsets found,
          consumer_->OffsetsForTimes(topic, partitions, config_.startup_timestamp_ms, timeout));
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
  if (config_.group_member) {
    // The group gives partitions during Poll (OnGroupChange); nothing is restored.
    if (config_.watermark) {
      watermarks_ = std::make_unique<runtime::WatermarkGenerator>(
          config_.watermark->delay_ms * 1000, config_.idle_timeout);
      watermarks_->SetEmitInterval(config_.watermark_interval);
    }
    Status subscribed = consumer_->Subscribe(config_.topics);
    return subscribed.ok() ? subscribed : subscribed.WithContext("kafka source '" + task_ + "'");
  }
  std::chrono::milliseconds timeout(config_.request_timeout_ms);
  // The splits this subtask owns, per topic.
  std::map<std::string, std::vector<int32_t>> owned;
  for (const std::string& topic : config_.topics) {
    FLOE_ASSIGN_OR_RAISE(int32_t count, consumer_->PartitionCount(topic, timeout));
    std::vector<int32_t>& mine = owned[topic];
    for (int32_t p = 0; p < count; ++p) {
      if (KafkaSplitOwner(topic, p, parallelism_) == subtask_) mine.push_back(p);
    }
  }

  SourceStart::Start from = start_.Resolve();
  if (from.origin == StartOrigin::kTable) {
    FLOE_ASSIGN_OR_RAISE(position_.next, TablePositions(from));
  }
  const bool have_position = from.origin != StartOrigin::kStartupMode;
  KafkaPosition start;
  start.parallelism = parallelism_;
  for (const auto& [topic, partitions] : owned) {
    kafka::PartitionOffsets& next = start.next[topic];
    if (have_position) {
      auto known = position_.next.find(topic);
      for (int32_t p : partitions) {
        if (known != position_.next.end() && known->second.count(p) != 0) {
          next[p] = known->second.at(p);
        } else {
          // A topic or partition added since: from its beginning.
          FLOE_ASSIGN_OR_RAISE(auto wm, consumer_->Watermarks(topic, p, timeout));
          next[p] = wm.first;
        }
      }
    } else {
      FLOE_ASSIGN_OR_RAISE(next, StartupOffsets(topic, partitions));
    }
  }
  // A restored topic the table no longer reads is dropped (with its position).
  position_ = std::move(start);
  // Where reading starts and why, so a restore's offsets can be checked against the log.
  start_.LogStart(from, position_.ToJson());
  if (config_.watermark) {
    // One watermark per owned partition, combined (Flink's per-partition watermarks).
    watermarks_ = std::make_unique<runtime::WatermarkGenerator>(config_.watermark->delay_ms * 1000,
                                                                config_.idle_timeout);
    std::vector<std::string> splits;
    for (const auto& [topic, partitions] : owned) {
      for (int32_t p : partitions) splits.push_back(topic + "/" + std::to_string(p));
    }
    watermarks_->SetSplits(splits);
    watermarks_->SetEmitInterval(config_.watermark_interval);
  }
  if (config_.bounded_latest) {
    // End offsets are those seen when the job first started; a restore keeps them.
    for (const auto& [topic, partitions] : owned) {
      kafka::PartitionOffsets& stop = stop_[topic];
      for (int32_t p : partitions) {
        if (stop.count(p) != 0) continue;
        FLOE_ASSIGN_OR_RAISE(auto wm, consumer_->Watermarks(topic, p, timeout));
        stop[p] = wm.second;
      }
    }
  }
  std::map<std::string, kafka::PartitionOffsets> assign;
  for (const auto& [topic, offsets] : position_.next) {
    for (const auto& [p, next] : offsets) {
      if (!Done(topic, p)) assign[topic][p] = next;
    }
  }
  if (assign.empty()) {
    // Nothing to read (no split owned, or all at their end): a bounded subtask is done; an
    // unbounded one idles, still serving checkpoints.
    ended_ = config_.bounded_latest;
    return Status::OK();
  }
  Status assigned = consumer_->AssignAll(assign);
  return assigned.ok() ? assigned : assigned.WithContext("kafka source '" + task_ + "'");
}

bool KafkaSource::Done(const std::string& topic, int32_t partition) const {
  if (!config_.bounded_latest) return false;
  auto stops = stop_.find(topic);
  auto nexts = position_.next.find(topic);
  if (stops == stop_.end()) return true;
  auto stop = stops->second.find(partition);
  if (stop == stops->second.end()) return true;
  if (nexts == position_.next.end()) return false;
  auto next = nexts->second.find(partition);
  return next != nexts->second.end() && next->second >= stop->second;
}

bool KafkaSource::AllDone() const {
  for (const auto& [topic, offsets] : position_.next) {
    for (const auto& [p, next] : offsets) {
      if (!Done(topic, p)) return false;
    }
  }
  return true;
}

// The json decoder prefixes its errors with "<source>:<line>: "; a Kafka record is one line,
// and its topic/partition/offset replace that prefix.
constexpr std::string_view kValueSource = "value";
constexpr std::string_view kValuePrefix = "value:1: ";

Status KafkaSource::ReadRecord(kafka::ConsumedMessage& m, std::string_view topic,
                               std::vector<PartitionRef>* row_splits) {
  if (m.value_is_null()) return Status::OK();  // tombstone: nothing to append
  std::string_view value = m.value();
  if (registry_ != nullptr || avro_plain_ != nullptr) {
    const size_t rows_before = rows_.num_rows();
    FLOE_RETURN_NOT_OK(ReadValue(value, topic, m));
    NoteRows(CoordinatesOf(m, topic), rows_before, rows_.num_rows(), row_splits);
    return Status::OK();
  }
  // One record is one JSON object even when pretty-printed: the decoder reads lines, and a raw
  // line break can only be whitespace in valid JSON (inside strings it must be escaped). Most
  // records have none: they are found at memchr's pace, not byte by byte.
  const size_t begin = held_values_.size();
  held_values_.append(value);
  if (std::memchr(value.data(), '\n', value.size()) != nullptr ||
      std::memchr(value.data(), '\r', value.size()) != nullptr) {
    for (size_t i = begin; i < held_values_.size(); ++i) {
      char& c = held_values_[i];
      if (c == '\n' || c == '\r') c = ' ';
    }
  }
  if (debezium_ == nullptr && !config_.ignore_parse_errors) {
    // The poll's JSON records decode together, one per line (DecodeHeld): one decoder call per
    // poll, not per record.
    held_values_.push_back('\n');
    held_.push_back(HeldRecord{CoordinatesOf(m, topic), begin, value.size()});
    if (config_.bad_records != BadRecordPolicy::kFail) held_messages_.push_back(std::move(m));
    return Status::OK();
  }
  // A debezium record may be several rows or none; a skipped bad record none: one at a time.
  const size_t rows_before = rows_.num_rows();
  Status st = ReadValue(std::string_view(held_values_).substr(begin), topic, m);
  held_values_.resize(begin);
  FLOE_RETURN_NOT_OK(st);
  NoteRows(CoordinatesOf(m, topic), rows_before, rows_.num_rows(), row_splits);
  return Status::OK();
}

Status KafkaSource::DecodeHeld(std::vector<PartitionRef>* row_splits) {
  if (held_.empty()) return Status::OK();
  const size_t rows_before = rows_.num_rows();
  Status st = decoder_->Decode(held_values_, kValueSource, 1, &rows_);
  if (st.ok() && rows_.num_rows() - rows_before == held_.size()) {
    for (size_t k = 0; k < held_.size(); ++k) {
      NoteRows(held_[k].record, rows_before + k, rows_before + k + 1, row_splits);
    }
  } else {
    // A record that is not one JSON object on its own (a bad one, a blank value, a byte-order
    // mark): record by record again, for its rows and its exact error.
    rows_.Truncate(rows_before);
    for (size_t k = 0; k < held_.size(); ++k) {
      const HeldRecord& r = held_[k];
      const size_t before = rows_.num_rows();
      const std::string_view value = std::string_view(held_values_).substr(r.begin, r.size);
      if (k < held_messages_.size()) {
        FLOE_RETURN_NOT_OK(ReadValue(value, r.record.topic, held_messages_[k]));
      } else {
        FLOE_RETURN_NOT_OK(DecodeValue(value, r.record.topic, r.record.partition, r.record.offset));
      }
      NoteRows(r.record, before, rows_.num_rows(), row_splits);
    }
  }
  held_.clear();
  held_values_.clear();
  held_messages_.clear();
  return Status::OK();
}

KafkaSource::RecordCoordinates KafkaSource::CoordinatesOf(const kafka::ConsumedMessage& m,
                                                          std::string_view topic) {
  return RecordCoordinates{topic, m.partition(), m.offset(), m.timestamp_ms(), m.timestamp_type()};
}

void KafkaSource::NoteRows(const RecordCoordinates& record, size_t rows_before, size_t rows,
                           std::vector<PartitionRef>* row_splits) {
  const std::string_view topic = record.topic;
  const int32_t partition = record.partition;
  for (size_t slot = 0; slot < config_.metadata.size() && rows > rows_before; ++slot) {
    Column& column = metadata_[slot];
    for (size_t r = rows_before; r < rows; ++r) {
      switch (config_.metadata[slot].key) {
        case KafkaSourceConfig::MetadataKey::kTopic:
          column.AppendBytes(topic);
          break;
        case KafkaSourceConfig::MetadataKey::kPartition:
          column.Append<int32_t>(partition);
          break;
        case KafkaSourceConfig::MetadataKey::kOffset:
          column.Append<int64_t>(record.offset);
          break;
        case KafkaSourceConfig::MetadataKey::kTimestamp:
          if (record.timestamp_ms) {
            column.Append<int64_t>(*record.timestamp_ms * 1000);  // TIMESTAMP_LTZ: micros
          } else {
            column.AppendNull();
          }
          break;
        case KafkaSourceConfig::MetadataKey::kTimestampType:
          column.AppendBytes(record.timestamp_type);
          break;
      }
    }
  }
  if (watermarks_ && row_splits != nullptr && rows > rows_before) {
    row_splits->resize(std::max(row_splits->size(), rows), PartitionRef(topic, partition));
  }
  if (!config_.group_member || rows <= rows_before) return;
  // Records come in runs of one partition: its claim's split is looked up once per run.
  if (!split_cache_ || split_cache_->topic != topic || split_cache_->partition != partition) {
    auto claim = claims_.find({std::string(topic), partition});
    split_cache_ = SplitCache{std::string(topic), partition,
                              claim == claims_.end() ? std::string() : ClaimSplit(claim->second)};
  }
  for (size_t r = rows_before; r < rows; ++r) splits_.AppendBytes(split_cache_->split);
}

Status KafkaSource::DecodeValue(std::string_view value, std::string_view topic, int32_t partition,
                                int64_t offset) {
  const bool avro = registry_ != nullptr || avro_plain_ != nullptr;
  Status st = avro                   ? DecodeBinary(value)
              : debezium_ != nullptr ? debezium_->Decode(value, &rows_, &kinds_)
                                     // A constant source name: the record's coordinates are
                                     // only needed on the error path.
                                     : decoder_->Decode(value, kValueSource, 1, &rows_);
  if (st.ok()) return st;
  std::string_view message = st.message();
  if (message.substr(0, kValuePrefix.size()) == kValuePrefix)
    message.remove_prefix(kValuePrefix.size());
  return Status(
      st.code(),
      "kafka record topic '" + std::string(topic) + "' partition " + std::to_string(partition) +
          " offset " + std::to_string(offset) + ": " + std::string(message) +
          (avro ? "; value starts (hex) " + HexExcerpt(value) : "; record: " + Excerpt(value)));
}

Status KafkaSource::ReadValue(std::string_view value, std::string_view topic,
                              const kafka::ConsumedMessage& m) {
  const size_t rows_before = rows_.num_rows();
  const size_t kinds_before = kinds_.size();
  Status st = DecodeValue(value, topic, m.partition(), m.offset());
  if (st.ok() || config_.bad_records == BadRecordPolicy::kFail ||
      st.code() == StatusCode::kIOError || st.code() == StatusCode::kUnavailable) {
    return st;
  }
  rows_.Truncate(rows_before);
  kinds_.Truncate(kinds_before);
  errors_in_->Add(1);
  // The first hundred in full, then one line per 10,000: the metric counts them all.
  if (bad_records_logged_ < 100 || bad_records_logged_ % 10000 == 0) {
    LogWarn("kafka source '%s': %s a bad record ('scan.bad-records'): %s", task_.c_str(),
            config_.bad_records == BadRecordPolicy::kSkip ? "skipped" : "dead-lettered",
            st.message().c_str());
  }
  ++bad_records_logged_;
  if (config_.bad_records != BadRecordPolicy::kDeadLetter) return Status::OK();
  const auto headers = m.Headers();
  DeadLetter letter;
  letter.source_table = config_.table_name;
  letter.topic = topic;
  letter.partition = m.partition();
  letter.offset = m.offset();
  letter.timestamp_ms = m.timestamp_ms();
  if (!m.key_is_null()) letter.key = m.key();
  if (!m.value_is_null()) letter.value = m.value();
  letter.headers = &headers;
  letter.error = st.message();
  dead_letters_.Append(letter);
  return Status::OK();
}

Status KafkaSource::DecodeBinary(std::string_view value) {
  if (avro_plain_ != nullptr) return avro_plain_->Decode(value, &rows_);
  FLOE_ASSIGN_OR_RAISE(ConfluentFramed framed, ParseConfluentFraming(value));
  if (config_.format == KafkaFormat::kProtobufConfluent) {
    FLOE_RETURN_NOT_OK(protobuf::ReadMessageIndexes(&framed.datum, &protobuf_indexes_));
    if (last_protobuf_ == nullptr || last_protobuf_key_.first != framed.schema_id ||
        last_protobuf_key_.second != protobuf_indexes_) {
      auto key = std::make_pair(framed.schema_id, protobuf_indexes_);
      auto it = protobuf_decoders_.find(key);
      if (it == protobuf_decoders_.end()) {
        FLOE_ASSIGN_OR_RAISE(auto schema, registry_->ProtobufSchemaById(framed.schema_id));
        const std::string what = "writer schema id " + std::to_string(framed.schema_id);
        Result<const protobuf::ProtoMessage*> message = schema->MessageAt(protobuf_indexes_);
        if (!message.ok()) return message.status().WithContext(what);
        auto decoder =
            config_.undeclared_fields
                ? protobuf::MessageDecoder::MakeCapturing(schema, **message, config_.schema)
                : protobuf::MessageDecoder::Make(schema, **message, config_.schema);
        if (decoder.ok() && (*decoder)->captured() != nullptr) {
          Status agreed = AgreeOnCapturedTypes(*(*decoder)->captured());
          if (!agreed.ok()) decoder = agreed;
        }
        if (!decoder.ok()) {
          return decoder.status().WithContext(what + " against the table's columns");
        }
        it = protobuf_decoders_.emplace(key, std::move(*decoder)).first;
      }
      last_protobuf_ = it->second.get();
      last_protobuf_key_ = std::move(key);
    }
    return last_protobuf_->Decode(framed.datum, &rows_);
  }
  if (config_.format == KafkaFormat::kDebeziumAvroConfluent) {
    auto it = debezium_avro_decoders_.find(framed.schema_id);
    if (it == debezium_avro_decoders_.end()) {
      FLOE_ASSIGN_OR_RAISE(auto writer, registry_->AvroSchemaById(framed.schema_id));
      auto decoder = DebeziumAvroDecoder::Make(writer, config_.schema);
      if (!decoder.ok()) {
        return decoder.status().WithContext("writer schema id " + std::to_string(framed.schema_id));
      }
      it = debezium_avro_decoders_.emplace(framed.schema_id, std::move(*decoder)).first;
    }
    return it->second->Decode(framed.datum, &rows_, &kinds_);
  }
  auto it = avro_decoders_.find(framed.schema_id);
  if (it == avro_decoders_.end()) {
    FLOE_ASSIGN_OR_RAISE(auto writer, registry_->AvroSchemaById(framed.schema_id));
    auto decoder = config_.undeclared_fields
                       ? avro::RecordDecoder::MakeCapturing(writer, config_.schema)
                       : avro::RecordDecoder::Make(writer, config_.schema);
    if (decoder.ok() && (*decoder)->captured() != nullptr) {
      Status agreed = AgreeOnCapturedTypes(*(*decoder)->captured());
      if (!agreed.ok()) decoder = agreed;
    }
    if (!decoder.ok()) {
      return decoder.status().WithContext("writer schema id " + std::to_string(framed.schema_id) +
                                          " against the table's columns");
    }
    it = avro_decoders_.emplace(framed.schema_id, std::move(*decoder)).first;
  }
  return it->second->Decode(framed.datum, &rows_);
}

Status KafkaSource::AgreeOnCapturedTypes(const BatchSchema& captured) {
  for (const Field& f : captured.fields) {
    auto [it, added] = captured_types_.emplace(f.name, f.type);
    if (added || UndeclaredFitsColumn(f.type, it->second)) continue;
    if (UndeclaredFitsColumn(it->second, f.type)) {  // widened (int to long): the column widens
      it->second = f.type;
      continue;
    }
    return Status::InvalidArgument("undeclared field '" + f.name + "' is " + SqlTypeName(f.type) +
                                   " in this writer schema but " + SqlTypeName(it->second) +
                                   " in an earlier one, and an Iceberg column cannot change so");
  }
  return Status::OK();
}

RecordBatch KafkaSource::TakeBatch() {
  RecordBatch batch;
  if (config_.changelog() || config_.group_member || !config_.metadata.empty()) {
    std::vector<Column> columns;
    columns.reserve(rows_.num_columns() + config_.metadata.size() + 2);
    // The declared columns in order: decoded ones from rows_, metadata ones from metadata_.
    size_t decoded = 0;
    for (size_t slot = 0; slot <= config_.metadata.size(); ++slot) {
      const size_t until = slot < config_.metadata.size() ? config_.metadata[slot].index : SIZE_MAX;
      while (decoded < rows_.num_columns() && columns.size() < until) {
        columns.push_back(std::move(rows_.mutable_column(decoded++)));
      }
      if (slot < config_.metadata.size()) {
        const DataType type = metadata_[slot].type();
        columns.push_back(std::exchange(metadata_[slot], Column(type)));
      }
    }
    if (config_.changelog()) columns.push_back(std::exchange(kinds_, Column(DataType::String())));
    if (config_.group_member) {
      columns.push_back(std::exchange(splits_, Column(DataType::String())));
    }
    batch = RecordBatch(config_.output_schema, std::move(columns));
  } else {
    batch = std::move(rows_);
  }
  rows_ = RecordBatch(config_.schema);
  return batch;
}

Status KafkaSource::EmitBatch(runtime::Collector& out) {
  if (rows_.num_rows() == 0) return Status::OK();
  return out.Emit(TakeBatch());
}

Result<int64_t> KafkaSource::EmitWithWatermarks(const std::vector<PartitionRef>& row_splits,
                                                bool input_quiet, runtime::Collector& out) {
  const RecordBatch batch = rows_.num_rows() > 0 ? TakeBatch() : RecordBatch();
  // The event time of each row: the table's column, or its computed column evaluated here, on
  // the declared columns (metadata ones included; the batch's extra columns come after them).
  std::optional<Column> computed;
  if (batch.num_rows() == 0) {
    computed.emplace(DataType::Timestamp());
  } else if (config_.watermark->computed != nullptr) {
    FLOE_ASSIGN_OR_RAISE(computed, config_.watermark->computed->Compute(batch));
  }
  const Column& time = computed ? *computed : batch.column(config_.watermark->column);
  const size_t timed_rows = std::min({time.size(), row_splits.size(), batch.num_rows()});
  std::vector<int64_t> times(timed_rows, INT64_MIN);  // INT64_MIN: NULL
  for (size_t r = 0; r < timed_rows; ++r) {
    if (!time.IsNull(r)) times[r] = time.Get<int64_t>(r);
  }
  // Per record, in order: the batch is cut after each record that makes a watermark due.
  int64_t newest_event = INT64_MIN;
  size_t piece_start = 0;
  std::string split;
  const PartitionRef* split_of = nullptr;
  for (size_t r = 0; r < timed_rows; ++r) {
    if (times[r] == INT64_MIN) continue;
    newest_event = std::max(newest_event, times[r]);
    if (split_of == nullptr || *split_of != row_splits[r]) {
      split_of = &row_splits[r];
      split = std::string(split_of->first) + "/" + std::to_string(split_of->second);
    }
    std::optional<runtime::Watermark> w = watermarks_->OnEvent(split, times[r]);
    if (!w) continue;
    FLOE_RETURN_NOT_OK(runtime::EmitRowRange(batch, piece_start, r + 1, out));
    piece_start = r + 1;
    last_watermark_micros_ = w->micros;
    FLOE_RETURN_NOT_OK(out.EmitWatermark(*w));
  }
  FLOE_RETURN_NOT_OK(runtime::EmitRowRange(batch, piece_start, batch.num_rows(), out));
  runtime::WatermarkGenerator::Update u = watermarks_->Poll(input_quiet);
  if (u.idle || u.watermark) {
    LogDebug("kafka source '%s': %s%s", task_.c_str(),
             u.idle ? (*u.idle ? "idle " : "active ") : "",
             u.watermark ? ("watermark " + std::to_string(u.watermark->micros)).c_str() : "");
  }
  if (u.watermark) {
    last_watermark_micros_ = u.watermark->micros;
    FLOE_RETURN_NOT_OK(out.EmitWatermark(*u.watermark));
  }
  if (u.idle) FLOE_RETURN_NOT_OK(out.EmitWatermarkStatus(*u.idle));
  return newest_event;
}

Result<std::optional<kafka::ConsumedMessage>> KafkaSource::NextMessage(
    std::chrono::milliseconds wait) {
  // A group member polls one message at a time: a rebalance must fall between two of them.
  if (!config_.group_member) {
    if (fetched_next_ == fetched_.size()) {
      fetched_.clear();
      fetched_next_ = 0;
      FLOE_RETURN_NOT_OK(consumer_->PollWaiting(kFetchedMax, &fetched_));
    }
    if (fetched_next_ < fetched_.size()) {
      return std::optional<kafka::ConsumedMessage>(std::move(fetched_[fetched_next_++]));
    }
  }
  return consumer_->Poll(wait);
}

Result<runtime::SourceStatus> KafkaSource::Poll(runtime::Collector& out) {
  FLOE_RETURN_NOT_OK(EnsureStarted());
  if (config_.group_member) FLOE_RETURN_NOT_OK(CheckFences());
  CommitGroupOffsets(/*sync=*/false);  // a sink may have reported since the last call
  if (ended_) return runtime::SourceStatus::kEnd;
  size_t records = 0;
  size_t bytes = 0;
  std::chrono::milliseconds wait(100);
  // The partition of each row read (for the watermark generator, record by record).
  std::vector<PartitionRef> row_splits;
  while (records < config_.batch_rows) {
    FLOE_ASSIGN_OR_RAISE(std::optional<kafka::ConsumedMessage> m, NextMessage(wait));
    wait = std::chrono::milliseconds(0);
    // The group changed claims during that poll: they go out after the rows read before it and
    // ahead of any row of a new claim.
    if (!pending_claims_.empty()) {
      FLOE_RETURN_NOT_OK(DecodeHeld(&row_splits));
      FLOE_RETURN_NOT_OK(EmitClaimChanges(row_splits, out));
    }
    if (!m.has_value()) break;
    int32_t p = m->partition();
    std::string_view topic = m->topic();
    auto offsets = position_.next.find(topic);
    if (m->kind() == kafka::ConsumedMessage::Kind::kPartitionEnd) {
      if (offsets != position_.next.end()) {
        auto it = offsets->second.find(p);
        if (it != offsets->second.end()) it->second = std::max(it->second, m->offset());
      }
    } else if (m->kind() != kafka::ConsumedMessage::Kind::kRecord) {
      if (m->retryable()) continue;  // librdkafka retries on its own
      return m->error("consume topic '" + std::string(topic) + "' partition " + std::to_string(p) +
                      " at offset " + std::to_string(m->offset()));
    } else {
      if (offsets == position_.next.end()) continue;
      auto it = offsets->second.find(p);
      if (it == offsets->second.end() || m->offset() < it->second || Done(offsets->first, p)) {
        continue;
      }
      ++records;
      bytes += m->key().size() + m->value().size();
      it->second = m->offset() + 1;  // before ReadRecord, which may keep the message
      FLOE_RETURN_NOT_OK(ReadRecord(*m, offsets->first, &row_splits));
    }
    if (config_.bounded_latest && AllDone()) {
      ended_ = true;
      break;
    }
  }
  FLOE_RETURN_NOT_OK(DecodeHeld(&row_splits));
  bytes_in_->Add(static_cast<int64_t>(bytes));  // once per poll, not per record
  int64_t newest_event = INT64_MIN;
  if (watermarks_) {
    FLOE_ASSIGN_OR_RAISE(newest_event, EmitWithWatermarks(row_splits, records == 0, out));
  } else {
    FLOE_RETURN_NOT_OK(EmitBatch(out));
  }
  // Before the poll returns, so a barrier finds them written with the rows they left.
  if (dead_letters_.size() > 0) FLOE_RETURN_NOT_OK(out.EmitSide(1, dead_letters_.Take()));
  UpdateMetrics(records > 0, newest_event);
  if (records > 0) return runtime::SourceStatus::kMore;
  return ended_ ? runtime::SourceStatus::kEnd : runtime::SourceStatus::kIdle;
}

void KafkaSource::UpdateMetrics(bool emitted, int64_t newest_event_micros) {
  if (metrics_ == nullptr || consumer_ == nullptr) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  if (emitted || last_record_millis_ == 0) last_record_millis_ = now;
  int64_t pending = 0;
  for (const auto& [topic, offsets] : position_.next) {
    for (const auto& [partition, next] : offsets) {
      auto [it, fresh] = split_metrics_.try_emplace({topic, partition});
      if (fresh) {
        const runtime::MetricLabels labels = {{"topic", topic},
                                              {"partition", std::to_string(partition)}};
        it->second.offset = &metrics_->Gauge("KafkaSourceReader_currentOffset", labels);
        it->second.lag = &metrics_->Gauge("KafkaSourceReader_records_lag", labels);
      }
      it->second.offset->Set(next);
      if (std::optional<int64_t> high = consumer_->CachedHighWatermark(topic, partition)) {
        const int64_t lag = std::max<int64_t>(0, *high - next);
        it->second.lag->Set(lag);
        pending += lag;
      }
    }
  }
  pending_records_->Set(pending);
  idle_time_->Set(now - last_record_millis_);
  if (newest_event_micros != INT64_MIN) {
    emit_event_time_lag_->Set(now - newest_event_micros / 1000);
  }
  if (last_watermark_micros_ != INT64_MIN && last_watermark_micros_ != INT64_MAX) {
    watermark_lag_->Set(now - last_watermark_micros_ / 1000);
  }
}

Status KafkaSource::SnapshotPosition(runtime::CheckpointId id, runtime::StateWriter& state) {
  FLOE_RETURN_NOT_OK(EnsureStarted());
  start_.BeginSnapshot(state);
  state.PutU32(position_.parallelism);
  state.PutU32(static_cast<uint32_t>(position_.next.size()));
  for (const auto& [topic, offsets] : position_.next) {
    state.PutString(topic);
    state.PutU32(static_cast<uint32_t>(offsets.size()));
    auto stops = stop_.find(topic);
    for (const auto& [p, next] : offsets) {
      state.PutU32(static_cast<uint32_t>(p));
      state.PutI64(next);
      int64_t stop = -1;
      if (stops != stop_.end()) {
        auto it = stops->second.find(p);
        if (it != stops->second.end()) stop = it->second;
      }
      state.PutI64(stop);
    }
  }
  if (config_.group_member) {
    // Positions live in the table; the group's offsets are not the job's.
    start_.Record(id, ClaimsToJson(Claims()));
    return Status::OK();
  }
  start_.Record(id, position_.ToJson());
  if (!config_.group_id.empty()) to_commit_[id] = position_.next;
  return Status::OK();
}

void KafkaSource::CommitGroupOffsets(bool sync) {
  if (to_commit_.empty() || to_commit_.begin()->first.value > completed_) return;
  // Checkpoint N's offsets are published once N completed AND every committing sink of the job
  // committed N (SourcePositionBoard: the Iceberg committer, exactly-once Kafka sinks). Before
  // that a fresh job started from group offsets would skip records whose transaction or table
  // commit had not happened yet. No committing sink: at completion.
  uint64_t limit = completed_;
  if (positions_ != nullptr) {
    if (std::optional<uint64_t> all = positions_->CommittedByAll()) {
      limit = std::min(limit, *all);
    }
  }
  auto last = to_commit_.upper_bound(runtime::CheckpointId(limit));
  if (last == to_commit_.begin()) return;
  runtime::CheckpointId id = std::prev(last)->first;
  TopicOffsets offsets = std::move(std::prev(last)->second);
  to_commit_.erase(to_commit_.begin(), last);
  ++group_offset_commits_;
  // Not the job's positions (those are in checkpoints and tables): a failure is logged, never
  // fails the job; the next checkpoint's commit supersedes it.
  for (const auto& [topic, next] : offsets) {
    Status st = sync ? consumer_->CommitSync(topic, next) : consumer_->CommitAsync(topic, next);
    if (!st.ok()) {
      LogWarn(
          "kafka source '%s': committing group offsets of checkpoint %s, topic "
          "'%s' failed (not used by the job's own restores): %s",
          task_.c_str(), id.ToString().c_str(), topic.c_str(), st.ToString().c_str());
    }
  }
}

Status KafkaSource::OnCheckpointComplete(runtime::CheckpointId id) {
  completed_ = std::max(completed_, id.value);
  // After the end (a bounded job) wait for the outcome: the task closes soon.
  CommitGroupOffsets(/*sync=*/ended_);
  return Status::OK();
}

Status KafkaSource::Close() {
  // The last completed checkpoint (a bounded job's final one, a stop-with-savepoint's savepoint)
  // may still wait for the sinks' commits, which run on their own task threads and never wait
  // for this one: wait for their reports, bounded by request_timeout_ms (30 s), and give up at once
  // on cancellation (a failed task) or when a sink closed without committing it (then its offsets
  // must not be published).
  if (consumer_ != nullptr && !to_commit_.empty() &&
      to_commit_.begin()->first.value <= completed_ &&
      (cancel_flag_ == nullptr || !cancel_flag_->load())) {
    runtime::CheckpointId wanted =
        std::prev(to_commit_.upper_bound(runtime::CheckpointId(completed_)))->first;
    if (positions_ != nullptr &&
        !positions_->WaitCommittedByAll(
            wanted, std::chrono::milliseconds(config_.request_timeout_ms), cancel_flag_)) {
      LogWarn(
          "kafka source '%s': the sinks did not report checkpoint %s committed "
          "within %lld ms (or a sink closed without committing it, or the job is "
          "cancelled); its group offsets are not committed",
          task_.c_str(), wanted.ToString().c_str(),
          static_cast<long long>(config_.request_timeout_ms));
    }
    CommitGroupOffsets(/*sync=*/true);
  }
  if (consumer_ != nullptr && config_.group_member && started_) {
    // Leaving at once hands the partitions on without waiting for the session timeout.
    Status left = consumer_->Close();
    if (!left.ok()) {
      LogWarn("kafka source '%s': leaving the group: %s", task_.c_str(), left.ToString().c_str());
    }
  }
  fetched_.clear();  // librdkafka's messages go back before its handle
  consumer_.reset();
  return Status::OK();
}

Result<runtime::VertexId> AddKafkaSource(runtime::JobGraph& graph, const std::string& name,
                                         const TableDescriptor& table, const JobContext& context,
                                         uint32_t default_parallelism) {
  FLOE_ASSIGN_OR_RAISE(KafkaSourceConfig config, MakeKafkaSourceConfig(table));
  if (config.idle_timeout.count() == 0) {
    if (auto it = context.config.find("table.exec.source.idle-timeout");
        it != context.config.end()) {
      Result<std::chrono::milliseconds> idle = runtime::ParseDuration(it->second);
      if (!idle.ok()) {
        return Status::InvalidArgument(
            "'table.exec.source.idle-timeout' must be a duration "
            "such as '30 s', got '" +
            it->second + "'");
      }
      config.idle_timeout = *idle;
    }
  }
  config.watermark_interval = context.auto_watermark_interval;
  if (context.scale_out) {
    Status member = EnableGroupMember(
        config,
        [scale_out = context.scale_out](
            const iceberg::SourcePartition& p) -> Result<iceberg::PartitionStart> {
          if (!scale_out->table_start) {
            return Status::Internal("scale-out: no sink keeps the partitions' positions");
          }
          return scale_out->table_start(p);
        });
    if (!member.ok()) return member.WithContext("table '" + table.name + "'");
  }
  uint32_t parallelism = config.parallelism != 0 ? config.parallelism : default_parallelism;
  if (parallelism > graph.max_parallelism()) {
    return Status::InvalidArgument(
        "table '" + table.name + "': source parallelism " + std::to_string(parallelism) +
        " exceeds 'pipeline.max-parallelism' = " + std::to_string(graph.max_parallelism()));
  }
  return AddSourceVertex<KafkaSource>(graph, name, std::max<uint32_t>(1, parallelism),
                                      std::move(config), context.positions);
}

const std::vector<std::pair<std::string, std::string>>& KafkaMetadataKeys() {
  static const std::vector<std::pair<std::string, std::string>> kKeys = {
      {"topic", "STRING"},
      {"partition", "INT"},
      {"offset", "BIGINT"},
      {"timestamp", "TIMESTAMP_LTZ(3)"},
      {"timestamp-type", "STRING"}};
  return kKeys;
}

Connector KafkaConnector() {
  Connector c;
  c.name = "kafka";
  c.options = kKafkaSourceOptions;
  for (const std::string& o : KafkaSinkOptionNames()) {
    if (std::find(c.options.begin(), c.options.end(), o) == c.options.end()) c.options.push_back(o);
  }
  c.options.push_back("properties.");
  // Topics only: brokers move, and group ids, rates and formats do not change the stream.
  c.identity_options = {"topic"};
  c.add_source = [](const SourceRequest& r) {
    return AddKafkaSource(*r.graph, r.vertex_name, *r.table, *r.context,
                          r.context->default_parallelism);
  };
  c.emits_changelog = IsKafkaChangelogSource;
  c.generates_watermarks = true;  // per partition, from the table's WATERMARK
  c.source_metadata = KafkaMetadataKeys();
  c.gives_undeclared_fields = [](const TableDescriptor& t) {
    const std::string format = ValueFormat(t);
    return format == "json" || format == "avro-confluent" || format == "protobuf-confluent";
  };
  c.add_sink = [](const SinkRequest& r) -> Result<AddedSink> {
    KafkaSinkJobSettings settings;
    settings.checkpointing = r.context->checkpointing;
    settings.restart_delay_ms = r.context->restart_delay_ms;
    settings.positions = r.context->positions;
    FLOE_RETURN_NOT_OK(AddKafkaSink(*r.graph, r.input, r.vertex_name, *r.table, settings,
                                    r.context->default_parallelism));
    AddedSink added;
    FLOE_ASSIGN_OR_RAISE(KafkaSinkConfig config, MakeKafkaSinkConfig(*r.table, settings));
    if (config.guarantee == KafkaDeliveryGuarantee::kExactlyOnce) {
      added.exclusive = "transactional id prefix '" + config.transactional_id_prefix + "'";
    }
    return added;
  };
  return c;
}

}  // namespace floe::connectors
