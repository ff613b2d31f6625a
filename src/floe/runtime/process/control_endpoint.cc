#include "floe/runtime/process/control_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "floe/common/json.h"

namespace floe::process {

std::string ControlEndpoint::ErrorLine(std::string_view error) {
  return DumpJson(Json{{"ok", false}, {"error", std::string(error)}});
}

Status ControlEndpoint::Listen() {
  listen_fd_.Reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listen_fd_.valid()) return Status::IOError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_.get(), static_cast<int>(kMaxControlConnections)) != 0) {
    return Status::IOError(std::string("control endpoint: ") + std::strerror(errno));
  }
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  address_ = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  return Status::OK();
}

void ControlEndpoint::AddPollFds(std::vector<pollfd>* fds) const {
  fds->push_back({listen_fd_.valid() ? listen_fd_.get() : -1, POLLIN, 0});
  for (const auto& [fd, c] : clients_) fds->push_back({fd, POLLIN, 0});
}

void ControlEndpoint::HandleEvents(const std::vector<pollfd>& fds, size_t first) {
  if (first >= fds.size()) return;
  if (fds[first].fd >= 0 && (fds[first].revents & POLLIN)) Accept();
  for (size_t i = first + 1; i < fds.size(); ++i) {
    if (fds[i].revents) ReadClient(fds[i].fd);
  }
}

// At kMaxControlConnections the connection that has been sending its request the longest is told
// so and closed to make room, so idle or slow clients cannot keep `floe stop` / `cancel` out; only
// when every connection awaits its reply is the newcomer told and closed (a client learns why
// instead of hanging in the listen queue, and the queue never fills).
bool ControlEndpoint::MakeRoom() {
  if (clients_.size() < kMaxControlConnections) return true;
  auto oldest = clients_.end();
  for (auto it = clients_.begin(); it != clients_.end(); ++it) {
    if (!it->second.request_taken &&
        (oldest == clients_.end() || it->second.deadline_millis < oldest->second.deadline_millis)) {
      oldest = it;
    }
  }
  if (oldest == clients_.end()) return false;
  Reply(oldest->first, ErrorLine("closed to make room: too many control connections (" +
                                 std::to_string(kMaxControlConnections) +
                                 "); the one sending its request the longest goes"));
  return true;
}

void ControlEndpoint::Accept() {
  while (true) {
    UniqueFd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd.valid()) return;
    if (!MakeRoom()) {
      std::string line = ErrorLine("too many control connections (" +
                                   std::to_string(kMaxControlConnections) + "); try again") +
                         "\n";
      (void)::send(fd.get(), line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      continue;
    }
    const int n = fd.get();
    Client& c = clients_[n];
    c.fd = std::move(fd);
    c.deadline_millis = NowMillis() + kControlRequestTimeoutMillis;
  }
}

// One non-blocking send: a reply is one short line into a fresh connection's empty send buffer,
// and a client that does not read must not stall the coordinator.
void ControlEndpoint::Reply(int fd, std::string_view line) {
  auto it = clients_.find(fd);
  if (it == clients_.end()) return;
  std::string out(line);
  out.push_back('\n');
  (void)::send(fd, out.data(), out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  clients_.erase(it);
}

void ControlEndpoint::Drop(int fd) {
  on_drop_(fd);
  clients_.erase(fd);
}

void ControlEndpoint::ReadClient(int fd) {
  auto it = clients_.find(fd);
  if (it == clients_.end()) return;
  Client& c = it->second;
  if (c.request_taken) {
    char drop[4096];
    ssize_t n = ::read(fd, drop, sizeof(drop));
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) Drop(fd);
    return;
  }
  auto more = c.lines.ReadSome(fd);
  auto line = c.lines.NextLine();
  if (!line.ok()) {
    Reply(fd,
          ErrorLine("request longer than " + std::to_string(kMaxControlRequestBytes) + " bytes"));
    return;
  }
  if (*line) {
    c.request_taken = true;
    on_request_(fd, **line);
    return;
  }
  if (!more.ok()) {
    Drop(fd);
  } else if (!*more) {
    // The peer half-closed: what it sent is all it will send.
    if (c.lines.buffered() > 0) {
      Reply(fd, ErrorLine("request ends without a newline"));
    } else {
      Drop(fd);
    }
  }
}

void ControlEndpoint::ExpireRequests(int64_t now_millis) {
  std::vector<int> late;
  for (const auto& [fd, c] : clients_) {
    if (!c.request_taken && now_millis >= c.deadline_millis) late.push_back(fd);
  }
  for (int fd : late) {
    Reply(fd, ErrorLine("no complete request within " +
                        std::to_string(kControlRequestTimeoutMillis / 1000) + " s"));
  }
}

void ControlEndpoint::Close() {
  listen_fd_.Reset();
  clients_.clear();
}

}  // namespace floe::process
