#pragma once

// The S3 settings file.h's functions use for s3:// paths. Set by whoever knows them (the Iceberg
// sink's s3.* options, the checkpoint config's s3.* keys); without any, the AWS environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION or
// AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/io/s3_client.h"

namespace floe::io {

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

// file.h's functions for s3:// URIs.
Result<std::string> S3ReadFile(const std::string& uri);
Result<std::string> S3ReadFileRange(const std::string& uri, uint64_t offset, uint64_t length);
Result<S3Object> S3Head(const std::string& uri);
Status S3WriteFile(const std::string& uri, std::string_view data, bool if_absent);
Status S3RemoveFile(const std::string& uri);
// Under `dir_uri`/: the first name of each key (`names_only`, a directory listing), else every
// key as a URI.
Result<std::vector<std::string>> S3List(const std::string& dir_uri, bool names_only);

}  // namespace internal

}  // namespace floe::io
