#include "floe/connectors/kafka/schema_registry.h"

#include <httplib.h>

#include <utility>

#include <nlohmann/json.hpp>

#include "floe/common/json.h"

namespace floe::connectors {

namespace {

// A registry's answer about one schema is small; a larger one is refused, not buffered.
constexpr size_t kMaxResponseBytes = size_t{4} << 20;

}  // namespace

Result<ConfluentFramed> ParseConfluentFraming(std::string_view value) {
  if (value.size() < 5) {
    return Status::Corruption(
        "a Confluent-framed value needs at least 5 bytes (magic byte 0 and "
        "a 4-byte schema id), this one has " +
        std::to_string(value.size()));
  }
  if (value[0] != 0) {
    return Status::Corruption("the value starts with byte " +
                              std::to_string(static_cast<uint8_t>(value[0])) +
                              ", not Confluent's magic byte 0");
  }
  uint32_t id = 0;
  for (int i = 1; i <= 4; ++i) id = (id << 8) | static_cast<uint8_t>(value[static_cast<size_t>(i)]);
  return ConfluentFramed{static_cast<int32_t>(id), value.substr(5)};
}

struct SchemaRegistryClient::Http {
  std::unique_ptr<httplib::Client> client;
  std::string base_path;
};

SchemaRegistryClient::SchemaRegistryClient(SchemaRegistryOptions options)
    : options_(std::move(options)), http_(std::make_unique<Http>()) {}

SchemaRegistryClient::~SchemaRegistryClient() = default;

Result<std::unique_ptr<SchemaRegistryClient>> SchemaRegistryClient::Make(
    SchemaRegistryOptions options) {
  std::unique_ptr<SchemaRegistryClient> c(new SchemaRegistryClient(std::move(options)));
  const std::string& url = c->options_.url;
  size_t scheme = url.find("://");
  if (scheme == std::string::npos ||
      (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)) {
    return Status::InvalidArgument("schema registry URL '" + url + "' is not an http(s):// URL");
  }
  size_t path = url.find('/', scheme + 3);
  if (url.substr(0, path).find('@') != std::string::npos) {
    // Not echoed: the part before '@' would be a password.
    return Status::InvalidArgument(
        "the schema registry URL holds credentials; give them as user info (for Kafka: "
        "'avro-confluent.basic-auth.user-info')");
  }
  std::string host = path == std::string::npos ? url : url.substr(0, path);
  c->http_->base_path = path == std::string::npos ? "" : url.substr(path);
  while (!c->http_->base_path.empty() && c->http_->base_path.back() == '/') {
    c->http_->base_path.pop_back();
  }
  c->http_->client = std::make_unique<httplib::Client>(host);
  if (!c->http_->client->is_valid()) {
    return Status::InvalidArgument("schema registry URL '" + url + "'");
  }
  httplib::Client& h = *c->http_->client;
  h.set_connection_timeout(c->options_.timeout_seconds, 0);
  h.set_read_timeout(c->options_.timeout_seconds, 0);
  h.set_write_timeout(c->options_.timeout_seconds, 0);
  h.set_tcp_nodelay(true);
  if (!c->options_.user_info.empty()) {
    size_t colon = c->options_.user_info.find(':');
    if (colon == std::string::npos) {
      return Status::InvalidArgument("schema registry basic auth user info must be user:password");
    }
    h.set_basic_auth(c->options_.user_info.substr(0, colon),
                     c->options_.user_info.substr(colon + 1));
  }
  return c;
}

Result<std::shared_ptr<const avro::Schema>> SchemaRegistryClient::AvroSchemaById(int32_t id) {
  if (auto it = by_id_.find(id); it != by_id_.end()) return it->second;
  const std::string what = "schema registry " + options_.url + ": schema id " + std::to_string(id);
  const std::string path = http_->base_path + "/schemas/ids/" + std::to_string(id);
  std::string body;
  httplib::Result r = http_->client->Get(
      path, httplib::Headers{{"Accept", "application/vnd.schemaregistry.v1+json"}},
      [&](const char* data, size_t n) {
        body.append(data, n);
        return body.size() <= kMaxResponseBytes;
      });
  if (!r) {
    return Status::IOError(what + ": " + httplib::to_string(r.error()) +
                           (body.size() > kMaxResponseBytes ? " (response over 4 MiB)" : ""));
  }
  const JsonPath at(what, StatusCode::kInvalidArgument);
  if (r->status != 200) {
    std::string message = "HTTP " + std::to_string(r->status);
    auto err = ParseJson(body, at);
    if (err.ok() && err->is_object()) {
      int64_t code = 0;
      std::string text;
      (void)JsonObject(*err, at).Get("error_code", &code);
      (void)JsonObject(*err, at).Get("message", &text);
      message += ", error " + std::to_string(code) + ": " + text;
      if (code == 40403) return Status::NotFound(what + " is not registered (" + message + ")");
    }
    if (r->status == 404) return Status::NotFound(what + " is not registered (" + message + ")");
    return Status::IOError(what + ": " + message);
  }
  FLOE_ASSIGN_OR_RAISE(Json doc, ParseJson(body, at));
  std::string schema_text, schema_type = "AVRO";
  FLOE_RETURN_NOT_OK(JsonObject(doc, at).Required("schema", &schema_text));
  FLOE_RETURN_NOT_OK(JsonObject(doc, at).Get("schemaType", &schema_type));  // absent: AVRO
  if (schema_type != "AVRO") {
    return Status::InvalidArgument(what + " is a " + schema_type +
                                   " schema; the format reads Avro");
  }
  auto schema = avro::ParseSchema(schema_text);
  if (!schema.ok()) return schema.status().WithContext(what);
  by_id_.emplace(id, *schema);
  return *schema;
}

}  // namespace floe::connectors
