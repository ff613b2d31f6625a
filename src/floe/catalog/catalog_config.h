#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/catalog.h"

namespace floe::catalog {

// Which catalog a sink or command uses, with the option names of Iceberg's Flink connector.
struct CatalogConfig {
  enum class Type { kHadoop, kJdbc, kRest };
  Type type = Type::kHadoop;
  std::string name = "default_catalog";  // 'catalog-name': the catalog_name of JDBC rows
  std::string uri;  // 'uri': jdbc:sqlite:PATH | jdbc:postgresql://... | http(s)://...
  // 'warehouse': an absolute local path (hadoop, jdbc); for rest, what GET /v1/config is told
  std::string warehouse;
  std::string user;        // 'jdbc.user'
  std::string password;    // 'jdbc.password': never printed
  std::string credential;  // 'credential' (rest, OAuth2 client credentials): never printed
  std::string token;       // 'token' (rest, a bearer token): never printed
  // Iceberg's S3FileIO properties as given (s3.endpoint, s3.path-style-access,
  // s3.access-key-id, s3.secret-access-key, s3.session-token, client.region): the S3 settings
  // of the catalog OpenCatalog opens (its file_io()), unset ones from the AWS environment; a REST
  // catalog merges its server's config around them. Secrets never printed.
  std::map<std::string, std::string> s3_options;

  // "jdbc catalog 'c' at jdbc:postgresql://h/db, warehouse /w" (no password).
  std::string Describe() const;
};

// The WITH option keys ParseCatalogOptions reads.
const std::vector<std::string>& CatalogOptionKeys();

// From WITH options: 'catalog-type' = 'hadoop' (default) | 'jdbc' | 'rest', or 'catalog-impl'
// naming Iceberg's class (JdbcCatalog, RESTCatalog, HadoopCatalog); 'catalog-name', 'uri',
// 'warehouse', 'jdbc.user', 'jdbc.password', 'credential', 'token'. Errors name the option and
// the rule, never a secret's value.
Result<CatalogConfig> ParseCatalogOptions(const std::map<std::string, std::string>& options);

// Connects (JDBC: creates Iceberg's two tables if missing). The catalog reaches its tables'
// files with its own S3 settings (the filesystem catalog: local files only). Errors never hold
// the password.
Result<std::unique_ptr<iceberg::Catalog>> OpenCatalog(const CatalogConfig& config);

}  // namespace floe::catalog
