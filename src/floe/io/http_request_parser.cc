#include "floe/io/http_request_parser.h"

#include <algorithm>
#include <cctype>

namespace floe::io::internal {

namespace {

// A chunk-size line with its extensions; real clients send a few bytes.
constexpr size_t kMaxChunkSizeLineBytes = 1024;
constexpr size_t kMaxMethodBytes = 16;

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

HttpRequestParser::State HttpRequestParser::Feed(std::string_view bytes) {
  if (state_ != State::kMore) return state_;
  pending_.append(bytes);
  while (state_ == State::kMore && Step()) {
  }
  pending_.erase(0, pos_);
  pos_ = 0;
  return state_;
}

bool HttpRequestParser::Fail(int status, std::string why) {
  state_ = State::kFailed;
  error_status_ = status;
  error_ = std::move(why);
  pending_.clear();
  pos_ = 0;
  return false;
}

// The next line (without its LF and a CR before it), bounded by the phase's limit.
bool HttpRequestParser::TakeLine(std::string_view* line) {
  size_t limit = kMaxChunkSizeLineBytes;
  if (phase_ == Phase::kRequestLine) limit = limits_.max_request_line_bytes;
  if (phase_ == Phase::kHeaders || phase_ == Phase::kTrailers) {
    limit = limits_.max_head_bytes - std::min(head_bytes_, limits_.max_head_bytes);
  }
  const size_t end = pending_.find('\n', pos_);
  const size_t length = (end == std::string::npos ? pending_.size() : end + 1) - pos_;
  if (length > limit) {
    if (phase_ == Phase::kRequestLine) {
      return Fail(414, "the request line is longer than " +
                           std::to_string(limits_.max_request_line_bytes) + " bytes");
    }
    if (phase_ == Phase::kChunkSize) {
      return Fail(400, "a chunk-size line is longer than " +
                           std::to_string(kMaxChunkSizeLineBytes) + " bytes");
    }
    return Fail(431, "the request head is longer than " + std::to_string(limits_.max_head_bytes) +
                         " bytes");
  }
  if (end == std::string::npos) return false;
  std::string_view text(pending_.data() + pos_, end - pos_);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  if (phase_ != Phase::kChunkSize) head_bytes_ += length;
  pos_ = end + 1;
  *line = text;
  return true;
}

bool HttpRequestParser::Step() {
  std::string_view line;
  switch (phase_) {
    case Phase::kRequestLine:
      return TakeLine(&line) && RequestLine(line);
    case Phase::kHeaders:
    case Phase::kTrailers:
      if (!TakeLine(&line)) return false;
      if (!line.empty()) return HeaderLine(line);
      if (phase_ == Phase::kTrailers) {
        state_ = State::kDone;
        return false;
      }
      return HeadComplete();
    case Phase::kBody:
    case Phase::kChunkData: {
      const size_t n = std::min(body_left_, pending_.size() - pos_);
      request_.body.append(pending_, pos_, n);
      pos_ += n;
      body_left_ -= n;
      if (body_left_ > 0) return false;
      if (phase_ == Phase::kBody) {
        state_ = State::kDone;
        return false;
      }
      phase_ = Phase::kChunkEnd;
      return true;
    }
    case Phase::kChunkEnd:
      if (!TakeLine(&line)) return false;
      if (!line.empty()) return Fail(400, "a chunk does not end with CRLF");
      phase_ = Phase::kChunkSize;
      return true;
    case Phase::kChunkSize:
      return TakeLine(&line) && ChunkSize(line);
  }
  return false;
}

bool HttpRequestParser::RequestLine(std::string_view line) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Fail(400, "the request line is not 'METHOD TARGET HTTP/1.1'");
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (method.empty() || method.size() > kMaxMethodBytes ||
      !std::all_of(method.begin(), method.end(), IsTokenChar)) {
    return Fail(400, "the request method is not a token of at most " +
                         std::to_string(kMaxMethodBytes) + " characters");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return Fail(version.rfind("HTTP/", 0) == 0 ? 505 : 400, "only HTTP/1.0 and HTTP/1.1");
  }
  if (target.empty() || target.front() != '/' ||
      std::any_of(target.begin(), target.end(),
                  [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; })) {
    return Fail(400, "the request target must be a path starting with '/'");
  }
  request_.method = std::string(method);
  const size_t question = target.find('?');
  request_.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) {
    request_.query = ParseUrlEncoded(target.substr(question + 1));
  }
  phase_ = Phase::kHeaders;
  return true;
}

bool HttpRequestParser::HeaderLine(std::string_view line) {
  if (++header_lines_ > limits_.max_headers) {
    return Fail(431, "more than " + std::to_string(limits_.max_headers) + " header lines");
  }
  const size_t colon = line.find(':');
  std::string_view name = line.substr(0, colon);
  if (colon == std::string_view::npos || name.empty() ||
      !std::all_of(name.begin(), name.end(), IsTokenChar)) {
    return Fail(400, "a header line is not 'Name: value'");
  }
  std::string_view value = Trim(line.substr(colon + 1));
  if (std::any_of(value.begin(), value.end(), [](char c) {
        return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
      })) {
    return Fail(400, "header '" + std::string(name) + "' has a control character");
  }
  // Trailers are counted and bounded, not kept: nothing floe serves reads them.
  if (phase_ == Phase::kHeaders) request_.headers.emplace_back(Lower(name), std::string(value));
  return true;
}

bool HttpRequestParser::HeadComplete() {
  int lengths = 0;
  std::string length;
  std::string transfer_encoding, content_encoding;
  for (const auto& [name, value] : request_.headers) {
    if (name == "content-length") {
      ++lengths;
      length = value;
    } else if (name == "transfer-encoding") {
      transfer_encoding += transfer_encoding.empty() ? Lower(value) : "," + Lower(value);
    } else if (name == "content-encoding") {
      content_encoding = Lower(value);
    }
  }
  if (!content_encoding.empty() && content_encoding != "identity") {
    return Fail(415, "Content-Encoding '" + content_encoding + "' is not accepted (identity only)");
  }
  if (!transfer_encoding.empty()) {
    if (transfer_encoding != "chunked") {
      return Fail(501, "Transfer-Encoding '" + transfer_encoding + "' (only chunked)");
    }
    if (lengths > 0) return Fail(400, "both Content-Length and Transfer-Encoding");
    phase_ = Phase::kChunkSize;
    return true;
  }
  if (lengths == 0) {
    state_ = State::kDone;
    return false;
  }
  if (lengths > 1 || length.empty() || length.size() > 18 ||
      !std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Fail(400, "Content-Length must be one decimal number");
  }
  body_left_ = std::stoull(length);
  if (body_left_ > limits_.max_body_bytes) {
    return Fail(413, "the body's " + length + " bytes are over the limit of " +
                         std::to_string(limits_.max_body_bytes));
  }
  phase_ = Phase::kBody;
  if (body_left_ == 0) state_ = State::kDone;
  return body_left_ > 0;
}

bool HttpRequestParser::ChunkSize(std::string_view line) {
  std::string_view digits = Trim(line.substr(0, line.find(';')));
  size_t size = 0;
  if (digits.empty() || digits.size() > 15 ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
    return Fail(400, "a chunk size is not a hexadecimal number");
  }
  for (char c : digits) {
    size = size * 16 +
           static_cast<size_t>(std::isdigit(static_cast<unsigned char>(c))
                                   ? c - '0'
                                   : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
  }
  if (size > limits_.max_body_bytes - request_.body.size()) {
    return Fail(413, "the chunked body is over the limit of " +
                         std::to_string(limits_.max_body_bytes) + " bytes");
  }
  if (size == 0) {
    phase_ = Phase::kTrailers;
    return true;
  }
  body_left_ = size;
  phase_ = Phase::kChunkData;
  return true;
}

}  // namespace floe::io::internal
