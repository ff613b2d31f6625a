#include "floe/runtime/process/job_record.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "floe/common/json.h"
#include "floe/io/file.h"
#include "floe/runtime/process/control_protocol.h"

namespace floe::process {

using nlohmann::json;

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) Reset(o.Release());
  return *this;
}

int UniqueFd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        pollfd p{fd, POLLOUT, 0};
        (void)::poll(&p, 1, 1000);
        continue;
      }
      return Status::IOError(std::string("write: ") + std::strerror(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

Result<bool> LineBuffer::ReadSome(int fd) {
  FLOE_RETURN_NOT_OK(status_);
  if (buffered() > max_line_bytes_) {
    return Status::InvalidArgument("more than " + std::to_string(max_line_bytes_) +
                                   " bytes buffered without a line taken");
  }
  char chunk[4096];
  ssize_t n = ::read(fd, chunk, sizeof(chunk));
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return true;
    if (errno == ECONNRESET) return false;
    return Status::IOError(std::string("read: ") + std::strerror(errno));
  }
  if (n == 0) return false;
  Append(std::string_view(chunk, static_cast<size_t>(n)));
  return true;
}

void LineBuffer::Append(std::string_view data) {
  if (begin_ > 0) {
    // Drop the lines already taken: at most what one read added is moved.
    buf_.erase(0, begin_);
    scan_ -= begin_;
    begin_ = 0;
  }
  buf_.append(data);
}

Result<std::optional<std::string>> LineBuffer::NextLine() {
  FLOE_RETURN_NOT_OK(status_);
  const char* data = buf_.data();
  const void* nl =
      scan_ < buf_.size() ? std::memchr(data + scan_, '\n', buf_.size() - scan_) : nullptr;
  const size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data) : buf_.size();
  bytes_scanned_ += (nl ? end + 1 : end) - scan_;
  if (end - begin_ > max_line_bytes_) {
    status_ =
        Status::InvalidArgument("line longer than " + std::to_string(max_line_bytes_) + " bytes");
    return status_;
  }
  if (!nl) {
    scan_ = end;
    return std::optional<std::string>();
  }
  std::string line(data + begin_, end - begin_);
  begin_ = scan_ = end + 1;
  if (begin_ == buf_.size()) {
    buf_.clear();
    begin_ = scan_ = 0;
  }
  return std::optional<std::string>(std::move(line));
}

Result<std::string> LineBuffer::ReadLine(int fd, std::chrono::milliseconds timeout) {
  const int64_t deadline = NowMillis() + timeout.count();
  while (true) {
    FLOE_ASSIGN_OR_RAISE(std::optional<std::string> line, NextLine());
    if (line) return std::move(*line);
    int64_t left = deadline - NowMillis();
    if (left <= 0)
      return Status::Unavailable("no reply within " + std::to_string(timeout.count()) + " ms");
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (r < 0 && errno != EINTR)
      return Status::IOError(std::string("poll: ") + std::strerror(errno));
    if (r <= 0) continue;
    FLOE_ASSIGN_OR_RAISE(bool more, ReadSome(fd));
    if (!more) {
      FLOE_ASSIGN_OR_RAISE(std::optional<std::string> last, NextLine());
      if (last) return std::move(*last);
      return Status::Unavailable("connection closed");
    }
  }
}

bool IsTerminalState(std::string_view state) {
  return state == kStateFinished || state == kStateStopped || state == kStateCancelled ||
         state == kStateFailed;
}

Json JobRecordToJson(const JobRecord& r) {
  json j = {{"job_id", r.job_id},
            {"name", r.name},
            {"job_file", r.job_file},
            {"pid", r.pid},
            {"worker_pid", r.worker_pid},
            {"attempt", r.attempt},
            {"restarts", r.restarts},
            {"control", r.control},
            {"token", r.token},
            {"state", r.state},
            {"last_checkpoint", r.last_checkpoint},
            {"last_checkpoint_millis", r.last_checkpoint_millis},
            {"checkpoint_dir", r.checkpoint_dir},
            {"savepoint_dir", r.savepoint_dir},
            {"started_millis", r.started_millis},
            {"updated_millis", r.updated_millis},
            {"message", r.message},
            {"web_url", r.web_url},
            {"metrics_url", r.metrics_url}};
  json tables = json::array();
  for (const auto& t : r.tables) {
    tables.push_back(
        {{"table", t.table}, {"last_commit_millis", t.last_commit_millis}, {"stalled", t.stalled}});
  }
  j["tables"] = std::move(tables);
  return j;
}

std::string EncodeJobRecord(const JobRecord& r) { return DumpJson(JobRecordToJson(r), 2) + "\n"; }

Result<JobRecord> DecodeJobRecord(std::string_view text) {
  JsonPath at("job.json");
  Result<Json> j = ParseJson(text, at);
  if (!j.ok() || !j->is_object()) return Status::Corruption("job.json is not a JSON object");
  // Absent fields keep their defaults; present ones must have their type (the file may have been
  // edited or damaged: a wrong type is Corruption, never an exception).
  JsonObject f(*j, at);
  JobRecord r;
  FLOE_RETURN_NOT_OK(f.Get("job_id", &r.job_id));
  FLOE_RETURN_NOT_OK(f.Get("name", &r.name));
  FLOE_RETURN_NOT_OK(f.Get("job_file", &r.job_file));
  FLOE_RETURN_NOT_OK(f.Get("pid", &r.pid));
  FLOE_RETURN_NOT_OK(f.Get("worker_pid", &r.worker_pid));
  FLOE_RETURN_NOT_OK(f.Get("attempt", &r.attempt));
  FLOE_RETURN_NOT_OK(f.Get("restarts", &r.restarts));
  FLOE_RETURN_NOT_OK(f.Get("control", &r.control));
  FLOE_RETURN_NOT_OK(f.Get("token", &r.token));
  FLOE_RETURN_NOT_OK(f.Get("state", &r.state));
  FLOE_RETURN_NOT_OK(f.Get("last_checkpoint", &r.last_checkpoint));
  FLOE_RETURN_NOT_OK(f.Get("last_checkpoint_millis", &r.last_checkpoint_millis));
  FLOE_RETURN_NOT_OK(f.Get("checkpoint_dir", &r.checkpoint_dir));
  FLOE_RETURN_NOT_OK(f.Get("savepoint_dir", &r.savepoint_dir));
  FLOE_RETURN_NOT_OK(f.Get("started_millis", &r.started_millis));
  FLOE_RETURN_NOT_OK(f.Get("updated_millis", &r.updated_millis));
  FLOE_RETURN_NOT_OK(f.Get("message", &r.message));
  FLOE_RETURN_NOT_OK(f.Get("web_url", &r.web_url));
  FLOE_RETURN_NOT_OK(f.Get("metrics_url", &r.metrics_url));
  const Json* tables = nullptr;
  FLOE_RETURN_NOT_OK(f.GetArray("tables", &tables));
  for (size_t i = 0; tables != nullptr && i < tables->size(); ++i) {
    JsonObject tf((*tables)[i], at.Child("tables").Index(i));
    FLOE_RETURN_NOT_OK(tf.Check());
    JobRecord::Table table;
    FLOE_RETURN_NOT_OK(tf.Get("table", &table.table));
    FLOE_RETURN_NOT_OK(tf.Get("last_commit_millis", &table.last_commit_millis));
    FLOE_RETURN_NOT_OK(tf.Get("stalled", &table.stalled));
    r.tables.push_back(std::move(table));
  }
  if (r.job_id.empty()) return Status::Corruption("job.json has no job_id");
  return r;
}

std::string JobsRoot() {
  if (const char* home = std::getenv("FLOE_HOME"); home && *home) {
    return io::JoinPath(home, "jobs");
  }
  const char* home = std::getenv("HOME");
  return io::JoinPath(io::JoinPath(home && *home ? home : "/tmp", ".floe"), "jobs");
}

Status WriteJobRecord(const std::string& dir, const JobRecord& record) {
  const std::string path = io::JoinPath(dir, kJobFile);
  const std::string tmp = path + ".tmp";
  {
    std::string data = EncodeJobRecord(record);
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!fd.valid()) return Status::IOError("cannot write " + tmp + ": " + std::strerror(errno));
    FLOE_RETURN_NOT_OK(WriteAll(fd.get(), data));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IOError("cannot rename " + tmp + ": " + std::strerror(errno));
  }
  return Status::OK();
}

Result<JobRecord> ReadJobRecord(const std::string& dir) {
  FLOE_ASSIGN_OR_RAISE(std::string text, io::ReadFile(io::JoinPath(dir, kJobFile)));
  return DecodeJobRecord(text);
}

std::vector<JobRecord> ListJobRecords(const std::string& root) {
  std::vector<JobRecord> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
    if (!e.is_directory(ec)) continue;
    auto r = ReadJobRecord(e.path().string());
    if (r.ok()) out.push_back(std::move(*r));
  }
  std::sort(out.begin(), out.end(), [](const JobRecord& a, const JobRecord& b) {
    return a.started_millis != b.started_millis ? a.started_millis < b.started_millis
                                                : a.job_id < b.job_id;
  });
  return out;
}

bool ProcessAlive(pid_t pid) {
  if (pid <= 0) return false;
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string RandomHex32() {
  std::random_device rd;
  std::string out;
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 4; ++i) {
    uint32_t v = rd();
    for (int k = 0; k < 4; ++k) {
      out.push_back(kHex[(v >> (8 * k + 4)) & 0xf]);
      out.push_back(kHex[(v >> (8 * k)) & 0xf]);
    }
  }
  return out;
}

Result<std::string> SendControlRequest(const JobRecord& job, std::string request_json,
                                       std::chrono::milliseconds timeout) {
  size_t colon = job.control.rfind(':');
  if (colon == std::string::npos) {
    return Status::Unavailable("job " + job.job_id + " has no control endpoint");
  }
  Result<Json> req = ParseJson(request_json, JsonPath("control request"));
  if (!req.ok() || !req->is_object()) {
    return Status::InvalidArgument("control request is not a JSON object");
  }
  (*req)["token"] = job.token;

  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(job.control.c_str() + colon + 1)));
  if (::inet_pton(AF_INET, job.control.substr(0, colon).c_str(), &addr.sin_addr) != 1) {
    return Status::Corruption("job " + job.job_id + ": bad control address '" + job.control + "'");
  }
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Status::IOError(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Status::Unavailable("cannot reach job " + job.job_id + " at " + job.control + ": " +
                               std::strerror(errno) + " (is it still running?)");
  }
  FLOE_RETURN_NOT_OK(WriteAll(fd.get(), DumpJson(*req) + "\n"));
  LineBuffer lines(kMaxControlReplyBytes);
  auto reply = lines.ReadLine(fd.get(), timeout);
  if (!reply.ok()) return reply.status().WithContext("reply from job " + job.job_id);
  return reply;
}

}  // namespace floe::process
