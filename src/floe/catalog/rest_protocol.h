#pragma once

// The Iceberg REST catalog's commit protocol (open-api/rest-catalog-open-api.yaml, 1.10), shared
// by floe's client (RestCatalog) and server (RestCatalogServer).

#include <string>
#include <string_view>

#include "floe/common/json.h"
#include "floe/common/status.h"
#include "floe/iceberg/catalog.h"

namespace floe::catalog::rest {

// What one request may ask of the catalog server (docs/catalogs.md, "Limits"). A commit is
// applied under the catalog's lock, so its work is bounded here, before it is taken; past a bound
// the request is a 400 naming it. Keys and values of namespace properties are bounded by the JDBC
// catalog's columns (VARCHAR(255), VARCHAR(1000)).
inline constexpr size_t kMaxCommitRequirements = 100;
inline constexpr size_t kMaxCommitUpdates = 1000;
inline constexpr size_t kMaxPropertiesPerRequest = 1000;  // set and removed, over all updates
inline constexpr size_t kMaxTableProperties = 1000;
inline constexpr size_t kMaxPropertyKeyBytes = 255;
inline constexpr size_t kMaxPropertyValueBytes = 64 * 1024;
inline constexpr size_t kMaxNamespacePropertyValueBytes = 1000;
inline constexpr size_t kMaxRemovedSnapshots = 100'000;

// The CommitTableRequest that turns `base` into `updated`, as Iceberg's Java client sends it:
// requirements assert-table-uuid and assert-ref-snapshot-id (the base's value of every ref the
// commit changes, main always); updates set/remove-properties, add-snapshot per new snapshot,
// set/remove-snapshot-ref, remove-snapshots. NotImplemented for changes floe never makes
// (schema, spec, location, format).
Result<std::string> CommitRequest(const iceberg::TableIdentifier& id,
                                  const iceberg::LoadedTable& base,
                                  const iceberg::TableMetadata& updated);

// Server side: checks the request's requirements against `current` (Conflict naming the first
// that fails) and applies its updates to a copy of `current.metadata`. InvalidArgument for a
// malformed request, an unknown requirement or update type, or an update the server does not
// support (the 400 the spec asks for).
Result<iceberg::TableMetadata> ApplyCommitRequest(std::string_view body,
                                                  const iceberg::LoadedTable& current);
// The same in two steps, so the server parses and bounds a request before it takes the lock:
// ParseCommitRequest checks the body's shape and the bounds above (InvalidArgument naming the
// bound and the numbers), ApplyCommitRequest applies what it returned.
Result<Json> ParseCommitRequest(std::string_view body);
Result<iceberg::TableMetadata> ApplyCommitRequest(const Json& request,
                                                  const iceberg::LoadedTable& current);

// Properties (of a table or a namespace) from a hostile client: at most
// kMaxPropertiesPerRequest, keys of 1 to kMaxPropertyKeyBytes bytes, values of at most
// `max_value_bytes`. InvalidArgument naming `where`, the key and the numbers.
Status CheckProperties(const std::map<std::string, std::string>& properties, size_t max_value_bytes,
                       std::string_view where);

// LoadTableResult / CommitTableResponse: {"metadata-location", "metadata", "config"}.
std::string LoadTableResult(const iceberg::LoadedTable& table);

// The ETag of a table's current version (quoted; derived from its metadata file's name).
std::string ETagOf(const iceberg::LoadedTable& table);

// IcebergErrorResponse: {"error": {"message", "type", "code"}}.
std::string ErrorResponse(int code, std::string_view type, std::string_view message);

}  // namespace floe::catalog::rest
