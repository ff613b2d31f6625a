#include "floe/io/object_store.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace floe::io {

namespace {

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

bool HasS3Options(const std::map<std::string, std::string>& options, const S3OptionNames& names) {
  for (const char* name : {names.endpoint, names.path_style, names.access_key, names.secret_key,
                           names.session_token, names.region}) {
    if (options.count(name) > 0) return true;
  }
  return false;
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

namespace internal {

Status ObjectStore::WithClient(const std::function<Status(S3Client&)>& op) {
  std::unique_ptr<S3Client> client;
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      client = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!client) {
    FLOE_ASSIGN_OR_RAISE(client, S3Client::Make(config_));
  }
  S3Counters before = client->counters();
  Status st = op(*client);
  S3Counters after = client->counters();
  std::lock_guard lock(mu_);
  totals_.requests += after.requests - before.requests;
  totals_.retries += after.retries - before.retries;
  totals_.bytes_sent += after.bytes_sent - before.bytes_sent;
  totals_.bytes_received += after.bytes_received - before.bytes_received;
  idle_.push_back(std::move(client));
  return st;
}

Status ObjectStore::WithObject(
    const std::string& uri,
    const std::function<Status(S3Client&, const std::string& bucket, const std::string& key)>& op) {
  FLOE_ASSIGN_OR_RAISE(auto loc, ParseS3Uri(uri));
  if (config_.access_key_id.empty() || config_.secret_access_key.empty()) {
    return Status::InvalidArgument(
        "no S3 credentials for " + uri +
        ": set s3.access-key-id and s3.secret-access-key (Iceberg sink options), s3.access-key "
        "and s3.secret-key (Flink SET keys), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
  }
  return WithClient([&](S3Client& c) { return op(c, loc.first, loc.second); });
}

Result<std::vector<FileEntry>> ObjectStore::ListFiles(const std::string& dir_uri) {
  std::string dir = dir_uri;
  if (dir.back() != '/') dir.push_back('/');
  std::vector<FileEntry> out;
  FLOE_RETURN_NOT_OK(
      WithObject(dir, [&](S3Client& c, const std::string& bucket, const std::string& prefix) {
        FLOE_ASSIGN_OR_RAISE(std::vector<S3Object> objects, c.List(bucket, prefix));
        for (const S3Object& o : objects) {
          out.push_back(FileEntry{"s3://" + bucket + "/" + o.key, o.size, o.last_modified_ms});
        }
        return Status::OK();
      }));
  return out;
}

Status ObjectStore::Put(const std::string& uri, std::string_view data, bool if_absent) {
  return WithObject(uri, [&](S3Client& c, const std::string& bucket, const std::string& key) {
    return c.Put(bucket, key, data, if_absent);
  });
}

S3Counters ObjectStore::totals() const {
  std::lock_guard lock(mu_);
  return totals_;
}

}  // namespace internal

}  // namespace floe::io
