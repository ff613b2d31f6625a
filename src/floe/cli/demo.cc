// `floe demo`: floe's main job on embedded defaults. The reference study's roster feed (12,000
// events about 2,000 providers) streams through `floe run` into an append table and an upsert
// table in ./warehouse; the worker is SIGKILLed mid-feed; the coordinator restarts it from the
// latest checkpoint; the job finishes; then both tables are verified: every seq exactly once,
// and one row per provider equal to `floe roster expected`.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "floe/cli/args.h"
#include "floe/cli/commands.h"
#include "floe/connectors/roster/roster_generator.h"
#include "floe/iceberg/catalog.h"
#include "floe/io/file.h"
#include "floe/io/location.h"
#include "floe/runtime/process/job_record.h"
#include "floe/verify/table_verify.h"

namespace floe::cli {
namespace {

constexpr const char* kRosterColumns =
    "seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL,\n"
    "  event_time TIMESTAMP(3) NOT NULL, first_name STRING, last_name STRING, specialty STRING,\n"
    "  state STRING, city STRING, zip STRING, phone STRING, active BOOLEAN";

std::string JobFileText(const connectors::RosterOptions& roster, int64_t rows_per_second,
                        const std::string& warehouse, const std::string& checkpoints) {
  std::string cols = kRosterColumns;
  std::string roster_with = "'connector' = 'roster', 'seed' = '" + std::to_string(roster.seed) +
                            "', 'events' = '" + std::to_string(roster.events) +
                            "', 'rows-per-second' = '" + std::to_string(rows_per_second) + "'";
  auto iceberg = [&](const std::string& table, bool upsert) {
    return "'connector' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = '" + warehouse +
           "', 'catalog-database' = 'demo', 'catalog-table' = '" + table +
           "', 'write.upsert.enabled' = '" + (upsert ? "true" : "false") + "'";
  };
  return "-- floe demo: the roster feed into an append table and an upsert table.\n"
         "SET 'execution.checkpointing.interval' = '500 ms';\n"
         "SET 'execution.checkpointing.dir' = '" +
         checkpoints +
         "';\n"
         "SET 'restart-strategy.type' = 'fixed-delay';\n"
         "SET 'restart-strategy.fixed-delay.attempts' = '3';\n"
         "SET 'restart-strategy.fixed-delay.delay' = '500 ms';\n\n"
         "CREATE TABLE roster (\n  " +
         cols + "\n) WITH (" + roster_with +
         ");\n\n"
         "CREATE TABLE roster_append (\n  " +
         cols + "\n) WITH (" + iceberg("roster_append", false) +
         ");\n\n"
         "CREATE TABLE roster_upsert (\n  " +
         cols + ",\n  PRIMARY KEY (npi) NOT ENFORCED\n) WITH (" + iceberg("roster_upsert", true) +
         ");\n\n"
         "INSERT INTO roster_append SELECT * FROM roster;\n"
         "INSERT INTO roster_upsert SELECT * FROM roster;\n";
}

// Starts `floe run JOB --job-id ID` as a child sharing our terminal; returns its pid.
Result<pid_t> StartJob(const std::string& job_file, const std::string& job_id) {
  pid_t pid = ::fork();
  if (pid < 0) return Status::IOError("cannot fork `floe run`");
  if (pid == 0) {
    ::execl("/proc/self/exe", "floe", "run", job_file.c_str(), "--job-id", job_id.c_str(),
            static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  return pid;
}

}  // namespace

Status RunDemo(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args,
      Args::Parse(argv, {{"warehouse", "events", "seed", "rows-per-second"}, {"no-kill"}}));
  connectors::RosterOptions roster;
  FLOE_ASSIGN_OR_RAISE(auto events, args.GetInt("events"));
  FLOE_ASSIGN_OR_RAISE(auto seed, args.GetInt("seed"));
  FLOE_ASSIGN_OR_RAISE(auto rate, args.GetInt("rows-per-second"));
  if (events) roster.events = *events;
  if (seed) roster.seed = static_cast<uint64_t>(*seed);
  int64_t rows_per_second = rate ? *rate : 3000;
  FLOE_ASSIGN_OR_RAISE(std::string warehouse,
                       io::ResolveLocation(args.GetOr("warehouse", "warehouse"), "--warehouse"));
  std::string demo_dir = io::JoinPath(warehouse, "_floe_demo");
  std::string checkpoints = io::JoinPath(demo_dir, "checkpoints");

  // The demo owns these paths: start from empty tables so the verification means something.
  std::error_code ec;
  std::filesystem::remove_all(io::JoinPath(warehouse, "demo/roster_append"), ec);
  std::filesystem::remove_all(io::JoinPath(warehouse, "demo/roster_upsert"), ec);
  std::filesystem::remove_all(demo_dir, ec);
  FLOE_RETURN_NOT_OK(io::CreateDirs(checkpoints));
  std::string job_file = io::JoinPath(demo_dir, "roster.sql");
  FLOE_RETURN_NOT_OK(
      io::WriteFileReplace(job_file, JobFileText(roster, rows_per_second, warehouse, checkpoints)));

  std::printf(
      "[1/3] floe run %s\n      roster feed: %lld events about %lld providers (seed %llu) at %lld "
      "rows/s -> demo.roster_append (append) and demo.roster_upsert (upsert on npi) in %s, "
      "checkpoints every 500 ms\n",
      job_file.c_str(), static_cast<long long>(roster.events),
      static_cast<long long>(roster.providers), static_cast<unsigned long long>(roster.seed),
      static_cast<long long>(rows_per_second), warehouse.c_str());
  std::fflush(stdout);
  std::string job_id = process::RandomHex32();
  FLOE_ASSIGN_OR_RAISE(pid_t coordinator, StartJob(job_file, job_id));

  if (!args.Has("no-kill")) {
    // Kill the worker once two checkpoints completed: mid-feed, with commits behind it.
    std::string job_dir = io::JoinPath(process::JobsRoot(), job_id);
    for (int waited = 0; waited < 600; ++waited) {
      auto rec = process::ReadJobRecord(job_dir);
      if (rec.ok() && rec->state == "RUNNING" && rec->worker_pid > 0 && rec->last_checkpoint >= 2) {
        std::printf("[2/3] SIGKILL worker %d after checkpoint %llu (mid-feed)\n", rec->worker_pid,
                    static_cast<unsigned long long>(rec->last_checkpoint));
        std::fflush(stdout);
        ::kill(rec->worker_pid, SIGKILL);
        break;
      }
      if (rec.ok() && process::IsTerminalState(rec->state)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  int wstatus = 0;
  if (::waitpid(coordinator, &wstatus, 0) < 0 || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Status::Internal("the demo job failed (see the floe run lines above)");
  }

  std::printf("[3/3] verifying both tables\n");
  FLOE_ASSIGN_OR_RAISE(auto catalog, iceberg::FileSystemCatalog::Make(warehouse));
  verify::VerifyOptions append_checks;
  append_checks.unique_column = "seq";
  append_checks.expect_range = verify::VerifyOptions::Range{"seq", 1, roster.events};
  FLOE_ASSIGN_OR_RAISE(auto append_report,
                       verify::VerifyTable(*catalog, {"demo", "roster_append"}, append_checks));
  std::printf("%s\n", append_report.ToText().c_str());

  std::string expected = io::JoinPath(demo_dir, "roster_expected.jsonl");
  FLOE_RETURN_NOT_OK(io::WriteFileReplace(expected, verify::RosterExpectedJsonLines(roster)));
  verify::VerifyOptions upsert_checks;
  upsert_checks.unique_column = "npi";
  upsert_checks.expected_file = expected;
  upsert_checks.key_column = "npi";
  FLOE_ASSIGN_OR_RAISE(auto upsert_report,
                       verify::VerifyTable(*catalog, {"demo", "roster_upsert"}, upsert_checks));
  std::printf("%s\n", upsert_report.ToText().c_str());

  int64_t findings = append_report.findings() + upsert_report.findings();
  if (findings > 0) return Status::Internal(std::to_string(findings) + " finding(s)");
  std::printf(
      "every seq exactly once in demo.roster_append; demo.roster_upsert equals `floe roster "
      "expected --seed %llu --events %lld`\ninspect: floe table describe demo.roster_upsert\n",
      static_cast<unsigned long long>(roster.seed), static_cast<long long>(roster.events));
  return Status::OK();
}

}  // namespace floe::cli
