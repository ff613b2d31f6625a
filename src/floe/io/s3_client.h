#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/status.h"

namespace floe::io {

// Where an S3-compatible store is and how to sign for it (Iceberg's s3.* properties, Flink's
// s3.* keys and the AWS environment all end up here).
struct S3Config {
  std::string endpoint;  // "http://127.0.0.1:4568"; empty: https://s3.<region>.amazonaws.com
  std::string region = "us-east-1";
  std::string access_key_id;
  std::string secret_access_key;  // never printed
  std::string session_token;      // never printed
  // Bucket in the path (MinIO, s3rver), not in the host name; always for an endpoint whose
  // host is an IP address or localhost (a bucket cannot be a subdomain of those).
  bool path_style = false;
  int max_attempts = 5;                    // per request: 5xx, 429 and lost connections are retried
  int64_t multipart_threshold = 16 << 20;  // larger objects are uploaded in parts
  int64_t part_size = 8 << 20;             // S3's minimum is 5 MiB (but for the last part)
  int timeout_seconds = 60;                // connect, read and write
};

struct S3Object {
  std::string key;
  int64_t size = 0;
  std::string etag;
  int64_t last_modified_ms = 0;  // from listings only
};

// What a client sent and received, for measurements (bytes and requests per commit).
struct S3Counters {
  int64_t requests = 0;
  int64_t retries = 0;
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
};

// A client of the S3 REST API: SigV4-signed requests over cpp-httplib (http or https), retries
// with exponential backoff and jitter on 5xx, 429 and lost connections, multipart upload for
// large objects. Errors name the operation, bucket and key and S3's error code; never a
// secret. Thread-compatible.
class S3Client {
 public:
  static Result<std::unique_ptr<S3Client>> Make(S3Config config);
  ~S3Client();

  // `if_absent` sends If-None-Match: * (a conditional write): AlreadyExists when the key exists
  // on a store that honours it (AWS S3 since 2024, MinIO); stores that ignore it overwrite.
  // A 412 to a retry is settled by reading the object back: an earlier attempt whose answer was
  // lost may have created it, and if it holds `data` the write succeeded.
  Status Put(const std::string& bucket, const std::string& key, std::string_view data,
             bool if_absent = false);
  // NotFound if there is no such key.
  Result<std::string> Get(const std::string& bucket, const std::string& key);
  Result<std::string> GetRange(const std::string& bucket, const std::string& key, uint64_t offset,
                               uint64_t length);
  Result<S3Object> Head(const std::string& bucket, const std::string& key);
  // OK if the key does not exist (S3's own semantics).
  Status Delete(const std::string& bucket, const std::string& key);
  // Every key under `prefix` (ListObjectsV2, all pages), in key order.
  Result<std::vector<S3Object>> List(const std::string& bucket, const std::string& prefix);
  Status CreateBucket(const std::string& bucket);

  S3Counters counters() const;

  struct Impl;
  explicit S3Client(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// "s3://bucket/key/..." (also s3a://, s3n://) -> {bucket, key}; InvalidArgument otherwise.
Result<std::pair<std::string, std::string>> ParseS3Uri(std::string_view uri);
bool IsS3Uri(std::string_view path);

namespace internal {

// AWS Signature Version 4 for S3, exposed for its test vectors: the Authorization header of a
// request with these canonical parts. `headers` are lower-case name -> trimmed value, and must
// include host, x-amz-date and x-amz-content-sha256. `query` is the canonical query string.
std::string SigV4Authorization(const S3Config& config, std::string_view method,
                               std::string_view canonical_uri, std::string_view query,
                               const std::vector<std::pair<std::string, std::string>>& headers,
                               std::string_view payload_sha256, std::string_view amz_date);
std::string Sha256Hex(std::string_view data);
// RFC 3986 percent-encoding as SigV4 wants it; '/' kept when `keep_slash`.
std::string UriEncode(std::string_view s, bool keep_slash);

}  // namespace internal

}  // namespace floe::io
