#pragma once

// floe's bounded HTTP/1.1 server, used by every HTTP endpoint floe runs (the coordinator's
// metrics and web UI, `floe catalog serve`). Every peer is hostile: what one connection may
// cost is bounded in bytes, header count and time before any handler sees its request, and slow
// or idle connections never hold a handler thread.
//
// One I/O thread owns every socket: it accepts, reads requests without blocking into a bounded
// parser, and writes replies; a fixed pool of handler threads runs the routes on complete
// requests only. One request per connection (`Connection: close`). What is bounded, and the
// answer past each bound:
//   - the request line (414) and the head, request line + headers + chunked trailers (431),
//     in bytes, and the number of header lines (431);
//   - the body, decoded, whether sent with Content-Length or chunked (413, before it is read
//     when the length is declared); a Content-Encoding other than identity is refused (415);
//   - the whole request, from accept to its last byte: request_deadline_ms (408), however
//     slowly the bytes come; the reply: write_deadline_ms (then the connection is closed);
//   - connections, in total and per peer address: at either limit the oldest connection not
//     being handled is closed (503 if it was still sending), so a newcomer whose request comes
//     at once is always served; when every connection is being handled the newcomer gets 503;
//   - the bytes buffered for unfinished requests over all connections: past
//     max_buffered_bytes the oldest of them are closed (503).
// A handler's exception is a 500 (logged); it never escapes.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/status.h"

namespace floe::io {

struct HttpLimits {
  size_t max_request_line_bytes = 8 * 1024;
  size_t max_head_bytes = 16 * 1024;
  size_t max_headers = 64;
  size_t max_body_bytes = 4 * 1024;
  int64_t request_deadline_ms = 10'000;
  int64_t write_deadline_ms = 10'000;
  size_t max_connections = 64;
  size_t max_connections_per_client = 32;
  size_t max_buffered_bytes = 16 << 20;
  int handler_threads = 2;
};

struct HttpRequest {
  std::string method;  // HEAD is routed to GET's handler; the reply then has no body
  std::string path;    // the target before '?', still percent-encoded
  std::vector<std::pair<std::string, std::string>> query;    // decoded
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;                                          // decoded from chunks if chunked
  // [0] the whole path, then the route pattern's groups (still percent-encoded), as std::smatch.
  std::vector<std::string> matches;
  std::string peer;  // the client's address

  // The first header named `name` (any case), "" if none.
  std::string Header(std::string_view name) const;
  bool HasQuery(std::string_view name) const;
  std::string QueryValue(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string content_type;

  void SetContent(std::string content, std::string type) {
    body = std::move(content);
    content_type = std::move(type);
  }
  void SetHeader(std::string name, std::string value);
};

// Percent-decoding (`plus_is_space` for form bodies); a bad escape is kept as it is.
std::string DecodeUrl(std::string_view text, bool plus_is_space);
// application/x-www-form-urlencoded (also a query string) -> decoded pairs in order.
std::vector<std::pair<std::string, std::string>> ParseUrlEncoded(std::string_view text);
// The status line's reason phrase ("Not Found").
const char* HttpReason(int status);

class HttpServer {
 public:
  using Handler = std::function<void(const HttpRequest&, HttpResponse&)>;
  // Turns a refusal (the server's own or a route's plain error) into the reply's body.
  using ErrorBody = std::function<void(int status, const std::string& message, HttpResponse&)>;
  // Runs before routing; true when it answered the request itself.
  using Filter = std::function<bool(const HttpRequest&, HttpResponse&)>;

  struct Options {
    std::string name = "HTTP";  // in log lines
    HttpLimits limits;
    ErrorBody error_body;  // empty: text/plain
    Filter before;         // empty: none
  };

  // REQUIRES: Route calls before Start; patterns are ECMAScript regexes matched against the
  // whole (encoded) path.
  static Result<std::unique_ptr<HttpServer>> Make(Options options);
  ~HttpServer();
  void Route(std::string method, const std::string& path_pattern, Handler handler);

  // Binds host:port (0: a free port) without SO_REUSEPORT; the port bound.
  Result<int> Bind(const std::string& host, int port);
  // Starts the I/O and handler threads; until Stop they serve.
  Status Start();
  // Idempotent; a handler that is running finishes first.
  void Stop();
  // Blocks until Stop.
  void Wait();

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace floe::io
