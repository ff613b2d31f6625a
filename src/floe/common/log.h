#pragma once

// floe's log: one line per event on stderr, "floe: " first so a user can tell floe's progress
// from a library's chatter. Levels: debug < info < warn < error; the threshold comes from
// FLOE_LOG_LEVEL (debug|info|warn|error, default info) or SetLogLevel. Warnings and errors say
// so after the prefix ("floe: warning: ...", "floe: error: ..."); info lines are the progress a
// user reads. Thread-safe: each line is written with one call, so lines of different threads
// never interleave.

#include <functional>
#include <string_view>

namespace floe {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// "debug" | "info" | "warn" | "warning" | "error"; false for anything else.
bool ParseLogLevel(std::string_view text, LogLevel* level);

// printf-style; a message longer than 4 KiB is cut.
void LogDebug(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void LogInfo(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void LogWarn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void LogError(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Test-only: every line that passes the threshold goes to `sink` (with its newline) instead of
// stderr; an empty function restores stderr.
void SetLogSinkForTesting(std::function<void(LogLevel, std::string_view line)> sink);

}  // namespace floe
