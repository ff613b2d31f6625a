#include "floe/catalog/rest_catalog.h"

#include <httplib.h>

#include <chrono>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "floe/catalog/rest_protocol.h"
#include "floe/common/crash_point.h"
#include "floe/common/json.h"
#include "floe/io/object_store.h"

namespace floe::catalog {

namespace {

using iceberg::LoadedTable;
using iceberg::TableIdentifier;

constexpr int kReadAttempts = 6;  // backoff 0.2 .. 3.2 s: about 6 s for a server restarting

// The message of an IcebergErrorResponse, else the body's start.
std::string ErrorMessage(const httplib::Result& r) {
  if (!r) return "no response (" + httplib::to_string(r.error()) + ")";
  JsonPath at("error response");
  Result<Json> body = ParseJson(r->body, at);
  const Json* error = nullptr;
  std::string message;
  if (body.ok() && JsonObject(*body, at).RequiredObject("error", &error).ok() &&
      JsonObject(*error, at.Child("error")).Required("message", &message).ok()) {
    return "HTTP " + std::to_string(r->status) + ": " + message;
  }
  return "HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 200);
}

// A LoadTableResult; `at` names the request it answers.
Result<LoadedTable> LoadedFrom(const TableIdentifier& id, const std::string& body,
                               const JsonPath& at) {
  FLOE_ASSIGN_OR_RAISE(Json j, ParseJson(body, at));
  JsonObject o(j, at);
  std::string location;
  const Json* metadata = nullptr;
  FLOE_RETURN_NOT_OK(o.Required("metadata-location", &location));
  FLOE_RETURN_NOT_OK(o.RequiredObject("metadata", &metadata));
  FLOE_ASSIGN_OR_RAISE(std::string path, iceberg::UriToPath(location));
  FLOE_ASSIGN_OR_RAISE(iceberg::TableMetadata md,
                       iceberg::TableMetadataFromJson(DumpJson(*metadata), path));
  std::string file = path.substr(path.rfind('/') + 1);
  return LoadedTable{id, std::move(md), path, iceberg::VersionOfMetadataFileName(file)};
}

}  // namespace

struct RestCatalog::Impl {
  RestClientOptions options;
  std::unique_ptr<httplib::Client> http;
  std::string base_path;  // the URI's path, without a trailing slash
  std::string prefix;     // "/v1" or "/v1/<prefix>"
  std::string bearer;
  std::map<std::string, std::string> server_defaults, server_overrides;  // GET /v1/config
  io::FileIO file_io;
  // The last version seen per table, with its ETag: a load answered 304 returns it as is.
  std::map<std::string, std::pair<std::string, LoadedTable>> versions;

  void Remember(const httplib::Result& r, const LoadedTable& table) {
    std::string etag = r->get_header_value("ETag");
    if (etag.empty()) {
      versions.erase(table.id.ToString());
    } else {
      versions[table.id.ToString()] = {etag, table};
    }
  }

  std::string Where() const { return "REST catalog " + options.uri; }
  // The answer to `what` ("loading table db.t"), for errors naming it.
  JsonPath Response(const std::string& what) const {
    return JsonPath(Where() + ": " + what + ": response");
  }

  httplib::Headers Headers() const {
    httplib::Headers h;
    if (!bearer.empty()) h.emplace("Authorization", "Bearer " + bearer);
    return h;
  }

  Status FetchToken() {
    if (!options.token.empty()) {
      bearer = options.token;
      return Status::OK();
    }
    if (options.credential.empty()) return Status::OK();
    size_t colon = options.credential.find(':');
    httplib::Params form = {{"grant_type", "client_credentials"}, {"scope", "catalog"}};
    if (colon == std::string::npos) {
      form.emplace("client_secret", options.credential);
    } else {
      form.emplace("client_id", options.credential.substr(0, colon));
      form.emplace("client_secret", options.credential.substr(colon + 1));
    }
    httplib::Result r = http->Post(base_path + "/v1/oauth/tokens", form);
    if (!r) return Status::Unavailable(Where() + ": token request: " + ErrorMessage(r));
    JsonPath at = Response("token request");
    Result<Json> body = ParseJson(r->body, at);
    std::string token;
    if (r->status != 200 || !body.ok() ||
        !JsonObject(*body, at).Required("access_token", &token).ok()) {
      std::string why = "HTTP " + std::to_string(r->status);
      if (body.ok()) (void)JsonObject(*body, at).Get("error", &why);
      return Status::InvalidArgument(Where() + " refused the credential ('credential'): " + why);
    }
    bearer = std::move(token);
    return Status::OK();
  }

  // One request; a 401 with a credential fetches a new token and asks again once.
  httplib::Result Send(const std::string& method, const std::string& path, const std::string& body,
                       const std::string& etag = "") {
    for (int auth = 0;; ++auth) {
      httplib::Headers headers = Headers();
      if (!etag.empty()) headers.emplace("If-None-Match", etag);
      httplib::Result r = method == "GET"    ? http->Get(path, headers)
                          : method == "POST" ? http->Post(path, headers, body, "application/json")
                                             : http->Delete(path, headers);
      if (r && r->status == 401 && auth == 0 && !options.credential.empty() &&
          options.token.empty() && FetchToken().ok()) {
        continue;
      }
      return r;
    }
  }

  // Reads and idempotent requests: a lost connection or a 5xx is retried with a short backoff
  // (a server restarting).
  httplib::Result SendRetrying(const std::string& method, const std::string& path,
                               const std::string& body = "", const std::string& etag = "") {
    for (int attempt = 1;; ++attempt) {
      httplib::Result r = Send(method, path, body, etag);
      if ((r && r->status < 500) || attempt == kReadAttempts) return r;
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
    }
  }

  Status Failed(const httplib::Result& r, const std::string& what) const {
    std::string msg = Where() + ": " + what + ": " + ErrorMessage(r);
    if (!r || r->status >= 500) return Status::Unavailable(msg);
    switch (r->status) {
      case 404:
        return Status::NotFound(msg);
      case 409:
        return Status::AlreadyExists(msg);
      case 406:
        return Status::NotImplemented(msg);
      default:
        return Status::InvalidArgument(msg);
    }
  }

  // Names are [A-Za-z0-9_]+ (TableIdentifier, IsValidName): nothing to escape.
  std::string Namespace(const std::string& ns) const { return prefix + "/namespaces/" + ns; }
  std::string Table(const TableIdentifier& id) const {
    return Namespace(id.ns) + "/tables/" + id.name;
  }
};

RestCatalog::RestCatalog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestCatalog::~RestCatalog() = default;

Result<std::unique_ptr<RestCatalog>> RestCatalog::Make(const RestClientOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  const std::string& uri = options.uri;
  size_t scheme = uri.find("://");
  if (scheme == std::string::npos ||
      (uri.rfind("http://", 0) != 0 && uri.rfind("https://", 0) != 0)) {
    return Status::InvalidArgument("REST catalog 'uri' = '" + uri + "' is not an http(s):// URI");
  }
  size_t path = uri.find('/', scheme + 3);
  std::string host = path == std::string::npos ? uri : uri.substr(0, path);
  impl->base_path = path == std::string::npos ? "" : uri.substr(path);
  while (!impl->base_path.empty() && impl->base_path.back() == '/') impl->base_path.pop_back();
  impl->http = std::make_unique<httplib::Client>(host);
  if (!impl->http->is_valid()) return Status::InvalidArgument("REST catalog 'uri' = '" + uri + "'");
  impl->http->set_connection_timeout(10, 0);
  impl->http->set_tcp_nodelay(true);  // small requests: no wait for the delayed ACK (40 ms)
  impl->http->set_read_timeout(60, 0);
  impl->http->set_write_timeout(60, 0);
  FLOE_RETURN_NOT_OK(impl->FetchToken());
  std::string config = impl->base_path + "/v1/config";
  if (!options.warehouse.empty()) {
    config += "?warehouse=" + httplib::detail::encode_query_param(options.warehouse);
  }
  httplib::Result r = impl->SendRetrying("GET", config);
  if (!r || r->status != 200) return impl->Failed(r, "GET /v1/config");
  JsonPath at = impl->Response("GET /v1/config");
  FLOE_ASSIGN_OR_RAISE(Json body, ParseJson(r->body, at));
  impl->prefix = impl->base_path + "/v1";
  std::optional<std::map<std::string, std::string>> defaults, overrides;
  FLOE_RETURN_NOT_OK(JsonObject(body, at).Get("defaults", &defaults));
  FLOE_RETURN_NOT_OK(JsonObject(body, at).Get("overrides", &overrides));
  if (defaults) impl->server_defaults = std::move(*defaults);
  if (overrides) impl->server_overrides = std::move(*overrides);
  // Defaults, then overrides (the spec's order).
  for (const auto* part : {&impl->server_defaults, &impl->server_overrides}) {
    auto p = part->find("prefix");
    if (p != part->end() && !p->second.empty()) impl->prefix = impl->base_path + "/v1/" + p->second;
  }
  // The tables' files are reached with settings merged per key in Iceberg's order: the server's
  // defaults, the client's own properties, the server's overrides.
  std::map<std::string, std::string> merged = impl->server_defaults;
  for (const auto& [key, value] : options.properties) merged[key] = value;
  for (const auto& [key, value] : impl->server_overrides) merged[key] = value;
  Result<io::FileIO> file_io = io::FileIO::FromOptions(merged, io::kIcebergS3Options);
  if (!file_io.ok()) return file_io.status().WithContext(uri + " /v1/config");
  impl->file_io = std::move(file_io).value();
  return std::make_unique<RestCatalog>(std::move(impl));
}

Result<LoadedTable> RestCatalog::CreateTable(const TableIdentifier& id,
                                             const iceberg::Schema& schema,
                                             const iceberg::PartitionSpec& spec,
                                             std::map<std::string, std::string> properties) {
  FLOE_ASSIGN_OR_RAISE(Json schema_json,
                       ParseJson(iceberg::SchemaToJson(schema), JsonPath("schema")));
  FLOE_ASSIGN_OR_RAISE(Json spec_json,
                       ParseJson(iceberg::PartitionSpecToJson(spec), JsonPath("partition spec")));
  Json request = {{"name", id.name},
                  {"schema", std::move(schema_json)},
                  {"partition-spec", std::move(spec_json)},
                  {"properties", properties}};
  std::string what = "creating table " + id.ToString();
  httplib::Result r = impl_->Send("POST", impl_->Namespace(id.ns) + "/tables", DumpJson(request));
  if (!r || r->status != 200) return impl_->Failed(r, what);
  return LoadedFrom(id, r->body, impl_->Response(what));
}

Result<LoadedTable> RestCatalog::LoadTable(const TableIdentifier& id) {
  auto known = impl_->versions.find(id.ToString());
  httplib::Result r = impl_->SendRetrying(
      "GET", impl_->Table(id), "", known == impl_->versions.end() ? "" : known->second.first);
  if (r && r->status == 304 && known != impl_->versions.end()) return known->second.second;
  std::string what = "loading table " + id.ToString();
  if (!r || r->status != 200) return impl_->Failed(r, what);
  FLOE_ASSIGN_OR_RAISE(LoadedTable table, LoadedFrom(id, r->body, impl_->Response(what)));
  impl_->Remember(r, table);
  return table;
}

Result<LoadedTable> RestCatalog::CommitTable(const LoadedTable& base,
                                             iceberg::TableMetadata updated) {
  FLOE_ASSIGN_OR_RAISE(std::string request, rest::CommitRequest(base.id, base, updated));
  CrashPoint("before-metadata-file");
  httplib::Result r = impl_->Send("POST", impl_->Table(base.id), request);
  std::string what = "commit to " + base.id.ToString();
  if (r && r->status == 200) {
    FLOE_ASSIGN_OR_RAISE(LoadedTable table, LoadedFrom(base.id, r->body, impl_->Response(what)));
    impl_->Remember(r, table);
    return table;
  }
  if (r && r->status == 409) {
    return Status::Conflict(impl_->Where() + ": " + what + ": " + ErrorMessage(r) +
                            "; reload and retry");
  }
  if (!r || r->status >= 500) {
    return Status::Unavailable(impl_->Where() + ": " + what +
                               " has an unknown outcome: " + ErrorMessage(r));
  }
  return impl_->Failed(r, what);
}

Result<std::vector<TableIdentifier>> RestCatalog::ListTables(const std::string& ns) {
  httplib::Result r = impl_->SendRetrying("GET", impl_->Namespace(ns) + "/tables");
  std::string what = "listing tables of " + ns;
  if (!r || r->status != 200) return impl_->Failed(r, what);
  JsonPath at = impl_->Response(what);
  FLOE_ASSIGN_OR_RAISE(Json body, ParseJson(r->body, at));
  const Json* identifiers = nullptr;
  FLOE_RETURN_NOT_OK(JsonObject(body, at).RequiredArray("identifiers", &identifiers));
  std::vector<TableIdentifier> out;
  for (size_t i = 0; i < identifiers->size(); ++i) {
    TableIdentifier id{ns, ""};
    JsonObject t((*identifiers)[i], at.Child("identifiers").Index(i));
    FLOE_RETURN_NOT_OK(t.Required("name", &id.name));
    out.push_back(std::move(id));
  }
  return out;
}

Status RestCatalog::DropTable(const TableIdentifier& id, bool purge) {
  httplib::Result r =
      impl_->Send("DELETE", impl_->Table(id) + "?purgeRequested=" + (purge ? "true" : "false"), "");
  if (!r || (r->status != 204 && r->status != 200)) {
    return impl_->Failed(r, "dropping table " + id.ToString());
  }
  return Status::OK();
}

Status RestCatalog::CreateNamespace(const std::string& ns,
                                    const std::map<std::string, std::string>& properties) {
  Json request = {{"namespace", Json::array({ns})}, {"properties", properties}};
  httplib::Result r = impl_->Send("POST", impl_->prefix + "/namespaces", DumpJson(request));
  if (!r || r->status != 200) return impl_->Failed(r, "creating namespace " + ns);
  return Status::OK();
}

Result<std::map<std::string, std::string>> RestCatalog::LoadNamespace(const std::string& ns) {
  httplib::Result r = impl_->SendRetrying("GET", impl_->Namespace(ns));
  std::string what = "loading namespace " + ns;
  if (!r || r->status != 200) return impl_->Failed(r, what);
  JsonPath at = impl_->Response(what);
  FLOE_ASSIGN_OR_RAISE(Json body, ParseJson(r->body, at));
  std::optional<std::map<std::string, std::string>> properties;
  FLOE_RETURN_NOT_OK(JsonObject(body, at).Get("properties", &properties));
  return properties.value_or(std::map<std::string, std::string>());
}

Result<std::vector<std::string>> RestCatalog::ListNamespaces() {
  httplib::Result r = impl_->SendRetrying("GET", impl_->prefix + "/namespaces");
  std::string what = "listing namespaces";
  if (!r || r->status != 200) return impl_->Failed(r, what);
  JsonPath at = impl_->Response(what);
  FLOE_ASSIGN_OR_RAISE(Json body, ParseJson(r->body, at));
  std::vector<std::vector<std::string>> namespaces;
  FLOE_RETURN_NOT_OK(JsonObject(body, at).Get("namespaces", &namespaces));
  std::vector<std::string> out;
  for (std::vector<std::string>& levels : namespaces) {
    if (levels.size() == 1) out.push_back(std::move(levels[0]));  // floe keeps one level
  }
  return out;
}

std::string RestCatalog::DefaultTableLocation(const TableIdentifier&) const { return ""; }

const io::FileIO& RestCatalog::file_io() const { return impl_->file_io; }

}  // namespace floe::catalog
