#pragma once

#include <string>
#include <vector>

#include "floe/iceberg/manifest.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/io/file_io.h"

namespace floe::iceberg {

// Files are read and written through `file_io` (the table's catalog's).

// Writes one manifest (Avro, Iceberg v2 manifest schema with the spec's field ids and header
// metadata: schema, schema-id, partition-spec, partition-spec-id, format-version, content)
// to `path` (a local path or s3:// URI; the file must not exist). Entries of one content kind
// only. `snapshot_id` is the snapshot adding it. Returns the manifest-list row describing it,
// with counts and partition summaries filled in; sequence numbers are left to the caller.
Result<ManifestFile> WriteManifest(const io::FileIO& file_io, const std::string& path,
                                   const Schema& schema, const PartitionSpec& spec,
                                   ManifestContent content, int64_t snapshot_id,
                                   const std::vector<ManifestEntry>& entries);

// Reads a manifest's entries. Null sequence numbers / snapshot ids of ADDED entries are
// inherited from `manifest` (the manifest-list row), so callers always see explicit values.
Result<std::vector<ManifestEntry>> ReadManifest(const io::FileIO& file_io,
                                                const ManifestFile& manifest,
                                                const TableMetadata& metadata);

// Manifest list (Avro, v2 schema, header: snapshot-id, parent-snapshot-id, sequence-number,
// format-version).
Status WriteManifestList(const io::FileIO& file_io, const std::string& path, int64_t snapshot_id,
                         std::optional<int64_t> parent_snapshot_id, int64_t sequence_number,
                         const std::vector<ManifestFile>& manifests);
Result<std::vector<ManifestFile>> ReadManifestList(const io::FileIO& file_io,
                                                   const std::string& path_or_uri);

}  // namespace floe::iceberg
