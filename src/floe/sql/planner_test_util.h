#pragma once

// What the planner's tests share: a JSON-lines input directory for a filesystem source, and a
// planned job run to its end with what its print sinks printed.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "floe/runtime/local_job.h"
#include "floe/sql/planner.h"

namespace floe::sql::testing {

// A fresh directory holding in.jsonl with `lines`, for a filesystem source at ${DIR}; removed
// with the object.
struct JsonInput {
  std::filesystem::path dir;
  explicit JsonInput(const std::string& lines) {
    std::random_device rd;
    dir = std::filesystem::temp_directory_path() / ("floe-planner-test-" + std::to_string(rd()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "in.jsonl") << lines;
  }
  ~JsonInput() { std::filesystem::remove_all(dir); }
  PlanOptions options() const {
    PlanOptions options;
    options.variables = {{"DIR", dir.string()}};
    return options;
  }
};

// Runs a planned job to its end; what its print sinks printed.
inline Result<std::string> RunPrinting(const PlannedJob& job) {
  runtime::LocalJobOptions local;
  local.checkpointing = job.checkpointing;
  local.timer_thread = false;
  FLOE_ASSIGN_OR_RAISE(auto run, runtime::LocalJob::Make(job.graph, local));
  ::testing::internal::CaptureStdout();
  Status st = run->Start();
  if (st.ok()) st = run->Wait();
  std::string printed = ::testing::internal::GetCapturedStdout();
  FLOE_RETURN_NOT_OK(st);
  return printed;
}

}  // namespace floe::sql::testing
