#pragma once

#include <string>
#include <string_view>

namespace floe::cli {

// The overview `floe --help` prints: every command, one line each.
std::string_view Overview();

// The usage of one top-level command (`floe help COMMAND`), or an empty view when the command
// has none here (table, kafka and catalog print their own: `floe table help`).
std::string_view UsageOf(std::string_view command);

// "usage: ..." as an error message for a command given the wrong arguments.
std::string UsageError(std::string_view command);

// `floe --version`: the version and the commit the binary was built from.
std::string VersionLine();

}  // namespace floe::cli
