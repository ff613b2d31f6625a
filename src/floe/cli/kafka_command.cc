// `floe kafka`: the dev cluster (librdkafka's mock cluster served until SIGINT/SIGTERM, with
// fault injection commands on its stdin), a JSON-lines producer, a consumer printing one JSON
// line per record, and a group-offsets tool, so tests and users need no Kafka installation.
#include "floe/cli/kafka_command.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include "floe/cli/args.h"
#include "floe/common/json.h"
#include "floe/common/mutex.h"
#include "floe/io/file.h"
#include "floe/kafka/kafka_client.h"
#include "floe/kafka/mock_cluster.h"

namespace floe::cli {
namespace {

constexpr const char* kUsage =
    "usage:\n"
    "  floe kafka dev [--brokers 3] [--topic NAME:PARTITIONS]... [--bootstrap-file F]\n"
    "                 [--rtt-ms N]      serve a mock cluster until SIGINT/SIGTERM\n"
    "                 stdin: 'fail API COUNT ERROR' (e.g. 'fail EndTxn 1 PRODUCER_FENCED'),\n"
    "                 'clear API'; EOF is fine\n"
    "  floe kafka produce --bootstrap B --topic T [--partition-by FIELD] [--property k=v]...\n"
    "                 [--group G --max-lag N] [--value-encoding base64] FILE.jsonl   lines\n"
    "                 round-robin over partitions, or by a hash of a JSON field; --max-lag: wait\n"
    "                 while a partition holds more than N records produced here that group G has\n"
    "                 not committed; --value-encoding base64: each line is a binary value in\n"
    "                 base64 (an Avro record, say)\n"
    "  floe kafka consume --bootstrap B --topic T [--from-beginning] [--max N]\n"
    "                 [--timeout-ms T] [--isolation read_committed|read_uncommitted]\n"
    "                 [--value-encoding base64]\n"
    "                 one JSON line per record: partition, offset, value (headers)\n"
    "  floe kafka offsets --bootstrap B --group G --topic T [--set P:O[,P:O]...]\n"
    "                 print (or commit) the group's offsets as JSON\n";

constexpr std::chrono::seconds kTimeout(30);

// One fault-injection command of `floe kafka dev`'s stdin; answers "ok: ..." on stdout.
Status DevCommand(kafka::MockCluster& cluster, const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty() || words[0][0] == '#') return Status::OK();
  if (words[0] == "fail" && words.size() == 4) {
    FLOE_ASSIGN_OR_RAISE(int16_t api, kafka::ApiKeyByName(words[1]));
    int count = 0;
    try {
      count = std::stoi(words[2]);
    } catch (...) {
      count = 0;
    }
    if (count < 1 || count > 100000) {
      return Status::InvalidArgument("COUNT must be 1..100000, got '" + words[2] + "'");
    }
    FLOE_ASSIGN_OR_RAISE(std::string error, kafka::CanonicalErrorName(words[3]));
    FLOE_RETURN_NOT_OK(cluster.PushRequestErrors(api, std::vector<std::string>(count, error)));
    std::printf("ok: the next %d %s request(s) (API key %d) fail with %s\n", count,
                words[1].c_str(), api, error.c_str());
    std::fflush(stdout);
    return Status::OK();
  }
  if (words[0] == "clear" && words.size() == 2) {
    FLOE_ASSIGN_OR_RAISE(int16_t api, kafka::ApiKeyByName(words[1]));
    cluster.ClearRequestErrors(api);
    std::printf("ok: no more injected errors for %s\n", words[1].c_str());
    std::fflush(stdout);
    return Status::OK();
  }
  return Status::InvalidArgument(
      "unknown command; known: 'fail API COUNT ERROR' (e.g. 'fail EndTxn 1 PRODUCER_FENCED'), "
      "'clear API'");
}

Status Dev(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args,
                       Args::Parse(argv, {{"brokers", "topic", "bootstrap-file", "rtt-ms"}, {}}));
  FLOE_ASSIGN_OR_RAISE(auto brokers, args.GetInt("brokers"));
  FLOE_ASSIGN_OR_RAISE(auto rtt, args.GetInt("rtt-ms"));
  std::vector<std::pair<std::string, int>> topics;
  for (const std::string& t : args.GetAll("topic")) {
    size_t colon = t.rfind(':');
    int partitions = 1;
    std::string name = t;
    if (colon != std::string::npos) {
      name = t.substr(0, colon);
      try {
        partitions = std::stoi(t.substr(colon + 1));
      } catch (...) {
        partitions = 0;
      }
    }
    if (name.empty() || partitions < 1) {
      return Status::InvalidArgument("--topic must be NAME or NAME:PARTITIONS, got '" + t + "'");
    }
    topics.emplace_back(name, partitions);
  }
  // Block the stop signals before librdkafka starts its threads (they inherit the mask), then
  // wait for them synchronously.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  FLOE_ASSIGN_OR_RAISE(auto cluster,
                       kafka::MockCluster::Make(brokers ? static_cast<int>(*brokers) : 3));
  for (const auto& [name, partitions] : topics) {
    FLOE_RETURN_NOT_OK(cluster->CreateTopic(name, partitions, 1));
  }
  if (rtt && *rtt > 0) {
    for (int b = 1; b <= cluster->brokers(); ++b) {
      FLOE_RETURN_NOT_OK(cluster->SetRtt(b, static_cast<int>(*rtt)));
    }
  }
  const std::string& bootstrap = cluster->bootstrap_servers();
  if (auto file = args.Get("bootstrap-file")) {
    // Written whole (rename), so a reader never sees half an address.
    FLOE_RETURN_NOT_OK(io::WriteFileReplace(*file, bootstrap + "\n"));
  }
  std::printf("%s\n", bootstrap.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "floe kafka dev: %d broker(s) at %s; stop with SIGINT or SIGTERM\n",
               cluster->brokers(), bootstrap.c_str());
  // After the address is out (so it stays stdout's first line): fault injection from stdin,
  // one command a line; EOF (or /dev/null) just ends the reading.
  // The reader is detached (a blocking read cannot be interrupted); `mu` keeps it off the
  // cluster once the cluster is going away. SIGTTIN ignored: started with `&` from an
  // interactive shell, a read from the terminal then fails (ending the reading) instead of
  // stopping the whole cluster.
  std::signal(SIGTTIN, SIG_IGN);
  struct Shared {
    explicit Shared(kafka::MockCluster* c) : cluster(c) {}
    Mutex mu;
    kafka::MockCluster* cluster FLOE_GUARDED_BY(mu);
  };
  auto shared = std::make_shared<Shared>(cluster.get());
  std::thread([shared] {
    std::string line;
    while (std::getline(std::cin, line)) {
      MutexLock lock(shared->mu);
      if (shared->cluster == nullptr) return;
      Status st = DevCommand(*shared->cluster, line);
      if (!st.ok()) {
        std::fprintf(stderr, "floe kafka dev: '%s': %s\n", line.c_str(), st.ToString().c_str());
      }
    }
  }).detach();
  int sig = 0;
  sigwait(&stop, &sig);
  std::fprintf(stderr, "floe kafka dev: stopping (signal %d)\n", sig);
  MutexLock lock(shared->mu);
  shared->cluster = nullptr;
  return Status::OK();
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// --partition-by FIELD: the record key is the field's value (a string's text, anything else
// as compact JSON), so every record with the same value goes to the same partition. A dotted
// FIELD ("after.id") looks inside objects; the first non-null of the alternatives "a|b" wins
// (a Debezium event's key is in "after" or, for deletes, in "before").
Result<std::string> PartitionKey(std::string_view line, const std::string& field, int64_t n) {
  Result<Json> parsed = ParseJson(line, JsonPath("line " + std::to_string(n)));
  if (!parsed.ok() || !parsed->is_object()) {
    return Status::InvalidArgument("--partition-by: line " + std::to_string(n) +
                                   " is not a JSON object");
  }
  size_t start = 0;
  while (start <= field.size()) {
    size_t bar = field.find('|', start);
    if (bar == std::string::npos) bar = field.size();
    std::string path = field.substr(start, bar - start);
    start = bar + 1;
    const Json* v = &*parsed;
    for (size_t s = 0; v != nullptr && s <= path.size();) {
      size_t dot = path.find('.', s);
      if (dot == std::string::npos) dot = path.size();
      std::string name = path.substr(s, dot - s);
      s = dot + 1;
      v = v->is_object() && v->contains(name) ? &(*v)[name] : nullptr;
    }
    if (v != nullptr && !v->is_null()) return v->is_string() ? v->get<std::string>() : DumpJson(*v);
  }
  return Status::InvalidArgument("--partition-by: line " + std::to_string(n) + " has no field '" +
                                 field + "'");
}

// Paces a producer by a consumer group's progress: the dev cluster keeps only ~5 MiB per
// partition and silently drops older records, so a producer running ahead of its consumer by
// more than that loses data. Lag = records this command produced to a partition that the
// group's committed offset has not passed (a partition the group never committed counts from
// where this command started).
class LagGate {
 public:
  static Result<std::unique_ptr<LagGate>> Make(const std::string& bootstrap,
                                               const std::string& group, const std::string& topic,
                                               int32_t partitions, int64_t max_lag) {
    FLOE_ASSIGN_OR_RAISE(
        auto consumer,
        kafka::KafkaConsumer::Make({{"bootstrap.servers", bootstrap}, {"group.id", group}}));
    auto gate = std::make_unique<LagGate>();
    gate->consumer_ = std::move(consumer);
    gate->topic_ = topic;
    gate->max_lag_ = max_lag;
    for (int32_t p = 0; p < partitions; ++p) {
      gate->partitions_.push_back(p);
      FLOE_ASSIGN_OR_RAISE(auto wm, gate->consumer_->Watermarks(topic, p, kTimeout));
      gate->next_[p] = wm.second;
      gate->start_[p] = wm.second;
    }
    gate->committed_ = gate->start_;
    return gate;
  }

  // Returns once `partition` may take one more record; counts it as produced.
  Status Admit(int32_t partition) {
    while (next_[partition] - committed_[partition] >= max_lag_) {
      FLOE_ASSIGN_OR_RAISE(kafka::PartitionOffsets c,
                           consumer_->Committed(topic_, partitions_, kTimeout));
      for (const auto& [p, offset] : c) committed_[p] = std::max(start_[p], offset);
      if (next_[partition] - committed_[partition] >= max_lag_) {
        ++waits_;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    ++next_[partition];
    return Status::OK();
  }
  int64_t waits() const { return waits_; }

 private:
  std::unique_ptr<kafka::KafkaConsumer> consumer_;
  std::string topic_;
  int64_t max_lag_ = 0;
  std::vector<int32_t> partitions_;
  std::map<int32_t, int64_t> start_, next_, committed_;
  int64_t waits_ = 0;
};

// Whether the cluster still holds every record a produce wrote: a cluster whose retention drops
// a partition's oldest records (the mock cluster keeps about 5 MiB or 100,000 batches per
// partition) would otherwise hand readers a shorter topic than the file, silently.
class RetentionCheck {
 public:
  static Result<std::unique_ptr<RetentionCheck>> Make(const std::string& bootstrap,
                                                      const std::string& topic,
                                                      int32_t partitions) {
    auto check = std::unique_ptr<RetentionCheck>(new RetentionCheck(topic));
    FLOE_ASSIGN_OR_RAISE(check->consumer_,
                         kafka::KafkaConsumer::Make({{"bootstrap.servers", bootstrap}}));
    for (int32_t p = 0; p < partitions; ++p) {
      FLOE_ASSIGN_OR_RAISE(auto wm, check->consumer_->Watermarks(topic, p, kTimeout));
      check->first_.push_back(wm.second);  // where this produce's records start
    }
    return check;
  }

  Status Check() {
    for (int32_t p = 0; p < static_cast<int32_t>(first_.size()); ++p) {
      FLOE_ASSIGN_OR_RAISE(auto wm, consumer_->Watermarks(topic_, p, kTimeout));
      const int64_t first = first_[static_cast<size_t>(p)];
      if (wm.first > first) {
        return Status::Unavailable(
            "floe kafka produce: topic '" + topic_ + "' partition " + std::to_string(p) +
            " now starts at offset " + std::to_string(wm.first) + ": its retention dropped " +
            std::to_string(wm.first - first) + " of the records written here from offset " +
            std::to_string(first) +
            " (a mock cluster keeps about 5 MiB or 100,000 batches per "
            "partition: use more partitions, or pace with --group and --max-lag)");
      }
    }
    return Status::OK();
  }

 private:
  explicit RetentionCheck(std::string topic) : topic_(std::move(topic)) {}
  std::string topic_;
  std::unique_ptr<kafka::KafkaConsumer> consumer_;
  std::vector<int64_t> first_;
};

// Standard base64 (RFC 4648) with '=' padding.
std::string EncodeBase64(std::string_view bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << 16 |
                       static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 1])) << 8 |
                       static_cast<uint8_t>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kDigits[(v >> shift) & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 1])) << 8;
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// Standard base64 (RFC 4648, '=' padding optional); an error names the line.
Result<std::string> DecodeBase64(std::string_view text, int64_t line) {
  std::string out;
  uint32_t bits = 0;
  int have = 0;
  for (char c : text) {
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '+'             ? 62
            : c == '/'             ? 63
                                   : -1;
    if (c == '=' || c == '\r') continue;
    if (v < 0) {
      return Status::InvalidArgument("floe kafka produce: line " + std::to_string(line) +
                                     " is not base64 (byte " +
                                     std::to_string(static_cast<uint8_t>(c)) + ")");
    }
    bits = (bits << 6) | static_cast<uint32_t>(v);
    have += 6;
    if (have >= 8) {
      have -= 8;
      out.push_back(static_cast<char>((bits >> have) & 0xff));
    }
  }
  return out;
}

Status Produce(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args, Args::Parse(argv, {{"bootstrap", "topic", "property", "partition-by", "group",
                                     "max-lag", "value-encoding"},
                                    {}}));
  auto bootstrap = args.Get("bootstrap");
  auto topic = args.Get("topic");
  if (!bootstrap || !topic || args.positional().size() != 1) {
    return Status::InvalidArgument(
        "usage: floe kafka produce --bootstrap B --topic T [--partition-by FIELD] "
        "[--property k=v]... [--group G --max-lag N] FILE.jsonl");
  }
  FLOE_ASSIGN_OR_RAISE(std::optional<int64_t> max_lag, args.GetInt("max-lag"));
  auto group = args.Get("group");
  if (max_lag.has_value() != group.has_value() || (max_lag && *max_lag < 1)) {
    return Status::InvalidArgument(
        "floe kafka produce: --max-lag N (>= 1) and --group G go together (the group whose "
        "committed offsets pace the producer)");
  }
  std::optional<std::string> partition_by = args.Get("partition-by");
  const std::string encoding = args.Get("value-encoding").value_or("text");
  if (encoding != "text" && encoding != "base64") {
    return Status::InvalidArgument(
        "floe kafka produce: --value-encoding must be text or base64, got '" + encoding + "'");
  }
  if (encoding == "base64" && partition_by) {
    return Status::InvalidArgument(
        "floe kafka produce: --partition-by reads a JSON field, so it needs text values");
  }
  kafka::Properties props = {{"bootstrap.servers", *bootstrap}, {"enable.idempotence", "true"}};
  for (const std::string& kv : args.GetAll("property")) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos) return Status::InvalidArgument("--property needs k=v: " + kv);
    props[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  FLOE_ASSIGN_OR_RAISE(std::string text, io::ReadFile(args.positional()[0]));
  FLOE_ASSIGN_OR_RAISE(auto producer, kafka::KafkaProducer::Make(props));
  FLOE_ASSIGN_OR_RAISE(int32_t partitions, producer->PartitionCount(*topic, kTimeout));
  std::unique_ptr<LagGate> gate;
  std::unique_ptr<RetentionCheck> retention;
  if (max_lag) {
    FLOE_ASSIGN_OR_RAISE(gate, LagGate::Make(*bootstrap, *group, *topic, partitions, *max_lag));
  } else {
    FLOE_ASSIGN_OR_RAISE(retention, RetentionCheck::Make(*bootstrap, *topic, partitions));
  }
  int64_t n = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    int32_t partition = static_cast<int32_t>(n % partitions);
    std::string key;
    if (partition_by) {
      FLOE_ASSIGN_OR_RAISE(key, PartitionKey(line, *partition_by, n + 1));
      partition = static_cast<int32_t>(Fnv1a(key) % static_cast<uint64_t>(partitions));
    }
    if (gate) FLOE_RETURN_NOT_OK(gate->Admit(partition));
    std::string decoded;
    if (encoding == "base64") {
      FLOE_ASSIGN_OR_RAISE(decoded, DecodeBase64(line, n + 1));
      line = decoded;
    }
    FLOE_RETURN_NOT_OK(producer->Produce(*topic, partition, line, key));
    ++n;
  }
  FLOE_RETURN_NOT_OK(producer->Flush(std::chrono::milliseconds(120000)));
  if (retention) FLOE_RETURN_NOT_OK(retention->Check());
  std::printf("%lld\n", static_cast<long long>(n));
  if (gate) {
    std::fprintf(
        stderr, "floe kafka produce: waited for group '%s' %lld time(s) (--max-lag %lld)\n",
        group->c_str(), static_cast<long long>(gate->waits()), static_cast<long long>(*max_lag));
  }
  return Status::OK();
}

Status Consume(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{"bootstrap", "topic", "max", "timeout-ms",
                                                      "isolation", "property", "value-encoding"},
                                                     {"from-beginning"}}));
  auto bootstrap = args.Get("bootstrap");
  auto topic = args.Get("topic");
  if (!bootstrap || !topic || !args.positional().empty()) {
    return Status::InvalidArgument(
        "usage: floe kafka consume --bootstrap B --topic T [--from-beginning] [--max N] "
        "[--timeout-ms T] [--isolation read_committed|read_uncommitted] "
        "[--value-encoding base64]");
  }
  const std::string encoding = args.GetOr("value-encoding", "text");
  if (encoding != "text" && encoding != "base64") {
    return Status::InvalidArgument(
        "floe kafka consume: --value-encoding must be text or base64, got '" + encoding + "'");
  }
  FLOE_ASSIGN_OR_RAISE(auto max, args.GetInt("max"));
  FLOE_ASSIGN_OR_RAISE(auto timeout_ms, args.GetInt("timeout-ms"));
  std::string isolation = args.GetOr("isolation", "read_committed");
  if (isolation != "read_committed" && isolation != "read_uncommitted") {
    return Status::InvalidArgument("--isolation must be read_committed or read_uncommitted, got '" +
                                   isolation + "'");
  }
  kafka::Properties props = {{"bootstrap.servers", *bootstrap},
                             {"isolation.level", isolation},
                             {"enable.partition.eof", "true"}};
  for (const std::string& kv : args.GetAll("property")) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos) return Status::InvalidArgument("--property needs k=v: " + kv);
    props[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  FLOE_ASSIGN_OR_RAISE(auto consumer, kafka::KafkaConsumer::Make(props));
  FLOE_ASSIGN_OR_RAISE(int32_t partitions, consumer->PartitionCount(*topic, kTimeout));
  kafka::PartitionOffsets start;
  for (int32_t p = 0; p < partitions; ++p) {
    FLOE_ASSIGN_OR_RAISE(auto wm, consumer->Watermarks(*topic, p, kTimeout));
    start[p] = args.Has("from-beginning") ? wm.first : wm.second;
  }
  FLOE_RETURN_NOT_OK(consumer->Assign(*topic, start));
  // Without --max: until every partition reported its end. With --max: until N records.
  // Either way at most --timeout-ms (default 10 s) without a record.
  std::chrono::milliseconds quiet(timeout_ms ? *timeout_ms : 10000);
  std::set<int32_t> at_end;
  int64_t n = 0;
  auto last = std::chrono::steady_clock::now();
  while (max ? n < *max : static_cast<int32_t>(at_end.size()) < partitions) {
    if (std::chrono::steady_clock::now() - last > quiet) {
      std::fprintf(stderr, "floe kafka consume: no record for %lld ms, stopping after %lld\n",
                   static_cast<long long>(quiet.count()), static_cast<long long>(n));
      break;
    }
    FLOE_ASSIGN_OR_RAISE(auto m, consumer->Poll(std::chrono::milliseconds(100)));
    if (!m.has_value()) continue;
    if (m->kind() == kafka::ConsumedMessage::Kind::kPartitionEnd) {
      at_end.insert(m->partition());
      continue;
    }
    if (m->kind() != kafka::ConsumedMessage::Kind::kRecord) {
      if (m->retryable()) continue;
      return m->error("consume topic '" + *topic + "' partition " + std::to_string(m->partition()));
    }
    at_end.erase(m->partition());
    last = std::chrono::steady_clock::now();
    Json j = {{"partition", m->partition()},
              {"offset", m->offset()},
              {"value", encoding == "base64" ? EncodeBase64(m->value()) : std::string(m->value())}};
    std::vector<std::pair<std::string, std::string>> headers = m->Headers();
    if (!headers.empty()) {
      Json h = Json::object();
      for (auto& [name, value] : headers) h[name] = std::move(value);
      j["headers"] = std::move(h);
    }
    std::string line = DumpJson(j);
    std::printf("%s\n", line.c_str());
    ++n;
  }
  std::fflush(stdout);
  return Status::OK();
}

Status Offsets(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{"bootstrap", "group", "topic", "set"}, {}}));
  auto bootstrap = args.Get("bootstrap");
  auto group = args.Get("group");
  auto topic = args.Get("topic");
  if (!bootstrap || !group || !topic) {
    return Status::InvalidArgument(
        "usage: floe kafka offsets --bootstrap B --group G --topic T [--set P:O[,P:O]...]");
  }
  FLOE_ASSIGN_OR_RAISE(auto consumer, kafka::KafkaConsumer::Make({{"bootstrap.servers", *bootstrap},
                                                                  {"group.id", *group}}));
  FLOE_ASSIGN_OR_RAISE(int32_t count, consumer->PartitionCount(*topic, kTimeout));
  if (auto set = args.Get("set")) {
    // "0:0,1:0" -> Flink's syntax for the parser.
    std::string flink;
    size_t start = 0;
    while (start <= set->size()) {
      size_t end = set->find(',', start);
      if (end == std::string::npos) end = set->size();
      std::string entry = set->substr(start, end - start);
      size_t colon = entry.find(':');
      if (colon == std::string::npos)
        return Status::InvalidArgument("--set needs P:O, got " + entry);
      flink += "partition:" + entry.substr(0, colon) + ",offset:" + entry.substr(colon + 1) + ";";
      start = end + 1;
    }
    FLOE_ASSIGN_OR_RAISE(kafka::PartitionOffsets offsets, kafka::ParseSpecificOffsets(flink));
    // A standalone commit: refused by the mock for a group that ever had a member.
    FLOE_RETURN_NOT_OK(consumer->CommitSync(*topic, offsets));
  }
  std::vector<int32_t> partitions;
  for (int32_t p = 0; p < count; ++p) partitions.push_back(p);
  FLOE_ASSIGN_OR_RAISE(kafka::PartitionOffsets committed,
                       consumer->Committed(*topic, partitions, kTimeout));
  std::string out = "{";
  for (const auto& [p, o] : committed) {
    if (out.size() > 1) out += ",";
    out += "\"" + std::to_string(p) + "\":" + std::to_string(o);
  }
  std::printf("%s}\n", out.c_str());
  return Status::OK();
}

}  // namespace

Status RunKafkaCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "help" || args[0] == "--help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? Status::InvalidArgument("missing kafka subcommand") : Status::OK();
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "dev") return Dev(rest);
  if (args[0] == "produce") return Produce(rest);
  if (args[0] == "offsets") return Offsets(rest);
  if (args[0] == "consume") return Consume(rest);
  std::fputs(kUsage, stderr);
  return Status::InvalidArgument("unknown kafka subcommand '" + args[0] + "'");
}

}  // namespace floe::cli
