#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "floe/common/status.h"
#include "floe/io/file_io.h"
#include "floe/runtime/operator.h"

namespace floe::runtime {

// What happens to retained checkpoints when the job is cancelled
// (execution.checkpointing.externalized-checkpoint-retention). A failed job always keeps them.
enum class CheckpointRetention { kRetainOnCancellation, kDeleteOnCancellation };

// Parses a duration the way Flink's TimeUtils does: an integer, optional whitespace, optional
// unit (case-insensitive): d|day|days, h|hour|hours, min|minute|minutes|m, s|sec|secs|second|
// seconds, ms|milli|millis|millisecond|milliseconds, us|µs|micro|micros|microsecond|
// microseconds, ns|nano|nanos|nanosecond|nanoseconds. No unit = milliseconds. "1s", "500 ms",
// "2min", "1 h". Sub-millisecond results are truncated. InvalidArgument otherwise.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);
std::string FormatDuration(std::chrono::milliseconds d);

// Checkpointing settings, with Flink's option names and defaults (floe differs from Flink 1.20
// only in retaining checkpoints on cancellation by default). Plain value.
struct CheckpointConfig {
  // execution.checkpointing.interval; 0 = no periodic checkpoints (a bounded job still takes
  // its final checkpoint, so sinks commit).
  std::chrono::milliseconds interval{0};
  CheckpointingMode mode = CheckpointingMode::kExactlyOnce;     // .mode
  std::chrono::milliseconds min_pause{0};                       // .min-pause
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};  // .timeout
  int max_concurrent = 1;                                       // .max-concurrent-checkpoints
  int tolerable_failed = 0;                                     // .tolerable-failed-checkpoints
  CheckpointRetention retention = CheckpointRetention::kRetainOnCancellation;
  // execution.checkpointing.dir (state.checkpoints.dir) as an absolute path or s3:// URI; once
  // ScopeToJob ran, this job's directory under it: <base_dir>/<job id> (Flink's layout).
  std::string dir;
  std::string base_dir;       // execution.checkpointing.dir itself ("" = not set)
  std::string savepoint_dir;  // execution.checkpointing.savepoint-dir (state.savepoints.dir)
  // What checkpoints and savepoints are read and written with: local files, and s3:// objects
  // with Flink's S3 keys (s3.endpoint, s3.path.style.access, s3.access-key, s3.secret-key,
  // s3.region), unset ones from the AWS environment (credentials checked at start when `dir`
  // or `savepoint_dir` is on s3://).
  io::FileIO file_io;
  int num_retained = 1;  // state.checkpoints.num-retained
  // execution.checkpointing.incremental (state.backend.incremental): checkpoints upload only what
  // changed since the last one where the backend can (RocksDB); savepoints stay canonical.
  bool incremental = false;
  // execution.savepoint.ignore-unclaimed-state (Flink's --allowNonRestoredState): a restore
  // drops the state of operators this job no longer has instead of refusing.
  bool ignore_unclaimed_state = false;

  bool periodic() const { return interval.count() > 0; }

  // Reads the keys above from `options` (other keys are ignored: they belong to other layers),
  // then Validate()s. Errors name the key, the rule and the value.
  static Result<CheckpointConfig> FromOptions(const std::map<std::string, std::string>& options);
  // Puts this job's checkpoints in <dir>/<job_id>/chk-N and, unless set, its savepoints in
  // <dir>/savepoints. Once, by the planner.
  void ScopeToJob(const std::string& job_id);
  // interval 0 or >= 10 ms; timeout > 0; min-pause >= 0; max-concurrent >= 1; tolerable >= 0;
  // num-retained >= 1.
  Status Validate() const;
};

std::string_view CheckpointingModeName(CheckpointingMode mode);

}  // namespace floe::runtime
