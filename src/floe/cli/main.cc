// The floe binary: one executable, subcommands.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "floe/cli/commands.h"
#include "floe/cli/help.h"
#include "floe/cli/kafka_command.h"
#include "floe/cli/supervisor.h"
#include "floe/sql/planner.h"

namespace {

// jemalloc's control call: defined when the binary links jemalloc (every build but the
// sanitizers'), so `floe --version` can say which allocator runs.
extern "C" int mallctl(const char* name, void* old, size_t* old_len, void* value, size_t len)
    __attribute__((weak));

std::string AllocatorLine() {
  const char* version = nullptr;
  size_t len = sizeof(version);
  if (mallctl == nullptr || mallctl("version", &version, &len, nullptr, 0) != 0 ||
      version == nullptr) {
    return "allocator: glibc malloc";
  }
  std::string v = version;
  return "allocator: jemalloc " + v.substr(0, v.find('-'));
}

bool IsHelpFlag(const std::string& a) { return a == "--help" || a == "-h"; }

// `floe help COMMAND` and `floe COMMAND ... --help`: the command's usage on stdout.
floe::Status PrintHelp(const std::string& command) {
  const std::vector<std::string> help = {"help"};
  if (command == "table") return floe::cli::RunTableCommand(help);
  if (command == "catalog") return floe::cli::RunCatalogCommand(help);
  if (command == "kafka") return floe::cli::RunKafkaCommand(help);
  std::string_view usage = floe::cli::UsageOf(command);
  if (usage.empty()) {
    std::fputs(floe::cli::Overview().data(), stderr);
    return floe::Status::InvalidArgument("no command '" + command + "'");
  }
  std::printf("usage: %.*s", static_cast<int>(usage.size()), usage.data());
  return floe::Status::OK();
}

floe::Status Dispatch(const std::string& command, const std::vector<std::string>& rest) {
  if (command == "help") {
    if (rest.empty()) {
      std::fputs(floe::cli::Overview().data(), stdout);
      return floe::Status::OK();
    }
    return PrintHelp(rest[0]);
  }
  if (std::any_of(rest.begin(), rest.end(), IsHelpFlag)) return PrintHelp(command);
  if (command == "table") return floe::cli::RunTableCommand(rest);
  if (command == "catalog") return floe::cli::RunCatalogCommand(rest);
  if (command == "roster") return floe::cli::RunRosterCommand(rest);
  if (command == "kafka") return floe::cli::RunKafkaCommand(rest);
  if (command == "demo") return floe::cli::RunDemo(rest);
  if (floe::cli::IsProcessCommand(command)) {
    return floe::cli::RunProcessCommand(command, rest, floe::sql::PlanJob);
  }
  std::fputs(floe::cli::Overview().data(), stderr);
  return floe::Status::InvalidArgument("unknown command '" + command + "'");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(floe::cli::Overview().data(), stderr);
    return 2;
  }
  if (IsHelpFlag(args[0])) args[0] = "help";
  if (args[0] == "--version" || args[0] == "version") {
    std::printf("%s\n%s\n", floe::cli::VersionLine().c_str(), AllocatorLine().c_str());
    return 0;
  }
  std::string command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  floe::Status st = Dispatch(command, rest);
  if (!st.ok()) {
    std::fprintf(stderr, "floe %s: %s\n", command.c_str(), st.ToString().c_str());
    return 1;
  }
  return 0;
}
