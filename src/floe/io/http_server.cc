#include "floe/io/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <regex>
#include <thread>

#include "floe/common/log.h"
#include "floe/common/mutex.h"
#include "floe/io/http_request_parser.h"

namespace floe::io {

namespace {

// After a reply the connection is half-closed and read (and dropped) until the peer closes, so
// a client still sending a refused body, as most do before they read, gets the reply instead of
// a reset; this long and this much at most (it costs no memory, and the connection is evictable).
constexpr int64_t kLingerMillis = 2000;
constexpr size_t kLingerBytes = 64 << 20;
// Paths longer than this are not matched against the routes' regexes (std::regex recurses
// per character).
constexpr size_t kMaxRoutedPathBytes = 2048;

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// A header value or name must not end the header (response splitting).
std::string HeaderSafe(std::string s) {
  std::erase_if(s, [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
  return s;
}

std::string Serialize(const HttpResponse& res, bool head) {
  const bool no_body = res.status == 204 || res.status == 304 || res.status < 200;
  std::string out =
      "HTTP/1.1 " + std::to_string(res.status) + " " + HttpReason(res.status) + "\r\n";
  if (!res.content_type.empty() && !no_body) {
    out += "Content-Type: " + HeaderSafe(res.content_type) + "\r\n";
  }
  if (!no_body) out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  out += "Connection: close\r\n";
  for (const auto& [name, value] : res.headers) {
    out += HeaderSafe(name) + ": " + HeaderSafe(value) + "\r\n";
  }
  out += "\r\n";
  if (!head && !no_body) out += res.body;
  return out;
}

std::string PeerAddress(const sockaddr_storage& addr) {
  char host[NI_MAXHOST] = "?";
  ::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), sizeof(addr), host, sizeof(host), nullptr,
                0, NI_NUMERICHOST);
  return host;
}

}  // namespace

std::string HttpRequest::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return "";
}

bool HttpRequest::HasQuery(std::string_view name) const {
  return std::any_of(query.begin(), query.end(), [&](const auto& kv) { return kv.first == name; });
}

std::string HttpRequest::QueryValue(std::string_view name) const {
  for (const auto& [n, v] : query) {
    if (n == name) return v;
  }
  return "";
}

void HttpResponse::SetHeader(std::string name, std::string value) {
  for (auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) {
      v = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::move(name), std::move(value));
}

std::string DecodeUrl(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
      i += 2;
    } else if (text[i] == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ParseUrlEncoded(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!text.empty()) {
    const size_t amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    out.emplace_back(DecodeUrl(pair.substr(0, eq), true),
                     eq == std::string_view::npos ? "" : DecodeUrl(pair.substr(eq + 1), true));
  }
  return out;
}

const char* HttpReason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return status < 400 ? "OK" : status < 500 ? "Bad Request" : "Server Error";
  }
}

// The I/O thread's connection table and the handler threads' queues, in one struct so what is
// shared (under `mu`) and what is the I/O thread's alone is visible in one place.
struct HttpServer::Impl {
  struct RouteEntry {
    std::string method;
    std::regex pattern;
    Handler handler;
  };
  enum class Phase { kReading, kHandling, kWriting, kLingering };
  struct Connection {
    int fd = -1;
    uint64_t id = 0;  // accept order: the oldest has the smallest
    std::string peer;
    Phase phase = Phase::kReading;
    int64_t deadline_ms = 0;
    std::unique_ptr<internal::HttpRequestParser> parser;
    std::string out;
    size_t out_pos = 0;
    size_t lingered = 0;
  };

  explicit Impl(Options o) : options(std::move(o)) {}

  Options options;
  std::vector<RouteEntry> routes;
  int listen_fd = -1;
  int wake_fd = -1;
  std::thread io_thread;
  std::vector<std::thread> handlers;

  // The I/O thread's alone.
  std::map<uint64_t, Connection> connections;
  uint64_t next_id = 1;
  size_t buffered = 0;

  Mutex stop_mu;  // one Stop at a time: it joins the threads
  Mutex mu;
  std::condition_variable work_cv, stopped_cv;
  bool stopping FLOE_GUARDED_BY(mu) = false;
  bool stopped FLOE_GUARDED_BY(mu) = false;
  std::deque<std::pair<uint64_t, HttpRequest>> work FLOE_GUARDED_BY(mu);
  std::deque<std::pair<uint64_t, std::string>> replies FLOE_GUARDED_BY(mu);

  // ---- handler threads ----
  void HandlerLoop();
  HttpResponse Dispatch(HttpRequest& req);
  void ErrorReply(int status, const std::string& message, HttpResponse& res) const;

  // ---- I/O thread ----
  void IoLoop();
  bool Stopping() {
    MutexLock lock(mu);
    return stopping;
  }
  void Wake() {
    uint64_t one = 1;
    (void)!::write(wake_fd, &one, sizeof(one));
  }
  void Accept(int64_t now);
  bool MakeRoom(const std::string& peer);
  void Read(Connection& c, int64_t now);
  void Write(Connection& c, int64_t now);
  void Linger(Connection& c);
  void Refuse(Connection& c, int status, const std::string& message, int64_t now);
  void StartWrite(Connection& c, std::string bytes, int64_t now);
  void TakeReplies(int64_t now);
  void Expire(int64_t now);
  void Close(uint64_t id);
  void EvictOldest(const std::string* peer, bool reading_only);
};

void HttpServer::Impl::ErrorReply(int status, const std::string& message, HttpResponse& res) const {
  res = HttpResponse();
  res.status = status;
  if (options.error_body) {
    options.error_body(status, message, res);
  } else {
    res.SetContent(message + "\n", "text/plain; charset=utf-8");
  }
}

HttpResponse HttpServer::Impl::Dispatch(HttpRequest& req) {
  HttpResponse res;
  try {
    if (options.before && options.before(req, res)) return res;
    if (req.path.size() > kMaxRoutedPathBytes) {
      ErrorReply(414, "the path is longer than " + std::to_string(kMaxRoutedPathBytes) + " bytes",
                 res);
      return res;
    }
    const std::string method = req.method == "HEAD" ? "GET" : req.method;
    std::string allowed;
    for (const RouteEntry& route : routes) {
      std::smatch m;
      if (!std::regex_match(req.path, m, route.pattern)) continue;
      if (route.method != method) {
        allowed += allowed.empty() ? route.method : ", " + route.method;
        continue;
      }
      req.matches.assign(m.begin(), m.end());
      route.handler(req, res);
      return res;
    }
    if (allowed.empty()) {
      ErrorReply(404, "no such endpoint", res);
    } else {
      ErrorReply(405, "method " + req.method + " is not allowed here (" + allowed + ")", res);
      res.SetHeader("Allow", allowed);
    }
  } catch (const std::exception& e) {
    LogError("%s server: %s %s: %s", options.name.c_str(), req.method.c_str(),
             req.path.substr(0, 200).c_str(), e.what());
    ErrorReply(500, "internal error", res);
  } catch (...) {
    LogError("%s server: %s %s: an exception", options.name.c_str(), req.method.c_str(),
             req.path.substr(0, 200).c_str());
    ErrorReply(500, "internal error", res);
  }
  return res;
}

void HttpServer::Impl::HandlerLoop() {
  while (true) {
    std::pair<uint64_t, HttpRequest> item;
    {
      MutexLock lock(mu);
      while (!stopping && work.empty()) work_cv.wait(lock.native());
      if (stopping) return;
      item = std::move(work.front());
      work.pop_front();
    }
    HttpResponse res = Dispatch(item.second);
    std::string bytes = Serialize(res, item.second.method == "HEAD");
    {
      MutexLock lock(mu);
      replies.emplace_back(item.first, std::move(bytes));
    }
    Wake();
  }
}

void HttpServer::Impl::Close(uint64_t id) {
  auto it = connections.find(id);
  if (it == connections.end()) return;
  if (it->second.parser) buffered -= it->second.parser->buffered_bytes();
  ::close(it->second.fd);
  connections.erase(it);
}

void HttpServer::Impl::StartWrite(Connection& c, std::string bytes, int64_t now) {
  if (c.parser) buffered -= c.parser->buffered_bytes();
  c.parser.reset();
  c.out = std::move(bytes);
  c.out_pos = 0;
  c.phase = Phase::kWriting;
  c.deadline_ms = now + options.limits.write_deadline_ms;
  Write(c, now);
}

void HttpServer::Impl::Refuse(Connection& c, int status, const std::string& message, int64_t now) {
  HttpResponse res;
  ErrorReply(status, message, res);
  StartWrite(c, Serialize(res, false), now);
}

// The oldest connection that no handler holds (of `peer` if given; still sending its request if
// `reading_only`) is closed; a request it was still sending gets a 503.
void HttpServer::Impl::EvictOldest(const std::string* peer, bool reading_only) {
  for (auto& [id, c] : connections) {
    if (c.phase == Phase::kHandling || (reading_only && c.phase != Phase::kReading) ||
        (peer != nullptr && c.peer != *peer)) {
      continue;
    }
    if (c.phase == Phase::kReading) {
      HttpResponse res;
      ErrorReply(503, "the server is at its connection limit; this request was the slowest", res);
      std::string bytes = Serialize(res, false);
      (void)::send(c.fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    Close(id);
    return;
  }
}

// Makes room for one more connection from `peer`; false when every connection is being handled.
bool HttpServer::Impl::MakeRoom(const std::string& peer) {
  const HttpLimits& limits = options.limits;
  size_t from_peer = 0;
  for (const auto& [id, c] : connections) from_peer += c.peer == peer;
  if (from_peer >= limits.max_connections_per_client) {
    const size_t before = connections.size();
    EvictOldest(&peer, false);
    if (connections.size() == before) return false;
  }
  if (connections.size() >= limits.max_connections) {
    const size_t before = connections.size();
    EvictOldest(nullptr, false);
    if (connections.size() == before) return false;
  }
  return true;
}

// A few connections a round, each read at once: a request that arrives whole is complete (and no
// longer evictable) before a burst of newer connections could push it out as the oldest.
void HttpServer::Impl::Accept(int64_t now) {
  const size_t per_round = std::max<size_t>(1, options.limits.max_connections / 4);
  for (size_t i = 0; i < per_round; ++i) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                             SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    std::string peer = PeerAddress(addr);
    if (!MakeRoom(peer)) {
      HttpResponse res;
      ErrorReply(503, "every connection is being served; try again", res);
      std::string bytes = Serialize(res, false);
      (void)::send(fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      ::close(fd);
      continue;
    }
    Connection& c = connections[next_id];
    c.fd = fd;
    c.id = next_id++;
    c.peer = std::move(peer);
    c.deadline_ms = now + options.limits.request_deadline_ms;
    c.parser = std::make_unique<internal::HttpRequestParser>(options.limits);
    Read(c, now);
  }
}

void HttpServer::Impl::Read(Connection& c, int64_t now) {
  char chunk[16 * 1024];
  const ssize_t n = ::recv(c.fd, chunk, sizeof(chunk), 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) return Close(c.id);
  const size_t before = c.parser->buffered_bytes();
  const auto state = c.parser->Feed(std::string_view(chunk, static_cast<size_t>(n)));
  buffered = buffered - before + c.parser->buffered_bytes();
  if (state == internal::HttpRequestParser::State::kFailed) {
    return Refuse(c, c.parser->error_status(), c.parser->error(), now);
  }
  if (state == internal::HttpRequestParser::State::kDone) {
    buffered -= c.parser->buffered_bytes();
    HttpRequest req = std::move(c.parser->request());
    req.peer = c.peer;
    c.parser.reset();
    c.phase = Phase::kHandling;
    {
      MutexLock lock(mu);
      work.emplace_back(c.id, std::move(req));
    }
    work_cv.notify_one();
    return;
  }
  const uint64_t self = c.id;
  while (buffered > options.limits.max_buffered_bytes) {
    const size_t count = connections.size();
    EvictOldest(nullptr, /*reading_only=*/true);
    if (connections.size() == count || !connections.count(self)) break;
  }
}

void HttpServer::Impl::Write(Connection& c, int64_t now) {
  while (c.out_pos < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos,
                             MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) return Close(c.id);
    c.out_pos += static_cast<size_t>(n);
  }
  ::shutdown(c.fd, SHUT_WR);
  c.out.clear();
  c.out.shrink_to_fit();
  c.phase = Phase::kLingering;
  c.deadline_ms = now + kLingerMillis;
}

void HttpServer::Impl::Linger(Connection& c) {
  char drop[16 * 1024];
  const ssize_t n = ::recv(c.fd, drop, sizeof(drop), 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  c.lingered += n > 0 ? static_cast<size_t>(n) : 0;
  if (n <= 0 || c.lingered > kLingerBytes) Close(c.id);
}

void HttpServer::Impl::TakeReplies(int64_t now) {
  std::deque<std::pair<uint64_t, std::string>> done;
  {
    MutexLock lock(mu);
    done.swap(replies);
  }
  for (auto& [id, bytes] : done) {
    auto it = connections.find(id);
    if (it != connections.end()) StartWrite(it->second, std::move(bytes), now);
  }
}

void HttpServer::Impl::Expire(int64_t now) {
  std::vector<uint64_t> late;
  for (const auto& [id, c] : connections) {
    if (c.phase != Phase::kHandling && now >= c.deadline_ms) late.push_back(id);
  }
  for (uint64_t id : late) {
    Connection& c = connections[id];
    if (c.phase == Phase::kReading) {
      Refuse(c, 408,
             "no complete request within " +
                 std::to_string(options.limits.request_deadline_ms / 1000) + " s",
             now);
      // One non-blocking try: a peer that does not read its 408 does not get more time.
      if (connections.count(id) && connections[id].phase == Phase::kWriting) Close(id);
    } else {
      Close(id);
    }
  }
}

void HttpServer::Impl::IoLoop() {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;
  while (!Stopping()) {
    int64_t now = NowMillis();
    int64_t next = now + 1000;
    fds.assign({{wake_fd, POLLIN, 0}, {listen_fd, POLLIN, 0}});
    ids.assign(2, 0);
    for (const auto& [id, c] : connections) {
      if (c.phase == Phase::kHandling) continue;
      fds.push_back({c.fd, static_cast<short>(c.phase == Phase::kWriting ? POLLOUT : POLLIN), 0});
      ids.push_back(id);
      next = std::min(next, c.deadline_ms);
    }
    ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(0, next - now)));
    now = NowMillis();
    if (fds[0].revents & POLLIN) {
      uint64_t count = 0;
      (void)!::read(wake_fd, &count, sizeof(count));
    }
    TakeReplies(now);
    for (size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto it = connections.find(ids[i]);
      if (it == connections.end()) continue;
      Connection& c = it->second;
      if (c.phase == Phase::kReading) {
        Read(c, now);
      } else if (c.phase == Phase::kWriting) {
        Write(c, now);
      } else if (c.phase == Phase::kLingering) {
        Linger(c);
      }
    }
    if (fds[1].revents & POLLIN) Accept(now);
    Expire(now);
  }
  while (!connections.empty()) Close(connections.begin()->first);
}

Result<std::unique_ptr<HttpServer>> HttpServer::Make(Options options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  impl->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl->wake_fd < 0) return Status::IOError(std::string("eventfd: ") + std::strerror(errno));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  Stop();
  if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
  ::close(impl_->wake_fd);
}

void HttpServer::Route(std::string method, const std::string& path_pattern, Handler handler) {
  impl_->routes.push_back({std::move(method), std::regex(path_pattern), std::move(handler)});
}

Result<int> HttpServer::Bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    return Status::IOError("cannot resolve " + host);
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(found, ::freeaddrinfo);
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::IOError(std::string("socket: ") + std::strerror(errno));
  int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
    const int error = errno;
    ::close(fd);
    return Status::IOError("cannot listen on " + host + ":" + service + ": " +
                           std::strerror(error));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
  impl_->listen_fd = fd;
  return bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

Status HttpServer::Start() {
  if (impl_->listen_fd < 0) return Status::InvalidArgument("HttpServer::Start before Bind");
  for (int i = 0; i < std::max(1, impl_->options.limits.handler_threads); ++i) {
    impl_->handlers.emplace_back([impl = impl_.get()] { impl->HandlerLoop(); });
  }
  impl_->io_thread = std::thread([impl = impl_.get()] { impl->IoLoop(); });
  return Status::OK();
}

void HttpServer::Stop() {
  MutexLock stop_lock(impl_->stop_mu);
  {
    MutexLock lock(impl_->mu);
    if (impl_->stopped) return;
    impl_->stopping = true;
  }
  impl_->work_cv.notify_all();
  impl_->Wake();
  if (impl_->io_thread.joinable()) impl_->io_thread.join();
  for (std::thread& t : impl_->handlers) {
    if (t.joinable()) t.join();
  }
  {
    MutexLock lock(impl_->mu);
    impl_->stopped = true;
  }
  impl_->stopped_cv.notify_all();
}

void HttpServer::Wait() {
  MutexLock lock(impl_->mu);
  while (!impl_->stopped) impl_->stopped_cv.wait(lock.native());
}

}  // namespace floe::io
