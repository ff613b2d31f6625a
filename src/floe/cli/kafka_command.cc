// `floe kafka`: the dev cluster (librdkafka's mock cluster served until SIGINT/SIGTERM, with
// fault injection commands on its stdin), a JSON-lines producer, a consumer printing one JSON
// line per record, and a group-offsets tool, so tests and users need no Kafka installation.
#include "floe/cli/kafka_command.h"

#include <csignal>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include "floe/cli/args.h"
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
    "  floe kafka produce --bootstrap B --topic T FILE.jsonl   lines round-robin over partitions\n"
    "  floe kafka consume --bootstrap B --topic T [--from-beginning] [--max N]\n"
    "                 [--timeout-ms T] [--isolation read_committed|read_uncommitted]\n"
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
    FLOE_ASSIGN_OR_RAISE(rd_kafka_resp_err_t err, kafka::ErrorCodeByName(words[3]));
    cluster.PushRequestErrors(api, std::vector<rd_kafka_resp_err_t>(count, err));
    std::printf("ok: the next %d %s request(s) (API key %d) fail with %s\n", count,
                words[1].c_str(), api, rd_kafka_err2name(err));
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
    std::mutex mu;
    kafka::MockCluster* cluster = nullptr;
  };
  auto shared = std::make_shared<Shared>();
  shared->cluster = cluster.get();
  std::thread([shared] {
    std::string line;
    while (std::getline(std::cin, line)) {
      std::lock_guard lock(shared->mu);
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
  std::lock_guard lock(shared->mu);
  shared->cluster = nullptr;
  return Status::OK();
}

Status Produce(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{"bootstrap", "topic", "property"}, {}}));
  auto bootstrap = args.Get("bootstrap");
  auto topic = args.Get("topic");
  if (!bootstrap || !topic || args.positional().size() != 1) {
    return Status::InvalidArgument(
        "usage: floe kafka produce --bootstrap B --topic T [--property k=v]... FILE.jsonl");
  }
  kafka::Properties props = {{"bootstrap.servers", *bootstrap}, {"enable.idempotence", "true"}};
  for (const std::string& kv : args.GetAll("property")) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos) return Status::InvalidArgument("--property needs k=v: " + kv);
    props[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  FLOE_ASSIGN_OR_RAISE(std::string text, io::ReadFile(args.positional()[0]));
  FLOE_ASSIGN_OR_RAISE(auto producer, kafka::KafkaProducer::Make(props));
  FLOE_ASSIGN_OR_RAISE(int32_t partitions,
                       kafka::PartitionCount(producer->handle(), *topic, kTimeout));
  int64_t n = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    FLOE_RETURN_NOT_OK(producer->Produce(*topic, static_cast<int32_t>(n % partitions), line));
    ++n;
  }
  FLOE_RETURN_NOT_OK(producer->Flush(std::chrono::milliseconds(120000)));
  std::printf("%lld\n", static_cast<long long>(n));
  return Status::OK();
}

Status Consume(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args,
      Args::Parse(argv, {{"bootstrap", "topic", "max", "timeout-ms", "isolation", "property"},
                         {"from-beginning"}}));
  auto bootstrap = args.Get("bootstrap");
  auto topic = args.Get("topic");
  if (!bootstrap || !topic || !args.positional().empty()) {
    return Status::InvalidArgument(
        "usage: floe kafka consume --bootstrap B --topic T [--from-beginning] [--max N] "
        "[--timeout-ms T] [--isolation read_committed|read_uncommitted]");
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
    if (m->err() == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end.insert(m->partition());
      continue;
    }
    if (m->err() != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (kafka::IsRetryable(m->err())) continue;
      return kafka::KafkaStatus(
          m->err(), "consume topic '" + *topic + "' partition " + std::to_string(m->partition()));
    }
    at_end.erase(m->partition());
    last = std::chrono::steady_clock::now();
    nlohmann::json j = {
        {"partition", m->partition()}, {"offset", m->offset()}, {"value", std::string(m->value())}};
    rd_kafka_headers_t* headers = nullptr;
    if (rd_kafka_message_headers(m->message.get(), &headers) == RD_KAFKA_RESP_ERR_NO_ERROR &&
        headers != nullptr && rd_kafka_header_cnt(headers) > 0) {
      nlohmann::json h = nlohmann::json::object();
      const char* name = nullptr;
      const void* value = nullptr;
      size_t size = 0;
      for (size_t i = 0;
           rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
           ++i) {
        h[name] =
            value == nullptr ? std::string() : std::string(static_cast<const char*>(value), size);
      }
      j["headers"] = std::move(h);
    }
    std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
