#pragma once

// The S3 settings file.h's functions use for s3:// paths. Set by whoever knows them (the Iceberg
// sink's s3.* options, the checkpoint config's s3.* keys); without any, the AWS environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION or
// AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "floe/io/file.h"
#include "floe/io/s3_client.h"

namespace floe::io {

// The AWS environment's S3 settings (the variables above; region us-east-1 when unset).
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
// The environment's settings with those `options` sets under `names` on top. InvalidArgument
// naming the option for a path-style value that is not true/false, a malformed endpoint or
// missing credentials (never printing a secret).
Result<S3Config> S3ConfigFromOptions(const std::map<std::string, std::string>& options,
                                     const S3OptionNames& names);

// For `bucket`, or for every bucket without its own when `bucket` is empty. Replaces what was
// set before for it. Thread-safe.
void SetS3Config(const std::string& bucket, const S3Config& config);
// What s3://`bucket`/... uses; InvalidArgument naming the settings when there are no
// credentials anywhere.
Result<S3Config> S3ConfigFor(const std::string& bucket);
// Requests and bytes of every S3 call of this process so far (bench figures).
S3Counters S3TotalCounters();

namespace internal {

// Runs `op` with a client for `bucket` (clients are pooled: S3Client is not thread-safe).
Status WithS3Client(const std::string& bucket, const std::function<Status(S3Client&)>& op);

// Runs `op` on the bucket and key of the s3:// `uri` with a client for the bucket.
Status WithS3Object(
    const std::string& uri,
    const std::function<Status(S3Client&, const std::string& bucket, const std::string& key)>& op);
// Every object under `dir_uri`/, as files (URI, size, last modified), sorted by key.
Result<std::vector<FileEntry>> S3ListFiles(const std::string& dir_uri);

}  // namespace internal

}  // namespace floe::io
