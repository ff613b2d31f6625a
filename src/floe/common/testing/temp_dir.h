#pragma once

// Test-only: a fresh directory under the system temp dir, removed with everything in it when
// the object goes away. Header-only so any test binary can use it without a library.

#include <filesystem>
#include <random>
#include <string>
#include <system_error>

namespace floe::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "floe-test-") {
    std::random_device rd;
    path_ = (std::filesystem::temp_directory_path() /
             (prefix + std::to_string(rd()) + std::to_string(rd())))
                .string();
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace floe::testing
