#include "floe/common/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "floe/common/log.h"

namespace floe {
namespace {

struct CrashConfig {
  std::string name;
  long target = 1;
  bool stop = false;  // ":stop": SIGSTOP (a paused process, resumed by SIGCONT), not SIGKILL
  std::atomic<long> hits{0};
};

// `config` from the environment variable `var` ("<name>[:<n>][:stop]"); null when unset.
CrashConfig* LoadConfig(const char* var, CrashConfig& config) {
  const char* env = std::getenv(var);
  if (env == nullptr || *env == '\0') return nullptr;
  std::string spec(env);
  constexpr std::string_view kStop = ":stop";
  if (spec.size() > kStop.size() &&
      spec.compare(spec.size() - kStop.size(), kStop.size(), kStop) == 0) {
    config.stop = true;
    spec.resize(spec.size() - kStop.size());
  }
  size_t colon = spec.rfind(':');
  config.name = spec.substr(0, colon);
  if (colon != std::string::npos) config.target = std::max(1L, std::atol(spec.c_str() + colon + 1));
  return &config;
}

}  // namespace

void CrashPoint(std::string_view name) {
  static CrashConfig storage;
  static CrashConfig* config = LoadConfig("FLOE_CRASH_AT", storage);
  if (config == nullptr || name != config->name) return;
  if (config->hits.fetch_add(1) + 1 == config->target) {
    LogInfo("crash point '%s' reached: %s", config->name.c_str(),
            config->stop ? "SIGSTOP" : "SIGKILL");
    ::kill(::getpid(), config->stop ? SIGSTOP : SIGKILL);
  }
}

bool HoldPoint(std::string_view name) {
  static CrashConfig storage;
  static CrashConfig* config = LoadConfig("FLOE_HOLD_AT", storage);
  if (config == nullptr || name != config->name) return false;
  const long hit = config->hits.fetch_add(1) + 1;
  if (hit == config->target) LogInfo("hold point '%s' reached: holding", config->name.c_str());
  return hit >= config->target;
}

}  // namespace floe
