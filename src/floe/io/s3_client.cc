#include "floe/io/s3_client.h"

#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <random>
#include <thread>

namespace floe::io {

namespace internal {

namespace {

std::string Hex(const unsigned char* data, size_t n) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 0xf]);
  }
  return out;
}

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &n);
  return std::string(reinterpret_cast<char*>(out), n);
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return Hex(digest, sizeof(digest));
}

std::string UriEncode(std::string_view s, bool keep_slash) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

std::string SigV4Authorization(const S3Config& config, std::string_view method,
                               std::string_view canonical_uri, std::string_view query,
                               const std::vector<std::pair<std::string, std::string>>& headers,
                               std::string_view payload_sha256, std::string_view amz_date) {
  std::vector<std::pair<std::string, std::string>> sorted = headers;
  std::sort(sorted.begin(), sorted.end());
  std::string canonical_headers, signed_headers;
  for (const auto& [name, value] : sorted) {
    canonical_headers += name + ":" + value + "\n";
    signed_headers += (signed_headers.empty() ? "" : ";") + name;
  }
  std::string canonical_request = std::string(method) + "\n" + std::string(canonical_uri) + "\n" +
                                  std::string(query) + "\n" + canonical_headers + "\n" +
                                  signed_headers + "\n" + std::string(payload_sha256);
  std::string date(amz_date.substr(0, 8));
  std::string scope = date + "/" + config.region + "/s3/aws4_request";
  std::string to_sign = "AWS4-HMAC-SHA256\n" + std::string(amz_date) + "\n" + scope + "\n" +
                        Sha256Hex(canonical_request);
  std::string key = Hmac("AWS4" + config.secret_access_key, date);
  key = Hmac(key, config.region);
  key = Hmac(key, "s3");
  key = Hmac(key, "aws4_request");
  std::string signature = Hmac(key, to_sign);
  return "AWS4-HMAC-SHA256 Credential=" + config.access_key_id + "/" + scope +
         ",SignedHeaders=" + signed_headers + ",Signature=" +
         Hex(reinterpret_cast<const unsigned char*>(signature.data()), signature.size());
}

}  // namespace internal

namespace {

using internal::Sha256Hex;
using internal::UriEncode;

// The text of <tag>...</tag> from `from` on (S3's XML is flat enough); "" if absent.
std::string XmlTag(std::string_view xml, std::string_view tag, size_t* from = nullptr) {
  std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
  size_t start = from ? *from : 0;
  size_t a = xml.find(open, start);
  if (a == std::string_view::npos) {
    if (from) *from = std::string_view::npos;
    return "";
  }
  size_t b = xml.find(close, a + open.size());
  if (b == std::string_view::npos) {
    if (from) *from = std::string_view::npos;
    return "";
  }
  if (from) *from = b + close.size();
  std::string text(xml.substr(a + open.size(), b - a - open.size()));
  // The five predefined entities (keys may hold & < > ' ").
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out.push_back(text[i]);
      continue;
    }
    static const std::pair<const char*, char> kEntities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    bool done = false;
    for (const auto& [name, c] : kEntities) {
      if (text.compare(i, strlen(name), name) == 0) {
        out.push_back(c);
        i += strlen(name) - 1;
        done = true;
        break;
      }
    }
    if (!done) out.push_back('&');
  }
  return out;
}

std::string AmzDate() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

bool Retryable(const httplib::Result& r) {
  if (!r) return true;
  return r->status >= 500 || r->status == 429;
}

}  // namespace

struct S3Client::Impl {
  S3Config config;
  std::string scheme_host;  // "http://127.0.0.1:4568"
  std::string host;         // "127.0.0.1:4568" (the Host header)
  std::map<std::string, std::unique_ptr<httplib::Client>> clients;  // by scheme://host
  S3Counters counters;
  std::mt19937_64 jitter{std::random_device{}()};

  httplib::Client& ClientFor(const std::string& origin) {
    auto& c = clients[origin];
    if (!c) {
      c = std::make_unique<httplib::Client>(origin);
      c->set_connection_timeout(config.timeout_seconds, 0);
      c->set_read_timeout(config.timeout_seconds, 0);
      c->set_write_timeout(config.timeout_seconds, 0);
      c->set_keep_alive(true);
      c->set_tcp_nodelay(true);
      c->set_url_encode(false);  // paths are sent exactly as signed
    }
    return *c;
  }

  struct Request {
    std::string method;
    std::string bucket;
    std::string key;
    std::map<std::string, std::string> query;  // unencoded
    std::string body;
    httplib::Headers extra;  // unsigned headers (Range, If-None-Match, Content-Type)
  };

  // One signed request, retried on 5xx, 429 and lost connections. `attempts` gets how many
  // were sent.
  httplib::Result Send(const Request& req, int* attempts = nullptr) {
    std::string origin = scheme_host;
    std::string request_host = host;
    std::string path = "/";
    if (config.path_style || req.bucket.empty()) {
      if (!req.bucket.empty()) path += UriEncode(req.bucket, false) + "/";
    } else {
      size_t scheme = origin.find("://");
      origin = origin.substr(0, scheme + 3) + req.bucket + "." + origin.substr(scheme + 3);
      request_host = req.bucket + "." + host;
    }
    path += UriEncode(req.key, true);
    std::string query;
    for (const auto& [k, v] : req.query) {
      query += (query.empty() ? "" : "&") + UriEncode(k, false) + "=" + UriEncode(v, false);
    }
    std::string payload = Sha256Hex(req.body);
    for (int attempt = 1;; ++attempt) {
      std::string date = AmzDate();
      std::vector<std::pair<std::string, std::string>> signed_headers = {
          {"host", request_host}, {"x-amz-content-sha256", payload}, {"x-amz-date", date}};
      if (!config.session_token.empty()) {
        signed_headers.emplace_back("x-amz-security-token", config.session_token);
      }
      httplib::Headers headers = req.extra;
      for (const auto& [k, v] : signed_headers) {
        if (k != "host") headers.emplace(k, v);
      }
      headers.emplace("Authorization", internal::SigV4Authorization(config, req.method, path, query,
                                                                    signed_headers, payload, date));
      std::string target = query.empty() ? path : path + "?" + query;
      httplib::Client& client = ClientFor(origin);
      httplib::Result r = req.method == "GET"      ? client.Get(target, headers)
                          : req.method == "HEAD"   ? client.Head(target, headers)
                          : req.method == "DELETE" ? client.Delete(target, headers)
                          : req.method == "PUT"
                              ? client.Put(target, headers, req.body, "application/octet-stream")
                              : client.Post(target, headers, req.body, "application/xml");
      ++counters.requests;
      counters.bytes_sent += static_cast<int64_t>(req.body.size());
      if (r) counters.bytes_received += static_cast<int64_t>(r->body.size());
      if (attempts != nullptr) *attempts = attempt;
      if (!Retryable(r) || attempt >= config.max_attempts) return r;
      ++counters.retries;
      int64_t wait_ms = std::min<int64_t>(5000, 100LL << (attempt - 1));
      wait_ms += static_cast<int64_t>(jitter() % static_cast<uint64_t>(wait_ms / 4 + 1));
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    }
  }

  Status Failed(const httplib::Result& r, const std::string& what, const std::string& bucket,
                const std::string& key) const {
    std::string where = what + " s3://" + bucket + "/" + key;
    if (!r) {
      return Status::Unavailable(where + ": no answer from " + scheme_host + " after " +
                                 std::to_string(config.max_attempts) + " attempts (" +
                                 httplib::to_string(r.error()) + ")");
    }
    std::string code = XmlTag(r->body, "Code");
    std::string message = XmlTag(r->body, "Message");
    std::string msg = where + ": HTTP " + std::to_string(r->status) +
                      (code.empty() ? "" : " " + code) + (message.empty() ? "" : ": " + message);
    if (r->status == 404) return Status::NotFound(msg);
    if (r->status == 412 || r->status == 409) return Status::AlreadyExists(msg);
    if (r->status >= 500 || r->status == 429) return Status::Unavailable(msg);
    return Status::IOError(msg);
  }

  Status PutMultipart(const std::string& bucket, const std::string& key, std::string_view data) {
    httplib::Result r = Send({"POST", bucket, key, {{"uploads", ""}}, "", {}});
    if (!r || r->status != 200) return Failed(r, "starting a multipart upload of", bucket, key);
    std::string upload = XmlTag(r->body, "UploadId");
    if (upload.empty())
      return Status::IOError("multipart upload of s3://" + bucket + "/" + key +
                             ": no UploadId in the answer");
    std::string parts = "<CompleteMultipartUpload>";
    Status st = Status::OK();
    int number = 1;
    for (size_t at = 0; at < data.size(); at += static_cast<size_t>(config.part_size), ++number) {
      std::string part(data.substr(at, static_cast<size_t>(config.part_size)));
      httplib::Result p = Send({"PUT",
                                bucket,
                                key,
                                {{"partNumber", std::to_string(number)}, {"uploadId", upload}},
                                std::move(part),
                                {}});
      if (!p || p->status != 200) {
        st = Failed(p, "uploading part " + std::to_string(number) + " of", bucket, key);
        break;
      }
      parts += "<Part><PartNumber>" + std::to_string(number) + "</PartNumber><ETag>" +
               p->get_header_value("ETag") + "</ETag></Part>";
    }
    if (st.ok()) {
      parts += "</CompleteMultipartUpload>";
      httplib::Result c = Send({"POST", bucket, key, {{"uploadId", upload}}, parts, {}});
      // S3 may answer 200 with an <Error> body.
      if (c && c->status == 200 && c->body.find("<Error>") == std::string::npos) {
        return Status::OK();
      }
      st = Failed(c, "completing the multipart upload of", bucket, key);
    }
    (void)Send({"DELETE", bucket, key, {{"uploadId", upload}}, "", {}});  // best effort
    return st;
  }
};

S3Client::S3Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
S3Client::~S3Client() = default;

Result<std::unique_ptr<S3Client>> S3Client::Make(S3Config config) {
  auto impl = std::make_unique<Impl>();
  if (config.endpoint.empty()) config.endpoint = "https://s3." + config.region + ".amazonaws.com";
  while (!config.endpoint.empty() && config.endpoint.back() == '/') config.endpoint.pop_back();
  size_t scheme = config.endpoint.find("://");
  if (scheme == std::string::npos ||
      (config.endpoint.rfind("http://", 0) != 0 && config.endpoint.rfind("https://", 0) != 0) ||
      config.endpoint.find('/', scheme + 3) != std::string::npos) {
    return Status::InvalidArgument("S3 endpoint '" + config.endpoint +
                                   "' must be http(s)://HOST[:PORT] (no path)");
  }
  if (config.access_key_id.empty() || config.secret_access_key.empty()) {
    return Status::InvalidArgument(
        "S3 credentials are missing: set the access key id and secret access key (Iceberg: "
        "s3.access-key-id / s3.secret-access-key; Flink: s3.access-key / s3.secret-key; or "
        "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)");
  }
  if (config.part_size < (5 << 20)) config.part_size = 5 << 20;
  if (config.max_attempts < 1) config.max_attempts = 1;
  impl->scheme_host = config.endpoint;
  impl->host = config.endpoint.substr(scheme + 3);
  std::string hostname = impl->host.substr(0, impl->host.rfind(':'));
  if (hostname == "localhost" || hostname.find_first_not_of("0123456789.") == std::string::npos ||
      hostname.front() == '[') {
    config.path_style = true;
  }
  impl->config = std::move(config);
  return std::make_unique<S3Client>(std::move(impl));
}

Status S3Client::Put(const std::string& bucket, const std::string& key, std::string_view data,
                     bool if_absent) {
  if (!if_absent && static_cast<int64_t>(data.size()) > impl_->config.multipart_threshold) {
    return impl_->PutMultipart(bucket, key, data);
  }
  httplib::Headers extra;
  if (if_absent) extra.emplace("If-None-Match", "*");
  int attempts = 0;
  httplib::Result r = impl_->Send({"PUT", bucket, key, {}, std::string(data), extra}, &attempts);
  if (r && r->status == 200) return Status::OK();
  Status failed = impl_->Failed(r, "writing", bucket, key);
  if (!(if_absent && r && r->status == 412 && attempts > 1)) return failed;
  // An earlier attempt whose answer was lost (or a 5xx) may have landed, and the 412 may be
  // about our own object: it is ours if it holds what we wrote.
  Result<std::string> there = Get(bucket, key);
  if (!there.ok()) {
    return Status::Unavailable("writing s3://" + bucket + "/" + key +
                               ": a retry got 412 and the object cannot be read back to tell "
                               "whether it is ours (" +
                               there.status().message() + ")");
  }
  return *there == data ? Status::OK() : failed;
}

Result<std::string> S3Client::Get(const std::string& bucket, const std::string& key) {
  httplib::Result r = impl_->Send({"GET", bucket, key, {}, "", {}});
  if (r && r->status == 200) return std::move(r->body);
  return impl_->Failed(r, "reading", bucket, key);
}

Result<std::string> S3Client::GetRange(const std::string& bucket, const std::string& key,
                                       uint64_t offset, uint64_t length) {
  if (length == 0) return std::string();
  httplib::Headers extra = {
      {"Range", "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1)}};
  httplib::Result r = impl_->Send({"GET", bucket, key, {}, "", extra});
  if (r && (r->status == 206 || r->status == 200)) {
    if (r->status == 200) r->body = r->body.substr(std::min<size_t>(offset, r->body.size()));
    if (r->body.size() < length) {
      return Status::Corruption("s3://" + bucket + "/" + key + " is shorter than " +
                                std::to_string(offset + length) + " bytes");
    }
    r->body.resize(length);
    return std::move(r->body);
  }
  return impl_->Failed(r, "reading a range of", bucket, key);
}

Result<S3Object> S3Client::Head(const std::string& bucket, const std::string& key) {
  httplib::Result r = impl_->Send({"HEAD", bucket, key, {}, "", {}});
  if (!r || r->status != 200) return impl_->Failed(r, "looking up", bucket, key);
  S3Object o;
  o.key = key;
  o.etag = r->get_header_value("ETag");
  std::string length = r->get_header_value("Content-Length");
  o.size = length.empty() ? 0 : std::strtoll(length.c_str(), nullptr, 10);
  return o;
}

Status S3Client::Delete(const std::string& bucket, const std::string& key) {
  httplib::Result r = impl_->Send({"DELETE", bucket, key, {}, "", {}});
  if (r && (r->status == 204 || r->status == 200 || r->status == 404)) return Status::OK();
  return impl_->Failed(r, "deleting", bucket, key);
}

Result<std::vector<S3Object>> S3Client::List(const std::string& bucket, const std::string& prefix) {
  std::vector<S3Object> out;
  std::string token;
  for (;;) {
    std::map<std::string, std::string> query = {{"list-type", "2"}, {"prefix", prefix}};
    if (!token.empty()) query["continuation-token"] = token;
    httplib::Result r = impl_->Send({"GET", bucket, "", query, "", {}});
    if (!r || r->status != 200) return impl_->Failed(r, "listing", bucket, prefix);
    size_t at = 0;
    for (;;) {
      std::string contents = XmlTag(r->body, "Contents", &at);
      if (at == std::string::npos) break;
      S3Object o;
      o.key = XmlTag(contents, "Key");
      o.size = std::strtoll(XmlTag(contents, "Size").c_str(), nullptr, 10);
      o.etag = XmlTag(contents, "ETag");
      std::string modified = XmlTag(contents, "LastModified");  // 2026-12-01T12:00:00.000Z
      std::tm tm{};
      if (strptime(modified.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) != nullptr) {
        o.last_modified_ms = static_cast<int64_t>(timegm(&tm)) * 1000;
      }
      out.push_back(std::move(o));
    }
    if (XmlTag(r->body, "IsTruncated") != "true") break;
    token = XmlTag(r->body, "NextContinuationToken");
    if (token.empty()) break;
  }
  std::sort(out.begin(), out.end(),
            [](const S3Object& a, const S3Object& b) { return a.key < b.key; });
  return out;
}

Status S3Client::CreateBucket(const std::string& bucket) {
  httplib::Result r = impl_->Send({"PUT", bucket, "", {}, "", {}});
  if (r && r->status == 200) return Status::OK();
  return impl_->Failed(r, "creating bucket", bucket, "");
}

S3Counters S3Client::counters() const { return impl_->counters; }

Result<std::pair<std::string, std::string>> ParseS3Uri(std::string_view uri) {
  for (std::string_view scheme : {"s3://", "s3a://", "s3n://"}) {
    if (uri.substr(0, scheme.size()) != scheme) continue;
    std::string_view rest = uri.substr(scheme.size());
    size_t slash = rest.find('/');
    std::string bucket(rest.substr(0, slash));
    std::string key = slash == std::string_view::npos ? "" : std::string(rest.substr(slash + 1));
    if (bucket.empty()) break;
    return std::make_pair(std::move(bucket), std::move(key));
  }
  return Status::InvalidArgument("'" + std::string(uri) + "' is not an s3://bucket/key URI");
}

bool IsS3Uri(std::string_view path) {
  return path.rfind("s3://", 0) == 0 || path.rfind("s3a://", 0) == 0 ||
         path.rfind("s3n://", 0) == 0;
}

}  // namespace floe::io
