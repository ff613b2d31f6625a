// `floe kafka`: the dev cluster (librdkafka's mock cluster served until SIGINT/SIGTERM), a
// JSON-lines producer and a group-offsets tool, so tests and users need no Kafka installation.
#include "floe/cli/kafka_command.h"

#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

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
    "  floe kafka produce --bootstrap B --topic T [--partition-by FIELD] FILE.jsonl\n"
    "                 lines round-robin over partitions, or by a hash of a JSON field\n"
    "  floe kafka offsets --bootstrap B --group G --topic T [--set P:O[,P:O]...]\n"
    "                 print (or commit) the group's offsets as JSON\n";

constexpr std::chrono::seconds kTimeout(30);

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
  int sig = 0;
  sigwait(&stop, &sig);
  std::fprintf(stderr, "floe kafka dev: stopping (signal %d)\n", sig);
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
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return Status::InvalidArgument("--partition-by: line " + std::to_string(n) +
                                   " is not a JSON object");
  }
  size_t start = 0;
  while (start <= field.size()) {
    size_t bar = field.find('|', start);
    if (bar == std::string::npos) bar = field.size();
    std::string path = field.substr(start, bar - start);
    start = bar + 1;
    const nlohmann::json* v = &j;
    for (size_t s = 0; v != nullptr && s <= path.size();) {
      size_t dot = path.find('.', s);
      if (dot == std::string::npos) dot = path.size();
      std::string name = path.substr(s, dot - s);
      s = dot + 1;
      v = v->is_object() && v->contains(name) ? &(*v)[name] : nullptr;
    }
    if (v != nullptr && !v->is_null()) return v->is_string() ? v->get<std::string>() : v->dump();
  }
  return Status::InvalidArgument("--partition-by: line " + std::to_string(n) + " has no field '" +
                                 field + "'");
}

Status Produce(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args,
                       Args::Parse(argv, {{"bootstrap", "topic", "property", "partition-by"}, {}}));
  auto bootstrap = args.Get("bootstrap");
  auto topic = args.Get("topic");
  if (!bootstrap || !topic || args.positional().size() != 1) {
    return Status::InvalidArgument(
        "usage: floe kafka produce --bootstrap B --topic T [--partition-by FIELD] "
        "[--property k=v]... FILE.jsonl");
  }
  std::optional<std::string> partition_by = args.Get("partition-by");
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
    if (partition_by) {
      FLOE_ASSIGN_OR_RAISE(std::string key, PartitionKey(line, *partition_by, n + 1));
      FLOE_RETURN_NOT_OK(producer->Produce(
          *topic, static_cast<int32_t>(Fnv1a(key) % static_cast<uint64_t>(partitions)), line, key));
    } else {
      FLOE_RETURN_NOT_OK(producer->Produce(*topic, static_cast<int32_t>(n % partitions), line));
    }
    ++n;
  }
  FLOE_RETURN_NOT_OK(producer->Flush(std::chrono::milliseconds(120000)));
  std::printf("%lld\n", static_cast<long long>(n));
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
  std::fputs(kUsage, stderr);
  return Status::InvalidArgument("unknown kafka subcommand '" + args[0] + "'");
}

}  // namespace floe::cli
