#pragma once

#include <cstdint>
#include <functional>

namespace floe::iceberg {

// How far a maintenance action (compaction, expiry, orphan removal) has got through the files
// it planned, for a caller that shows it; the action itself prints nothing. A zero total is
// unknown.
struct MaintenanceProgress {
  int64_t files_done = 0;
  int64_t files_total = 0;
  int64_t bytes_done = 0;
  int64_t bytes_total = 0;
  int64_t rows_done = 0;  // compaction: rows written so far
};

// Called on the action's thread once before the first file and after each one; it should be
// cheap (a caller redrawing a line rate-limits itself).
using MaintenanceProgressFn = std::function<void(const MaintenanceProgress&)>;

}  // namespace floe::iceberg
