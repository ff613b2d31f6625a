#include "floe/kafka/property_names.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "floe/kafka/kafka_client.h"

namespace floe::kafka {
namespace {

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(KafkaPropertyNames, ListsGlobalAndTopicPropertiesAndAliases) {
  const std::vector<std::string>& names = KnownPropertyNames();
  EXPECT_GT(names.size(), 100u);
  for (const char* name :
       {"bootstrap.servers", "metadata.broker.list", "group.id", "transactional.id",
        "enable.idempotence", "auto.offset.reset", "queued.max.messages.kbytes"}) {
    EXPECT_TRUE(Has(names, name)) << name;
  }
  EXPECT_FALSE(Has(names, "Property"));
  EXPECT_FALSE(Has(names, ""));
}

TEST(KafkaPropertyNames, AMisspelledPropertyIsRefusedWithTheClosestName) {
  Status st = CheckProperties({{"bootstrap.servrs", "localhost:9092"}});
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_EQ(st.message(),
            "kafka property 'bootstrap.servrs' = 'localhost:9092': No such configuration "
            "property: \"bootstrap.servrs\" (did you mean 'bootstrap.servers'?)");
  EXPECT_EQ(CheckProperties({{"auto.offset.rest", "earliest"}}).message(),
            "kafka property 'auto.offset.rest' = 'earliest': No such configuration property: "
            "\"auto.offset.rest\" (did you mean 'auto.offset.reset'?)");
  // A bad value of a known property: librdkafka's message alone.
  st = CheckProperties({{"session.timeout.ms", "soon"}});
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message().find("did you mean"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace floe::kafka
