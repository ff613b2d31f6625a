#include "floe/common/civil_time.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace floe {
namespace {

TEST(CivilTime, FloorDivisionRoundsTowardNegativeInfinity) {
  EXPECT_EQ(FloorDiv(7, 2), 3);
  EXPECT_EQ(FloorDiv(-7, 2), -4);
  EXPECT_EQ(FloorDiv(-8, 2), -4);
  EXPECT_EQ(FloorMod(-1, 24), 23);
  EXPECT_EQ(FloorMod(24, 24), 0);
  EXPECT_EQ(FloorDiv(-1, kMicrosPerDay), -1);
}

TEST(CivilTime, LeapYearsFollowTheGregorianRule) {
  EXPECT_TRUE(IsLeapYear(2024));
  EXPECT_FALSE(IsLeapYear(2023));
  EXPECT_FALSE(IsLeapYear(1900));
  EXPECT_TRUE(IsLeapYear(2000));
  EXPECT_TRUE(IsLeapYear(0));
  EXPECT_TRUE(IsLeapYear(-4));
  EXPECT_FALSE(IsLeapYear(-100));
  EXPECT_TRUE(IsLeapYear(-400));
  EXPECT_EQ(DaysInMonth(2024, 2), 29);
  EXPECT_EQ(DaysInMonth(1900, 2), 28);
  EXPECT_EQ(DaysInMonth(2023, 4), 30);
  EXPECT_EQ(DaysInMonth(2023, 12), 31);
}

TEST(CivilTime, KnownDates) {
  struct Case {
    int64_t days;
    CivilDate date;
  } cases[] = {
      {0, {1970, 1, 1}},        {-1, {1969, 12, 31}},      {31, {1970, 2, 1}},
      {59, {1970, 3, 1}},       {11016, {2000, 2, 29}},    {11017, {2000, 3, 1}},
      {19782, {2024, 2, 29}},   {-719468, {0, 3, 1}},      {-719469, {0, 2, 29}},
      {-719528, {0, 1, 1}},     {-719529, {-1, 12, 31}},   {2932896, {9999, 12, 31}},
      {2932897, {10000, 1, 1}}, {-141427, {1582, 10, 15}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(CivilFromDays(c.days), c.date) << c.days;
    EXPECT_EQ(DaysFromCivil(c.date.year, c.date.month, c.date.day), c.days) << c.days;
  }
}

// Every day over about 4,400 years (11 400-year eras, both sides of 0000-03-01 and 1970) and
// a few far away: days -> date -> days is the identity and consecutive days are consecutive
// dates.
TEST(CivilTime, RoundTripsEveryDayAcrossEras) {
  CivilDate prev = CivilFromDays(-800'001);
  for (int64_t days = -800'000; days <= 800'000; ++days) {
    CivilDate c = CivilFromDays(days);
    ASSERT_GE(c.month, 1) << days;
    ASSERT_LE(c.month, 12) << days;
    ASSERT_GE(c.day, 1) << days;
    ASSERT_LE(c.day, DaysInMonth(c.year, c.month)) << days;
    ASSERT_EQ(DaysFromCivil(c.year, c.month, c.day), days);
    if (c.day != 1) {
      ASSERT_EQ(c, (CivilDate{prev.year, prev.month, prev.day + 1})) << days;
    } else if (c.month != 1) {
      ASSERT_EQ(prev, (CivilDate{c.year, c.month - 1, DaysInMonth(c.year, c.month - 1)})) << days;
    } else {
      ASSERT_EQ(prev, (CivilDate{c.year - 1, 12, 31})) << days;
    }
    prev = c;
  }
  const int64_t far[] = {std::numeric_limits<int32_t>::min(),
                         std::numeric_limits<int32_t>::max(),
                         FloorDiv(std::numeric_limits<int64_t>::min(), kMicrosPerDay),
                         FloorDiv(std::numeric_limits<int64_t>::max(), kMicrosPerDay),
                         int64_t{1} << 40,
                         -(int64_t{1} << 40)};
  for (int64_t days : far) {
    CivilDate c = CivilFromDays(days);
    EXPECT_EQ(DaysFromCivil(c.year, c.month, c.day), days);
  }
  // The oldest and newest int64 timestamps.
  EXPECT_EQ(CivilFromDays(FloorDiv(std::numeric_limits<int64_t>::min(), kMicrosPerDay)),
            (CivilDate{-290308, 12, 21}));
  EXPECT_EQ(CivilFromDays(FloorDiv(std::numeric_limits<int64_t>::max(), kMicrosPerDay)),
            (CivilDate{294247, 1, 10}));
}

TEST(CivilTime, FormatsDatesWithFourDigitYearsAndSigns) {
  EXPECT_EQ(FormatDate(0), "1970-01-01");
  EXPECT_EQ(FormatDate(-1), "1969-12-31");
  EXPECT_EQ(FormatDate(19782), "2024-02-29");
  EXPECT_EQ(FormatDate(DaysFromCivil(33, 5, 7)), "0033-05-07");
  EXPECT_EQ(FormatDate(-719528), "0000-01-01");
  EXPECT_EQ(FormatDate(-719529), "-0001-12-31");
  EXPECT_EQ(FormatDate(DaysFromCivil(-12345, 6, 1)), "-12345-06-01");
  EXPECT_EQ(FormatDate(2932896), "9999-12-31");
  EXPECT_EQ(FormatDate(2932897), "+10000-01-01");
  EXPECT_EQ(FormatDate(2932897, YearStyle::kNoPlusSign), "10000-01-01");
  EXPECT_EQ(FormatDate(-719529, YearStyle::kNoPlusSign), "-0001-12-31");
  EXPECT_EQ(FormatYear(1970), "1970");
  EXPECT_EQ(FormatYear(7), "0007");
  EXPECT_EQ(FormatYear(-7), "-0007");
  EXPECT_EQ(FormatYear(12024), "+12024");
  EXPECT_EQ(FormatYear(12024, YearStyle::kNoPlusSign), "12024");
}

TEST(CivilTime, FormatsTimestampsBefore1970WithAPositiveTimeOfDay) {
  const int64_t t = 19782 * kMicrosPerDay + 3 * kMicrosPerHour + 4 * 60 * kMicrosPerSecond +
                    5 * kMicrosPerSecond + 6;
  EXPECT_EQ(FormatTimestamp(t), "2024-02-29T03:04:05.000006");
  EXPECT_EQ(FormatTimestamp(0), "1970-01-01T00:00:00.000000");
  EXPECT_EQ(FormatTimestamp(-1), "1969-12-31T23:59:59.999999");
  EXPECT_EQ(FormatTimestamp(-kMicrosPerDay), "1969-12-31T00:00:00.000000");

  TimestampFormat sql{' ', true, YearStyle::kIso8601};
  EXPECT_EQ(FormatTimestamp(t, sql), "2024-02-29 03:04:05.000006");
  TimestampFormat short_form{'T', false, YearStyle::kNoPlusSign};
  EXPECT_EQ(FormatTimestamp(t, short_form), "2024-02-29T03:04:05.000006");
  EXPECT_EQ(FormatTimestamp(t - 6, short_form), "2024-02-29T03:04:05");
  EXPECT_EQ(FormatTimestamp(-kMicrosPerSecond, short_form), "1969-12-31T23:59:59");
  // Flink's JSON: the digits needed, whatever the precision.
  TimestampFormat flink{' ', false, YearStyle::kIso8601, true};
  EXPECT_EQ(FormatTimestamp(t - 6, flink), "2024-02-29 03:04:05");
  EXPECT_EQ(FormatTimestamp(t - 6 + 500000, flink), "2024-02-29 03:04:05.5");
  EXPECT_EQ(FormatTimestamp(t - 6 + 120000, flink), "2024-02-29 03:04:05.12");
  EXPECT_EQ(FormatTimestamp(t, flink), "2024-02-29 03:04:05.000006");
  EXPECT_EQ(FormatTimestamp(-1000, flink), "1969-12-31 23:59:59.999");
  EXPECT_EQ(FormatTimestamp(std::numeric_limits<int64_t>::min()), "-290308-12-21T19:59:05.224192");
  EXPECT_EQ(FormatTimestamp(std::numeric_limits<int64_t>::max()), "+294247-01-10T04:00:54.775807");

  std::string out = "x=";
  AppendTimestamp(0, {}, &out);
  EXPECT_EQ(out, "x=1970-01-01T00:00:00.000000");
}

TEST(CivilTime, ParsesWhatItFormats) {
  for (int64_t days : {int64_t{0}, int64_t{-1}, int64_t{19782}, int64_t{-719529}, int64_t{2932897},
                       int64_t{std::numeric_limits<int32_t>::min()},
                       int64_t{std::numeric_limits<int32_t>::max()}}) {
    int32_t back = 0;
    EXPECT_EQ(ParseDate(FormatDate(days), &back), nullptr) << FormatDate(days);
    EXPECT_EQ(back, days);
  }
  for (int64_t micros :
       {int64_t{0}, int64_t{-1}, int64_t{1'709'175'845'000'006},
        std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    int64_t back = 0;
    EXPECT_EQ(ParseTimestamp(FormatTimestamp(micros), false, &back), nullptr)
        << FormatTimestamp(micros);
    EXPECT_EQ(back, micros);
    EXPECT_EQ(ParseTimestamp(FormatTimestamp(micros, {' ', true, YearStyle::kIso8601}) + "Z", true,
                             &back),
              nullptr);
    EXPECT_EQ(back, micros);
  }
}

// The parser keeps the last date it read: the same text again, a neighbour, and a bad date
// right after a good one all come out as if parsed alone.
TEST(CivilTime, ADateReadAgainOrChangedParsesAsAlone) {
  for (int64_t days = 19700; days < 20500; ++days) {
    const std::string text = FormatDate(days) + " 12:00:00";
    for (int repeat = 0; repeat < 2; ++repeat) {
      int64_t micros = 0;
      ASSERT_EQ(ParseTimestamp(text, false, &micros), nullptr) << text;
      EXPECT_EQ(micros, days * kMicrosPerDay + 12 * 3600 * kMicrosPerSecond) << text;
    }
  }
  int64_t micros = 0;
  ASSERT_EQ(ParseTimestamp("2023-02-28 00:00:00", false, &micros), nullptr);
  EXPECT_STREQ(ParseTimestamp("2023-02-29 00:00:00", false, &micros), "day out of range");
  EXPECT_STREQ(ParseTimestamp("2023-02-28x00:00:00", false, &micros), "not YYYY-MM-DD HH:MM:SS");
  int32_t day = 0;
  ASSERT_EQ(ParseDate("2023-02-28", &day), nullptr);
  EXPECT_EQ(day, DaysFromCivil(2023, 2, 28));
  EXPECT_STREQ(ParseDate("2023-02-281", &day), "not YYYY-MM-DD");
}

TEST(CivilTime, ParsersSayWhatIsWrong) {
  int32_t days = 0;
  EXPECT_STREQ(ParseDate("2023-02-29", &days), "day out of range");
  EXPECT_EQ(ParseDate("2024-02-29", &days), nullptr);
  EXPECT_EQ(days, 19782);
  EXPECT_STREQ(ParseDate("2024-13-01", &days), "month out of range");
  EXPECT_STREQ(ParseDate("24-01-01", &days), "bad year");
  EXPECT_STREQ(ParseDate("10000-01-01", &days), "bad year");  // 5 digits need a sign
  EXPECT_STREQ(ParseDate("2024-1-01", &days), "not YYYY-MM-DD");
  EXPECT_STREQ(ParseDate("+999999999-01-01", &days), "date out of range");

  int64_t micros = 0;
  EXPECT_EQ(ParseTimestamp("1969-12-31 23:59", false, &micros), nullptr);
  EXPECT_EQ(micros, -60 * kMicrosPerSecond);
  EXPECT_EQ(ParseTimestamp("1970-01-01T01:00:00.5+01:00", true, &micros), nullptr);
  EXPECT_EQ(micros, kMicrosPerSecond / 2);
  EXPECT_EQ(ParseTimestamp("1970-01-01T00:00:00.1234569", false, &micros), nullptr);
  EXPECT_EQ(micros, 123456);  // past microseconds: truncated
  EXPECT_STREQ(ParseTimestamp("1970-01-01T00:00:00Z", false, &micros),
               "unexpected text after the time (no zone allowed)");
  EXPECT_STREQ(ParseTimestamp("1970-01-01T24:00:00", false, &micros), "time out of range");
  EXPECT_STREQ(ParseTimestamp("1970-01-01", false, &micros), "not YYYY-MM-DD HH:MM:SS");
  EXPECT_STREQ(ParseTimestamp("1970-01-01T00:00:00+1", true, &micros),
               "bad zone offset (expected Z or +HH:MM)");
  EXPECT_STREQ(ParseTimestamp("+300000-01-01T00:00:00", false, &micros), "timestamp out of range");
}

}  // namespace
}  // namespace floe

namespace floe {
namespace {

TEST(CivilTime, TimesOfDayParseAndFormat) {
  int64_t micros = -1;
  EXPECT_EQ(ParseTime("10:20:30.456", &micros), nullptr);
  EXPECT_EQ(micros, (10 * 3600 + 20 * 60 + 30) * kMicrosPerSecond + 456'000);
  EXPECT_EQ(ParseTime("23:59", &micros), nullptr);
  EXPECT_EQ(micros, (23 * 3600 + 59 * 60) * kMicrosPerSecond);
  EXPECT_STREQ(ParseTime("24:00:00", &micros), "time out of range");
  EXPECT_STREQ(ParseTime("10:20:30Z", &micros), "unexpected text after the time");
  EXPECT_STREQ(ParseTime("1:2:3", &micros), "not HH:MM:SS");
  std::string text;
  TimestampFormat trimmed;
  trimmed.trim_zeros = true;
  AppendTime(kMicrosPerDay - 1, trimmed, &text);
  EXPECT_EQ(text, "23:59:59.999999");
  text.clear();
  AppendTime(0, trimmed, &text);
  EXPECT_EQ(text, "00:00:00");
}

}  // namespace
}  // namespace floe
