#pragma once

// The DataFile wire form: how a writer hands finished files to a committer (and the committer
// keeps them in its checkpoint state). Binary, little-endian (common/byte_codec.h), a format
// version first; every field of DataFile is kept, partition values with a type tag. Format in
// README.md ("DataFile wire form"). Not an Iceberg format: Iceberg's own file descriptions are
// the Avro manifests (manifest_io.h).

#include <vector>

#include "floe/common/byte_codec.h"
#include "floe/common/status.h"
#include "floe/iceberg/manifest.h"

namespace floe::iceberg {

void EncodeDataFile(const DataFile& file, ByteWriter& out);
// Corruption on an unknown version, content or value tag, or a truncated blob.
Result<DataFile> DecodeDataFile(ByteReader& in);

// u32 count, then each file.
void EncodeDataFiles(const std::vector<DataFile>& files, ByteWriter& out);
Result<std::vector<DataFile>> DecodeDataFiles(ByteReader& in);

}  // namespace floe::iceberg
