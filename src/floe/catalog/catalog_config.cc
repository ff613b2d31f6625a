#include "floe/catalog/catalog_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "floe/catalog/jdbc_catalog.h"
#include "floe/catalog/rest_catalog.h"
#include "floe/catalog/sql_database.h"
#include "floe/io/file.h"
#include "floe/io/file_io.h"
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

// Iceberg's S3FileIO properties among `options`, checked when any is set (unset ones come from
// the AWS environment).
Result<std::map<std::string, std::string>> S3Options(
    const std::map<std::string, std::string>& options) {
  std::map<std::string, std::string> s3;
  const io::S3OptionNames& n = io::kIcebergS3Options;
  for (const char* key :
       {n.endpoint, n.path_style, n.access_key, n.secret_key, n.session_token, n.region}) {
    auto it = options.find(key);
    if (it != options.end()) s3.insert(*it);
  }
  if (!s3.empty()) FLOE_RETURN_NOT_OK(io::S3ConfigFromOptions(s3, n).status());
  return s3;
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
  FLOE_ASSIGN_OR_RAISE(c.s3_options, S3Options(options));
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
  if (config.type == CatalogConfig::Type::kHadoop) {  // local files only
    FLOE_ASSIGN_OR_RAISE(auto catalog, iceberg::FileSystemCatalog::Make(config.warehouse));
    return std::unique_ptr<iceberg::Catalog>(std::move(catalog));
  }
  if (config.type == CatalogConfig::Type::kRest) {
    RestClientOptions options{config.uri, config.warehouse, config.credential, config.token,
                              config.s3_options};
    FLOE_ASSIGN_OR_RAISE(auto catalog, RestCatalog::Make(options));
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
  FLOE_ASSIGN_OR_RAISE(io::FileIO file_io,
                       io::FileIO::FromOptions(config.s3_options, io::kIcebergS3Options));
  FLOE_RETURN_NOT_OK(file_io.CreateDirs(config.warehouse));
  FLOE_ASSIGN_OR_RAISE(auto catalog, JdbcCatalog::Make(std::move(db), config.name, config.warehouse,
                                                       std::move(file_io)));
  return std::unique_ptr<iceberg::Catalog>(std::move(catalog));
}

}  // namespace floe::catalog
