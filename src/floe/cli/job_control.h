#pragma once

// The job-control commands: `floe list`, `floe savepoint`, `floe stop`, `floe cancel`. They
// read job.json and talk to a coordinator through process/job_record.h.

#include <string>
#include <vector>

#include "floe/common/status.h"

namespace floe::cli {

// `floe list [--all] [--json]`, `floe savepoint JOB_ID [DIR]`, `floe stop JOB_ID --savepoint
// [DIR]`, `floe cancel JOB_ID`.
Status RunListCommand(const std::vector<std::string>& args);
// `floe status JOB_ID [--json]`: the web UI's overview as text (from the running coordinator;
// from job.json when it is gone).
Status RunStatusCommand(const std::vector<std::string>& args);
Status RunSavepointCommand(const std::vector<std::string>& args);
Status RunStopCommand(const std::vector<std::string>& args);
Status RunCancelCommand(const std::vector<std::string>& args);

}  // namespace floe::cli
