#include "floe/runtime/checkpoint_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdlib>

#include "floe/io/file.h"
#include "floe/io/location.h"
#include "floe/io/object_store.h"

namespace floe::runtime {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Nanoseconds per unit, or 0 when unknown.
int64_t UnitNanos(const std::string& u) {
  auto any = [&](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return u == n; });
  };
  if (u.empty() || any({"ms", "milli", "millis", "millisecond", "milliseconds"})) return 1000000;
  if (any({"d", "day", "days"})) return 86400LL * 1000000000LL;
  if (any({"h", "hour", "hours"})) return 3600LL * 1000000000LL;
  if (any({"m", "min", "mins", "minute", "minutes"})) return 60LL * 1000000000LL;
  if (any({"s", "sec", "secs", "second", "seconds"})) return 1000000000LL;
  if (any({"us", "\xc2\xb5s", "micro", "micros", "microsecond", "microseconds"})) return 1000;
  if (any({"ns", "nano", "nanos", "nanosecond", "nanoseconds"})) return 1;
  return 0;
}

Result<int64_t> ParseInt(const std::string& key, std::string_view text) {
  text = Trim(text);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return Status::InvalidArgument(key + ": '" + std::string(text) + "' is not an integer");
  }
  return v;
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  std::string_view s = Trim(text);
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0) {
    return Status::InvalidArgument("duration '" + std::string(text) +
                                   "' does not start with a non-negative integer");
  }
  int64_t amount = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + digits, amount);
  if (ec != std::errc()) {
    return Status::InvalidArgument("duration '" + std::string(text) + "' is too large");
  }
  std::string unit = Lower(Trim(s.substr(digits)));
  int64_t nanos = UnitNanos(unit);
  if (nanos == 0) {
    return Status::InvalidArgument("duration '" + std::string(text) + "' has unknown unit '" +
                                   unit + "' (use ms, s, min, h or d)");
  }
  // Work in milliseconds for units >= 1 ms so large values do not overflow nanoseconds.
  if (nanos >= 1000000) {
    int64_t per_ms = nanos / 1000000;
    if (amount > INT64_MAX / per_ms) {
      return Status::InvalidArgument("duration '" + std::string(text) + "' is too large");
    }
    return std::chrono::milliseconds(amount * per_ms);
  }
  return std::chrono::milliseconds(amount / (1000000 / nanos));
}

std::string FormatDuration(std::chrono::milliseconds d) {
  return std::to_string(d.count()) + " ms";
}

std::string_view CheckpointingModeName(CheckpointingMode mode) {
  return mode == CheckpointingMode::kExactlyOnce ? "EXACTLY_ONCE" : "AT_LEAST_ONCE";
}

Result<CheckpointConfig> CheckpointConfig::FromOptions(
    const std::map<std::string, std::string>& options) {
  CheckpointConfig c;
  auto get = [&](std::initializer_list<const char*> keys)
      -> const std::pair<const std::string, std::string>* {
    for (const char* k : keys) {
      auto it = options.find(k);
      if (it != options.end()) return &*it;
    }
    return nullptr;
  };
  auto duration = [&](const char* key, std::chrono::milliseconds* out) -> Status {
    if (const auto* kv = get({key})) {
      auto d = ParseDuration(kv->second);
      if (!d.ok()) return d.status().WithContext(key);
      *out = *d;
    }
    return Status::OK();
  };
  auto integer = [&](std::initializer_list<const char*> keys, int* out) -> Status {
    if (const auto* kv = get(keys)) {
      FLOE_ASSIGN_OR_RAISE(int64_t v, ParseInt(kv->first, kv->second));
      if (v < INT_MIN || v > INT_MAX) {
        return Status::InvalidArgument(kv->first + ": " + kv->second + " is out of range");
      }
      *out = static_cast<int>(v);
    }
    return Status::OK();
  };
  FLOE_RETURN_NOT_OK(duration("execution.checkpointing.interval", &c.interval));
  FLOE_RETURN_NOT_OK(duration("execution.checkpointing.min-pause", &c.min_pause));
  FLOE_RETURN_NOT_OK(duration("execution.checkpointing.timeout", &c.timeout));
  FLOE_RETURN_NOT_OK(
      integer({"execution.checkpointing.max-concurrent-checkpoints"}, &c.max_concurrent));
  FLOE_RETURN_NOT_OK(
      integer({"execution.checkpointing.tolerable-failed-checkpoints"}, &c.tolerable_failed));
  FLOE_RETURN_NOT_OK(integer(
      {"state.checkpoints.num-retained", "execution.checkpointing.num-retained"}, &c.num_retained));
  auto flag = [&](std::initializer_list<const char*> keys, bool* out) -> Status {
    if (const auto* kv = get(keys)) {
      std::string v = Lower(Trim(kv->second));
      if (v != "true" && v != "false") {
        return Status::InvalidArgument(kv->first + ": '" + kv->second +
                                       "' must be 'true' or 'false'");
      }
      *out = v == "true";
    }
    return Status::OK();
  };
  FLOE_RETURN_NOT_OK(
      flag({"execution.checkpointing.incremental", "state.backend.incremental"}, &c.incremental));
  FLOE_RETURN_NOT_OK(
      flag({"execution.savepoint.ignore-unclaimed-state"}, &c.ignore_unclaimed_state));
  if (const auto* kv = get({"execution.checkpointing.mode"})) {
    std::string v = Lower(Trim(kv->second));
    if (v == "exactly_once") {
      c.mode = CheckpointingMode::kExactlyOnce;
    } else if (v == "at_least_once") {
      c.mode = CheckpointingMode::kAtLeastOnce;
    } else {
      return Status::InvalidArgument(kv->first + ": unknown value '" + kv->second +
                                     "' (allowed: EXACTLY_ONCE, AT_LEAST_ONCE)");
    }
  }
  if (const auto* kv = get({"execution.checkpointing.externalized-checkpoint-retention"})) {
    std::string v = Lower(Trim(kv->second));
    if (v == "retain_on_cancellation") {
      c.retention = CheckpointRetention::kRetainOnCancellation;
    } else if (v == "delete_on_cancellation") {
      c.retention = CheckpointRetention::kDeleteOnCancellation;
    } else {
      return Status::InvalidArgument(kv->first + ": unknown value '" + kv->second +
                                     "' (allowed: RETAIN_ON_CANCELLATION, DELETE_ON_CANCELLATION)");
    }
  }
  if (const auto* kv =
          get({"execution.checkpointing.unaligned.enabled", "execution.checkpointing.unaligned"})) {
    if (Lower(Trim(kv->second)) == "true") {
      return Status::NotImplemented(kv->first +
                                    ": unaligned checkpoints are not supported yet; floe "
                                    "aligns barriers (EXACTLY_ONCE) or skips alignment "
                                    "(AT_LEAST_ONCE)");
    }
  }
  // Both directories follow io::ResolveLocation's rule (file: URIs, paths, s3://).
  bool on_s3 = false;
  auto location = [&](std::initializer_list<const char*> keys, std::string* out) -> Status {
    const auto* kv = get(keys);
    if (kv == nullptr) return Status::OK();
    FLOE_ASSIGN_OR_RAISE(*out, io::ResolveLocation(kv->second, kv->first));
    on_s3 = on_s3 || io::IsS3Uri(*out);
    return Status::OK();
  };
  FLOE_RETURN_NOT_OK(location({"execution.checkpointing.dir", "state.checkpoints.dir"}, &c.dir));
  FLOE_RETURN_NOT_OK(location({"execution.checkpointing.savepoint-dir", "state.savepoints.dir"},
                              &c.savepoint_dir));
  if (on_s3) {
    // Flink's keys for its S3 filesystems; the AWS environment for what they leave unset.
    // Checked here, so that a job without credentials is refused at start.
    Result<io::S3Config> s3 = io::S3ConfigFromOptions(options, io::kFlinkS3Options);
    if (!s3.ok()) return s3.status().WithContext("checkpoints on s3://");
    c.file_io = io::FileIO(std::move(s3).value());
  } else {
    // A savepoint restored from may still be on s3://.
    Result<io::FileIO> file_io = io::FileIO::FromOptions(options, io::kFlinkS3Options);
    if (!file_io.ok()) return file_io.status().WithContext("S3 settings");
    c.file_io = std::move(file_io).value();
  }
  FLOE_RETURN_NOT_OK(c.Validate());
  return c;
}

void CheckpointConfig::ScopeToJob(const std::string& job_id) {
  base_dir = dir;
  if (dir.empty() || job_id.empty()) return;
  dir = io::JoinPath(dir, job_id);
  // Savepoints stay where they were before the job's directory existed: beside the jobs' ones
  // (their names carry the job id).
  if (savepoint_dir.empty()) savepoint_dir = io::JoinPath(base_dir, "savepoints");
}

Status CheckpointConfig::Validate() const {
  using std::chrono::milliseconds;
  if (interval.count() < 0 || (interval.count() > 0 && interval < milliseconds(10))) {
    return Status::InvalidArgument(
        "execution.checkpointing.interval must be at least 10 ms (or unset to disable periodic "
        "checkpoints), got " +
        FormatDuration(interval));
  }
  if (timeout.count() <= 0) {
    return Status::InvalidArgument("execution.checkpointing.timeout must be > 0, got " +
                                   FormatDuration(timeout));
  }
  if (min_pause.count() < 0) {
    return Status::InvalidArgument("execution.checkpointing.min-pause must be >= 0, got " +
                                   FormatDuration(min_pause));
  }
  if (max_concurrent < 1) {
    return Status::InvalidArgument(
        "execution.checkpointing.max-concurrent-checkpoints must be >= 1, got " +
        std::to_string(max_concurrent));
  }
  if (tolerable_failed < 0) {
    return Status::InvalidArgument(
        "execution.checkpointing.tolerable-failed-checkpoints must be >= 0, got " +
        std::to_string(tolerable_failed));
  }
  if (num_retained < 1) {
    return Status::InvalidArgument("state.checkpoints.num-retained must be >= 1, got " +
                                   std::to_string(num_retained));
  }
  return Status::OK();
}

}  // namespace floe::runtime
