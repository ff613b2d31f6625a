#pragma once

// A client of a Confluent-compatible schema registry (its REST API), and Confluent's framing of a
// Kafka record's value: magic byte 0, the schema id as 4 bytes big-endian, then the datum.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "floe/common/status.h"
#include "floe/format/avro/schema.h"
#include "floe/format/protobuf/proto_schema.h"

namespace floe::connectors {

struct SchemaRegistryOptions {
  std::string url;        // http(s)://host[:port][/path]
  std::string user_info;  // "user:password" for HTTP basic auth; "" = none
  int timeout_seconds = 30;
};

struct TableDescriptor;

// A table's '<format>.url' (required) and '<format>.basic-auth.credentials-source' = 'USER_INFO'
// with '<format>.basic-auth.user-info' (Flink's option names for 'avro-confluent' and
// 'debezium-avro-confluent'; floe's for 'protobuf-confluent'). InvalidArgument naming the option
// and the rule; a password is never echoed.
Result<SchemaRegistryOptions> RegistryOptions(const TableDescriptor& table,
                                              const std::string& format = "avro-confluent");

// 'format' = 'avro' (a raw datum of the schema derived from the columns, as Flink's plain avro
// format): its options 'avro.encoding' = 'binary' and 'avro.timestamp_mapping.legacy' = 'true'
// (Flink's defaults) are accepted; 'json' encoding, the non-legacy mapping and 'avro.codec' (a
// file option) are refused naming the option.
Status CheckPlainAvroOptions(const TableDescriptor& table);

// A value's schema id and datum. Corruption, naming what it saw, unless the value starts with
// magic byte 0 and holds the 4-byte id.
struct ConfluentFramed {
  int32_t schema_id = 0;
  std::string_view datum;
};
Result<ConfluentFramed> ParseConfluentFraming(std::string_view value);
// The 5 bytes that frame a datum of schema `id`.
std::string ConfluentHeader(int32_t id);

// Not thread-safe: each source subtask has its own.
class SchemaRegistryClient {
 public:
  // InvalidArgument when the URL is not http(s)://. Makes no request.
  static Result<std::unique_ptr<SchemaRegistryClient>> Make(SchemaRegistryOptions options);
  ~SchemaRegistryClient();

  // The Avro schema registered under `id` (GET /schemas/ids/{id}), fetched once and then served
  // from the cache. NotFound when the registry does not know it (error 40403); IOError when the
  // registry cannot be reached; InvalidArgument when it is not an Avro schema floe can parse.
  Result<std::shared_ptr<const avro::Schema>> AvroSchemaById(int32_t id);
  // The same for a PROTOBUF schema ('protobuf-confluent'): its .proto text parsed.
  Result<std::shared_ptr<const protobuf::ProtoSchema>> ProtobufSchemaById(int32_t id);

  // Registers the Avro schema `schema_json` under `subject` (POST /subjects/{subject}/versions)
  // and returns its id; registering a schema the subject already holds returns its id again.
  // InvalidArgument with the registry's error when it refuses the schema (409 incompatible,
  // 422 invalid); IOError when it cannot be reached.
  Result<int32_t> RegisterAvroSchema(const std::string& subject, const std::string& schema_json);

  const std::string& url() const { return options_.url; }

 private:
  struct Http;
  explicit SchemaRegistryClient(SchemaRegistryOptions options);
  SchemaRegistryOptions options_;
  std::unique_ptr<Http> http_;
  // The schema text registered under `id` if it is of `type` ("AVRO", "PROTOBUF"); `what` names
  // the request in errors.
  Result<std::string> SchemaText(int32_t id, const std::string& type, const std::string& what);

  std::map<int32_t, std::shared_ptr<const avro::Schema>> by_id_;
  std::map<int32_t, std::shared_ptr<const protobuf::ProtoSchema>> proto_by_id_;
};

}  // namespace floe::connectors
