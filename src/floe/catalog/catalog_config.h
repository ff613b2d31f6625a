#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/catalog.h"

namespace floe::catalog {

// Which catalog a sink or command uses, with the option names of Iceberg's Flink connector.
struct CatalogConfig {
  enum class Type { kHadoop, kJdbc };
  Type type = Type::kHadoop;
  std::string name = "default_catalog";  // 'catalog-name': the catalog_name of JDBC rows
  std::string uri;                       // 'uri': jdbc:sqlite:PATH | jdbc:postgresql://...
  std::string warehouse;                 // 'warehouse': absolute local path
  std::string user;                      // 'jdbc.user'
  std::string password;                  // 'jdbc.password': never printed

  // "jdbc catalog 'c' at jdbc:postgresql://h/db, warehouse /w" (no password).
  std::string Describe() const;
};

// The WITH option keys ParseCatalogOptions reads.
const std::vector<std::string>& CatalogOptionKeys();

// From WITH options: 'catalog-type' = 'hadoop' (default) | 'jdbc', or 'catalog-impl' naming
// Iceberg's JdbcCatalog class; 'catalog-name', 'uri', 'warehouse', 'jdbc.user',
// 'jdbc.password'. Errors name the option and the rule, never the password's value.
Result<CatalogConfig> ParseCatalogOptions(const std::map<std::string, std::string>& options);

// Connects (JDBC: creates Iceberg's two tables if missing). Errors never hold the password.
Result<std::unique_ptr<iceberg::Catalog>> OpenCatalog(const CatalogConfig& config);

}  // namespace floe::catalog
