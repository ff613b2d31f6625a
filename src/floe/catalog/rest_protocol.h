#pragma once

// The Iceberg REST catalog's commit protocol (open-api/rest-catalog-open-api.yaml, 1.10), shared
// by floe's client (RestCatalog) and server (RestCatalogServer).

#include <string>
#include <string_view>

#include "floe/common/status.h"
#include "floe/iceberg/catalog.h"

namespace floe::catalog::rest {

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

// LoadTableResult / CommitTableResponse: {"metadata-location", "metadata", "config"}.
std::string LoadTableResult(const iceberg::LoadedTable& table);

// The ETag of a table's current version (quoted; derived from its metadata file's name).
std::string ETagOf(const iceberg::LoadedTable& table);

// IcebergErrorResponse: {"error": {"message", "type", "code"}}.
std::string ErrorResponse(int code, std::string_view type, std::string_view message);

}  // namespace floe::catalog::rest
