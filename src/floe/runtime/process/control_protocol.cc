#include "floe/runtime/process/control_protocol.h"

#include <nlohmann/json.hpp>

#include "floe/common/json.h"

namespace floe::process {

namespace {

// Compares without an early exit, so the time taken says nothing about how much of a guess was
// right.
bool SameToken(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

// At most `max` bytes of `s` for an error message (its JSON encoding replaces a cut character).
std::string Excerpt(std::string_view s, size_t max = 64) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max)) + "…";
}

}  // namespace

Result<ControlRequest> ParseControlRequest(std::string_view line, std::string_view token) {
  // Errors name the field alone: the client knows what it sent.
  JsonPath at("", StatusCode::kInvalidArgument);
  Result<Json> j = ParseJson(line, at);
  if (!j.ok()) return Status::InvalidArgument("request is not valid JSON");
  if (!j->is_object()) return Status::InvalidArgument("request is not a JSON object");
  JsonObject f(*j, at);
  // The token first: a client without it learns nothing about the other fields.
  std::string given;
  FLOE_RETURN_NOT_OK(f.Required("token", &given));
  if (!SameToken(given, token)) return Status::InvalidArgument("bad token");
  ControlRequest req;
  FLOE_RETURN_NOT_OK(f.Required("cmd", &req.cmd));
  if (req.cmd != "status" && req.cmd != "savepoint" && req.cmd != "stop" && req.cmd != "cancel") {
    return Status::InvalidArgument("unknown command '" + Excerpt(req.cmd) + "'");
  }
  if (f.Has("dir")) {
    FLOE_RETURN_NOT_OK(f.Get("dir", &req.dir));
    if (req.dir.empty() || req.dir[0] != '/') return f.Error("dir", "must be an absolute path");
  }
  return req;
}

Result<ControlReply> ParseControlReply(std::string_view line) {
  auto bad = [&](std::string_view why) {
    return Status::Corruption("bad reply (" + std::string(why) + "): " + Excerpt(line, 200));
  };
  JsonPath at("bad reply");
  Result<Json> j = ParseJson(line, at);
  if (!j.ok() || !j->is_object()) return bad("not a JSON object");
  JsonObject f(*j, at);
  bool ok = false;
  FLOE_RETURN_NOT_OK(f.Required("ok", &ok));
  if (!ok) {
    std::string error = "the coordinator gave no reason";
    FLOE_RETURN_NOT_OK(f.Get("error", &error));
    return Status::InvalidArgument(error);
  }
  ControlReply reply;
  FLOE_RETURN_NOT_OK(f.Get("path", &reply.path));
  return reply;
}

namespace {

Result<std::vector<runtime::MetricSample>> DecodeMetricSamples(const Json& j) {
  auto bad = [](size_t i, const char* why) {
    return Status::Corruption("status line: samples[" + std::to_string(i) + "] " + why);
  };
  if (!j.is_array()) return Status::Corruption("status line: field 'samples' must be an array");
  if (j.size() > kMaxMetricSamples) {
    return Status::Corruption("status line: more than " + std::to_string(kMaxMetricSamples) +
                              " samples");
  }
  std::vector<runtime::MetricSample> out;
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& e = j[i];
    if (!e.is_array() || e.size() != 4 || !e[0].is_string() || !e[1].is_array() ||
        !e[2].is_number_integer() || !e[3].is_string()) {
      return bad(i, "must be [name, labels, integer value, type]");
    }
    runtime::MetricSample s;
    s.name = e[0].get<std::string>();
    for (const Json& l : e[1]) {
      if (!l.is_array() || l.size() != 2 || !l[0].is_string() || !l[1].is_string()) {
        return bad(i, "has a label that is not [name, value]");
      }
      s.labels.emplace_back(l[0].get<std::string>(), l[1].get<std::string>());
    }
    s.value = e[2].get<int64_t>();
    const std::string type = e[3].get<std::string>();
    if (type != "counter" && type != "gauge") return bad(i, "has an unknown type");
    s.type = type == "counter" ? runtime::MetricType::kCounter : runtime::MetricType::kGauge;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

Result<WorkerEvent> ParseWorkerEvent(std::string_view line) {
  JsonPath at("status line");
  Result<Json> j = ParseJson(line, at);
  if (!j.ok() || !j->is_object()) {
    return Status::Corruption("status line is not a JSON object: " + Excerpt(line, 200));
  }
  JsonObject f(*j, at);
  WorkerEvent ev;
  FLOE_RETURN_NOT_OK(f.Required("event", &ev.event));
  FLOE_RETURN_NOT_OK(f.Get("id", &ev.id));
  FLOE_RETURN_NOT_OK(f.Get("checkpoint", &ev.checkpoint));
  FLOE_RETURN_NOT_OK(f.Get("savepoint", &ev.savepoint));
  FLOE_RETURN_NOT_OK(f.Get("stop", &ev.stop));
  FLOE_RETURN_NOT_OK(f.Get("final", &ev.final));
  FLOE_RETURN_NOT_OK(f.Get("dir", &ev.dir));
  FLOE_RETURN_NOT_OK(f.Get("req", &ev.req));
  FLOE_RETURN_NOT_OK(f.Get("ok", &ev.ok));
  FLOE_RETURN_NOT_OK(f.Get("path", &ev.path));
  FLOE_RETURN_NOT_OK(f.Get("error", &ev.error));
  FLOE_RETURN_NOT_OK(f.Get("message", &ev.message));
  FLOE_RETURN_NOT_OK(f.Get("fatal", &ev.fatal));
  FLOE_RETURN_NOT_OK(f.Get("duration_ms", &ev.duration_ms));
  FLOE_RETURN_NOT_OK(f.Get("size_bytes", &ev.size_bytes));
  FLOE_RETURN_NOT_OK(f.Get("alignment_us", &ev.alignment_us));
  FLOE_RETURN_NOT_OK(f.Get("sync_us", &ev.sync_us));
  FLOE_RETURN_NOT_OK(f.Get("sync_task", &ev.sync_task));
  FLOE_RETURN_NOT_OK(f.Get("async_us", &ev.async_us));
  FLOE_RETURN_NOT_OK(f.Get("at_ms", &ev.at_ms));
  FLOE_RETURN_NOT_OK(f.Get("from_table", &ev.from_table));
  FLOE_RETURN_NOT_OK(f.Get("next_checkpoint", &ev.next_checkpoint));
  if (auto it = j->find("samples"); it != j->end()) {
    FLOE_ASSIGN_OR_RAISE(ev.samples, DecodeMetricSamples(*it));
  }
  return ev;
}

Json EncodeMetricSamples(const std::vector<runtime::MetricSample>& samples) {
  Json out = Json::array();
  for (const auto& s : samples) {
    Json labels = Json::array();
    for (const auto& [k, v] : s.labels) labels.push_back({k, v});
    out.push_back({s.name, std::move(labels), s.value,
                   s.type == runtime::MetricType::kCounter ? "counter" : "gauge"});
  }
  return out;
}

Result<WorkerCommand> ParseWorkerCommand(std::string_view line) {
  JsonPath at("command", StatusCode::kInvalidArgument);
  Result<Json> j = ParseJson(line, at);
  if (!j.ok() || !j->is_object()) {
    return Status::InvalidArgument("command is not a JSON object: " + Excerpt(line, 200));
  }
  JsonObject f(*j, at);
  WorkerCommand cmd;
  FLOE_RETURN_NOT_OK(f.Get("req", &cmd.req));
  FLOE_RETURN_NOT_OK(f.Required("cmd", &cmd.cmd));
  FLOE_RETURN_NOT_OK(f.Get("dir", &cmd.dir));
  return cmd;
}

}  // namespace floe::process
