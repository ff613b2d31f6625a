#include "floe/connectors/kafka/schema_registry.h"

#include <httplib.h>

#include <utility>

#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/connectors/connector.h"
#include "floe/connectors/connector_options.h"

namespace floe::connectors {

namespace {

// A registry's answer about one schema is small; a larger one is refused, not buffered.
constexpr size_t kMaxResponseBytes = size_t{4} << 20;
constexpr const char* kContentType = "application/vnd.schemaregistry.v1+json";

// The registry's error in a non-200 answer: "HTTP 404, error 40403: Schema not found".
std::string ErrorOf(int status, const std::string& body, int64_t* code) {
  std::string message = "HTTP " + std::to_string(status);
  const JsonPath at("schema registry error", StatusCode::kInvalidArgument);
  auto err = ParseJson(body, at);
  if (err.ok() && err->is_object()) {
    std::string text;
    (void)JsonObject(*err, at).Get("error_code", code);
    (void)JsonObject(*err, at).Get("message", &text);
    message += ", error " + std::to_string(*code) + ": " + text;
  }
  return message;
}

// One request; the answer's body is read up to kMaxResponseBytes. IOError naming `what` when
// the registry cannot be reached or answers more.
Status Exchange(httplib::Client& client, const std::string& method, const std::string& path,
                const std::string& request, const std::string& what, int* status,
                std::string* body) {
  httplib::Request req;
  req.method = method;
  req.path = path;
  req.set_header("Accept", kContentType);
  if (!request.empty()) {
    req.set_header("Content-Type", kContentType);
    req.body = request;
  }
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    body->append(data, n);
    return body->size() <= kMaxResponseBytes;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  if (!client.send(req, res, error)) {
    return Status::IOError(what + ": " +
                           (body->size() > kMaxResponseBytes ? std::string("answer over 4 MiB")
                                                             : httplib::to_string(error)));
  }
  *status = res.status;
  if (body->empty()) *body = std::move(res.body);  // where httplib keeps an error's body
  return Status::OK();
}

}  // namespace

Result<SchemaRegistryOptions> RegistryOptions(const TableDescriptor& table,
                                              const std::string& format) {
  const std::string url = format + ".url";
  const std::string source_key = format + ".basic-auth.credentials-source";
  const std::string user_info = format + ".basic-auth.user-info";
  SchemaRegistryOptions options;
  options.url = StringOption(table, url, "");
  if (options.url.empty()) {
    return Status::InvalidArgument(
        OptionError(table, url, "is required: the schema registry's http(s):// URL", ""));
  }
  // Credentials come from the user info option only (Confluent's USER_INFO source).
  std::string source = StringOption(table, source_key, "");
  options.user_info = StringOption(table, user_info, "");
  if (!source.empty() && source != "USER_INFO") {
    return Status::InvalidArgument(
        OptionError(table, source_key, "must be 'USER_INFO' (with '" + user_info + "')", source));
  }
  if (source.empty() != options.user_info.empty()) {
    return Status::InvalidArgument(OptionError(table, user_info,
                                               "and '" + source_key + "' = 'USER_INFO' go together",
                                               options.user_info.empty() ? "" : "(set)"));
  }
  FLOE_RETURN_NOT_OK(SchemaRegistryClient::Make(options).status());
  return options;
}

Status CheckPlainAvroOptions(const TableDescriptor& table) {
  for (const auto& [key, value] : table.options) {
    if (key.rfind("avro.", 0) != 0) continue;
    if (key == "avro.encoding" && value == "binary") continue;
    if (key == "avro.timestamp_mapping.legacy" && value == "true") continue;
    const char* rule = key == "avro.encoding"
                           ? "must be 'binary' (Avro's JSON encoding is not supported)"
                       : key == "avro.timestamp_mapping.legacy"
                           ? "must be 'true' (floe has the legacy timestamp mapping only)"
                           : "is not an option of Kafka's avro format";
    return Status::InvalidArgument(OptionError(table, key, rule, value));
  }
  return Status::OK();
}

std::string ConfluentHeader(int32_t id) {
  const auto u = static_cast<uint32_t>(id);
  return {'\0', static_cast<char>(u >> 24), static_cast<char>(u >> 16), static_cast<char>(u >> 8),
          static_cast<char>(u)};
}

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

Result<std::string> SchemaRegistryClient::SchemaText(int32_t id, const std::string& type,
                                                     const std::string& what) {
  const std::string path = http_->base_path + "/schemas/ids/" + std::to_string(id);
  std::string body;
  int status = 0;
  FLOE_RETURN_NOT_OK(Exchange(*http_->client, "GET", path, "", what, &status, &body));
  const JsonPath at(what, StatusCode::kInvalidArgument);
  if (status != 200) {
    int64_t code = 0;
    std::string message = ErrorOf(status, body, &code);
    if (code == 40403 || status == 404) {
      return Status::NotFound(what + " is not registered (" + message + ")");
    }
    return Status::IOError(what + ": " + message);
  }
  FLOE_ASSIGN_OR_RAISE(Json doc, ParseJson(body, at));
  std::string schema_text, schema_type = "AVRO";
  FLOE_RETURN_NOT_OK(JsonObject(doc, at).Required("schema", &schema_text));
  FLOE_RETURN_NOT_OK(JsonObject(doc, at).Get("schemaType", &schema_type));  // absent: AVRO
  if (schema_type != type) {
    return Status::InvalidArgument(what + " is a " + schema_type + " schema; the format reads " +
                                   (type == "AVRO" ? "Avro" : type));
  }
  return schema_text;
}

Result<std::shared_ptr<const avro::Schema>> SchemaRegistryClient::AvroSchemaById(int32_t id) {
  if (auto it = by_id_.find(id); it != by_id_.end()) return it->second;
  const std::string what = "schema registry " + options_.url + ": schema id " + std::to_string(id);
  FLOE_ASSIGN_OR_RAISE(std::string text, SchemaText(id, "AVRO", what));
  auto schema = avro::ParseSchema(text);
  if (!schema.ok()) return schema.status().WithContext(what);
  by_id_.emplace(id, *schema);
  return *schema;
}

Result<std::shared_ptr<const protobuf::ProtoSchema>> SchemaRegistryClient::ProtobufSchemaById(
    int32_t id) {
  if (auto it = proto_by_id_.find(id); it != proto_by_id_.end()) return it->second;
  const std::string what = "schema registry " + options_.url + ": schema id " + std::to_string(id);
  FLOE_ASSIGN_OR_RAISE(std::string text, SchemaText(id, "PROTOBUF", what));
  auto schema = protobuf::ParseProto(text);
  if (!schema.ok()) return schema.status().WithContext(what);
  proto_by_id_.emplace(id, *schema);
  return *schema;
}

Result<int32_t> SchemaRegistryClient::RegisterAvroSchema(const std::string& subject,
                                                         const std::string& schema_json) {
  const std::string what = "schema registry " + options_.url +
                           ": registering the schema under subject '" + subject + "'";
  const std::string path =
      http_->base_path + "/subjects/" + httplib::detail::encode_query_param(subject) + "/versions";
  const std::string request = Json{{"schema", schema_json}}.dump();
  std::string body;
  int status = 0;
  FLOE_RETURN_NOT_OK(Exchange(*http_->client, "POST", path, request, what, &status, &body));
  if (status != 200) {
    int64_t code = 0;
    std::string message = ErrorOf(status, body, &code);
    if (status == 409 || status == 422) return Status::InvalidArgument(what + ": " + message);
    return Status::IOError(what + ": " + message);
  }
  const JsonPath at(what, StatusCode::kInvalidArgument);
  FLOE_ASSIGN_OR_RAISE(Json doc, ParseJson(body, at));
  int64_t id = -1;
  FLOE_RETURN_NOT_OK(JsonObject(doc, at).Required("id", &id));
  if (id < 0 || id > INT32_MAX) return at.Child("id").Error("is not a schema id");
  return static_cast<int32_t>(id);
}

}  // namespace floe::connectors
