#include "floe/io/object_store.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace floe::io {

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, S3Config> configs;                             // "" = the default
  std::map<std::string, std::vector<std::unique_ptr<S3Client>>> idle;  // by bucket
  uint64_t generation = 0;  // bumped by SetS3Config: clients made before are dropped
  S3Counters totals;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: clients may be returned at exit
  return *r;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

S3Config FromEnvironment() {
  S3Config c;
  c.access_key_id = Env("AWS_ACCESS_KEY_ID");
  c.secret_access_key = Env("AWS_SECRET_ACCESS_KEY");
  c.session_token = Env("AWS_SESSION_TOKEN");
  std::string region = Env("AWS_REGION");
  if (region.empty()) region = Env("AWS_DEFAULT_REGION");
  if (!region.empty()) c.region = region;
  c.endpoint = Env("AWS_ENDPOINT_URL_S3");
  if (c.endpoint.empty()) c.endpoint = Env("AWS_ENDPOINT_URL");
  return c;
}

}  // namespace

void SetS3Config(const std::string& bucket, const S3Config& config) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.configs[bucket] = config;
  ++r.generation;
  // Clients made with the old settings must not serve new requests.
  if (bucket.empty()) {
    r.idle.clear();
  } else {
    r.idle.erase(bucket);
  }
}

Result<S3Config> S3ConfigFor(const std::string& bucket) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.configs.find(bucket);
  if (it == r.configs.end()) it = r.configs.find("");
  S3Config c = it != r.configs.end() ? it->second : FromEnvironment();
  if (c.access_key_id.empty() || c.secret_access_key.empty()) {
    return Status::InvalidArgument(
        "no S3 credentials for s3://" + bucket +
        ": set s3.access-key-id and s3.secret-access-key (Iceberg sink options), s3.access-key "
        "and s3.secret-key (Flink SET keys), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
  }
  return c;
}

S3Counters S3TotalCounters() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.totals;
}

namespace internal {

Status WithS3Client(const std::string& bucket, const std::function<Status(S3Client&)>& op) {
  Registry& r = registry();
  std::unique_ptr<S3Client> client;
  uint64_t generation;
  {
    std::lock_guard lock(r.mu);
    generation = r.generation;
    auto& idle = r.idle[bucket];
    if (!idle.empty()) {
      client = std::move(idle.back());
      idle.pop_back();
    }
  }
  if (!client) {
    FLOE_ASSIGN_OR_RAISE(S3Config config, S3ConfigFor(bucket));
    FLOE_ASSIGN_OR_RAISE(client, S3Client::Make(std::move(config)));
  }
  S3Counters before = client->counters();
  Status st = op(*client);
  S3Counters after = client->counters();
  std::lock_guard lock(r.mu);
  r.totals.requests += after.requests - before.requests;
  r.totals.retries += after.retries - before.retries;
  r.totals.bytes_sent += after.bytes_sent - before.bytes_sent;
  r.totals.bytes_received += after.bytes_received - before.bytes_received;
  if (generation == r.generation) r.idle[bucket].push_back(std::move(client));
  return st;
}

Result<std::string> S3ReadFile(const std::string& uri) {
  FLOE_ASSIGN_OR_RAISE(auto loc, ParseS3Uri(uri));
  std::string out;
  FLOE_RETURN_NOT_OK(WithS3Client(loc.first, [&](S3Client& c) -> Status {
    FLOE_ASSIGN_OR_RAISE(out, c.Get(loc.first, loc.second));
    return Status::OK();
  }));
  return out;
}

Result<std::string> S3ReadFileRange(const std::string& uri, uint64_t offset, uint64_t length) {
  FLOE_ASSIGN_OR_RAISE(auto loc, ParseS3Uri(uri));
  std::string out;
  FLOE_RETURN_NOT_OK(WithS3Client(loc.first, [&](S3Client& c) -> Status {
    FLOE_ASSIGN_OR_RAISE(out, c.GetRange(loc.first, loc.second, offset, length));
    return Status::OK();
  }));
  return out;
}

Result<S3Object> S3Head(const std::string& uri) {
  FLOE_ASSIGN_OR_RAISE(auto loc, ParseS3Uri(uri));
  S3Object out;
  FLOE_RETURN_NOT_OK(WithS3Client(loc.first, [&](S3Client& c) -> Status {
    FLOE_ASSIGN_OR_RAISE(out, c.Head(loc.first, loc.second));
    return Status::OK();
  }));
  return out;
}

Status S3WriteFile(const std::string& uri, std::string_view data, bool if_absent) {
  FLOE_ASSIGN_OR_RAISE(auto loc, ParseS3Uri(uri));
  return WithS3Client(loc.first,
                      [&](S3Client& c) { return c.Put(loc.first, loc.second, data, if_absent); });
}

Status S3RemoveFile(const std::string& uri) {
  FLOE_ASSIGN_OR_RAISE(auto loc, ParseS3Uri(uri));
  return WithS3Client(loc.first, [&](S3Client& c) { return c.Delete(loc.first, loc.second); });
}

Result<std::vector<std::string>> S3List(const std::string& dir_uri, bool names_only) {
  FLOE_ASSIGN_OR_RAISE(auto loc, ParseS3Uri(dir_uri));
  std::string prefix = loc.second;
  if (!prefix.empty() && prefix.back() != '/') prefix.push_back('/');
  std::vector<S3Object> objects;
  FLOE_RETURN_NOT_OK(WithS3Client(loc.first, [&](S3Client& c) -> Status {
    FLOE_ASSIGN_OR_RAISE(objects, c.List(loc.first, prefix));
    return Status::OK();
  }));
  std::vector<std::string> out;
  for (const S3Object& o : objects) {
    std::string rest = o.key.substr(prefix.size());
    if (names_only) {
      // A directory is every key below it: its name once.
      std::string name = rest.substr(0, rest.find('/'));
      if (out.empty() || out.back() != name) out.push_back(std::move(name));
    } else {
      out.push_back("s3://" + loc.first + "/" + o.key);
    }
  }
  return out;
}

}  // namespace internal

}  // namespace floe::io
