#include "floe/catalog/rest_server.h"

#include <deque>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "floe/catalog/rest_protocol.h"
#include "floe/common/json.h"
#include "floe/common/log.h"
#include "floe/common/mutex.h"
#include "floe/iceberg/table_paths.h"
#include "floe/io/http_server.h"

namespace floe::catalog {

namespace {

// What one client may cost the server (docs/catalogs.md, "Limits"). Handler threads see whole
// requests only, and the catalog is used one request at a time, so a few are enough.
io::HttpLimits RestLimits() {
  io::HttpLimits limits;
  limits.max_request_line_bytes = 8 * 1024;
  limits.max_head_bytes = 16 * 1024;
  limits.max_headers = 64;
  limits.max_body_bytes = 8 << 20;
  limits.request_deadline_ms = 30'000;
  limits.write_deadline_ms = 30'000;
  limits.max_connections = 512;
  limits.max_connections_per_client = 256;
  limits.max_buffered_bytes = 64 << 20;
  limits.handler_threads = 4;
  return limits;
}
// Namespace and table names: letters, digits and _, at most this long, so a table's metadata
// location (warehouse/ns/name/metadata/<version>-<uuid>.metadata.json) fits the JDBC catalog's
// VARCHAR(1000) and each name its VARCHAR(255) and one file name.
constexpr size_t kMaxNameBytes = 128;
// Query parameters that carry credentials: refused in every URL (URLs end up in access logs and
// proxies' logs); the form body and the Authorization header carry them.
const std::set<std::string>& CredentialParameters() {
  static const std::set<std::string> kNames = {
      "client_secret", "client_id",     "password",    "secret", "access_token",
      "refresh_token", "subject_token", "actor_token", "token",  "credential"};
  return kNames;
}
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

void Reply(io::HttpResponse& res, int code, const std::string& body) {
  res.status = code;
  res.SetContent(body, "application/json");
}

void Error(io::HttpResponse& res, int code, const std::string& type, const std::string& message) {
  Reply(res, code, rest::ErrorResponse(code, type, message));
}

// A failure of the server itself: the client learns that, the server's log learns why (it may
// name files, the database, its errors).
void InternalError(io::HttpResponse& res, const char* type, const Status& st) {
  LogError("catalog server: %s", st.ToString().c_str());
  Error(res, 500, type, "internal error of the catalog server (its log says more)");
}

// The spec's status and exception type for a request the server refused (`st` describes the
// request, not the server).
void ErrorFromStatus(io::HttpResponse& res, const Status& st, const char* not_found_type) {
  if (st.IsNotFound()) return Error(res, 404, not_found_type, st.message());
  if (st.IsAlreadyExists()) return Error(res, 409, "AlreadyExistsException", st.message());
  if (st.IsConflict()) return Error(res, 409, "CommitFailedException", st.message());
  if (st.IsInvalidArgument()) return Error(res, 400, "BadRequestException", st.message());
  if (st.code() == StatusCode::kNotImplemented) {
    return Error(res, 406, "UnsupportedOperationException", st.message());
  }
  InternalError(res, "ServiceFailureException", st);
}

// The same for a failed call of the catalog behind: its messages name the database and paths,
// so the client gets one written here about `what` ("table db.t"), the log the original.
void CatalogError(io::HttpResponse& res, const Status& st, const char* not_found_type,
                  const std::string& what) {
  if (!st.IsNotFound()) LogWarn("catalog server: %s: %s", what.c_str(), st.ToString().c_str());
  if (st.IsNotFound()) return Error(res, 404, not_found_type, what + " does not exist");
  if (st.IsAlreadyExists()) return Error(res, 409, "AlreadyExistsException", what + " exists");
  if (st.IsConflict()) {
    return Error(res, 409, "CommitFailedException",
                 what + " was changed concurrently; reload and retry");
  }
  if (st.IsInvalidArgument() || st.code() == StatusCode::kNotImplemented) {
    return Error(res, 400, "BadRequestException",
                 "the catalog refused the request for " + what + " (its log says why)");
  }
  InternalError(res, "ServiceFailureException", st);
}

// A namespace or table name: letters, digits and _, 1 to kMaxNameBytes.
Status CheckName(const char* what, const std::string& name) {
  if (name.size() > kMaxNameBytes) {
    return Status::InvalidArgument(std::string(what) + " of " + std::to_string(name.size()) +
                                   " bytes; names have 1 to " + std::to_string(kMaxNameBytes) +
                                   " letters, digits and _");
  }
  if (!iceberg::IsValidName(name)) {
    return Status::InvalidArgument(std::string("bad ") + what + " '" + name + "' (1 to " +
                                   std::to_string(kMaxNameBytes) + " letters, digits and _)");
  }
  return Status::OK();
}

// One namespace level: "a" (multi-level "a%1Fb" is refused: floe's catalogs keep one level).
Result<std::string> NamespaceOf(const std::string& segment) {
  std::string ns = io::DecodeUrl(segment, false);
  if (ns.find('\x1f') != std::string::npos && ns.size() <= kMaxNameBytes) {
    return Status::InvalidArgument("namespace '" + ns +
                                   "' has several levels; floe's catalogs "
                                   "keep one");
  }
  FLOE_RETURN_NOT_OK(CheckName("namespace", ns));
  return ns;
}

Result<iceberg::TableIdentifier> TableOf(const io::HttpRequest& req) {
  FLOE_ASSIGN_OR_RAISE(std::string ns, NamespaceOf(req.matches[1]));
  std::string name = io::DecodeUrl(req.matches[2], false);
  FLOE_RETURN_NOT_OK(CheckName("table name", name));
  return iceberg::TableIdentifier{ns, name};
}

// Where a request's errors are: the client's to fix (400).
JsonPath RequestBody() { return JsonPath("the request body", StatusCode::kInvalidArgument); }

Result<Json> Body(const io::HttpRequest& req) {
  FLOE_ASSIGN_OR_RAISE(Json body, ParseJson(req.body, RequestBody()));
  FLOE_RETURN_NOT_OK(JsonObject(body, RequestBody()).Check());
  return body;
}

// "properties": an object of strings, or null / absent (none); values of at most
// `max_value_bytes`.
Result<std::map<std::string, std::string>> Properties(const Json& body, size_t max_value_bytes) {
  std::optional<std::map<std::string, std::string>> properties;
  FLOE_RETURN_NOT_OK(JsonObject(body, RequestBody()).Get("properties", &properties));
  if (properties) {
    FLOE_RETURN_NOT_OK(rest::CheckProperties(*properties, max_value_bytes, "'properties'"));
  }
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
  if (!request.Required("name", &name).ok()) {
    return Status::InvalidArgument("'name' must be a table name (a string)");
  }
  FLOE_RETURN_NOT_OK(CheckName("table name", name));
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
  FLOE_ASSIGN_OR_RAISE(c.properties, Properties(body, rest::kMaxPropertyValueBytes));
  return c;
}

class Server final : public RestCatalogServer {
 public:
  Server(std::unique_ptr<iceberg::Catalog> catalog, RestServerOptions options)
      : catalog_(std::move(catalog)), options_(std::move(options)) {}
  ~Server() override { Stop(); }

  Status Start() {
    io::HttpServer::Options options;
    options.name = "catalog";
    options.limits = RestLimits();
    // Unknown paths and the server's own refusals (413, 431, 408, ...) get the spec's body too.
    options.error_body = [](int status, const std::string& message, io::HttpResponse& res) {
      Error(res, status,
            status == 404   ? "NotFoundException"
            : status == 503 ? "ServiceUnavailableException"
            : status >= 500 ? "ServiceFailureException"
                            : "BadRequestException",
            message);
    };
    options.before = [this](const io::HttpRequest& req, io::HttpResponse& res) {
      return Refused(req, res);
    };
    FLOE_ASSIGN_OR_RAISE(server_, io::HttpServer::Make(std::move(options)));
    Routes();
    Result<int> port = server_->Bind(options_.host, options_.port);
    if (!port.ok()) {
      return Status::IOError("cannot listen on " + options_.host + ":" +
                             std::to_string(options_.port));
    }
    port_ = *port;
    return server_->Start();
  }

  int port() const override { return port_; }
  void Wait() override { server_->Wait(); }
  void Stop() override {
    if (server_) server_->Stop();
  }

 private:
  void Routes() {
    server_->Route("POST", "/v1/oauth/tokens",
                   [this](const io::HttpRequest& req, io::HttpResponse& res) { Token(req, res); });
    server_->Route("GET", "/v1/config", [this](const io::HttpRequest&, io::HttpResponse& res) {
      Reply(res, 200,
            DumpJson(Json{{"defaults", options_.config_defaults},
                          {"overrides", options_.config_overrides}}));
    });
    server_->Route("GET", kNamespaces, [this](const io::HttpRequest& req, io::HttpResponse& res) {
      MutexLock lock(mu_);
      ListNamespaces(req, res);
    });
    server_->Route("POST", kNamespaces, [this](const io::HttpRequest& req, io::HttpResponse& res) {
      MutexLock lock(mu_);
      CreateNamespace(req, res);
    });
    // HEAD (exists) is answered by the GET handlers, without the body.
    server_->Route("GET", kNamespace, [this](const io::HttpRequest& req, io::HttpResponse& res) {
      MutexLock lock(mu_);
      LoadNamespace(req, res);
    });
    server_->Route("GET", kTables, [this](const io::HttpRequest& req, io::HttpResponse& res) {
      MutexLock lock(mu_);
      ListTables(req, res);
    });
    server_->Route("POST", kTables, [this](const io::HttpRequest& req, io::HttpResponse& res) {
      MutexLock lock(mu_);
      CreateTable(req, res);
    });
    server_->Route("GET", kTable, [this](const io::HttpRequest& req, io::HttpResponse& res) {
      MutexLock lock(mu_);
      LoadTable(req, res);
    });
    // A commit is parsed and bounded before it takes the lock (CommitTable).
    server_->Route("POST", kTable, [this](const io::HttpRequest& req, io::HttpResponse& res) {
      CommitTable(req, res);
    });
    server_->Route("DELETE", kTable, [this](const io::HttpRequest& req, io::HttpResponse& res) {
      MutexLock lock(mu_);
      DropTable(req, res);
    });
    for (const char* path : {kNamespace, kNamespaces, kTables}) {
      server_->Route("DELETE", path, [](const io::HttpRequest&, io::HttpResponse& res) {
        Error(res, 406, "UnsupportedOperationException", "floe's catalog server drops tables only");
      });
    }
    server_->Route("POST", std::string(kNamespace) + "/properties",
                   [](const io::HttpRequest&, io::HttpResponse& res) {
                     Error(res, 406, "UnsupportedOperationException",
                           "floe's catalog server does not update namespace properties");
                   });
  }

  // Before routing: credentials in the URL are refused, then the bearer token is checked.
  bool Refused(const io::HttpRequest& req, io::HttpResponse& res) {
    std::string named;
    for (const auto& [name, value] : req.query) {
      if (CredentialParameters().count(name)) named += (named.empty() ? "'" : ", '") + name + "'";
    }
    if (!named.empty()) {
      Error(res, 400, "BadRequestException",
            "credentials in the URL's query string are refused (" + named +
                "; URLs end up in logs): send them in the form body of POST /v1/oauth/tokens or "
                "in the Authorization header");
      return true;
    }
    if (options_.credential.empty() || req.path == "/v1/oauth/tokens") return false;
    std::string auth = req.Header("Authorization");
    MutexLock lock(mu_);
    if (auth.rfind("Bearer ", 0) != 0 || !tokens_.count(auth.substr(7))) {
      Error(res, 401, "NotAuthorizedException",
            "a bearer token from POST /v1/oauth/tokens is required");
      return true;
    }
    return false;
  }

  // OAuth2 client credentials, from the form body only (RFC 6749 4.4).
  void Token(const io::HttpRequest& req, io::HttpResponse& res) {
    auto oauth_error = [&](int code, const char* error, const std::string& description) {
      res.status = code;
      res.SetContent(DumpJson(Json{{"error", error}, {"error_description", description}}),
                     "application/json");
    };
    if (options_.credential.empty()) return oauth_error(400, "invalid_request", "no OAuth2 here");
    if (req.Header("Content-Type").rfind("application/x-www-form-urlencoded", 0) != 0) {
      return oauth_error(400, "invalid_request",
                         "the token request is a form body (application/x-www-form-urlencoded)");
    }
    std::map<std::string, std::string> form;
    for (auto& [name, value] : io::ParseUrlEncoded(req.body)) form.emplace(name, value);
    if (form["grant_type"] != "client_credentials") {
      return oauth_error(400, "unsupported_grant_type", "only client_credentials");
    }
    if (form["client_id"] + ":" + form["client_secret"] != options_.credential) {
      return oauth_error(401, "invalid_client", "bad credential");
    }
    std::string token = RandomToken();
    {
      MutexLock lock(mu_);
      // Bounded: every client may ask for tokens; the oldest goes first (a client renews on 401).
      if (tokens_.insert(token).second) token_order_.push_back(token);
      while (token_order_.size() > options_.max_tokens) {
        tokens_.erase(token_order_.front());
        token_order_.pop_front();
      }
    }
    res.SetContent(
        DumpJson(Json{{"access_token", token},
                      {"token_type", "bearer"},
                      {"expires_in", 86400},
                      {"issued_token_type", "urn:ietf:params:oauth:token-type:access_token"}}),
        "application/json");
  }

  void ListNamespaces(const io::HttpRequest& req, io::HttpResponse& res) FLOE_REQUIRES(mu_) {
    Result<std::vector<std::string>> all = catalog_->ListNamespaces();
    if (!all.ok()) return CatalogError(res, all.status(), "NoSuchNamespaceException", "namespaces");
    Json out = Json::array();
    if (req.HasQuery("parent")) {
      // One level only: a namespace has no children.
      Result<std::string> parent = NamespaceOf(req.QueryValue("parent"));
      if (!parent.ok()) return ErrorFromStatus(res, parent.status(), "");
      Status exists = catalog_->LoadNamespace(*parent).status();
      if (!exists.ok()) {
        return CatalogError(res, exists, "NoSuchNamespaceException", "namespace " + *parent);
      }
    } else {
      for (const std::string& ns : *all) out.push_back(Json::array({ns}));
    }
    Reply(res, 200, DumpJson(Json{{"namespaces", out}}));
  }

  void CreateNamespace(const io::HttpRequest& req, io::HttpResponse& res) FLOE_REQUIRES(mu_) {
    Result<Json> body = Body(req);
    if (!body.ok()) return ErrorFromStatus(res, body.status(), "");
    std::vector<std::string> levels;
    if (!JsonObject(*body, RequestBody()).Required("namespace", &levels).ok() ||
        levels.size() != 1) {
      return Error(res, 400, "BadRequestException",
                   "'namespace' must be an array of one name (floe's catalogs keep one level)");
    }
    const std::string& name = levels[0];
    Status valid = CheckName("namespace", name);
    if (!valid.ok()) return ErrorFromStatus(res, valid, "");
    Result<std::map<std::string, std::string>> properties =
        Properties(*body, rest::kMaxNamespacePropertyValueBytes);
    if (!properties.ok()) return ErrorFromStatus(res, properties.status(), "");
    Status st = catalog_->CreateNamespace(name, *properties);
    if (!st.ok()) return CatalogError(res, st, "NoSuchNamespaceException", "namespace " + name);
    Reply(res, 200,
          DumpJson(Json{{"namespace", Json::array({name})}, {"properties", *properties}}));
  }

  void LoadNamespace(const io::HttpRequest& req, io::HttpResponse& res) FLOE_REQUIRES(mu_) {
    Result<std::string> ns = NamespaceOf(req.matches[1]);
    if (!ns.ok()) return ErrorFromStatus(res, ns.status(), "");
    Result<std::map<std::string, std::string>> properties = catalog_->LoadNamespace(*ns);
    if (!properties.ok()) {
      return CatalogError(res, properties.status(), "NoSuchNamespaceException", "namespace " + *ns);
    }
    Reply(res, 200, DumpJson(Json{{"namespace", Json::array({*ns})}, {"properties", *properties}}));
  }

  void ListTables(const io::HttpRequest& req, io::HttpResponse& res) FLOE_REQUIRES(mu_) {
    Result<std::string> ns = NamespaceOf(req.matches[1]);
    if (!ns.ok()) return ErrorFromStatus(res, ns.status(), "");
    Result<std::vector<iceberg::TableIdentifier>> tables = catalog_->ListTables(*ns);
    if (!tables.ok()) {
      return CatalogError(res, tables.status(), "NoSuchNamespaceException", "namespace " + *ns);
    }
    Json ids = Json::array();
    for (const iceberg::TableIdentifier& t : *tables) {
      ids.push_back({{"namespace", Json::array({t.ns})}, {"name", t.name}});
    }
    Reply(res, 200, DumpJson(Json{{"identifiers", ids}}));
  }

  void CreateTable(const io::HttpRequest& req, io::HttpResponse& res) FLOE_REQUIRES(mu_) {
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
    if (!exists.ok())
      return CatalogError(res, exists, "NoSuchNamespaceException", "namespace " + *ns);
    Result<iceberg::LoadedTable> created =
        catalog_->CreateTable(c->id, c->schema, c->spec, c->properties);
    if (!created.ok()) {
      return CatalogError(res, created.status(), "NoSuchNamespaceException",
                          "table " + c->id.ToString());
    }
    res.SetHeader("ETag", rest::ETagOf(*created));
    Reply(res, 200, rest::LoadTableResult(*created));
  }

  void LoadTable(const io::HttpRequest& req, io::HttpResponse& res) FLOE_REQUIRES(mu_) {
    Result<iceberg::TableIdentifier> id = TableOf(req);
    if (!id.ok()) return ErrorFromStatus(res, id.status(), "");
    Result<iceberg::LoadedTable> table = catalog_->LoadTable(*id);
    if (!table.ok()) {
      return CatalogError(res, table.status(), "NoSuchTableException", "table " + id->ToString());
    }
    // The metadata file names the version: a client holding it gets a 304 instead of the
    // whole metadata again (it grows with every snapshot kept).
    std::string etag = rest::ETagOf(*table);
    res.SetHeader("ETag", etag);
    if (req.Header("If-None-Match") == etag) {
      res.status = 304;
      return;
    }
    Reply(res, 200, rest::LoadTableResult(*table));
  }

  void CommitTable(const io::HttpRequest& req, io::HttpResponse& res) FLOE_EXCLUDES(mu_) {
    Result<iceberg::TableIdentifier> id = TableOf(req);
    if (!id.ok()) return ErrorFromStatus(res, id.status(), "");
    Result<Json> request = rest::ParseCommitRequest(req.body);
    if (!request.ok()) return ErrorFromStatus(res, request.status(), "");
    const std::string what = "table " + id->ToString();
    MutexLock lock(mu_);
    Result<iceberg::LoadedTable> current = catalog_->LoadTable(*id);
    if (!current.ok()) return CatalogError(res, current.status(), "NoSuchTableException", what);
    Result<iceberg::TableMetadata> updated = rest::ApplyCommitRequest(*request, *current);
    if (!updated.ok()) return ErrorFromStatus(res, updated.status(), "");
    // Paths outside the table (another table's manifest list, a data path elsewhere) would make
    // its maintenance delete files that are not its own: 400.
    Status paths = iceberg::CheckCommitPaths(id->ToString(), current->metadata, *updated);
    if (!paths.ok()) return ErrorFromStatus(res, paths, "");
    Result<iceberg::LoadedTable> committed = catalog_->CommitTable(*current, std::move(*updated));
    if (!committed.ok()) {
      const Status& st = committed.status();
      if (st.IsConflict() || st.IsInvalidArgument()) return CatalogError(res, st, "", what);
      // The backing catalog may have swapped: the client must not clean up.
      return InternalError(res, "CommitStateUnknownException", st);
    }
    res.SetHeader("ETag", rest::ETagOf(*committed));
    Reply(res, 200, rest::LoadTableResult(*committed));
  }

  void DropTable(const io::HttpRequest& req, io::HttpResponse& res) FLOE_REQUIRES(mu_) {
    Result<iceberg::TableIdentifier> id = TableOf(req);
    if (!id.ok()) return ErrorFromStatus(res, id.status(), "");
    std::string purge = req.QueryValue("purgeRequested");
    Status st = catalog_->DropTable(*id, purge == "true");
    if (!st.ok()) return CatalogError(res, st, "NoSuchTableException", "table " + id->ToString());
    res.status = 204;
  }

  Mutex mu_;
  // One request at a time: the catalogs behind are thread-compatible, not thread-safe.
  std::unique_ptr<iceberg::Catalog> catalog_ FLOE_PT_GUARDED_BY(mu_);
  RestServerOptions options_;
  std::unique_ptr<io::HttpServer> server_;
  int port_ = -1;
  std::set<std::string> tokens_ FLOE_GUARDED_BY(mu_);
  std::deque<std::string> token_order_ FLOE_GUARDED_BY(mu_);  // oldest first
};

}  // namespace

Result<std::unique_ptr<RestCatalogServer>> RestCatalogServer::Start(
    std::unique_ptr<iceberg::Catalog> catalog, const RestServerOptions& options) {
  auto server = std::make_unique<Server>(std::move(catalog), options);
  FLOE_RETURN_NOT_OK(server->Start());
  return std::unique_ptr<RestCatalogServer>(std::move(server));
}

}  // namespace floe::catalog
