#include "floe/common/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "floe/common/mutex.h"

namespace floe {
namespace {

LogLevel LevelFromEnvironment() {
  LogLevel level = LogLevel::kInfo;
  if (const char* env = std::getenv("FLOE_LOG_LEVEL")) ParseLogLevel(env, &level);
  return level;
}

std::atomic<int>& Threshold() {
  static std::atomic<int> threshold{static_cast<int>(LevelFromEnvironment())};
  return threshold;
}

// The test sink, if one is set.
struct Sink {
  Mutex mu;
  std::function<void(LogLevel, std::string_view)> fn FLOE_GUARDED_BY(mu);
};
Sink& TheSink() {
  static Sink sink;
  return sink;
}

void Emit(LogLevel level, const char* fmt, va_list ap) {
  if (static_cast<int>(level) < Threshold().load(std::memory_order_relaxed)) return;
  std::string line = "floe: ";
  if (level == LogLevel::kWarn) line += "warning: ";
  if (level == LogLevel::kError) line += "error: ";
  char buf[4096];
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  line += buf;
  line += '\n';
  {
    Sink& sink = TheSink();
    MutexLock lock(sink.mu);
    if (sink.fn) {
      sink.fn(level, line);
      return;
    }
  }
  // One write per line: stderr is shared with child processes and other threads.
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void SetLogLevel(LogLevel level) { Threshold().store(static_cast<int>(level)); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(Threshold().load()); }

bool ParseLogLevel(std::string_view text, LogLevel* level) {
  if (text == "debug") {
    *level = LogLevel::kDebug;
  } else if (text == "info") {
    *level = LogLevel::kInfo;
  } else if (text == "warn" || text == "warning") {
    *level = LogLevel::kWarn;
  } else if (text == "error") {
    *level = LogLevel::kError;
  } else {
    return false;
  }
  return true;
}

#define FLOE_DEFINE_LOG(Name, level) \
  void Name(const char* fmt, ...) {  \
    va_list ap;                      \
    va_start(ap, fmt);               \
    Emit(level, fmt, ap);            \
    va_end(ap);                      \
  }
FLOE_DEFINE_LOG(LogDebug, LogLevel::kDebug)
FLOE_DEFINE_LOG(LogInfo, LogLevel::kInfo)
FLOE_DEFINE_LOG(LogWarn, LogLevel::kWarn)
FLOE_DEFINE_LOG(LogError, LogLevel::kError)
#undef FLOE_DEFINE_LOG

void SetLogSinkForTesting(std::function<void(LogLevel, std::string_view)> sink) {
  Sink& the_sink = TheSink();
  MutexLock lock(the_sink.mu);
  the_sink.fn = std::move(sink);
}

}  // namespace floe
