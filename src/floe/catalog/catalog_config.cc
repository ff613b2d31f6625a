#include "floe/catalog/catalog_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "floe/catalog/jdbc_catalog.h"
#include "floe/catalog/rest_catalog.h"
#include "floe/catalog/sql_database.h"
#include "floe/io/file.h"
#include "floe/io/location.h"
#include "floe/io/object_store.h"
#include "floe/io/s3_client.h"

namespace floe::catalog {

namespace {

constexpr std::string_view kJdbcCatalogClass = "org.apache.iceberg.jdbc.JdbcCatalog";
constexpr std::string_view kHadoopCatalogClass = "org.apache.iceberg.hadoop.HadoopCatalog";
constexpr std::string_view kRestCatalogClass = "org.apache.iceberg.rest.RESTCatalog";
constexpr std::string_view kSqlitePrefix = "jdbc:sqlite:";
constexpr std::string_view kPostgresPrefix = "jdbc:postgresql:";

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string Get(const std::map<std::string, std::string>& options, const std::string& key) {
  auto it = options.find(key);
  return it == options.end() ? std::string() : it->second;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// A local directory or file: URI (made an absolute path) or an s3:// location (kept).
Result<std::string> Warehouse(const std::string& warehouse) {
  if (warehouse.empty()) {
    return Status::InvalidArgument(
        "option 'warehouse' is required (a local directory, a file:// URI or an s3:// location, "
        "e.g. 'file:///data/warehouse')");
  }
  return io::ResolveLocation(warehouse, "option 'warehouse'");
}

// Iceberg's S3FileIO properties, when any is set; unset ones from the AWS environment.
Result<std::optional<io::S3Config>> S3Options(const std::map<std::string, std::string>& options) {
  bool any = false;
  for (const auto& [key, value] : options) {
    if (StartsWith(key, "s3.") || key == "client.region") any = true;
  }
  if (!any) return std::optional<io::S3Config>();
  FLOE_ASSIGN_OR_RAISE(io::S3Config c, io::S3ConfigFromOptions(options, io::kIcebergS3Options));
  return std::optional<io::S3Config>(std::move(c));
}

}  // namespace

std::string CatalogConfig::Describe() const {
  if (type == Type::kHadoop) return "filesystem catalog at " + warehouse;
  if (type == Type::kRest) {
    return "rest catalog at " + RedactPassword(uri) +
           (warehouse.empty() ? "" : ", warehouse " + warehouse);
  }
  return "jdbc catalog '" + name + "' at " + RedactPassword(uri) + ", warehouse " + warehouse;
}

const std::vector<std::string>& CatalogOptionKeys() {
  static const std::vector<std::string> keys = {"s3.endpoint",
                                                "s3.path-style-access",
                                                "s3.access-key-id",
                                                "s3.secret-access-key",
                                                "s3.session-token",
                                                "client.region",
                                                "catalog-type",
                                                "catalog-impl",
                                                "catalog-name",
                                                "uri",
                                                "warehouse",
                                                "jdbc.user",
                                                "jdbc.password",
                                                "credential",
                                                "token"};
  return keys;
}

Result<CatalogConfig> ParseCatalogOptions(const std::map<std::string, std::string>& options) {
  CatalogConfig c;
  std::string type = Lower(Get(options, "catalog-type"));
  std::string impl = Get(options, "catalog-impl");
  if (!type.empty() && !impl.empty()) {
    return Status::InvalidArgument(
        "options 'catalog-type' and 'catalog-impl' are both set: set one (Iceberg refuses both)");
  }
  if (impl == kJdbcCatalogClass) {
    type = "jdbc";
  } else if (impl == kHadoopCatalogClass) {
    type = "hadoop";
  } else if (impl == kRestCatalogClass) {
    type = "rest";
  } else if (!impl.empty()) {
    return Status::InvalidArgument(
        "option 'catalog-impl' = '" + impl + "' is not supported: floe implements '" +
        std::string(kJdbcCatalogClass) + "', '" + std::string(kRestCatalogClass) + "' and '" +
        std::string(kHadoopCatalogClass) + "'");
  }
  if (type.empty()) type = "hadoop";
  if (type != "hadoop" && type != "jdbc" && type != "rest") {
    return Status::InvalidArgument(
        "option 'catalog-type' = '" + type +
        "' is not supported: floe supports 'hadoop' (a filesystem catalog under 'warehouse'), "
        "'jdbc' (Iceberg's JDBC catalog on SQLite or PostgreSQL) and 'rest' (an Iceberg REST "
        "catalog); 'hive' is not implemented");
  }
  // Each option belongs to some catalogs; elsewhere it is a mistake worth naming.
  const std::map<std::string, std::set<std::string>> kFor = {
      {"uri", {"jdbc", "rest"}},   {"jdbc.user", {"jdbc"}},
      {"jdbc.password", {"jdbc"}}, {"credential", {"rest"}},
      {"token", {"rest"}},         {"catalog-name", {"jdbc", "rest", "hadoop"}}};
  for (const auto& [key, types] : kFor) {
    if (options.count(key) && !types.count(type)) {
      std::string owners;
      for (const std::string& t : types) owners += (owners.empty() ? "'" : "' or '") + t;
      return Status::InvalidArgument("option '" + key + "' is for 'catalog-type' = " + owners +
                                     "', not '" + type + "'");
    }
  }
  FLOE_ASSIGN_OR_RAISE(c.s3, S3Options(options));
  std::string name = Get(options, "catalog-name");
  if (!name.empty()) c.name = name;
  c.uri = Get(options, "uri");
  if (type == "rest") {
    c.type = CatalogConfig::Type::kRest;
    c.warehouse = Get(options, "warehouse");  // the server's to interpret
    c.credential = Get(options, "credential");
    c.token = Get(options, "token");
    if (!StartsWith(c.uri, "http://") && !StartsWith(c.uri, "https://")) {
      return Status::InvalidArgument("option 'uri' = '" + RedactPassword(c.uri) +
                                     "' must be the REST catalog's http:// or https:// URI");
    }
    return c;
  }
  FLOE_ASSIGN_OR_RAISE(c.warehouse, Warehouse(Get(options, "warehouse")));
  if (type == "hadoop") return c;  // FileSystemCatalog::Make refuses object storage
  c.type = CatalogConfig::Type::kJdbc;
  c.user = Get(options, "jdbc.user");
  c.password = Get(options, "jdbc.password");
  if (!iceberg::IsValidName(c.name)) {
    return Status::InvalidArgument("option 'catalog-name' = '" + c.name +
                                   "' must be letters, digits and _");
  }
  if (!StartsWith(c.uri, kSqlitePrefix) && !StartsWith(c.uri, kPostgresPrefix)) {
    return Status::InvalidArgument(
        "option 'uri' = '" + RedactPassword(c.uri) +
        "' is not a JDBC URI floe supports: 'jdbc:sqlite:PATH' or "
        "'jdbc:postgresql://HOST[:PORT]/DATABASE' (?host=/socket/dir for a Unix socket)");
  }
  if (StartsWith(c.uri, kSqlitePrefix) && (!c.user.empty() || !c.password.empty())) {
    return Status::InvalidArgument(
        "options 'jdbc.user' and 'jdbc.password' are for PostgreSQL; SQLite has no users");
  }
  return c;
}

Result<std::unique_ptr<iceberg::Catalog>> OpenCatalog(const CatalogConfig& config) {
  // Every s3:// path of this process (table files, metadata) uses these settings.
  if (config.s3) io::SetS3Config("", *config.s3);
  if (config.type == CatalogConfig::Type::kHadoop) {
    FLOE_ASSIGN_OR_RAISE(auto catalog, iceberg::FileSystemCatalog::Make(config.warehouse));
    return std::unique_ptr<iceberg::Catalog>(std::move(catalog));
  }
  if (config.type == CatalogConfig::Type::kRest) {
    RestClientOptions options{config.uri, config.warehouse, config.credential, config.token};
    FLOE_ASSIGN_OR_RAISE(auto catalog, RestCatalog::Make(options));
    // The server's S3 settings, in Iceberg's order: its defaults unless the sink gave its own,
    // then its overrides over both.
    std::map<std::string, std::string> s3;
    if (!config.s3) s3 = catalog->server_defaults();
    for (const auto& [key, value] : catalog->server_overrides()) s3[key] = value;
    std::erase_if(s3, [](const auto& kv) {
      return kv.first.rfind("s3.", 0) != 0 && kv.first != "client.region";
    });
    if (!s3.empty()) {
      Result<std::optional<io::S3Config>> served = S3Options(s3);
      if (!served.ok()) return served.status().WithContext(config.uri + " /v1/config");
      io::SetS3Config("", **served);
    }
    return std::unique_ptr<iceberg::Catalog>(std::move(catalog));
  }
  std::unique_ptr<SqlDatabase> db;
  if (StartsWith(config.uri, kSqlitePrefix)) {
    std::string path = config.uri.substr(kSqlitePrefix.size());
    if (StartsWith(path, "file:")) path = path.substr(5);
    if (path.empty()) return Status::InvalidArgument("'uri' = '" + config.uri + "' has no path");
    if (path != ":memory:") path = io::AbsolutePath(path);
    FLOE_ASSIGN_OR_RAISE(db, OpenSqlite(path));
  } else {
    // libpq reads the same URI without "jdbc:".
    FLOE_ASSIGN_OR_RAISE(db, OpenPostgres(config.uri.substr(5), config.user, config.password));
  }
  FLOE_RETURN_NOT_OK(io::CreateDirs(config.warehouse));
  FLOE_ASSIGN_OR_RAISE(auto catalog,
                       JdbcCatalog::Make(std::move(db), config.name, config.warehouse));
  return std::unique_ptr<iceberg::Catalog>(std::move(catalog));
}

}  // namespace floe::catalog
