#include "floe/io/object_store.h"

#include <algorithm>
#include <cctype>
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

}  // namespace

S3Config S3ConfigFromEnvironment() {
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

Result<S3Config> S3ConfigFromOptions(const std::map<std::string, std::string>& options,
                                     const S3OptionNames& names) {
  S3Config c = S3ConfigFromEnvironment();
  auto set = [&](const char* key, std::string* into) {
    auto it = options.find(key);
    if (it != options.end() && !it->second.empty()) *into = it->second;
  };
  set(names.endpoint, &c.endpoint);
  set(names.access_key, &c.access_key_id);
  set(names.secret_key, &c.secret_access_key);
  set(names.session_token, &c.session_token);
  set(names.region, &c.region);
  auto path_style = options.find(names.path_style);
  if (path_style != options.end()) {
    std::string v = path_style->second;
    std::transform(v.begin(), v.end(), v.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (v != "true" && v != "false") {
      return Status::InvalidArgument(std::string("option '") + names.path_style +
                                     "' must be 'true' or 'false', not '" + path_style->second +
                                     "'");
    }
    c.path_style = v == "true";
  }
  // The client checks the endpoint and the credentials (without printing the secret).
  FLOE_RETURN_NOT_OK(S3Client::Make(c).status());
  return c;
}

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
  S3Config c = it != r.configs.end() ? it->second : S3ConfigFromEnvironment();
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

Status WithS3Object(
    const std::string& uri,
    const std::function<Status(S3Client&, const std::string& bucket, const std::string& key)>& op) {
  FLOE_ASSIGN_OR_RAISE(auto loc, ParseS3Uri(uri));
  return WithS3Client(loc.first, [&](S3Client& c) { return op(c, loc.first, loc.second); });
}

Result<std::vector<FileEntry>> S3ListFiles(const std::string& dir_uri) {
  std::string dir = dir_uri;
  if (dir.back() != '/') dir.push_back('/');
  std::vector<FileEntry> out;
  FLOE_RETURN_NOT_OK(WithS3Object(
      dir, [&](S3Client& c, const std::string& bucket, const std::string& prefix) -> Status {
        FLOE_ASSIGN_OR_RAISE(std::vector<S3Object> objects, c.List(bucket, prefix));
        for (const S3Object& o : objects) {
          out.push_back(FileEntry{"s3://" + bucket + "/" + o.key, o.size, o.last_modified_ms});
        }
        return Status::OK();
      }));
  return out;
}

}  // namespace internal

}  // namespace floe::io
