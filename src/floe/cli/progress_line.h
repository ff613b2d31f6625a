#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace floe::cli {

// How far a long command has got. A zero total is unknown.
struct ProgressCounts {
  int64_t rows = 0;
  int64_t rows_total = 0;
  int64_t files = 0;
  int64_t files_total = 0;
  int64_t bytes = 0;
  int64_t bytes_total = 0;
};

// "512 B", "3.2 KiB", "96.0 MiB", "1.5 GiB", "2.0 TiB".
std::string FormatBytes(int64_t n);

// "45s", "3m05s", "1h02m".
std::string FormatDuration(double seconds);

// The text of a progress line after `elapsed_seconds`, e.g.
//   append: 120000 rows, 60000 rows/s, 12.0 MiB/48.0 MiB, 25%, ETA 6s
//   compact: 3/40 files, 9000 rows, 4500 rows/s, 96.0 MiB/1.2 GiB, 7%, ETA 26s
// Files, rows (with their rate) and bytes show once counted; the percentage and ETA once a
// total is known, measured in bytes if their total is, else files, else rows.
std::string FormatProgress(const std::string& label, const ProgressCounts& counts,
                           double elapsed_seconds);

// Whether to draw: FLOE_PROGRESS=always or never decides; otherwise only on a terminal, so
// logs, pipes and tests never see the line.
bool ProgressWanted(const char* floe_progress_env, bool stderr_is_terminal);

// One line on stderr, redrawn in place ('\r') as a long command runs and cleared by Done (or
// the destructor), so the command's own output is never mixed with it. Redraws at most every
// kRedrawInterval; the first Update draws at once. Silent unless ProgressWanted. Not thread
// safe: Update from the thread doing the work.
class ProgressLine {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  static constexpr std::chrono::milliseconds kRedrawInterval{200};

  // On stderr when `wanted` (a command's --quiet turns it off) and
  // ProgressWanted(getenv("FLOE_PROGRESS"), isatty(2)); cut to the terminal's width.
  explicit ProgressLine(std::string label, bool wanted = true);
  // On `out` (null: silent) with time from `clock`: for tests.
  ProgressLine(std::string label, std::FILE* out, Clock clock);
  ~ProgressLine() { Done(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void Update(const ProgressCounts& counts);
  // Clears the line; later Updates draw nothing.
  void Done();

 private:
  std::string label_;
  std::FILE* out_;
  Clock clock_;
  size_t max_width_ = 0;  // 0: unlimited
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  size_t drawn_width_ = 0;  // of the line on screen; 0: nothing drawn yet
};

}  // namespace floe::cli
