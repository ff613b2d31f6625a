#pragma once

#include <string_view>

namespace floe {

// Test-only fault injection. When the environment variable FLOE_CRASH_AT is "<name>" or
// "<name>:<n>", the n-th (default 1st) time this process reaches CrashPoint("<name>") it kills
// itself with SIGKILL: no destructors, no flush, exactly what a killed worker leaves behind.
// Costs one relaxed atomic load when FLOE_CRASH_AT is unset. Named points are listed in
// docs/fault-injection.md.
void CrashPoint(std::string_view name);

}  // namespace floe
