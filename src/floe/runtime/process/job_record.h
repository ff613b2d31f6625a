#pragma once

// What the coordinator (`floe run`), the worker (`floe worker`) and the job-control commands
// share: the job directory and its job.json, line-oriented I/O on descriptors, and the client
// side of the coordinator's control endpoint. Formats are described in docs/processes.md.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/json.h"
#include "floe/common/status.h"

namespace floe::process {

// Owns one file descriptor; closes it on destruction. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.Release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release();
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Writes all of `data` (retrying on EINTR and short writes). Needs SIGPIPE ignored to report a
// closed peer as an error instead of dying.
Status WriteAll(int fd, std::string_view data);

// Splits what arrives on a descriptor into '\n'-terminated lines, with a limit on a line's length
// so a peer that never sends a newline cannot make it buffer without bound. Each byte is scanned
// for the newline once, however many reads a line takes. A line longer than the limit is an
// error (InvalidArgument, "line longer than N bytes") that stays: the caller drops the peer.
// Not thread-safe.
class LineBuffer {
 public:
  static constexpr size_t kDefaultMaxLineBytes = 1024 * 1024;
  explicit LineBuffer(size_t max_line_bytes = kDefaultMaxLineBytes)
      : max_line_bytes_(max_line_bytes) {}

  // One read(2) (at most 4 KiB) into the buffer. Returns false at end of file. EAGAIN/EINTR
  // read nothing. Reads nothing and fails once more than the limit is buffered without a line
  // taken (NextLine says why), so at most the limit plus one read is ever buffered.
  Result<bool> ReadSome(int fd);
  // Adds bytes as if read.
  void Append(std::string_view data);
  // The next complete line without its '\n'; nullopt while none is complete. An error once a
  // line, complete or not, is longer than the limit.
  Result<std::optional<std::string>> NextLine();
  // Blocks (poll) until a line is buffered or `timeout` passed (DeadlineExceeded ->
  // Unavailable) or the peer closed (Unavailable).
  Result<std::string> ReadLine(int fd, std::chrono::milliseconds timeout);

  // Bytes buffered and not yet returned as a line.
  size_t buffered() const { return buf_.size() - begin_; }
  // Bytes examined for a newline so far (each byte once: tests check scanning is linear).
  uint64_t bytes_scanned() const { return bytes_scanned_; }

 private:
  size_t max_line_bytes_;
  std::string buf_;
  size_t begin_ = 0;  // where the next line starts
  size_t scan_ = 0;   // [begin_, scan_) holds no newline
  uint64_t bytes_scanned_ = 0;
  Status status_;  // sticky: a line exceeded the limit
};

// The job states job.json records (Flink's names where they exist).
inline constexpr const char* kStateStarting = "STARTING";
inline constexpr const char* kStateRunning = "RUNNING";
inline constexpr const char* kStateRestarting = "RESTARTING";
inline constexpr const char* kStateFinished = "FINISHED";
inline constexpr const char* kStateStopped = "STOPPED";  // stopped with a savepoint
inline constexpr const char* kStateCancelled = "CANCELED";
inline constexpr const char* kStateFailed = "FAILED";
bool IsTerminalState(std::string_view state);

// job.json: what `floe list` and the control commands know about a job. Written by the
// coordinator (atomically replaced on every change), read by anyone.
struct JobRecord {
  std::string job_id;
  std::string name;      // the job file's base name
  std::string job_file;  // absolute path
  pid_t pid = 0;         // the coordinator (`floe run`)
  pid_t worker_pid = 0;  // the current worker, 0 while none runs
  int attempt = 0;       // the current worker's attempt number (0 = first run)
  int restarts = 0;
  std::string control;  // "127.0.0.1:PORT"
  std::string token;    // must accompany every control request
  std::string state;
  uint64_t last_checkpoint = 0;  // last completed checkpoint id (0 = none)
  int64_t last_checkpoint_millis = 0;
  std::string checkpoint_dir;
  std::string savepoint_dir;
  int64_t started_millis = 0;
  int64_t updated_millis = 0;
  std::string message;      // why the job failed, or the final savepoint
  std::string web_url;      // the web UI (rest.port), "" when not serving
  std::string metrics_url;  // Prometheus /metrics (metrics.reporter.prom.port)
  // Each Iceberg table the job writes: when it last committed (epoch ms, 0 = not in this run)
  // and whether the stall alarm is raised. Updated when either changes.
  struct Table {
    std::string table;
    int64_t last_commit_millis = 0;
    bool stalled = false;
    bool operator==(const Table&) const = default;
  };
  std::vector<Table> tables;
};

std::string EncodeJobRecord(const JobRecord& record);
Result<JobRecord> DecodeJobRecord(std::string_view json);
// The object EncodeJobRecord writes, for replies that embed it.
Json JobRecordToJson(const JobRecord& record);

// $FLOE_HOME/jobs, else $HOME/.floe/jobs.
std::string JobsRoot();
inline constexpr const char* kJobFile = "job.json";
// Atomically replaces <dir>/job.json (owner-only permissions: it holds the control token).
Status WriteJobRecord(const std::string& dir, const JobRecord& record);
Result<JobRecord> ReadJobRecord(const std::string& dir);
// Every readable job.json under `root`, oldest start first. Unreadable ones are skipped.
std::vector<JobRecord> ListJobRecords(const std::string& root);

// kill(pid, 0) succeeds (or fails with EPERM).
bool ProcessAlive(pid_t pid);
int64_t NowMillis();
// 32 lowercase hex digits from the system's random device.
std::string RandomHex32();

// Sends one request (a JSON object; the token is added) to a running job's coordinator and
// returns its reply (a JSON object text). Unavailable if the coordinator cannot be reached.
Result<std::string> SendControlRequest(const JobRecord& job, std::string request_json,
                                       std::chrono::milliseconds timeout);

}  // namespace floe::process
