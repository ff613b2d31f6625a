#pragma once

// The messages of docs/processes.md as typed values: requests to the coordinator's control
// endpoint (from any local process, so hostile), its replies (read by `floe savepoint|stop|
// cancel`), and the JSON lines coordinator and worker exchange over their socket pair. Parsing
// checks every field's JSON type and never throws; errors name the field that is wrong and never
// repeat the token. Also the endpoint's limits.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/json.h"
#include "floe/common/status.h"
#include "floe/runtime/metrics.h"

namespace floe::process {

// The control endpoint's limits (docs/processes.md, "Control protocol").
// A request line longer than this is refused (a reply, then the connection is closed).
inline constexpr size_t kMaxControlRequestBytes = 64 * 1024;
// Connections served at once; one more is accepted, refused with a reply and closed.
inline constexpr size_t kMaxControlConnections = 64;
// A connection must deliver its complete request within this long after it was accepted.
inline constexpr int64_t kControlRequestTimeoutMillis = 10'000;
// The client side: a reply line longer than this is an error, not a buffer without bound.
inline constexpr size_t kMaxControlReplyBytes = 1024 * 1024;
// Status lines from the worker and commands to it (error messages, paths).
inline constexpr size_t kMaxWorkerLineBytes = 16 * 1024 * 1024;

// -> {"cmd":"savepoint","dir":"/abs/dir","token":"…"}
struct ControlRequest {
  std::string cmd;  // "status" | "savepoint" | "stop" | "cancel"
  std::string dir;  // savepoint / stop: an absolute directory; "" = the default one
};
// One request line, checked against the job's `token`. InvalidArgument saying what is wrong:
// "request is not valid JSON", "field 'token': expected string, got integer", "bad token",
// "field 'cmd': required field is missing", "unknown command '…'", "field 'dir': must be an
// absolute path", ...
Result<ControlRequest> ParseControlRequest(std::string_view line, std::string_view token);

// <- {"ok":true,"path":"…"} | {"ok":false,"error":"…"}
struct ControlReply {
  std::optional<std::string> path;
};
// One reply line. {"ok":false} is InvalidArgument with the coordinator's error; a reply that is
// not one (not a JSON object, "ok" not a boolean, ...) is Corruption quoting its start.
Result<ControlReply> ParseControlReply(std::string_view line);

// Worker -> coordinator status line (docs/processes.md, "Coordinator <-> worker protocol").
// Fields an event does not carry keep their defaults.
struct WorkerEvent {
  std::string event;
  uint64_t id = 0;          // checkpoint: its id
  uint64_t checkpoint = 0;  // restored: the checkpoint restored
  bool savepoint = false;
  bool stop = false;
  bool final = false;
  std::string dir;                   // checkpoint: where it completed
  int64_t req = 0;                   // reply: the request it answers
  bool ok = false;                   // reply
  std::optional<std::string> path;   // reply, restored, stopped
  std::optional<std::string> error;  // reply, failed
  std::string message;               // restore-plan
  bool fatal = false;                // failed
  int64_t duration_ms = 0;           // checkpoint
  uint64_t size_bytes = 0;           // checkpoint
  int64_t alignment_us = 0;          // checkpoint
  int64_t sync_us = 0;               // checkpoint: the longest synchronous part of a task
  std::string sync_task;             // checkpoint: that task
  int64_t async_us = 0;              // checkpoint: the longest asynchronous part of a task
  int64_t at_ms = 0;                 // metrics: when sampled (epoch ms)
  bool from_table = false;           // restored, fresh: sources start from positions a table holds
  uint64_t next_checkpoint = 0;      // restored, fresh: the run's first checkpoint id
  std::vector<runtime::MetricSample> samples;  // metrics
};
// The samples of a metrics status line:
// "samples": [["name", [["label", "value"], ...], value, "counter"|"gauge"], ...].
Json EncodeMetricSamples(const std::vector<runtime::MetricSample>& samples);
// A metrics status line holds at most this many samples.
inline constexpr size_t kMaxMetricSamples = 200'000;
Result<WorkerEvent> ParseWorkerEvent(std::string_view line);

// Coordinator -> worker command: {"req":3,"cmd":"savepoint","dir":"…"}.
struct WorkerCommand {
  int64_t req = 0;
  std::string cmd;  // "savepoint" | "stop" | "cancel"
  std::string dir;
};
Result<WorkerCommand> ParseWorkerCommand(std::string_view line);

}  // namespace floe::process
