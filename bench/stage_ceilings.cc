// Each speed path's stages alone, on the path's own input (issue 25: beside each stage of the
// profile, its ceiling measured alone): what the library a stage is built on reaches with nothing
// around it, no columns built and no threads handing batches on.
//
//   stage_ceiling_bench file FILE [KEY_FIELD TIME_FIELD WINDOW_MINUTES]
//     json   simdjson's ondemand parser over every line, each field's value read as the type
//            its first row gave it (strings unescaped, numbers parsed), as floe's decoder reads
//            them by the table's columns;
//     zstd   each field's values (a string's bytes, a number or a boolean as 8 bytes), cut in
//            pages of 1 MiB, compressed at zstd level 1 and at level 3 (floe's and DuckDB's);
//     table  with KEY_FIELD: a count per (KEY_FIELD, window of TIME_FIELD) in floe's
//            FlatStringMap, the table the window buffer keeps its keys in: updates.
//   stage_ceiling_bench kafka BOOTSTRAP TOPIC MESSAGES
//     librdkafka's consumer alone: every partition of TOPIC from its start, taken in batches of
//     up to 1,024 (rd_kafka_consume_batch_queue, as floe's source), with floe's default queue
//     limits, until MESSAGES messages; their values' bytes counted.
//
// Prints one JSON object: per stage its rows (or messages), bytes, the CPU seconds of this
// process and the wall seconds. Built with the tests (build/src/floe/kafka/stage_ceiling_bench).

#include <librdkafka/rdkafka.h>
#include <simdjson.h>
#include <time.h>
#include <zstd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/civil_time.h"
#include "floe/common/flat_string_map.h"

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "stage_ceiling_bench: %s\n", message.c_str());
  std::exit(1);
}

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// One stage's measure, printed as a JSON member.
struct Measure {
  double cpu0 = CpuSeconds();
  Clock::time_point wall0 = Clock::now();
  std::string Finish(const char* name, uint64_t rows, uint64_t bytes, const std::string& extra) {
    const double cpu = CpuSeconds() - cpu0;
    const double wall = std::chrono::duration<double>(Clock::now() - wall0).count();
    char out[512];
    std::snprintf(out, sizeof out,
                  "\"%s\": {\"rows\": %llu, \"bytes\": %llu, \"cpu_s\": %.4f, \"wall_s\": %.4f%s}",
                  name, static_cast<unsigned long long>(rows),
                  static_cast<unsigned long long>(bytes), cpu, wall, extra.c_str());
    return out;
  }
};

// Reads one field's value as `type` (null aside); `out` gets its bytes (for the columns).
uint64_t ReadValue(simdjson::ondemand::value value, simdjson::ondemand::json_type type,
                   std::string* out) {
  bool null = false;
  if (value.is_null().get(null) == simdjson::SUCCESS && null) return 0;
  switch (type) {
    case simdjson::ondemand::json_type::string: {
      std::string_view s;
      if (value.get_string().get(s)) Die("a bad string");
      if (out != nullptr) out->append(s);
      return s.size();
    }
    case simdjson::ondemand::json_type::number: {
      simdjson::ondemand::number n;
      if (value.get_number().get(n)) Die("a bad number");
      const int64_t i = n.is_int64() ? n.get_int64() : static_cast<int64_t>(n.as_double());
      if (out != nullptr) out->append(reinterpret_cast<const char*>(&i), sizeof i);
      return static_cast<uint64_t>(i);
    }
    case simdjson::ondemand::json_type::boolean: {
      bool b = false;
      if (value.get_bool().get(b)) Die("a bad boolean");
      const int64_t wide = b;
      if (out != nullptr) out->append(reinterpret_cast<const char*>(&wide), sizeof wide);
      return b;
    }
    case simdjson::ondemand::json_type::null:
      return 0;
    default:
      Die("a nested value (the paths' rows are flat)");
  }
}

// Every line of `data` parsed; with `columns`, each field's values appended to its column (in
// field order) and the key of the table stage to `keys`.
uint64_t ParseAll(const simdjson::padded_string& data, std::vector<std::string>* columns,
                  std::string_view key_field, std::string_view time_field, int64_t window_us,
                  std::vector<std::string>* keys, uint64_t* rows) {
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document_stream docs;
  if (parser.iterate_many(data, 1 << 20).get(docs)) Die("simdjson cannot read the file");
  uint64_t sum = 0;
  *rows = 0;
  std::vector<simdjson::ondemand::json_type> types;  // by field position
  for (auto doc : docs) {
    simdjson::ondemand::object object;
    if (doc.get_object().get(object)) Die("a line that is not an object");
    size_t field = 0;
    std::string key;
    for (auto member : object) {
      if (types.size() <= field) {  // the first row: each field's type, as a schema would say
        simdjson::ondemand::json_type type;
        if (member.value().type().get(type)) Die("a value of unknown type");
        types.push_back(type);
      }
      std::string_view name;
      if (member.unescaped_key().get(name)) Die("a bad field name");
      std::string* column = nullptr;
      if (columns != nullptr) {
        if (columns->size() <= field) columns->resize(field + 1);
        column = &(*columns)[field];
      }
      const size_t before = column != nullptr ? column->size() : 0;
      sum += ReadValue(member.value(), types[field], column);
      if (keys != nullptr && name == key_field) key.insert(0, column->substr(before));
      if (keys != nullptr && name == time_field) {
        int64_t micros = 0;
        const std::string text = column->substr(before);
        if (const char* error = floe::ParseTimestamp(text, false, &micros))
          Die(text + ": " + error);
        const int64_t window = micros / window_us;
        key.append(reinterpret_cast<const char*>(&window), sizeof window);
      }
      ++field;
    }
    if (keys != nullptr) keys->push_back(std::move(key));
    ++*rows;
  }
  return sum;
}

int FileStages(int argc, char** argv) {
  simdjson::padded_string data;
  if (simdjson::padded_string::load(argv[2]).get(data)) Die(std::string("cannot read ") + argv[2]);
  const bool table = argc >= 6;
  std::vector<std::string> out;

  Measure json;
  uint64_t rows = 0;
  const uint64_t sum = ParseAll(data, nullptr, {}, {}, 1, nullptr, &rows);
  out.push_back(json.Finish("json", rows, data.size(), ", \"checksum\": " + std::to_string(sum)));

  std::vector<std::string> columns, keys;
  const int64_t window_us = table ? std::atoll(argv[5]) * 60'000'000 : 1;
  if (table && window_us <= 0) Die("WINDOW_MINUTES must be a positive integer");
  ParseAll(data, &columns, table ? argv[3] : "", table ? argv[4] : "", window_us,
           table ? &keys : nullptr, &rows);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  for (int level : {1, 3}) {
    Measure zstd;
    uint64_t in = 0, compressed = 0;
    std::string page;
    for (const std::string& column : columns) {
      for (size_t at = 0; at < column.size(); at += 1 << 20) {
        const size_t n = std::min<size_t>(1 << 20, column.size() - at);
        page.resize(ZSTD_compressBound(n));
        const size_t got =
            ZSTD_compressCCtx(cctx, page.data(), page.size(), column.data() + at, n, level);
        if (ZSTD_isError(got)) Die(ZSTD_getErrorName(got));
        in += n;
        compressed += got;
      }
    }
    out.push_back(zstd.Finish(level == 1 ? "zstd_1" : "zstd_3", rows, in,
                              ", \"compressed_bytes\": " + std::to_string(compressed)));
  }
  ZSTD_freeCCtx(cctx);

  if (table) {
    Measure updates;
    floe::FlatStringMap<int64_t> counts;
    for (const std::string& key : keys) {
      int64_t* count = counts.Find(key);
      if (count == nullptr) count = &counts.Insert(key);
      ++*count;
    }
    out.push_back(
        updates.Finish("table", keys.size(), 0, ", \"entries\": " + std::to_string(counts.size())));
  }
  std::printf("{");
  for (size_t i = 0; i < out.size(); ++i) std::printf("%s%s", i ? ", " : "", out[i].c_str());
  std::printf("}\n");
  return 0;
}

void Set(rd_kafka_conf_t* conf, const char* name, const char* value) {
  char error[512];
  if (rd_kafka_conf_set(conf, name, value, error, sizeof error) != RD_KAFKA_CONF_OK) Die(error);
}

int KafkaStage(char** argv) {
  const char* topic = argv[3];
  const uint64_t wanted = std::strtoull(argv[4], nullptr, 10);
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  Set(conf, "bootstrap.servers", argv[2]);
  Set(conf, "group.id", "stage-ceiling");
  Set(conf, "enable.auto.commit", "false");
  Set(conf, "fetch.wait.max.ms", "10");        // the Kafka bench's test-bed setting
  Set(conf, "queued.min.messages", "500000");  // floe's defaults (docs/kafka.md)
  Set(conf, "queued.max.messages.kbytes", "131072");
  char error[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (rk == nullptr) Die(error);
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_t* handle = rd_kafka_topic_new(rk, topic, nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  if (rd_kafka_metadata(rk, 0, handle, &metadata, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      metadata->topic_cnt != 1 || metadata->topics[0].partition_cnt <= 0) {
    Die(std::string("no partitions of ") + topic);
  }
  const int partitions = metadata->topics[0].partition_cnt;
  rd_kafka_metadata_destroy(metadata);
  rd_kafka_topic_destroy(handle);

  Measure consume;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  if (rd_kafka_assign(rk, list) != RD_KAFKA_RESP_ERR_NO_ERROR) Die("assign failed");
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(rk);
  std::vector<rd_kafka_message_t*> batch(1024);
  uint64_t messages = 0, bytes = 0;
  auto last = Clock::now();
  while (messages < wanted) {
    const ssize_t got = rd_kafka_consume_batch_queue(queue, 100, batch.data(), batch.size());
    for (ssize_t i = 0; i < got; ++i) {
      if (batch[i]->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ++messages;
        bytes += batch[i]->len;
      }
      rd_kafka_message_destroy(batch[i]);
    }
    if (got > 0) last = Clock::now();
    if (Clock::now() - last > std::chrono::seconds(10)) {
      Die("no message for 10 s after " + std::to_string(messages) + " of " + argv[4]);
    }
  }
  const std::string result =
      consume.Finish("kafka", messages, bytes, ", \"partitions\": " + std::to_string(partitions));
  rd_kafka_queue_destroy(queue);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  std::printf("{%s}\n", result.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "file") == 0 && (argc == 3 || argc == 6)) {
    return FileStages(argc, argv);
  }
  if (argc == 5 && std::strcmp(argv[1], "kafka") == 0) return KafkaStage(argv);
  std::fprintf(stderr,
               "usage: stage_ceiling_bench file FILE [KEY_FIELD TIME_FIELD WINDOW_MINUTES]\n"
               "       stage_ceiling_bench kafka BOOTSTRAP TOPIC MESSAGES\n");
  return 2;
}
