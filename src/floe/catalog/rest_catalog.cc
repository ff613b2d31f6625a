#include "floe/catalog/rest_catalog.h"

#include <httplib.h>

#include <chrono>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "floe/catalog/rest_protocol.h"
#include "floe/common/crash_point.h"

namespace floe::catalog {

namespace {

using iceberg::LoadedTable;
using iceberg::TableIdentifier;
using nlohmann::json;

constexpr int kReadAttempts = 6;  // backoff 0.2 .. 3.2 s: about 6 s for a server restarting

// The message of an IcebergErrorResponse, else the body's start.
std::string ErrorMessage(const httplib::Result& r) {
  if (!r) return "no response (" + httplib::to_string(r.error()) + ")";
  json body = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_object()) {
    auto e = body.find("error");
    if (e != body.end() && e->is_object()) {
      auto m = e->find("message");
      if (m != e->end() && m->is_string()) {
        return "HTTP " + std::to_string(r->status) + ": " + m->get<std::string>();
      }
    }
  }
  return "HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 200);
}

Result<LoadedTable> LoadedFrom(const TableIdentifier& id, const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::Corruption("REST catalog: the table response is not JSON");
  auto location = j.find("metadata-location");
  auto metadata = j.find("metadata");
  if (location == j.end() || !location->is_string() || metadata == j.end() ||
      !metadata->is_object()) {
    return Status::Corruption(
        "REST catalog: the table response lacks metadata-location or "
        "metadata");
  }
  FLOE_ASSIGN_OR_RAISE(std::string path, iceberg::UriToPath(location->get<std::string>()));
  FLOE_ASSIGN_OR_RAISE(iceberg::TableMetadata md,
                       iceberg::TableMetadataFromJson(metadata->dump(), path));
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
    json body = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
    if (r->status != 200 || !body.is_object() || !body.contains("access_token") ||
        !body["access_token"].is_string()) {
      std::string why = body.is_object() && body.contains("error") && body["error"].is_string()
                            ? body["error"].get<std::string>()
                            : "HTTP " + std::to_string(r->status);
      return Status::InvalidArgument(Where() + " refused the credential ('credential'): " + why);
    }
    bearer = body["access_token"].get<std::string>();
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
  json body = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  impl->prefix = impl->base_path + "/v1";
  for (const char* part : {"defaults", "overrides"}) {
    if (!body.is_object() || !body.contains(part) || !body[part].is_object()) continue;
    auto& into = std::string(part) == "defaults" ? impl->server_defaults : impl->server_overrides;
    for (auto it = body[part].begin(); it != body[part].end(); ++it) {
      if (it.value().is_string()) into[it.key()] = it.value().get<std::string>();
    }
  }
  // Defaults, then overrides (the spec's order).
  for (const auto* part : {&impl->server_defaults, &impl->server_overrides}) {
    auto p = part->find("prefix");
    if (p != part->end() && !p->second.empty()) impl->prefix = impl->base_path + "/v1/" + p->second;
  }
  return std::make_unique<RestCatalog>(std::move(impl));
}

Result<LoadedTable> RestCatalog::CreateTable(const TableIdentifier& id,
                                             const iceberg::Schema& schema,
                                             const iceberg::PartitionSpec& spec,
                                             std::map<std::string, std::string> properties) {
  json request = {
      {"name", id.name},
      {"schema", json::parse(iceberg::SchemaToJson(schema), nullptr, false)},
      {"partition-spec", json::parse(iceberg::PartitionSpecToJson(spec), nullptr, false)},
      {"properties", properties}};
  httplib::Result r = impl_->Send("POST", impl_->Namespace(id.ns) + "/tables", request.dump());
  if (!r || r->status != 200) return impl_->Failed(r, "creating table " + id.ToString());
  return LoadedFrom(id, r->body);
}

Result<LoadedTable> RestCatalog::LoadTable(const TableIdentifier& id) {
  auto known = impl_->versions.find(id.ToString());
  httplib::Result r = impl_->SendRetrying(
      "GET", impl_->Table(id), "", known == impl_->versions.end() ? "" : known->second.first);
  if (r && r->status == 304 && known != impl_->versions.end()) return known->second.second;
  if (!r || r->status != 200) return impl_->Failed(r, "loading table " + id.ToString());
  FLOE_ASSIGN_OR_RAISE(LoadedTable table, LoadedFrom(id, r->body));
  impl_->Remember(r, table);
  return table;
}

Result<LoadedTable> RestCatalog::CommitTable(const LoadedTable& base,
                                             iceberg::TableMetadata updated) {
  FLOE_ASSIGN_OR_RAISE(std::string request, rest::CommitRequest(base.id, base, updated));
  CrashPoint("before-metadata-file");
  httplib::Result r = impl_->Send("POST", impl_->Table(base.id), request);
  if (r && r->status == 200) {
    FLOE_ASSIGN_OR_RAISE(LoadedTable table, LoadedFrom(base.id, r->body));
    impl_->Remember(r, table);
    return table;
  }
  std::string what = "commit to " + base.id.ToString();
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
  if (!r || r->status != 200) return impl_->Failed(r, "listing tables of " + ns);
  json body = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  std::vector<TableIdentifier> out;
  if (!body.is_object() || !body.contains("identifiers") || !body["identifiers"].is_array()) {
    return Status::Corruption(impl_->Where() + ": the table list has no 'identifiers'");
  }
  for (const json& t : body["identifiers"]) {
    if (t.is_object() && t.contains("name") && t["name"].is_string()) {
      out.push_back(TableIdentifier{ns, t["name"].get<std::string>()});
    }
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
  json request = {{"namespace", json::array({ns})}, {"properties", properties}};
  httplib::Result r = impl_->Send("POST", impl_->prefix + "/namespaces", request.dump());
  if (!r || r->status != 200) return impl_->Failed(r, "creating namespace " + ns);
  return Status::OK();
}

Result<std::map<std::string, std::string>> RestCatalog::LoadNamespace(const std::string& ns) {
  httplib::Result r = impl_->SendRetrying("GET", impl_->Namespace(ns));
  if (!r || r->status != 200) return impl_->Failed(r, "loading namespace " + ns);
  json body = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  std::map<std::string, std::string> out;
  if (body.is_object() && body.contains("properties") && body["properties"].is_object()) {
    for (auto it = body["properties"].begin(); it != body["properties"].end(); ++it) {
      if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
    }
  }
  return out;
}

Result<std::vector<std::string>> RestCatalog::ListNamespaces() {
  httplib::Result r = impl_->SendRetrying("GET", impl_->prefix + "/namespaces");
  if (!r || r->status != 200) return impl_->Failed(r, "listing namespaces");
  json body = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> out;
  if (body.is_object() && body.contains("namespaces") && body["namespaces"].is_array()) {
    for (const json& ns : body["namespaces"]) {
      if (ns.is_array() && ns.size() == 1 && ns[0].is_string()) {
        out.push_back(ns[0].get<std::string>());
      }
    }
  }
  return out;
}

std::string RestCatalog::DefaultTableLocation(const TableIdentifier&) const { return ""; }

const std::map<std::string, std::string>& RestCatalog::server_defaults() const {
  return impl_->server_defaults;
}
const std::map<std::string, std::string>& RestCatalog::server_overrides() const {
  return impl_->server_overrides;
}

}  // namespace floe::catalog
