#include "floe/cli/help.h"

#include <gtest/gtest.h>

#include <string>

namespace floe::cli {
namespace {

TEST(Help, OverviewNamesEveryCommand) {
  std::string overview(Overview());
  for (const char* c : {"demo",
                        "run JOB",
                        "list",
                        "status",
                        "savepoint",
                        "stop",
                        "cancel",
                        "table create",
                        "verify",
                        "expire-snapshots",
                        "compact",
                        "rewrite-manifests",
                        "remove-orphan-files",
                        "snapshots",
                        "catalog serve",
                        "kafka dev",
                        "produce",
                        "consume",
                        "offsets",
                        "roster",
                        "--version"}) {
    EXPECT_NE(overview.find(c), std::string::npos) << c;
  }
}

TEST(Help, EveryTopLevelCommandHasUsage) {
  for (const char* c : {"demo", "run", "list", "status", "savepoint", "stop", "cancel", "roster"}) {
    EXPECT_FALSE(UsageOf(c).empty()) << c;
    EXPECT_EQ(UsageError(c).rfind(std::string("usage: floe ") + c, 0), 0u) << UsageError(c);
  }
  EXPECT_TRUE(UsageOf("nope").empty());
}

TEST(Help, VersionNamesTheCommit) {
  std::string v = VersionLine();
  EXPECT_EQ(v.rfind("floe ", 0), 0u);
  EXPECT_NE(v.find("(commit "), std::string::npos) << v;
  EXPECT_EQ(v.find("(commit unknown"), std::string::npos) << v;  // built from a git checkout
}

}  // namespace
}  // namespace floe::cli
