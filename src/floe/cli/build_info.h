#pragma once

// Written at build time by build_info.cmake (build_info.cc in the build tree).
namespace floe::cli {
extern const char* const kBuildVersion;
extern const char* const kBuildCommit;  // git describe of the source tree, "-dirty" if changed
}  // namespace floe::cli
