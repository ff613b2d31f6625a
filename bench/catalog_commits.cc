// Commit latency per catalog: `processes` committers each make `commits` Iceberg commits (one
// snapshot adding one data file, as a sink's checkpoint does) to one table through the catalog
// named by the arguments, timing each CommitSnapshot (load, manifests, metadata file, swap,
// conflict retries). Prints one JSON object: the latencies' distribution, commits per second,
// conflicts retried. Driven by bench/catalog_commits.sh; not a test.
//
//   catalog_commit_bench WAREHOUSE COMMITS PROCESSES [URI [CATALOG_NAME [USER]]]
//   (no URI: the filesystem catalog; an http:// URI: a REST catalog, whose server decides where
//   the table goes; the PostgreSQL password from PGPASSWORD; an s3:// WAREHOUSE uses the AWS
//   environment's settings, and the per-commit S3 requests and bytes are reported)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "floe/catalog/catalog_config.h"
#include "floe/iceberg/snapshot_update.h"
#include "floe/io/file.h"
#include "floe/io/file_io.h"

namespace {

using floe::Result;
using floe::Status;

Result<std::unique_ptr<floe::iceberg::Catalog>> Open(int argc, char** argv) {
  std::map<std::string, std::string> options = {{"warehouse", argv[1]}};
  const bool rest = argc > 4 && std::string(argv[4]).rfind("http", 0) == 0;
  if (argc > 4) {
    options["catalog-type"] = rest ? "rest" : "jdbc";
    options["uri"] = argv[4];
  }
  if (argc > 5 && !rest) options["catalog-name"] = argv[5];
  if (argc > 6) options["jdbc.user"] = argv[6];
  FLOE_ASSIGN_OR_RAISE(floe::catalog::CatalogConfig config,
                       floe::catalog::ParseCatalogOptions(options));
  return floe::catalog::OpenCatalog(config);
}

// Writes "<latency micros> <attempts> <S3 requests> <S3 bytes sent> <S3 bytes received>\n" per
// commit to `out` (the S3 figures are 0 for a local warehouse).
Status Commit(floe::iceberg::Catalog& catalog, int commits, int process, FILE* out) {
  const floe::iceberg::TableIdentifier id{"bench", "commits"};
  for (int i = 0; i < commits; ++i) {
    floe::iceberg::SnapshotChanges changes;
    floe::iceberg::DataFile file;
    file.file_path =
        "file:///bench/data/p" + std::to_string(process) + "-" + std::to_string(i) + ".parquet";
    file.record_count = 1000;
    file.file_size_in_bytes = 40000;
    changes.added_data_files.push_back(file);
    int attempts = 0;
    floe::iceberg::CommitOptions options;
    options.num_retries = 1000;
    options.min_wait = std::chrono::milliseconds(1);
    options.max_wait = std::chrono::milliseconds(50);
    options.validate = [&](const floe::iceberg::TableMetadata&) {
      ++attempts;
      return Status::OK();
    };
    floe::io::S3Counters s3 = catalog.file_io().s3_counters();
    auto start = std::chrono::steady_clock::now();
    FLOE_RETURN_NOT_OK(floe::iceberg::CommitSnapshot(catalog, id, changes, options).status());
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
    floe::io::S3Counters after = catalog.file_io().s3_counters();
    std::fprintf(out, "%lld %d %lld %lld %lld\n", static_cast<long long>(micros), attempts,
                 static_cast<long long>(after.requests - s3.requests),
                 static_cast<long long>(after.bytes_sent - s3.bytes_sent),
                 static_cast<long long>(after.bytes_received - s3.bytes_received));
  }
  return Status::OK();
}

double Percentile(std::vector<long long>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t at = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return static_cast<double>(v[at]) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: catalog_commit_bench WAREHOUSE COMMITS PROCESSES [URI [NAME [USER]]]\n");
    return 2;
  }
  const int commits = std::atoi(argv[2]);
  const int processes = std::atoi(argv[3]);
  {
    Result<std::unique_ptr<floe::iceberg::Catalog>> catalog = Open(argc, argv);
    Status st = catalog.status();
    if (st.ok()) st = floe::iceberg::EnsureNamespace(**catalog, "bench");
    if (st.ok()) {
      floe::iceberg::Schema schema;
      schema.fields = {{"seq", floe::DataType::Int64(), false, 1}};
      // Iceberg's defaults for a streaming table as floe's sink creates it.
      st = (*catalog)
               ->CreateTable({"bench", "commits"}, schema, floe::iceberg::PartitionSpec{},
                             {{"write.metadata.delete-after-commit.enabled", "true"},
                              {"write.metadata.previous-versions-max", "20"}})
               .status();
    }
    if (!st.ok()) {
      std::fprintf(stderr, "catalog_commit_bench: %s\n", st.ToString().c_str());
      return 1;
    }
  }
  // The latencies go next to a local warehouse, or to the working directory for s3://.
  std::string log = floe::io::IsS3Uri(argv[1]) ? std::string("latencies.txt")
                                               : floe::io::JoinPath(argv[1], "latencies.txt");
  std::remove(log.c_str());
  FILE* out = std::fopen(log.c_str(), "a");  // O_APPEND: the committers' lines never overlap
  if (out == nullptr) return 1;
  std::setvbuf(out, nullptr, _IOLBF, 0);
  auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    pid_t pid = ::fork();
    if (pid == 0) {
      Result<std::unique_ptr<floe::iceberg::Catalog>> catalog = Open(argc, argv);
      Status st = catalog.ok() ? Commit(**catalog, commits, p, out) : catalog.status();
      if (!st.ok()) std::fprintf(stderr, "committer %d: %s\n", p, st.ToString().c_str());
      std::fflush(out);
      ::_exit(st.ok() ? 0 : 1);
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fclose(out);
  std::vector<long long> micros;
  long long retried = 0;
  FILE* in = std::fopen(log.c_str(), "r");
  long long m = 0, requests = 0, sent = 0, received = 0;
  long long s3_requests = 0, s3_sent = 0, s3_received = 0;
  int attempts = 0;
  while (in != nullptr && std::fscanf(in, "%lld %d %lld %lld %lld", &m, &attempts, &requests, &sent,
                                      &received) == 5) {
    micros.push_back(m);
    retried += attempts - 1;
    s3_requests += requests;
    s3_sent += sent;
    s3_received += received;
  }
  if (in != nullptr) std::fclose(in);
  Result<std::unique_ptr<floe::iceberg::Catalog>> catalog = Open(argc, argv);
  long long snapshots = -1;
  if (catalog.ok()) {
    auto table = (*catalog)->LoadTable({"bench", "commits"});
    if (table.ok()) snapshots = static_cast<long long>(table->metadata.snapshots.size());
  }
  size_t n = micros.size();
  double mean = 0;
  for (long long v : micros) mean += static_cast<double>(v) / 1000.0;
  if (n > 0) mean /= static_cast<double>(n);
  std::printf(
      "{\"commits\": %zu, \"failed_processes\": %d, \"snapshots\": %lld, \"seconds\": %.3f, "
      "\"commits_per_second\": %.1f, \"conflicts_retried\": %lld, \"latency_ms\": {\"mean\": "
      "%.3f, \"p50\": %.3f, \"p90\": %.3f, \"p99\": %.3f, \"max\": %.3f}, \"s3_per_commit\": "
      "{\"requests\": %.2f, \"bytes_sent\": %.0f, \"bytes_received\": %.0f}}\n",
      n, failed, snapshots, seconds, static_cast<double>(n) / seconds, retried, mean,
      Percentile(micros, 0.5), Percentile(micros, 0.9), Percentile(micros, 0.99),
      Percentile(micros, 1.0), n ? static_cast<double>(s3_requests) / static_cast<double>(n) : 0,
      n ? static_cast<double>(s3_sent) / static_cast<double>(n) : 0,
      n ? static_cast<double>(s3_received) / static_cast<double>(n) : 0);
  return failed == 0 && static_cast<int>(n) == commits * processes ? 0 : 1;
}
