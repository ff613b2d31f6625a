#include "floe/io/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "floe/io/http_request_parser.h"

namespace floe::io {
namespace {

using internal::HttpRequestParser;

TEST(HttpRequestParser, AHeaderFloodStopsAtTheHeaderCountWithBoundedMemory) {
  HttpLimits limits;
  HttpRequestParser parser(limits);
  ASSERT_EQ(parser.Feed("GET / HTTP/1.1\r\n"), HttpRequestParser::State::kMore);
  size_t lines = 0;
  while (parser.Feed("X-A: b\r\n") == HttpRequestParser::State::kMore) {
    ++lines;
    ASSERT_LE(parser.buffered_bytes(), limits.max_head_bytes);
  }
  EXPECT_EQ(lines, limits.max_headers);
  EXPECT_EQ(parser.error_status(), 431);
  EXPECT_EQ(parser.error(), "more than 64 header lines");
}

TEST(HttpRequestParser, OneEndlessHeaderLineStopsAtTheHeadLimit) {
  HttpLimits limits;
  HttpRequestParser parser(limits);
  parser.Feed("GET / HTTP/1.1\r\nX-A: ");
  while (parser.Feed(std::string(1000, 'a')) == HttpRequestParser::State::kMore) {
    ASSERT_LE(parser.buffered_bytes(), limits.max_head_bytes + 1000);
  }
  EXPECT_EQ(parser.error_status(), 431);
}

TEST(HttpRequestParser, AChunkedBodyIsDecodedAndBoundedLikeADeclaredOne) {
  HttpLimits limits;
  limits.max_body_bytes = 10;
  HttpRequestParser ok(limits);
  EXPECT_EQ(ok.Feed("POST /x?a=1&b=c%20d HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nTrailer: t\r\n\r\n"),
            HttpRequestParser::State::kDone);
  EXPECT_EQ(ok.request().body, "abcde");
  EXPECT_EQ(ok.request().QueryValue("b"), "c d");
  EXPECT_EQ(ok.request().path, "/x");

  HttpRequestParser chunked(limits);
  chunked.Feed("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n");
  EXPECT_EQ(chunked.Feed("8\r\n"), HttpRequestParser::State::kFailed);
  EXPECT_EQ(chunked.error_status(), 413);
  EXPECT_EQ(chunked.error(), "the chunked body is over the limit of 10 bytes");

  HttpRequestParser declared(limits);
  EXPECT_EQ(declared.Feed("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n"),
            HttpRequestParser::State::kFailed);
  EXPECT_EQ(declared.error_status(), 413);
}

TEST(HttpRequestParser, RefusesAmbiguousOrEncodedBodiesAndGarbage) {
  HttpLimits limits;
  auto status_of = [&](const std::string& bytes) {
    HttpRequestParser p(limits);
    p.Feed(bytes);
    return p.state() == HttpRequestParser::State::kFailed ? p.error_status() : 0;
  };
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            400);
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: 1\r\n\r\n"),
            415);
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), 501);
  EXPECT_EQ(status_of("GARBAGE\r\n\r\n"), 400);
  EXPECT_EQ(status_of("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(status_of("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n"), 414);
  EXPECT_EQ(status_of("GET / HTTP/1.1\r\n folded\r\n\r\n"), 400);
}

// ---- the server over real sockets ----

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval timeout{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  return fd;
}

// Everything the server sends until it closes.
std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

std::string Exchange(int port, const std::string& request) {
  const int fd = Connect(port);
  (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string reply = ReadAll(fd);
  ::close(fd);
  return reply;
}

std::unique_ptr<HttpServer> Serve(HttpLimits limits, int* port) {
  HttpServer::Options options;
  options.limits = limits;
  auto server = HttpServer::Make(options);
  EXPECT_TRUE(server.ok());
  (*server)->Route("GET", "/hello/([^/]+)", [](const HttpRequest& req, HttpResponse& res) {
    res.SetContent("hi " + DecodeUrl(req.matches[1], false), "text/plain");
  });
  (*server)->Route("POST", "/echo", [](const HttpRequest& req, HttpResponse& res) {
    res.SetContent(req.body, "text/plain");
  });
  (*server)->Route("GET", "/throw",
                   [](const HttpRequest&, HttpResponse&) { throw std::runtime_error("boom"); });
  auto bound = (*server)->Bind("127.0.0.1", 0);
  EXPECT_TRUE(bound.ok());
  *port = *bound;
  EXPECT_TRUE((*server)->Start().ok());
  return std::move(server).value();
}

TEST(HttpServer, RoutesAndRefusesWithoutCrashing) {
  int port = 0;
  auto server = Serve(HttpLimits(), &port);
  EXPECT_EQ(Exchange(port, "GET /hello/a%20b HTTP/1.1\r\nHost: x\r\n\r\n"),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n"
            "Connection: close\r\n\r\nhi a b");
  EXPECT_EQ(Exchange(port, "HEAD /hello/x HTTP/1.1\r\n\r\n"),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n"
            "Connection: close\r\n\r\n");
  EXPECT_EQ(Exchange(port,
                     "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "2\r\nok\r\n0\r\n\r\n")
                .substr(0, 15),
            "HTTP/1.1 200 OK");
  EXPECT_EQ(Exchange(port, "GET /nope HTTP/1.1\r\n\r\n").substr(0, 12), "HTTP/1.1 404");
  EXPECT_NE(Exchange(port, "DELETE /echo HTTP/1.1\r\n\r\n").find("405 Method Not Allowed"),
            std::string::npos);
  EXPECT_NE(Exchange(port, "GET /throw HTTP/1.1\r\n\r\n").find("500 Internal"), std::string::npos);
  EXPECT_NE(Exchange(port, "POST /echo HTTP/1.1\r\nContent-Length: 5000\r\n\r\n").find("413"),
            std::string::npos);
}

// A slowloris client (a byte now and then) gets 408 at the request deadline, not later.
TEST(HttpServer, ASlowRequestEndsAtTheWholeRequestDeadline) {
  HttpLimits limits;
  limits.request_deadline_ms = 300;
  int port = 0;
  auto server = Serve(limits, &port);
  const int fd = Connect(port);
  char peek = 0;
  for (char c : std::string("GET /hello/x HTTP/1.1\r\nX-Slow: ")) {
    if (::send(fd, &c, 1, MSG_NOSIGNAL) != 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (::recv(fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT) == 1) break;  // answered
  }
  std::string reply = ReadAll(fd);
  ::close(fd);
  EXPECT_EQ(reply.substr(0, 12), "HTTP/1.1 408") << reply;
}

// More idle connections than the limit: the oldest go, and a request that comes whole is served.
TEST(HttpServer, IdleConnectionsBeyondTheLimitDoNotStarveARealRequest) {
  HttpLimits limits;
  limits.max_connections = 8;
  limits.max_connections_per_client = 8;
  int port = 0;
  auto server = Serve(limits, &port);
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(Connect(port));
    (void)!::send(idle.back(), "GET /", 5, MSG_NOSIGNAL);
  }
  EXPECT_EQ(Exchange(port, "GET /hello/real HTTP/1.1\r\n\r\n").substr(0, 15), "HTTP/1.1 200 OK");
  std::string first = ReadAll(idle.front());
  EXPECT_EQ(first.substr(0, 12), "HTTP/1.1 503") << first;
  for (int fd : idle) ::close(fd);
}

TEST(HttpServer, UrlEncodingHelpers) {
  EXPECT_EQ(DecodeUrl("a%2Fb+c%zz", false), "a/b+c%zz");
  EXPECT_EQ(DecodeUrl("a+b", true), "a b");
  auto pairs = ParseUrlEncoded("grant_type=client_credentials&&x&client_secret=s%3D");
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[1].first, "x");
  EXPECT_EQ(pairs[2].second, "s=");
}

}  // namespace
}  // namespace floe::io
