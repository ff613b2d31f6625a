#pragma once

#include <map>
#include <memory>
#include <string>

#include "floe/common/status.h"
#include "floe/iceberg/catalog.h"

namespace floe::catalog {

struct RestServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: a free port
  // "client_id:client_secret": clients get a bearer token from POST /v1/oauth/tokens (OAuth2
  // client credentials) and every other request needs it. Empty: no authentication.
  std::string credential;
  // Tokens kept at most; past it the oldest is forgotten (its holder gets a 401 and asks again).
  size_t max_tokens = 10'000;
  // GET /v1/config's "defaults" and "overrides" (e.g. s3.endpoint for clients' file IO).
  std::map<std::string, std::string> config_defaults;
  std::map<std::string, std::string> config_overrides;
};

// An Iceberg REST catalog (open-api/rest-catalog-open-api.yaml, 1.10) in front of `catalog`
// (floe's JDBC catalog in `floe catalog serve`): config, namespaces (list, create, load,
// exists), tables (list, create, load, exists, commit with requirement checks, drop). Paths are
// served with and without a prefix segment. Requests are bounded and type-checked; a bad one
// gets the spec's error body, never a crash, and never the server's internals (those are logged).
// Requests are read by io::HttpServer within its bounds; catalog calls are made one at a time.
// docs/catalogs.md.
class RestCatalogServer {
 public:
  static Result<std::unique_ptr<RestCatalogServer>> Start(std::unique_ptr<iceberg::Catalog> catalog,
                                                          const RestServerOptions& options);
  virtual ~RestCatalogServer() = default;
  virtual int port() const = 0;
  // Blocks until the server stops (Stop(), or a failure).
  virtual void Wait() = 0;
  virtual void Stop() = 0;
};

}  // namespace floe::catalog
