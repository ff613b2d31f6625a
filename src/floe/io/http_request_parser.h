#pragma once

// The incremental HTTP/1.1 request parser behind HttpServer (http_server.h): bytes in as they
// arrive, one request out, every limit of HttpLimits checked as the bytes come so a hostile
// peer costs at most the limits. Internal to floe_io; not thread-safe (one per connection).

#include <cstddef>
#include <string>
#include <string_view>

#include "floe/io/http_server.h"

namespace floe::io::internal {

class HttpRequestParser {
 public:
  enum class State { kMore, kDone, kFailed };

  explicit HttpRequestParser(const HttpLimits& limits) : limits_(limits) {}

  // Takes the next bytes of the connection. Once kDone or kFailed, further bytes are ignored.
  State Feed(std::string_view bytes);
  State state() const { return state_; }
  // kDone: the request (body decoded).
  HttpRequest& request() { return request_; }
  // kFailed: the status to answer (400, 413, 414, 415, 431, 501, 505) and why.
  int error_status() const { return error_status_; }
  const std::string& error() const { return error_; }
  // Bytes held: unparsed input and the request so far.
  size_t buffered_bytes() const { return pending_.size() + request_.body.size() + head_bytes_; }

 private:
  enum class Phase { kRequestLine, kHeaders, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailers };

  // Each consumes from pending_ at pos_; false when it needs more bytes (or failed).
  bool Step();
  bool TakeLine(std::string_view* line);
  bool RequestLine(std::string_view line);
  bool HeaderLine(std::string_view line);
  bool HeadComplete();
  bool ChunkSize(std::string_view line);
  bool Fail(int status, std::string why);

  const HttpLimits& limits_;
  State state_ = State::kMore;
  Phase phase_ = Phase::kRequestLine;
  std::string pending_;
  size_t pos_ = 0;
  size_t head_bytes_ = 0;
  size_t header_lines_ = 0;
  size_t body_left_ = 0;  // of Content-Length, or of the current chunk
  HttpRequest request_;
  int error_status_ = 0;
  std::string error_;
};

}  // namespace floe::io::internal
