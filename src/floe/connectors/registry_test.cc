#include "floe/connectors/registry.h"

#include <gtest/gtest.h>

namespace floe::connectors {
namespace {

TEST(ConnectorRegistry, BuiltinConnectorsHaveTheirRolesAndDeclareTheirOptions) {
  const ConnectorRegistry& r = BuiltinConnectors();
  EXPECT_EQ(r.Names(), "'blackhole', 'filesystem', 'iceberg', 'kafka', 'print', 'roster'");
  EXPECT_EQ(r.SourceNames(), "'filesystem', 'kafka', 'roster'");
  EXPECT_EQ(r.SinkNames(), "'blackhole', 'iceberg', 'kafka', 'print'");
  EXPECT_EQ(r.ChangelogSinkNames(), "'blackhole', 'iceberg', 'print'");
  for (const char* name : {"blackhole", "filesystem", "iceberg", "kafka", "print", "roster"}) {
    const Connector* c = r.Find(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_FALSE(c->options.empty()) << name;
  }
  EXPECT_EQ(r.Find("kafkaa"), nullptr);
}

TEST(ConnectorRegistry, RefusesASecondConnectorOfTheSameName) {
  ConnectorRegistry r;
  Connector c;
  c.name = "x";
  ASSERT_TRUE(r.Register(c).ok());
  Status st = r.Register(c);
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
}

TEST(ConnectorRegistry, IcebergAcceptsAChangelogOnlyIntoAnUpsertTable) {
  const Connector* iceberg = BuiltinConnectors().Find("iceberg");
  ASSERT_NE(iceberg, nullptr);
  TableDescriptor t;
  t.name = "lake";
  EXPECT_NE(iceberg->accepts_changelog(t).message().find("iceberg table 'lake' is append-only"),
            std::string::npos);
  t.primary_key = {"id"};
  t.options["write.upsert.enabled"] = "true";
  EXPECT_TRUE(iceberg->accepts_changelog(t).ok());
}

}  // namespace
}  // namespace floe::connectors
