// The floe binary: one executable, subcommands.
#include <cstdio>
#include <string>
#include <vector>

#include "floe/cli/commands.h"
#include "floe/cli/kafka_command.h"
#include "floe/cli/supervisor.h"
#include "floe/sql/planner.h"

namespace {

constexpr const char* kUsage =
    "floe: land event streams in Apache Iceberg tables exactly once\n"
    "usage:\n"
    "  floe demo [--warehouse DIR] [--events N] [--seed S]   the main job on embedded defaults\n"
    "  floe table <create|append|upsert|delete|scan|describe|verify> ...   (floe table help)\n"
    "  floe catalog serve [--catalog URI] --warehouse DIR [--listen HOST:PORT]   a REST catalog\n"
    "  floe roster expected --seed S [--events N] [--providers P] [--sources K]\n"
    "  floe run JOB.sql [--var NAME=VALUE]... [--set key=value]... [--from latest|PATH]\n"
    "           [--on-stale-restore fail|skip-to-table|replay] [--job-id ID]\n"
    "  floe list [--all] [--json]                    jobs, last checkpoint, table freshness\n"
    "  floe status JOB_ID [--json]                   the web UI's overview as text\n"
    "  floe savepoint JOB_ID [DIR]                   prints the savepoint's path\n"
    "  floe stop JOB_ID --savepoint [DIR]            savepoint, then stop; prints its path\n"
    "  floe cancel JOB_ID\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  std::string command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  floe::Status st;
  if (command == "table") {
    st = floe::cli::RunTableCommand(rest);
  } else if (command == "catalog") {
    st = floe::cli::RunCatalogCommand(rest);
  } else if (command == "roster") {
    st = floe::cli::RunRosterCommand(rest);
  } else if (command == "kafka") {
    st = floe::cli::RunKafkaCommand(rest);
  } else if (command == "demo") {
    st = floe::cli::RunDemo(rest);
  } else if (floe::cli::IsProcessCommand(command)) {
    st = floe::cli::RunProcessCommand(command, rest, floe::sql::PlanJob);
  } else {
    std::fputs(kUsage, stderr);
    st = floe::Status::InvalidArgument("unknown command '" + command + "'");
  }
  if (!st.ok()) {
    std::fprintf(stderr, "floe %s: %s\n", command.c_str(), st.ToString().c_str());
    return 1;
  }
  return 0;
}
