#pragma once

#include <string>
#include <vector>

#include "floe/common/status.h"

namespace floe::cli {

// `floe table <verb> ...`: create, append, upsert, delete, scan, describe. Writes results to
// stdout; returns a Status the caller prints.
Status RunTableCommand(const std::vector<std::string>& args);

// `floe catalog serve ...`: an Iceberg REST catalog over floe's JDBC catalog.
Status RunCatalogCommand(const std::vector<std::string>& args);
// `floe roster expected ...`: the expected upsert table of the roster feed.
Status RunRosterCommand(const std::vector<std::string>& args);

// `floe demo`: the main job on embedded defaults (see README).
Status RunDemo(const std::vector<std::string>& args);

}  // namespace floe::cli
