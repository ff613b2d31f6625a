#include "floe/connectors/partition_claims.h"

#include <gtest/gtest.h>

namespace floe::connectors {
namespace {

TEST(PartitionClaims, RoundTripAndMalformedPositionsAreCorruptionNamingTheField) {
  const std::vector<PartitionClaim> claims = {
      PartitionClaim{{"orders", 3}, 2, std::nullopt, 17},
      PartitionClaim{{"orders.v2", 0}, 1, 40, 41},
      PartitionClaim{{"courses", 7}, 3, 10, 12, /*topic_partitions=*/8},
  };
  EXPECT_EQ(ClaimSplit(claims[0]), "orders/3/2");
  Result<std::vector<PartitionClaim>> back = ClaimsFromJson(ClaimsToJson(claims), "position");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, claims);
  const std::pair<const char*, const char*> bad[] = {
      {"", "expected JSON"},
      {"[]", "expected object"},
      {R"({"claims":{}})", "claims"},
      {R"({"claims":[{"topic":"t","partition":0,"generation":1,"next":5}]})", "claims[0].from"},
      {R"({"claims":[{"topic":"t","partition":0,"generation":-1,"from":null,"next":5}]})",
       "claims[0].generation"},
      {R"({"claims":[{"topic":"t","partition":0,"generation":1,"from":9,"next":5}]})",
       "from <= next"},
      {R"({"claims":[{"topic":"t","partition":-2,"generation":1,"from":null,"next":5}]})",
       "from <= next"},
      {R"({"claims":[{"topic":"t","partition":8,"generation":1,"from":null,"next":5,)"
       R"("topic_partitions":8}]})",
       "above the partition"},
  };
  for (const auto& [text, want] : bad) {
    Result<std::vector<PartitionClaim>> got = ClaimsFromJson(text, "position of src/0");
    ASSERT_FALSE(got.ok()) << text;
    EXPECT_EQ(got.status().code(), StatusCode::kCorruption) << text;
    EXPECT_NE(got.status().message().find(want), std::string::npos) << got.status().ToString();
    EXPECT_NE(got.status().message().find("position of src/0"), std::string::npos)
        << got.status().ToString();
  }
}

}  // namespace
}  // namespace floe::connectors
