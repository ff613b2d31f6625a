#include "floe/cli/progress_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace floe::cli {

std::string FormatBytes(int64_t n) {
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  char buf[32];
  if (n < 1024) {
    std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(n));
    return buf;
  }
  double v = static_cast<double>(n) / 1024;
  size_t unit = 0;
  for (; v >= 1024 && unit + 1 < std::size(kUnits); ++unit) v /= 1024;
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::string FormatDuration(double seconds) {
  const long long s = std::llround(std::max(seconds, 0.0));
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%llds", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", s / 3600, s % 3600 / 60);
  }
  return buf;
}

std::string FormatProgress(const std::string& label, const ProgressCounts& c,
                           double elapsed_seconds) {
  std::string line = label + ":";
  auto part = [&line, first = true](const std::string& text) mutable {
    line += first ? " " : ", ";
    line += text;
    first = false;
  };
  auto of = [](int64_t done, int64_t total) {
    return total > 0 ? std::to_string(done) + "/" + std::to_string(total) : std::to_string(done);
  };
  if (c.files > 0 || c.files_total > 0) part(of(c.files, c.files_total) + " files");
  if (c.rows > 0 || c.rows_total > 0) {
    part(of(c.rows, c.rows_total) + " rows");
    char rate[32];
    std::snprintf(rate, sizeof(rate), "%.0f rows/s",
                  elapsed_seconds > 0 ? static_cast<double>(c.rows) / elapsed_seconds : 0.0);
    part(rate);
  }
  if (c.bytes > 0 || c.bytes_total > 0) {
    part(FormatBytes(c.bytes) + (c.bytes_total > 0 ? "/" + FormatBytes(c.bytes_total) : ""));
  }
  double fraction = -1;
  if (c.bytes_total > 0) {
    fraction = static_cast<double>(c.bytes) / static_cast<double>(c.bytes_total);
  } else if (c.files_total > 0) {
    fraction = static_cast<double>(c.files) / static_cast<double>(c.files_total);
  } else if (c.rows_total > 0) {
    fraction = static_cast<double>(c.rows) / static_cast<double>(c.rows_total);
  }
  if (fraction >= 0) {
    fraction = std::min(fraction, 1.0);
    part(std::to_string(static_cast<int>(fraction * 100)) + "%");
    // The rate so far holds for the rest; nothing done yet gives no estimate.
    if (fraction > 0) part("ETA " + FormatDuration(elapsed_seconds * (1 - fraction) / fraction));
  }
  return line;
}

bool ProgressWanted(const char* floe_progress_env, bool stderr_is_terminal) {
  if (floe_progress_env != nullptr && std::strcmp(floe_progress_env, "always") == 0) return true;
  if (floe_progress_env != nullptr && std::strcmp(floe_progress_env, "never") == 0) return false;
  return stderr_is_terminal;
}

ProgressLine::ProgressLine(std::string label, bool wanted)
    : ProgressLine(
          std::move(label),
          wanted && ProgressWanted(std::getenv("FLOE_PROGRESS"), ::isatty(STDERR_FILENO) != 0)
              ? stderr
              : nullptr,
          std::chrono::steady_clock::now) {
  // A line wider than the terminal wraps, and '\r' would then redraw only its last row.
  winsize ws{};
  if (out_ != nullptr && ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) {
    max_width_ = ws.ws_col - 1;
  }
}

ProgressLine::ProgressLine(std::string label, std::FILE* out, Clock clock)
    : label_(std::move(label)), out_(out), clock_(std::move(clock)), start_(clock_()) {}

void ProgressLine::Update(const ProgressCounts& counts) {
  if (out_ == nullptr) return;
  const auto now = clock_();
  if (drawn_width_ > 0 && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  std::string text =
      FormatProgress(label_, counts, std::chrono::duration<double>(now - start_).count());
  if (max_width_ > 0 && text.size() > max_width_) text.resize(max_width_);
  const size_t width = text.size();
  // Blanks over what a longer previous line left.
  if (width < drawn_width_) text.append(drawn_width_ - width, ' ');
  std::fprintf(out_, "\r%s", text.c_str());
  std::fflush(out_);
  drawn_width_ = width;
}

void ProgressLine::Done() {
  if (out_ != nullptr && drawn_width_ > 0) {
    std::fprintf(out_, "\r%s\r", std::string(drawn_width_, ' ').c_str());
    std::fflush(out_);
  }
  out_ = nullptr;
}

}  // namespace floe::cli
