#pragma once

// S3 settings from the places they are given (Iceberg's and Flink's option names, the AWS
// environment), and the pooled clients a FileIO (file_io.h) reaches objects with.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "floe/io/file.h"
#include "floe/io/s3_client.h"

namespace floe::io {

// The AWS environment's S3 settings (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_REGION or AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL;
// region us-east-1 when unset).
S3Config S3ConfigFromEnvironment();

// The option names one configuration dialect uses for the S3 settings.
struct S3OptionNames {
  const char* endpoint;
  const char* path_style;
  const char* access_key;
  const char* secret_key;
  const char* session_token;
  const char* region;
};
// Iceberg's S3FileIO properties (the Iceberg sink's WITH options, a REST catalog's config) and
// Flink's S3 filesystem keys (SET, for checkpoints).
inline constexpr S3OptionNames kIcebergS3Options = {"s3.endpoint",      "s3.path-style-access",
                                                    "s3.access-key-id", "s3.secret-access-key",
                                                    "s3.session-token", "client.region"};
inline constexpr S3OptionNames kFlinkS3Options = {"s3.endpoint",      "s3.path.style.access",
                                                  "s3.access-key",    "s3.secret-key",
                                                  "s3.session-token", "s3.region"};
// Whether `options` sets any of `names`.
bool HasS3Options(const std::map<std::string, std::string>& options, const S3OptionNames& names);
// The environment's settings with those `options` sets under `names` on top. InvalidArgument
// naming the option for a path-style value that is not true/false, a malformed endpoint or
// missing credentials (never printing a secret).
Result<S3Config> S3ConfigFromOptions(const std::map<std::string, std::string>& options,
                                     const S3OptionNames& names);

namespace internal {

// The S3 clients of one set of settings, pooled (S3Client is not thread-safe), and the totals of
// their requests. Thread-safe.
class ObjectStore {
 public:
  explicit ObjectStore(S3Config config) : config_(std::move(config)) {}

  // Runs `op` on the bucket and key of the s3:// `uri` with a client of the pool (made on
  // demand). InvalidArgument naming the settings when there are no credentials.
  Status WithObject(const std::string& uri,
                    const std::function<Status(S3Client&, const std::string& bucket,
                                               const std::string& key)>& op);
  // Every object under `dir_uri`/, as files (URI, size, last modified), sorted by key.
  Result<std::vector<FileEntry>> ListFiles(const std::string& dir_uri);
  Status Put(const std::string& uri, std::string_view data, bool if_absent);

  const S3Config& config() const { return config_; }
  S3Counters totals() const;

 private:
  Status WithClient(const std::function<Status(S3Client&)>& op);

  const S3Config config_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<S3Client>> idle_;
  S3Counters totals_;
};

}  // namespace internal

}  // namespace floe::io
