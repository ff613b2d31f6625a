#pragma once

#include <string_view>

namespace floe {

// Test-only fault injection. When the environment variable FLOE_CRASH_AT is "<name>" or
// "<name>:<n>", the n-th (default 1st) time this process reaches CrashPoint("<name>") it kills
// itself with SIGKILL: no destructors, no flush, exactly what a killed worker leaves behind.
// With "<name>[:<n>]:stop" it sends itself SIGSTOP instead: the process pauses there until
// SIGCONT (a zombie made on purpose).
// Costs one relaxed atomic load when FLOE_CRASH_AT is unset. Every named point, what a kill
// there leaves behind and the tests that use it: docs/fault-injection.md, "Crash points".
void CrashPoint(std::string_view name);

// Test-only stalls. When FLOE_HOLD_AT is "<name>" or "<name>:<n>", HoldPoint("<name>") returns
// true from its n-th call on: the caller then skips its work (e.g. the Iceberg committer keeps
// its files pending), reproducing a job whose checkpoints complete while a table stands still.
// Unlike FLOE_CRASH_AT, every worker attempt inherits it. docs/fault-injection.md, "Hold points".
bool HoldPoint(std::string_view name);

}  // namespace floe
