#include "floe/common/closest_match.h"

#include <gtest/gtest.h>

namespace floe {
namespace {

TEST(ClosestMatch, SuggestsTheNearestCandidateWithinAFewEdits) {
  std::vector<std::string> keys = {"sink.parallelism", "sink-id", "path", "partition-by"};
  EXPECT_EQ(ClosestMatch("sink.paralelism", keys), "sink.parallelism");  // a deletion
  EXPECT_EQ(ClosestMatch("paht", keys), "path");                         // a swap counts once
  EXPECT_EQ(ClosestMatch("PATH", keys), std::nullopt);                   // four substitutions
  EXPECT_EQ(ClosestMatch("bogus", keys), std::nullopt);
  EXPECT_EQ(ClosestMatch("x", {}), std::nullopt);
  // Longer keys allow more edits: a quarter of the key's length.
  EXPECT_EQ(ClosestMatch("write.parquet.compresion.codek", {"write.parquet.compression-codec"}),
            "write.parquet.compression-codec");
  EXPECT_EQ(ClosestMatch("ab", {"ax", "ay"}), "ax");  // the first of equals
  EXPECT_EQ(DidYouMean("paht", keys), " (did you mean 'path'?)");
  EXPECT_EQ(DidYouMean("bogus", keys), "");
}

}  // namespace
}  // namespace floe
