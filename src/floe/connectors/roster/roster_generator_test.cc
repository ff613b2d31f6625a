#include "floe/connectors/roster/roster_generator.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace floe::connectors {
namespace {

RecordBatch All(RosterOptions o) {
  RosterGenerator g(o);
  return g.Next(static_cast<size_t>(o.events) + 10);
}

TEST(RosterGenerator, SameSeedSameFeed) {
  RosterOptions o;
  EXPECT_TRUE(All(o).Equals(All(o)));
  RosterOptions other = o;
  other.seed = 7;
  EXPECT_FALSE(All(o).Equals(All(other)));
}

TEST(RosterGenerator, RaisingEventsAppendsAndKeepsThePrefix) {
  RosterOptions small;
  small.events = 500;
  RosterOptions big = small;
  big.events = 800;
  RecordBatch a = All(small);
  RecordBatch b = All(big);
  ASSERT_EQ(a.num_rows(), 500u);
  ASSERT_EQ(b.num_rows(), 800u);
  std::vector<uint32_t> prefix(500);
  for (uint32_t i = 0; i < 500; ++i) prefix[i] = i;
  EXPECT_TRUE(b.Take(prefix).Equals(a));
}

TEST(RosterGenerator, BatchesConcatenateToTheWholeFeed) {
  RosterOptions o;
  o.events = 1000;
  RosterGenerator g(o);
  RecordBatch whole = All(o);
  size_t row = 0;
  while (!g.done()) {
    RecordBatch b = g.Next(77);
    for (size_t i = 0; i < b.num_rows(); ++i, ++row) {
      ASSERT_EQ(b.column(0).Get<int64_t>(i), whole.column(0).Get<int64_t>(row));
      ASSERT_EQ(b.column(1).GetBytes(i), whole.column(1).GetBytes(row));
    }
  }
  EXPECT_EQ(row, 1000u);
}

TEST(RosterGenerator, SeqUniqueRevisionsIncreasePerNpiAndEventTimeIsOutOfOrder) {
  RosterOptions o;
  RecordBatch b = All(o);
  ASSERT_TRUE(b.Validate().ok());
  ASSERT_EQ(b.num_rows(), 12000u);
  std::map<std::string, int32_t> last_revision;
  size_t inversions = 0;
  for (size_t i = 0; i < b.num_rows(); ++i) {
    EXPECT_EQ(b.column(0).Get<int64_t>(i), static_cast<int64_t>(i + 1));
    std::string npi(b.column(1).GetBytes(i));
    ASSERT_EQ(npi.size(), 10u);
    int32_t rev = b.column(3).Get<int32_t>(i);
    EXPECT_EQ(rev, last_revision[npi] + 1);
    last_revision[npi] = rev;
    if (i > 0 && b.column(4).Get<int64_t>(i) < b.column(4).Get<int64_t>(i - 1)) ++inversions;
  }
  EXPECT_GT(inversions, 1000u);
  EXPECT_GT(last_revision.size(), 1900u);  // nearly every provider appears
  EXPECT_LE(last_revision.size(), 2000u);
}

}  // namespace
}  // namespace floe::connectors
