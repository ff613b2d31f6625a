#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe {

// A time zone of the system's tz database (Debian's tzdata, TZif files under
// /usr/share/zoneinfo) or a fixed offset: the session zone of Flink's 'table.local-time-zone'.
// A "local" timestamp is the zone's wall clock written as if it were UTC (microseconds, as a
// TIMESTAMP column holds it); an instant is a TIMESTAMP_LTZ value. Immutable, safe from any
// thread.
class TimeZone {
 public:
  // The zone `name` as Flink's 'table.local-time-zone' takes it (java.time.ZoneId.of after
  // Flink's own check): a region of the tz database ("Europe/Berlin", "Etc/GMT+8"); "UTC",
  // "GMT", "UT", "Z"; an offset "+8", "+08", "+08:00", "+0800", "+08:00:00" alone or after GMT /
  // UT ("GMT+08:00", "GMT+8"); "default" for the machine's zone (TZ, else /etc/localtime, else
  // UTC; UTC with a warning when the database lacks it). Refused as Flink refuses them: "UTC+8" and
  // "UTC-05:00" (Flink's message), the three letter short names ("PST", "EST"), and a name that is
  // no zone. `root` is the tz database.
  static Result<std::shared_ptr<const TimeZone>> Load(std::string_view name,
                                                      const std::string& root = kZoneInfoRoot);
  static const std::shared_ptr<const TimeZone>& Utc();
  static constexpr const char* kZoneInfoRoot = "/usr/share/zoneinfo";

  const std::string& name() const { return name_; }
  // No offset ever: local and instant are the same.
  bool is_utc() const { return transitions_.empty() && initial_offset_ == 0; }

  // Seconds east of UTC at the instant `utc_seconds`.
  int32_t OffsetAt(int64_t utc_seconds) const;
  // The wall clock at an instant (Flink's TimeWindowUtil.toUtcTimestampMills).
  int64_t ToLocal(int64_t instant_micros) const;
  // The instant of a wall-clock time as java.time's atZone: in a gap (spring forward) the time
  // moves later by the gap's length; in an overlap (fall back) the earlier instant (Flink's
  // casts to TIMESTAMP_LTZ and window_time, TimeWindowUtil.toEpochMills).
  int64_t ToInstant(int64_t local_micros) const;
  // When a window ending at wall-clock `local_micros` (its last microsecond) has been reached:
  // in a gap the first instant after it, in an overlap the later instant (Flink's
  // TimeWindowUtil.toEpochMillsForTimer), so a window fires after all of its rows' times.
  int64_t ToFiringInstant(int64_t local_micros) const;

  // Built by Load; `transitions` sorted, each the instant a new offset starts.
  struct Transition {
    int64_t at;      // UTC seconds
    int32_t offset;  // seconds east of UTC from `at` on
  };
  TimeZone(std::string name, int32_t initial_offset, std::vector<Transition> transitions);

 private:
  // The instants t whose wall clock is `local` (0, 1 or 2 of them, earliest first), and when
  // there is none the transition that skipped it.
  struct Resolved {
    int64_t instants[2];
    int count = 0;
    const Transition* gap = nullptr;
    int32_t offset_before_gap = 0;
  };
  Resolved Resolve(int64_t local_seconds) const;

  std::string name_;
  int32_t initial_offset_ = 0;
  std::vector<Transition> transitions_;
};

}  // namespace floe
