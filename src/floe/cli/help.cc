// Every top-level command's usage in one place, so `floe --help`, `floe help COMMAND` and the
// errors of a misused command say the same thing.
#include "floe/cli/help.h"

#include <array>
#include <utility>

#include "floe/cli/build_info.h"

namespace floe::cli {
namespace {

constexpr const char* kOverview =
    "floe: land event streams in Apache Iceberg tables exactly once\n"
    "usage: floe COMMAND ...        (floe help COMMAND, or COMMAND --help, for its options)\n"
    "jobs:\n"
    "  demo                          the main job on embedded defaults\n"
    "  run JOB.sql                   run a job: coordinator + worker, restarts on failure\n"
    "  list                          jobs, last checkpoint, table freshness\n"
    "  status JOB_ID                 the web UI's overview as text\n"
    "  savepoint JOB_ID [DIR]        take a savepoint; prints its path\n"
    "  stop JOB_ID --savepoint [DIR] savepoint, then stop\n"
    "  cancel JOB_ID                 stop without a savepoint\n"
    "tables (floe table help):\n"
    "  table create|append|upsert|delete|scan|describe NS.TABLE ...\n"
    "  table snapshots|history|files|partitions NS.TABLE     Iceberg's metadata tables\n"
    "  table verify NS.TABLE ...     duplicates, missing runs, differences\n"
    "  table set-properties|expire-snapshots|compact|rewrite-manifests|remove-orphan-files\n"
    "        NS.TABLE ...\n"
    "catalogs (floe catalog help):\n"
    "  catalog serve                 an Iceberg REST catalog over a JDBC or filesystem catalog\n"
    "kafka (floe kafka help):\n"
    "  kafka dev                     librdkafka's mock cluster as a process, faults on stdin\n"
    "  kafka produce|consume|offsets JSON lines in and out of a topic; a group's offsets\n"
    "other:\n"
    "  roster expected --seed S      the expected table of the demo's roster feed\n"
    "  help [COMMAND]                this overview, or one command's usage\n"
    "  --version                     version, the commit floe was built from, its allocator\n";

constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kUsages = {{
    {"demo",
     "floe demo [--warehouse DIR] [--events N] [--seed S] [--rows-per-second R] [--no-kill]\n"
     "  streams the roster feed into an append and an upsert table in DIR (default ./warehouse),\n"
     "  SIGKILLs the worker mid-feed unless --no-kill, then verifies both tables\n"},
    {"run",
     "floe run JOB.sql [--var NAME=VALUE]... [--set key=value]... [--from latest|PATH]\n"
     "         [--on-stale-restore fail|skip-to-table|replay] [--job-id ID]\n"
     "  --var: ${NAME} in the job file; --set: a SET statement; --from: restore the latest\n"
     "  checkpoint of the job's checkpoint directory, or a checkpoint or savepoint directory\n"},
    {"list", "floe list [--all] [--json]\n  running jobs (--all: also finished ones)\n"},
    {"status", "floe status JOB_ID [--json]\n"},
    {"savepoint", "floe savepoint JOB_ID [DIR] [--timeout SECONDS]\n"},
    {"stop", "floe stop JOB_ID --savepoint [DIR] [--timeout SECONDS]\n"},
    {"cancel", "floe cancel JOB_ID [--timeout SECONDS]\n"},
    {"roster", "floe roster expected --seed S [--events N] [--providers P] [--sources K]\n"},
}};

}  // namespace

std::string_view Overview() { return kOverview; }

std::string_view UsageOf(std::string_view command) {
  for (const auto& [name, usage] : kUsages) {
    if (name == command) return usage;
  }
  return {};
}

std::string UsageError(std::string_view command) {
  std::string_view usage = UsageOf(command);
  while (!usage.empty() && usage.back() == '\n') usage.remove_suffix(1);
  return "usage: " + std::string(usage);
}

std::string VersionLine() {
  return std::string("floe ") + kBuildVersion + " (commit " + kBuildCommit + ")";
}

}  // namespace floe::cli
