#include "floe/connectors/kafka/schema_registry.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace floe::connectors {
namespace {

TEST(ConfluentFraming, ReadsTheIdBigEndianAndRefusesOtherFraming) {
  auto framed = ParseConfluentFraming(std::string("\x00\x00\x01\x02\x03\x2a", 6));
  ASSERT_TRUE(framed.ok()) << framed.status().ToString();
  EXPECT_EQ(framed->schema_id, 0x010203);
  EXPECT_EQ(framed->datum, "\x2a");
  auto short_value = ParseConfluentFraming(std::string("\x00\x00\x01", 3));
  ASSERT_FALSE(short_value.ok());
  EXPECT_NE(short_value.status().message().find("has 3"), std::string::npos);
  // Confluent's newer framing (magic byte 1 and a GUID) is refused by name, as is plain JSON.
  for (std::string value : {std::string("\x01\x00\x00\x00\x01", 5), std::string("{\"a\":1}")}) {
    auto other = ParseConfluentFraming(value);
    ASSERT_FALSE(other.ok());
    EXPECT_NE(other.status().message().find("not Confluent's magic byte 0"), std::string::npos)
        << other.status().ToString();
  }
}

// The registry's answers: a schema fetched once and then cached, an unknown id NotFound with the
// registry's error, a schema of another type refused, a response that is not JSON an error.
TEST(SchemaRegistryClient, FetchesEachIdOnceAndNamesTheRegistrysErrors) {
  httplib::Server fake;
  std::atomic<int> requests{0};
  fake.Get(R"(/prefix/schemas/ids/(\d+))",
           [&](const httplib::Request& req, httplib::Response& res) {
             ++requests;
             const std::string id = req.matches[1];
             if (id == "1") {
               // schemaType absent: AVRO, as registries before 2025 answer.
               res.set_content(R"({"schema":"{\"type\":\"record\",\"name\":\"r\",\"fields\":[]}"})",
                               "application/vnd.schemaregistry.v1+json");
             } else if (id == "2") {
               res.set_content(R"({"schema":"syntax = \"proto3\";","schemaType":"PROTOBUF"})",
                               "application/vnd.schemaregistry.v1+json");
             } else if (id == "3") {
               res.set_content("not json", "text/plain");
             } else {
               res.status = 404;
               res.set_content(R"({"error_code":40403,"message":"Schema not found"})",
                               "application/vnd.schemaregistry.v1+json");
             }
           });
  int port = fake.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { fake.listen_after_bind(); });
  while (!fake.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto client =
      SchemaRegistryClient::Make({"http://127.0.0.1:" + std::to_string(port) + "/prefix/", ""});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto schema = (*client)->AvroSchemaById(1);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ((*schema)->root().name, "r");
  ASSERT_TRUE((*client)->AvroSchemaById(1).ok());
  EXPECT_EQ(requests.load(), 1);
  auto unknown = (*client)->AvroSchemaById(7);
  EXPECT_TRUE(unknown.status().IsNotFound()) << unknown.status().ToString();
  EXPECT_NE(unknown.status().message().find("schema id 7 is not registered"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("error 40403: Schema not found"), std::string::npos);
  auto proto = (*client)->AvroSchemaById(2);
  ASSERT_FALSE(proto.ok());
  EXPECT_NE(proto.status().message().find("is a PROTOBUF schema"), std::string::npos);
  EXPECT_FALSE((*client)->AvroSchemaById(3).ok());
  fake.stop();
  thread.join();
  auto gone = (*client)->AvroSchemaById(9);
  EXPECT_EQ(gone.status().code(), StatusCode::kIOError) << gone.status().ToString();
  EXPECT_FALSE(SchemaRegistryClient::Make({"ftp://x", ""}).ok());
  EXPECT_FALSE(SchemaRegistryClient::Make({"http://x", "no-colon"}).ok());
  auto with_password = SchemaRegistryClient::Make({"http://u:hunter2@x:8081/p", ""});
  ASSERT_FALSE(with_password.ok());
  EXPECT_EQ(with_password.status().message().find("hunter2"), std::string::npos);
}

}  // namespace
}  // namespace floe::connectors
