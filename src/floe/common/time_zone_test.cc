#include "floe/common/time_zone.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>

#include "floe/common/civil_time.h"
#include "floe/common/testing/temp_dir.h"

namespace floe {
namespace {

std::shared_ptr<const TimeZone> Zone(const std::string& name) {
  Result<std::shared_ptr<const TimeZone>> zone = TimeZone::Load(name);
  EXPECT_TRUE(zone.ok()) << zone.status().ToString();
  return zone.ok() ? *zone : TimeZone::Utc();
}

// A wall-clock time ("2021-03-14T02:30") as a local timestamp, microseconds.
int64_t Local(const std::string& text) {
  int64_t micros = 0;
  EXPECT_EQ(ParseTimestamp(text, false, &micros), nullptr) << text;
  return micros;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

constexpr int64_t Ms(int64_t millis) { return millis * 1000; }

// The values of Flink's TimeWindowUtilTest (toEpochMills, toEpochMillsForTimer,
// toUtcTimestampMills), milliseconds there, microseconds here.
TEST(TimeZone, ShanghaiHasOneInstantForEveryWallClockTime) {
  auto zone = Zone("Asia/Shanghai");
  using To = int64_t (TimeZone::*)(int64_t) const;
  for (To to : {To{&TimeZone::ToInstant}, To{&TimeZone::ToFiringInstant}}) {
    EXPECT_EQ(((*zone).*to)(Local("1970-01-01T00:00:01")), Ms(-28799000));
    EXPECT_EQ(((*zone).*to)(Local("1970-01-01T07:59:59.999")), Ms(-1));
    EXPECT_EQ(((*zone).*to)(Local("1970-01-01T08:00:01")), Ms(1000));
    EXPECT_EQ(((*zone).*to)(Local("1970-01-01T08:00:00.001")), Ms(1));
  }
  EXPECT_EQ(zone->ToLocal(Ms(1)), Local("1970-01-01T08:00:00.001"));
}

TEST(TimeZone, SpringForwardMovesAGapTimeLaterAndFiresAtTheFirstInstantAfterIt) {
  auto zone = Zone("America/Los_Angeles");
  const std::pair<const char*, int64_t> firing[] = {
      {"2021-03-14T00:00", 1615708800000},    {"2021-03-14T01:00", 1615712400000},
      {"2021-03-14T02:00", 1615716000000},    {"2021-03-14T02:30", 1615716000000},
      {"2021-03-14T02:59:59", 1615716000000}, {"2021-03-14T03:00", 1615716000000},
      {"2021-03-14T03:30", 1615717800000},    {"2021-03-14T03:59:59", 1615719599000}};
  for (const auto& [local, expected] : firing) {
    EXPECT_EQ(zone->ToFiringInstant(Local(local)), Ms(expected)) << local;
  }
  const std::pair<const char*, int64_t> instants[] = {
      {"2021-03-14T00:00", 1615708800000},    {"2021-03-14T01:00", 1615712400000},
      {"2021-03-14T02:00", 1615716000000},    {"2021-03-14T02:30", 1615717800000},
      {"2021-03-14T02:59:59", 1615719599000}, {"2021-03-14T03:30", 1615717800000},
      {"2021-03-14T03:00", 1615716000000}};
  for (const auto& [local, expected] : instants) {
    EXPECT_EQ(zone->ToInstant(Local(local)), Ms(expected)) << local;
  }
}

TEST(TimeZone, FallBackMapsTwoInstantsToOneWallClockAndFiresAtTheLater) {
  auto zone = Zone("America/Los_Angeles");
  EXPECT_EQ(zone->ToLocal(Ms(1636272000000)), Local("2021-11-07T01:00"));
  EXPECT_EQ(zone->ToLocal(Ms(1636275600000)), Local("2021-11-07T01:00"));
  EXPECT_EQ(zone->ToLocal(Ms(1636272001000)), Local("2021-11-07T01:00:01"));
  EXPECT_EQ(zone->ToLocal(Ms(1636275599000)), Local("2021-11-07T01:59:59"));
  const std::tuple<const char*, int64_t, int64_t> cases[] = {
      // wall clock, toEpochMillsForTimer, toEpochMills
      {"2021-11-07T00:00", 1636268400000, 1636268400000},
      {"2021-11-07T01:00", 1636275600000, 1636272000000},
      {"2021-11-07T02:00", 1636279200000, 1636279200000},
      {"2021-11-07T00:00:01", 1636268401000, 1636268401000},
      {"2021-11-07T01:59:59", 1636279199000, 1636275599000},
      {"2021-11-07T02:00:01", 1636279201000, 1636279201000}};
  for (const auto& [local, firing, instant] : cases) {
    EXPECT_EQ(zone->ToFiringInstant(Local(local)), Ms(firing)) << local;
    EXPECT_EQ(zone->ToInstant(Local(local)), Ms(instant)) << local;
  }
}

TEST(TimeZone, RulesGoOnPastTheLastListedTransition) {
  // TZif files list transitions to 2037 at most; the file's rule (e.g. PST8PDT,M3.2.0,M11.1.0)
  // gives the later ones.
  auto la = Zone("America/Los_Angeles");
  EXPECT_EQ(la->OffsetAt(Local("2050-07-01T00:00") / kMicrosPerSecond), -7 * 3600);
  EXPECT_EQ(la->OffsetAt(Local("2050-01-01T00:00") / kMicrosPerSecond), -8 * 3600);
  EXPECT_EQ(la->ToFiringInstant(Local("2050-03-13T02:30")), Local("2050-03-13T10:00"));
  auto sydney = Zone("Australia/Sydney");  // southern: daylight time over the new year
  EXPECT_EQ(sydney->OffsetAt(Local("2060-01-01T00:00") / kMicrosPerSecond), 11 * 3600);
  EXPECT_EQ(sydney->OffsetAt(Local("2060-07-01T00:00") / kMicrosPerSecond), 10 * 3600);
}

// Every zone of the system's database against glibc's reading of the same files, from 1950 to
// 2100 (past the transitions the files list, where their rules take over).
TEST(TimeZone, EveryZoneAgreesWithGlibc) {
  const char* saved = std::getenv("TZ");
  int zones = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(TimeZone::kZoneInfoRoot)) {
    const std::string path = entry.path().string();
    const std::string name = path.substr(std::string(TimeZone::kZoneInfoRoot).size() + 1);
    if (!entry.is_regular_file() || !std::isupper(static_cast<unsigned char>(name[0])) ||
        name.starts_with("SystemV") || name.find('.') != std::string::npos) {
      continue;
    }
    Result<std::shared_ptr<const TimeZone>> zone = TimeZone::Load(name);
    if (!zone.ok() && zone.status().IsInvalidArgument()) continue;  // Flink refuses it (EST)
    ASSERT_TRUE(zone.ok()) << name << ": " << zone.status().ToString();
    ::setenv("TZ", name.c_str(), 1);
    ::tzset();
    ++zones;
    for (int64_t t = -631152000; t < 4102444800; t += 97 * 86400 + 3607) {
      const time_t at = static_cast<time_t>(t);
      struct tm tm {};
      ASSERT_NE(::localtime_r(&at, &tm), nullptr);
      ASSERT_EQ((*zone)->OffsetAt(t), tm.tm_gmtoff) << name << " at " << t;
    }
  }
  if (saved != nullptr) {
    ::setenv("TZ", saved, 1);
  } else {
    ::unsetenv("TZ");
  }
  ::tzset();
  EXPECT_GT(zones, 300);
}

TEST(TimeZone, OffsetsAndUtcSpellingsAsJavaTakesThem) {
  EXPECT_TRUE(Zone("UTC")->is_utc());
  EXPECT_TRUE(Zone("Z")->is_utc());
  EXPECT_TRUE(Zone("GMT")->is_utc());
  EXPECT_TRUE(Zone("Etc/UTC")->is_utc());
  for (const char* name : {"GMT+08:00", "GMT+8", "+08:00", "+0800", "+8", "UT+08"}) {
    EXPECT_EQ(Zone(name)->OffsetAt(0), 8 * 3600) << name;
  }
  EXPECT_EQ(Zone("GMT-05:30")->ToLocal(0), -(5 * 3600 + 1800) * kMicrosPerSecond);
  EXPECT_EQ(Zone("Etc/GMT+8")->OffsetAt(0), -8 * 3600);  // POSIX's sign, as the tz database
}

// Flink's TableConfigTest and its check before ZoneId.of.
TEST(TimeZone, RefusesWhatFlinkRefusesWithItsRule) {
  for (const char* name : {"UTC+8", "utc-10:00", "PST", "cst"}) {
    Result<std::shared_ptr<const TimeZone>> zone = TimeZone::Load(name);
    ASSERT_FALSE(zone.ok()) << name;
    EXPECT_NE(zone.status().ToString().find("configured Zone ID is '" + std::string(name) + "'"),
              std::string::npos)
        << zone.status().ToString();
  }
  for (const char* name : {"GMT-8:00", "+19:00", "GMT+", "Nowhere/City", "asia/shanghai", "",
                           "../../etc/passwd", "/etc/localtime", "Asia", "default2"}) {
    Result<std::shared_ptr<const TimeZone>> zone = TimeZone::Load(name);
    EXPECT_TRUE(!zone.ok() && zone.status().IsInvalidArgument()) << name;
  }
  EXPECT_NE(TimeZone::Load("Nowhere/City").status().ToString().find("unknown time zone"),
            std::string::npos);
}

TEST(TimeZone, DefaultIsTheMachinesZone) {
  const char* saved = std::getenv("TZ");
  ::setenv("TZ", "Asia/Shanghai", 1);
  auto zone = Zone("default");
  if (saved != nullptr) {
    ::setenv("TZ", saved, 1);
  } else {
    ::unsetenv("TZ");
  }
  EXPECT_EQ(zone->OffsetAt(0), 8 * 3600);
  // A machine zone the database lacks: UTC (and a warning), not a job that cannot start.
  ::setenv("TZ", "Nowhere/City", 1);
  Result<std::shared_ptr<const TimeZone>> unreadable = TimeZone::Load("default");
  if (saved != nullptr) {
    ::setenv("TZ", saved, 1);
  } else {
    ::unsetenv("TZ");
  }
  ASSERT_TRUE(unreadable.ok()) << unreadable.status().ToString();
  EXPECT_TRUE((*unreadable)->is_utc());
}

TEST(TimeZone, ABrokenZoneFileIsAnErrorNotACrash) {
  testing::TempDir root;
  const std::string real = ReadAll("/usr/share/zoneinfo/America/Los_Angeles");
  ASSERT_GT(real.size(), 1000u);
  for (size_t cut : {size_t{0}, size_t{3}, size_t{44}, size_t{100}, real.size() / 2}) {
    WriteAll(root.path() + "/Cut", real.substr(0, cut));
    Result<std::shared_ptr<const TimeZone>> zone = TimeZone::Load("Cut", root.path());
    EXPECT_TRUE(zone.status().IsCorruption()) << cut << ": " << zone.status().ToString();
  }
  std::string garbled = real;
  garbled[32] = '\x7f';  // the first transition count: billions
  WriteAll(root.path() + "/Garbled", garbled);
  EXPECT_FALSE(TimeZone::Load("Garbled", root.path()).ok());
}

}  // namespace
}  // namespace floe
