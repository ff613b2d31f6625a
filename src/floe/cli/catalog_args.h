#pragma once

// The catalog a command works on, from its command line (floe table ..., floe catalog serve).

#include <memory>

#include "floe/cli/args.h"
#include "floe/iceberg/catalog.h"

namespace floe::cli {

// The valued options OpenCatalogFromArgs reads (besides --warehouse).
inline constexpr const char* kCatalogFlags = "catalog";
inline constexpr const char* kCatalogNameFlag = "catalog-name";
inline constexpr const char* kJdbcUserFlag = "jdbc-user";

inline constexpr const char* kCatalogUsage =
    "catalogs: --warehouse DIR alone is the filesystem catalog (default ./warehouse);\n"
    "  --catalog jdbc:sqlite:PATH | jdbc:postgresql://HOST[:PORT]/DB [--catalog-name NAME]\n"
    "    [--jdbc-user USER] --warehouse DIR: Iceberg's JDBC catalog (password: PGPASSWORD or\n"
    "    ~/.pgpass); --catalog http(s)://HOST:PORT: an Iceberg REST catalog (OAuth2 credential\n"
    "    id:secret in FLOE_CATALOG_CREDENTIAL, or a bearer token in FLOE_CATALOG_TOKEN)\n";

// --warehouse DIR alone: the filesystem catalog. --catalog jdbc:...: Iceberg's JDBC catalog
// (the sink's 'uri'); --catalog http(s)://...: a REST catalog. Errors name the flags.
Result<std::unique_ptr<iceberg::Catalog>> OpenCatalogFromArgs(const Args& args);

// What OpenCatalogFromArgs opens, for messages (no secrets).
std::string DescribeCatalogArgs(const Args& args);

}  // namespace floe::cli
