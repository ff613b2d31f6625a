#pragma once

#include <cstdint>

namespace floe::runtime {

// What the coordinator does when a worker fails: restart-strategy.type fixed-delay
// (.attempts, .delay) | none (Flink's option names; the planner parses them).
struct RestartStrategy {
  enum class Kind { kNone, kFixedDelay } kind = Kind::kFixedDelay;
  int attempts = 3;
  int64_t delay_ms = 1000;
};

}  // namespace floe::runtime
