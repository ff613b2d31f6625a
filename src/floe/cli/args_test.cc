#include "floe/cli/args.h"

#include <gtest/gtest.h>

#include "floe/cli/supervisor.h"

namespace floe::cli {
namespace {

TEST(Args, PositionalsAndBothOptionForms) {
  auto a = Args::Parse({"ns.t", "--warehouse", "/w", "--limit=5", "file.jsonl", "--quiet"},
                       {{"warehouse", "limit"}, {"quiet"}});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->positional(), (std::vector<std::string>{"ns.t", "file.jsonl"}));
  EXPECT_EQ(a->GetOr("warehouse", ""), "/w");
  EXPECT_EQ(**a->GetInt("limit"), 5);
  EXPECT_TRUE(a->Has("quiet"));
}

TEST(Args, RepeatedOptionsKeepEveryValue) {
  auto a = Args::Parse({"--property", "a=1", "--property=b=2"}, {{"property"}, {}});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->GetAll("property"), (std::vector<std::string>{"a=1", "b=2"}));
}

TEST(Args, UnknownOptionListsAcceptedOnes) {
  auto a = Args::Parse({"--wearhouse", "x"}, {{"warehouse"}, {"quiet"}});
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("--wearhouse"), std::string::npos);
  EXPECT_NE(a.status().message().find("--warehouse VALUE"), std::string::npos);
}

TEST(Args, BadIntegerNamesTheOption) {
  auto a = Args::Parse({"--limit", "ten"}, {{"limit"}, {}});
  ASSERT_TRUE(a.ok());
  auto v = a->GetInt("limit");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("--limit"), std::string::npos);
}

TEST(Args, MissingValueIsAnError) { EXPECT_FALSE(Args::Parse({"--limit"}, {{"limit"}, {}}).ok()); }

TEST(RunArgs, StaleRestorePolicyAndAssignments) {
  EXPECT_FALSE(ParseStaleRestorePolicy("skip").ok());
  EXPECT_TRUE(ParseStaleRestorePolicy("skip-to-table").ok());
  EXPECT_FALSE(SplitAssignment("novalue", "--var").ok());
  auto kv = SplitAssignment("a=b=c", "--set");
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(kv->first, "a");
  EXPECT_EQ(kv->second, "b=c");
}

}  // namespace
}  // namespace floe::cli
