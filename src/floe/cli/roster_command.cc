// `floe roster expected`: the answer an upsert table of the roster feed must hold.
#include <cstdio>

#include "floe/cli/args.h"
#include "floe/cli/commands.h"
#include "floe/cli/help.h"
#include "floe/verify/table_verify.h"

namespace floe::cli {

Status RunRosterCommand(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] != "expected") {
    return Status::InvalidArgument(UsageError("roster"));
  }
  std::vector<std::string> rest(argv.begin() + 1, argv.end());
  FLOE_ASSIGN_OR_RAISE(Args args,
                       Args::Parse(rest, {{"seed", "events", "providers", "sources"}, {}}));
  connectors::RosterOptions options;
  FLOE_ASSIGN_OR_RAISE(auto seed, args.GetInt("seed"));
  FLOE_ASSIGN_OR_RAISE(auto events, args.GetInt("events"));
  FLOE_ASSIGN_OR_RAISE(auto providers, args.GetInt("providers"));
  FLOE_ASSIGN_OR_RAISE(auto sources, args.GetInt("sources"));
  if (seed) options.seed = static_cast<uint64_t>(*seed);
  if (events) options.events = *events;
  if (providers) options.providers = *providers;
  if (sources) options.sources = *sources;
  if (options.providers <= 0 || options.sources <= 0) {
    return Status::InvalidArgument("--providers and --sources must be at least 1");
  }
  std::string out = verify::RosterExpectedJsonLines(options);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return Status::OK();
}

}  // namespace floe::cli
