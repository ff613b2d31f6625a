#pragma once

#include <poll.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/runtime/process/control_protocol.h"
#include "floe/runtime/process/job_record.h"

namespace floe::process {

// The coordinator's control endpoint (docs/processes.md, "Control protocol"): a listener on
// 127.0.0.1 whose connections each deliver one request line and get one reply line. Any local
// process may connect, so a connection is bounded in size and time until its request line is
// complete (control_protocol.h's limits); at kMaxControlConnections the oldest connection still
// sending its request is told so and closed to make room (a newcomer only when every connection
// awaits its reply). What the request means is the owner's business (`on_request`); this class only
// moves lines. Single-threaded: driven by the owner's poll loop.
class ControlEndpoint {
 public:
  // A complete request line from connection `fd`; the owner replies with Reply(fd, ...) now or
  // later.
  using RequestHandler = std::function<void(int fd, const std::string& line)>;
  // Connection `fd` went away before its reply: the owner forgets every reference to it (the
  // number is reused by the next accept, which must not get this one's answer).
  using DropHandler = std::function<void(int fd)>;

  ControlEndpoint(RequestHandler on_request, DropHandler on_drop)
      : on_request_(std::move(on_request)), on_drop_(std::move(on_drop)) {}

  // Listens on an ephemeral loopback port; address() is then "127.0.0.1:PORT".
  Status Listen();
  const std::string& address() const { return address_; }

  // Appends the listener and every connection to a poll(2) set.
  void AddPollFds(std::vector<pollfd>* fds) const;
  // Handles what poll reported for the descriptors AddPollFds appended from `first` on.
  void HandleEvents(const std::vector<pollfd>& fds, size_t first);
  // Answers connections that did not deliver a complete request in time, and closes them.
  void ExpireRequests(int64_t now_millis);

  // Sends `line` (one JSON reply, without the newline) and closes the connection; nothing if it
  // is gone.
  void Reply(int fd, std::string_view line);
  // Closes the listener and every connection.
  void Close();

  // {"ok":false,"error":"..."}
  static std::string ErrorLine(std::string_view error);

 private:
  // One connection. Until its request line is complete it is bounded in size and time; then it
  // waits for the answer, and what else it sends is read and dropped (a close withdraws the
  // request).
  struct Client {
    UniqueFd fd;
    LineBuffer lines{kMaxControlRequestBytes};
    int64_t deadline_millis = 0;  // the request must be complete by then
    bool request_taken = false;
  };

  void Accept();
  bool MakeRoom();
  void ReadClient(int fd);
  void Drop(int fd);

  RequestHandler on_request_;
  DropHandler on_drop_;
  UniqueFd listen_fd_;
  std::string address_;
  std::map<int, Client> clients_;
};

}  // namespace floe::process
