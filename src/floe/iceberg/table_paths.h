#pragma once

// The rule that keeps floe's deletes inside one table (docs/table-commands.md, "Where floe
// deletes"): a table owns the files under its location and nothing else. Maintenance (snapshot
// expiry, orphan removal, compaction) deletes only there, and the paths that steer where files
// go (write.data.path, write.metadata.path, the location itself, a snapshot's manifest list)
// must stay there, so that a commit cannot make another table's files this table's to delete.
// Iceberg allows data paths elsewhere; floe refuses them.

#include <string>

#include "floe/common/status.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::iceberg {

// Whether `uri_or_path` (file:// URI, absolute path or s3:// URI) lies strictly below
// `location` (the same forms; s3a:// and s3n:// count as s3://). Compared lexically; a "." or
// ".." segment in either is outside.
bool IsInsideLocation(const std::string& location, const std::string& uri_or_path);

// write.data.path and write.metadata.path of `metadata`, when set (and, given `base`, set to
// another value than base's), lie inside its location: InvalidArgument naming the table, the
// property and both paths otherwise.
Status CheckPathProperties(const std::string& table, const TableMetadata& metadata,
                           const TableMetadata* base = nullptr);

// A commit that turns `base` into `updated` keeps the table's paths inside it: the location
// unchanged or inside the old one, the path properties it sets inside it (CheckPathProperties;
// a value another tool stored before is left alone, the data writer refuses to write there),
// and every snapshot it adds with its manifest list inside it. InvalidArgument naming the
// table, the field and the path otherwise.
Status CheckCommitPaths(const std::string& table, const TableMetadata& base,
                        const TableMetadata& updated);

}  // namespace floe::iceberg
