#pragma once

#include <string>
#include <string_view>

#include "floe/common/status.h"

namespace floe::io {

// The one rule for every place floe is given (warehouse, checkpoint and savepoint directories,
// file sources, `--from`): a local path, absolute or relative to the working directory, a file
// URI (`file:/x`, `file:///x`, `file://localhost/x`; the path taken as it is, no %XX decoding,
// as Flink's and Hadoop's Path do) or an
// `s3://bucket/key` URI. Returns an absolute, lexically normalized local path, or the s3:// URI
// without trailing slashes. Any other scheme, a file URI naming another host or a relative file
// URI is InvalidArgument naming `what` (e.g. "execution.checkpointing.dir").
Result<std::string> ResolveLocation(std::string_view location, std::string_view what);

// True if `location` has a URI scheme ("file:", "s3:", "hdfs:", ...) rather than being a path.
bool HasUriScheme(std::string_view location);

}  // namespace floe::io
