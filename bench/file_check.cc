// What the Iceberg committer's pre-commit check costs (one size request per staged file, a HEAD
// on S3): writes `files` small objects under PREFIX, then asks each one's size `rounds` times
// through an io::FileIO, timing every request. Prints one JSON object: requests, mean, p50 and
// p99 milliseconds per file. Not a test.
//
//   file_check_bench PREFIX FILES ROUNDS
//   (PREFIX: a local directory or s3://bucket/prefix; S3 settings from the AWS environment)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "floe/io/file.h"
#include "floe/io/file_io.h"
#include "floe/io/object_store.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: file_check_bench PREFIX FILES ROUNDS\n");
    return 2;
  }
  const std::string prefix = argv[1];
  const int files = std::atoi(argv[2]);
  const int rounds = std::atoi(argv[3]);
  const floe::io::FileIO file_io(floe::io::S3ConfigFromEnvironment());
  std::vector<std::string> paths;
  for (int i = 0; i < files; ++i) {
    paths.push_back(floe::io::JoinPath(prefix, "f-" + std::to_string(i) + ".parquet"));
    floe::Status st = file_io.WriteFileReplace(paths.back(), std::string(1024, 'x'));
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
  }
  std::vector<double> ms;
  for (int r = 0; r < rounds; ++r) {
    for (const std::string& p : paths) {
      const auto start = std::chrono::steady_clock::now();
      floe::Result<uint64_t> size = file_io.FileSize(p);
      const auto end = std::chrono::steady_clock::now();
      if (!size.ok() || *size != 1024) {
        std::fprintf(stderr, "%s: wrong size\n", p.c_str());
        return 1;
      }
      ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
  }
  std::sort(ms.begin(), ms.end());
  double total = 0;
  for (double m : ms) total += m;
  std::printf(
      "{\"prefix\":\"%s\",\"requests\":%zu,\"mean_ms\":%.3f,\"p50_ms\":%.3f,\"p99_ms\":%.3f}\n",
      prefix.c_str(), ms.size(), total / ms.size(), ms[ms.size() / 2], ms[ms.size() * 99 / 100]);
  for (const std::string& p : paths) (void)file_io.RemoveFile(p);
  return 0;
}
