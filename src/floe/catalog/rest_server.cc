#include "floe/catalog/rest_server.h"

#include <httplib.h>

#include <random>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "floe/catalog/rest_protocol.h"
#include "floe/common/json.h"
#include "floe/common/mutex.h"
#include "floe/iceberg/table_paths.h"

namespace floe::catalog {

namespace {

constexpr size_t kMaxBodyBytes = 8 << 20;
constexpr time_t kTimeoutSeconds = 10;
// Routes: an optional prefix segment, then the spec's paths.
constexpr const char* kNamespaces = R"(/v1(?:/[^/]+)?/namespaces)";
constexpr const char* kNamespace = R"(/v1(?:/[^/]+)?/namespaces/([^/]+))";
constexpr const char* kTables = R"(/v1(?:/[^/]+)?/namespaces/([^/]+)/tables)";
constexpr const char* kTable = R"(/v1(?:/[^/]+)?/namespaces/([^/]+)/tables/([^/]+))";

std::string RandomToken() {
  std::random_device rd;
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 40; ++i) out.push_back(kHex[rd() % 16]);
  return out;
}

void Reply(httplib::Response& res, int code, const std::string& body) {
  res.status = code;
  res.set_content(body, "application/json");
}

void Error(httplib::Response& res, int code, const std::string& type, const std::string& message) {
  Reply(res, code, rest::ErrorResponse(code, type, message));
}

// The spec's status and exception type for a failed catalog call.
void ErrorFromStatus(httplib::Response& res, const Status& st, const char* not_found_type) {
  if (st.IsNotFound()) return Error(res, 404, not_found_type, st.message());
  if (st.IsAlreadyExists()) return Error(res, 409, "AlreadyExistsException", st.message());
  if (st.IsConflict()) return Error(res, 409, "CommitFailedException", st.message());
  if (st.IsInvalidArgument()) return Error(res, 400, "BadRequestException", st.message());
  if (st.code() == StatusCode::kNotImplemented) {
    return Error(res, 406, "UnsupportedOperationException", st.message());
  }
  Error(res, 500, "ServiceFailureException", st.message());
}

// One namespace level: "a" (multi-level "a%1Fb" is refused: floe's catalogs keep one level).
Result<std::string> NamespaceOf(const std::string& segment) {
  std::string ns = httplib::detail::decode_url(segment, false);
  if (ns.find('\x1f') != std::string::npos) {
    return Status::InvalidArgument("namespace '" + ns +
                                   "' has several levels; floe's catalogs "
                                   "keep one");
  }
  if (!iceberg::IsValidName(ns)) {
    return Status::InvalidArgument("bad namespace '" + ns + "' (letters, digits and _)");
  }
  return ns;
}

Result<iceberg::TableIdentifier> TableOf(const httplib::Request& req) {
  FLOE_ASSIGN_OR_RAISE(std::string ns, NamespaceOf(req.matches[1]));
  std::string name = httplib::detail::decode_url(req.matches[2], false);
  if (!iceberg::IsValidName(name)) {
    return Status::InvalidArgument("bad table name '" + name + "' (letters, digits and _)");
  }
  return iceberg::TableIdentifier{ns, name};
}

// Where a request's errors are: the client's to fix (400).
JsonPath RequestBody() { return JsonPath("the request body", StatusCode::kInvalidArgument); }

Result<Json> Body(const httplib::Request& req) {
  FLOE_ASSIGN_OR_RAISE(Json body, ParseJson(req.body, RequestBody()));
  FLOE_RETURN_NOT_OK(JsonObject(body, RequestBody()).Check());
  return body;
}

// "properties": an object of strings, or null / absent (none).
Result<std::map<std::string, std::string>> Properties(const Json& body) {
  std::optional<std::map<std::string, std::string>> properties;
  FLOE_RETURN_NOT_OK(JsonObject(body, RequestBody()).Get("properties", &properties));
  return properties.value_or(std::map<std::string, std::string>());
}

// CreateTableRequest -> schema with fresh field ids (as Iceberg's catalogs assign them), the
// partition spec and sort order rebound to them by column name.
struct CreateRequest {
  iceberg::TableIdentifier id;
  iceberg::Schema schema;
  iceberg::PartitionSpec spec;
  std::map<std::string, std::string> properties;
  std::string location;
};

Result<CreateRequest> ParseCreate(const std::string& ns, const Json& body) {
  JsonObject request(body, RequestBody());
  CreateRequest c;
  std::string name;
  if (!request.Required("name", &name).ok() || !iceberg::IsValidName(name)) {
    return Status::InvalidArgument("'name' must be a table name (letters, digits and _)");
  }
  c.id = {ns, name};
  const Json* schema = nullptr;
  if (!request.RequiredObject("schema", &schema).ok()) {
    return Status::InvalidArgument("'schema' must be an Iceberg schema object");
  }
  Json given = *schema;
  if (!given.contains("schema-id")) given["schema-id"] = 0;
  Result<iceberg::Schema> parsed = iceberg::SchemaFromJson(DumpJson(given));
  if (!parsed.ok()) return Status::InvalidArgument("'schema': " + parsed.status().message());
  std::map<int32_t, std::string> names;
  for (const Field& f : parsed->fields) names[f.field_id] = f.name;
  FLOE_ASSIGN_OR_RAISE(std::vector<Field> fresh, iceberg::AssignFreshFieldIds(parsed->fields));
  std::map<std::string, int32_t> ids;
  for (const Field& f : fresh) ids[f.name] = f.field_id;
  c.schema.fields = std::move(fresh);
  for (int32_t old : parsed->identifier_field_ids)
    c.schema.identifier_field_ids.push_back(ids[names[old]]);
  const Json* spec = nullptr;
  FLOE_RETURN_NOT_OK(request.GetObject("partition-spec", &spec));
  if (spec != nullptr) {
    Json s = *spec;
    s["spec-id"] = 0;
    if (s.contains("fields") && s["fields"].is_array()) {
      int32_t next = 1000;
      for (Json& f : s["fields"]) {
        if (f.is_object() && !f.contains("field-id")) f["field-id"] = next;
        ++next;
      }
    }
    Result<iceberg::PartitionSpec> p = iceberg::PartitionSpecFromJson(DumpJson(s));
    if (!p.ok()) return Status::InvalidArgument("'partition-spec': " + p.status().message());
    c.spec = std::move(p).value();
    for (iceberg::PartitionField& f : c.spec.fields) {
      auto old = names.find(f.source_id);
      if (old == names.end()) {
        return Status::InvalidArgument("'partition-spec': source-id " +
                                       std::to_string(f.source_id) + " is not a column");
      }
      f.source_id = ids[old->second];
    }
  }
  const Json* order = request.Find("write-order");
  if (order != nullptr && !order->is_null()) {
    const Json* fields = nullptr;
    if (!JsonObject(*order, RequestBody().Child("write-order"))
             .RequiredArray("fields", &fields)
             .ok() ||
        !fields->empty()) {
      return Status::NotImplemented("sorted tables ('write-order' with fields)");
    }
  }
  bool stage = false;
  if (request.Get("stage-create", &stage).ok() && stage) {
    return Status::NotImplemented("staged creates ('stage-create' = true)");
  }
  std::optional<std::string> location;
  FLOE_RETURN_NOT_OK(request.Get("location", &location));
  c.location = location.value_or("");
  FLOE_ASSIGN_OR_RAISE(c.properties, Properties(body));
  return c;
}

class Server final : public RestCatalogServer {
 public:
  Server(std::unique_ptr<iceberg::Catalog> catalog, RestServerOptions options)
      : catalog_(std::move(catalog)), options_(std::move(options)) {}
  ~Server() override {
    Stop();
    if (thread_.joinable()) thread_.join();
  }

  Status Start() {
    server_.set_read_timeout(kTimeoutSeconds, 0);
    server_.set_write_timeout(kTimeoutSeconds, 0);
    server_.set_payload_max_length(kMaxBodyBytes);
    server_.set_tcp_nodelay(true);
    server_.set_socket_options([](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    // Unknown paths and httplib's own refusals (413, 414, ...) get the spec's error body too.
    server_.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (!res.body.empty()) return;
      Error(res, res.status, res.status == 404 ? "NotFoundException" : "BadRequestException",
            res.status == 404 ? "no such endpoint"
                              : "request refused (" + std::to_string(res.status) + ")");
    });
    server_.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
          Error(res, 500, "ServiceFailureException", "internal error");
        });
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (options_.credential.empty() || req.path == "/v1/oauth/tokens") {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      std::string auth = req.get_header_value("Authorization");
      MutexLock lock(mu_);
      if (auth.rfind("Bearer ", 0) != 0 || !tokens_.count(auth.substr(7))) {
        Error(res, 401, "NotAuthorizedException",
              "a bearer token from POST /v1/oauth/tokens is required");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    Routes();
    port_ = options_.port == 0
                ? server_.bind_to_any_port(options_.host)
                : (server_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
    if (port_ < 0) {
      return Status::IOError("cannot listen on " + options_.host + ":" +
                             std::to_string(options_.port));
    }
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!server_.is_running()) return Status::IOError("the catalog server did not start");
    return Status::OK();
  }

  int port() const override { return port_; }
  void Wait() override {
    if (thread_.joinable()) thread_.join();
  }
  void Stop() override { server_.stop(); }

 private:
  void Routes() {
    server_.Post("/v1/oauth/tokens",
                 [this](const httplib::Request& req, httplib::Response& res) { Token(req, res); });
    server_.Get("/v1/config", [this](const httplib::Request&, httplib::Response& res) {
      Reply(res, 200,
            DumpJson(Json{{"defaults", options_.config_defaults},
                          {"overrides", options_.config_overrides}}));
    });
    server_.Get(kNamespaces, [this](const httplib::Request& req, httplib::Response& res) {
      MutexLock lock(mu_);
      ListNamespaces(req, res);
    });
    server_.Post(kNamespaces, [this](const httplib::Request& req, httplib::Response& res) {
      MutexLock lock(mu_);
      CreateNamespace(req, res);
    });
    // HEAD (exists) is answered by the GET handlers, without the body.
    server_.Get(kNamespace, [this](const httplib::Request& req, httplib::Response& res) {
      MutexLock lock(mu_);
      LoadNamespace(req, res);
    });
    server_.Get(kTables, [this](const httplib::Request& req, httplib::Response& res) {
      MutexLock lock(mu_);
      ListTables(req, res);
    });
    server_.Post(kTables, [this](const httplib::Request& req, httplib::Response& res) {
      MutexLock lock(mu_);
      CreateTable(req, res);
    });
    server_.Get(kTable, [this](const httplib::Request& req, httplib::Response& res) {
      MutexLock lock(mu_);
      LoadTable(req, res);
    });
    server_.Post(kTable, [this](const httplib::Request& req, httplib::Response& res) {
      MutexLock lock(mu_);
      CommitTable(req, res);
    });
    server_.Delete(kTable, [this](const httplib::Request& req, httplib::Response& res) {
      MutexLock lock(mu_);
      DropTable(req, res);
    });
    for (const char* path : {kNamespace, kNamespaces, kTables}) {
      server_.Delete(path, [](const httplib::Request&, httplib::Response& res) {
        Error(res, 406, "UnsupportedOperationException", "floe's catalog server drops tables only");
      });
    }
    server_.Post(std::string(kNamespace) + "/properties",
                 [](const httplib::Request&, httplib::Response& res) {
                   Error(res, 406, "UnsupportedOperationException",
                         "floe's catalog server does not update namespace properties");
                 });
  }

  void Token(const httplib::Request& req, httplib::Response& res) {
    auto oauth_error = [&](int code, const char* error, const char* description) {
      res.status = code;
      res.set_content(DumpJson(Json{{"error", error}, {"error_description", description}}),
                      "application/json");
    };
    if (options_.credential.empty()) return oauth_error(400, "invalid_request", "no OAuth2 here");
    if (req.get_param_value("grant_type") != "client_credentials") {
      return oauth_error(400, "unsupported_grant_type", "only client_credentials");
    }
    std::string given =
        req.get_param_value("client_id") + ":" + req.get_param_value("client_secret");
    if (given != options_.credential) return oauth_error(401, "invalid_client", "bad credential");
    std::string token = RandomToken();
    {
      MutexLock lock(mu_);
      tokens_.insert(token);
    }
    res.set_content(
        DumpJson(Json{{"access_token", token},
                      {"token_type", "bearer"},
                      {"expires_in", 86400},
                      {"issued_token_type", "urn:ietf:params:oauth:token-type:access_token"}}),
        "application/json");
  }

  void ListNamespaces(const httplib::Request& req, httplib::Response& res) FLOE_REQUIRES(mu_) {
    Result<std::vector<std::string>> all = catalog_->ListNamespaces();
    if (!all.ok()) return ErrorFromStatus(res, all.status(), "NoSuchNamespaceException");
    Json out = Json::array();
    if (req.has_param("parent")) {
      // One level only: a namespace has no children.
      Result<std::string> parent = NamespaceOf(req.get_param_value("parent"));
      if (!parent.ok()) return ErrorFromStatus(res, parent.status(), "");
      Status exists = catalog_->LoadNamespace(*parent).status();
      if (!exists.ok()) return ErrorFromStatus(res, exists, "NoSuchNamespaceException");
    } else {
      for (const std::string& ns : *all) out.push_back(Json::array({ns}));
    }
    Reply(res, 200, DumpJson(Json{{"namespaces", out}}));
  }

  void CreateNamespace(const httplib::Request& req, httplib::Response& res) FLOE_REQUIRES(mu_) {
    Result<Json> body = Body(req);
    if (!body.ok()) return ErrorFromStatus(res, body.status(), "");
    std::vector<std::string> levels;
    if (!JsonObject(*body, RequestBody()).Required("namespace", &levels).ok() ||
        levels.size() != 1) {
      return Error(res, 400, "BadRequestException",
                   "'namespace' must be an array of one name (floe's catalogs keep one level)");
    }
    const std::string& name = levels[0];
    if (!iceberg::IsValidName(name)) {
      return Error(res, 400, "BadRequestException", "bad namespace '" + name + "'");
    }
    Result<std::map<std::string, std::string>> properties = Properties(*body);
    if (!properties.ok()) return ErrorFromStatus(res, properties.status(), "");
    Status st = catalog_->CreateNamespace(name, *properties);
    if (!st.ok()) return ErrorFromStatus(res, st, "NoSuchNamespaceException");
    Reply(res, 200,
          DumpJson(Json{{"namespace", Json::array({name})}, {"properties", *properties}}));
  }

  void LoadNamespace(const httplib::Request& req, httplib::Response& res) FLOE_REQUIRES(mu_) {
    Result<std::string> ns = NamespaceOf(req.matches[1]);
    if (!ns.ok()) return ErrorFromStatus(res, ns.status(), "");
    Result<std::map<std::string, std::string>> properties = catalog_->LoadNamespace(*ns);
    if (!properties.ok()) {
      return ErrorFromStatus(res, properties.status(), "NoSuchNamespaceException");
    }
    Reply(res, 200, DumpJson(Json{{"namespace", Json::array({*ns})}, {"properties", *properties}}));
  }

  void ListTables(const httplib::Request& req, httplib::Response& res) FLOE_REQUIRES(mu_) {
    Result<std::string> ns = NamespaceOf(req.matches[1]);
    if (!ns.ok()) return ErrorFromStatus(res, ns.status(), "");
    Result<std::vector<iceberg::TableIdentifier>> tables = catalog_->ListTables(*ns);
    if (!tables.ok()) return ErrorFromStatus(res, tables.status(), "NoSuchNamespaceException");
    Json ids = Json::array();
    for (const iceberg::TableIdentifier& t : *tables) {
      ids.push_back({{"namespace", Json::array({t.ns})}, {"name", t.name}});
    }
    Reply(res, 200, DumpJson(Json{{"identifiers", ids}}));
  }

  void CreateTable(const httplib::Request& req, httplib::Response& res) FLOE_REQUIRES(mu_) {
    Result<std::string> ns = NamespaceOf(req.matches[1]);
    if (!ns.ok()) return ErrorFromStatus(res, ns.status(), "");
    Result<Json> body = Body(req);
    if (!body.ok()) return ErrorFromStatus(res, body.status(), "");
    Result<CreateRequest> c = ParseCreate(*ns, *body);
    if (!c.ok()) return ErrorFromStatus(res, c.status(), "");
    if (!c->location.empty() && c->location != catalog_->DefaultTableLocation(c->id)) {
      return Error(res, 400, "BadRequestException",
                   "'location' is chosen by the catalog: " + catalog_->DefaultTableLocation(c->id));
    }
    Status exists = catalog_->LoadNamespace(*ns).status();
    if (!exists.ok()) return ErrorFromStatus(res, exists, "NoSuchNamespaceException");
    Result<iceberg::LoadedTable> created =
        catalog_->CreateTable(c->id, c->schema, c->spec, c->properties);
    if (!created.ok()) return ErrorFromStatus(res, created.status(), "NoSuchNamespaceException");
    res.set_header("ETag", rest::ETagOf(*created));
    Reply(res, 200, rest::LoadTableResult(*created));
  }

  void LoadTable(const httplib::Request& req, httplib::Response& res) FLOE_REQUIRES(mu_) {
    Result<iceberg::TableIdentifier> id = TableOf(req);
    if (!id.ok()) return ErrorFromStatus(res, id.status(), "");
    Result<iceberg::LoadedTable> table = catalog_->LoadTable(*id);
    if (!table.ok()) return ErrorFromStatus(res, table.status(), "NoSuchTableException");
    // The metadata file names the version: a client holding it gets a 304 instead of the
    // whole metadata again (it grows with every snapshot kept).
    std::string etag = rest::ETagOf(*table);
    res.set_header("ETag", etag);
    if (req.get_header_value("If-None-Match") == etag) {
      res.status = 304;
      return;
    }
    Reply(res, 200, rest::LoadTableResult(*table));
  }

  void CommitTable(const httplib::Request& req, httplib::Response& res) FLOE_REQUIRES(mu_) {
    Result<iceberg::TableIdentifier> id = TableOf(req);
    if (!id.ok()) return ErrorFromStatus(res, id.status(), "");
    Result<iceberg::LoadedTable> current = catalog_->LoadTable(*id);
    if (!current.ok()) return ErrorFromStatus(res, current.status(), "NoSuchTableException");
    Result<iceberg::TableMetadata> updated = rest::ApplyCommitRequest(req.body, *current);
    if (!updated.ok()) return ErrorFromStatus(res, updated.status(), "");
    // Paths outside the table (another table's manifest list, a data path elsewhere) would make
    // its maintenance delete files that are not its own: 400.
    Status paths = iceberg::CheckCommitPaths(id->ToString(), current->metadata, *updated);
    if (!paths.ok()) return ErrorFromStatus(res, paths, "");
    Result<iceberg::LoadedTable> committed = catalog_->CommitTable(*current, std::move(*updated));
    if (!committed.ok()) {
      const Status& st = committed.status();
      if (st.IsConflict() || st.IsInvalidArgument()) return ErrorFromStatus(res, st, "");
      // The backing catalog may have swapped: the client must not clean up.
      return Error(res, 500, "CommitStateUnknownException", st.message());
    }
    res.set_header("ETag", rest::ETagOf(*committed));
    Reply(res, 200, rest::LoadTableResult(*committed));
  }

  void DropTable(const httplib::Request& req, httplib::Response& res) FLOE_REQUIRES(mu_) {
    Result<iceberg::TableIdentifier> id = TableOf(req);
    if (!id.ok()) return ErrorFromStatus(res, id.status(), "");
    std::string purge = req.get_param_value("purgeRequested");
    Status st = catalog_->DropTable(*id, purge == "true");
    if (!st.ok()) return ErrorFromStatus(res, st, "NoSuchTableException");
    res.status = 204;
  }

  Mutex mu_;
  // One request at a time: the catalogs behind are thread-compatible, not thread-safe.
  std::unique_ptr<iceberg::Catalog> catalog_ FLOE_PT_GUARDED_BY(mu_);
  RestServerOptions options_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  std::set<std::string> tokens_ FLOE_GUARDED_BY(mu_);
};

}  // namespace

Result<std::unique_ptr<RestCatalogServer>> RestCatalogServer::Start(
    std::unique_ptr<iceberg::Catalog> catalog, const RestServerOptions& options) {
  auto server = std::make_unique<Server>(std::move(catalog), options);
  FLOE_RETURN_NOT_OK(server->Start());
  return std::unique_ptr<RestCatalogServer>(std::move(server));
}

}  // namespace floe::catalog
