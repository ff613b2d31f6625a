#pragma once

#include <map>
#include <memory>
#include <string>

#include "floe/iceberg/catalog.h"

namespace floe::catalog {

struct RestClientOptions {
  std::string uri;        // http(s)://host[:port][/path]
  std::string warehouse;  // sent to GET /v1/config as ?warehouse= when set
  // OAuth2 client credentials "client_id:client_secret" (or the secret alone), exchanged at
  // <uri>/v1/oauth/tokens for a bearer token; `token` is used as the bearer token directly and
  // wins when both are set (as in Iceberg's Java client). Never printed.
  std::string credential;
  std::string token;
  // The client's own catalog properties (Iceberg's S3FileIO keys: s3.endpoint, ...). The tables'
  // FileIO gets the server's config merged around them per key: its defaults below, its
  // overrides above (as Iceberg's clients merge); unset keys from the AWS environment.
  std::map<std::string, std::string> properties;
};

// A client of an Iceberg REST catalog (the spec's 1.10 endpoints). Commits send the
// requirements and updates Iceberg's Java client sends (rest_protocol.h): 409 is a Conflict (the
// caller reloads and retries), 500/502/503/504 or a lost connection during a commit an
// Unavailable whose outcome is unknown (nothing may be cleaned up; floe's sink decides from its
// commit markers at restart). Reads retry a lost connection. A 401 with a credential fetches a
// new token once (a restarted server forgets the tokens it issued).
class RestCatalog final : public iceberg::Catalog {
 public:
  // Fetches a token (with a credential) and the server's config (its prefix).
  static Result<std::unique_ptr<RestCatalog>> Make(const RestClientOptions& options);
  ~RestCatalog() override;

  Result<iceberg::LoadedTable> CreateTable(const iceberg::TableIdentifier& id,
                                           const iceberg::Schema& schema,
                                           const iceberg::PartitionSpec& spec,
                                           std::map<std::string, std::string> properties) override;
  Result<iceberg::LoadedTable> LoadTable(const iceberg::TableIdentifier& id) override;
  Result<iceberg::LoadedTable> CommitTable(const iceberg::LoadedTable& base,
                                           iceberg::TableMetadata updated) override;
  Result<std::vector<iceberg::TableIdentifier>> ListTables(const std::string& ns) override;
  Status DropTable(const iceberg::TableIdentifier& id, bool purge) override;
  Status CreateNamespace(const std::string& ns,
                         const std::map<std::string, std::string>& properties) override;
  Result<std::map<std::string, std::string>> LoadNamespace(const std::string& ns) override;
  Result<std::vector<std::string>> ListNamespaces() override;
  // The server decides a table's location; this is only where it would usually go.
  std::string DefaultTableLocation(const iceberg::TableIdentifier& id) const override;
  // With the S3 settings of GET /v1/config and the client's properties (RestClientOptions).
  const io::FileIO& file_io() const override;

  struct Impl;
  explicit RestCatalog(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace floe::catalog
