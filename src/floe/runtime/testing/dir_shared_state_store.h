#pragma once

// A SharedStateStore over a local directory for tests and benchmarks (the runtime's own one sits
// on the checkpoint storage). Counts what it uploads.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "floe/runtime/state.h"

namespace floe::runtime::testing {

class DirSharedStateStore final : public SharedStateStore {
 public:
  explicit DirSharedStateStore(std::string dir) : dir_(std::move(dir)) {}

  Result<SharedStateFile> Upload(const std::string& local_path, const std::string& name) override {
    const std::filesystem::path target = std::filesystem::path(dir_) / name;
    if (std::filesystem::exists(target)) return Status::AlreadyExists(name);
    std::error_code ec;
    std::filesystem::copy_file(local_path, target, ec);
    if (ec) return Status::IOError("upload of " + local_path + ": " + ec.message());
    std::string content = ReadAll(target);
    uploaded_bytes += content.size();
    ++uploads;
    return SharedStateFile{name, content.size(), Crc32(content)};
  }

  Status Download(const SharedStateFile& file, const std::string& local_path) const override {
    const std::filesystem::path source = std::filesystem::path(dir_) / file.name;
    if (!std::filesystem::exists(source)) {
      return Status::NotFound("shared/" + file.name + " does not exist");
    }
    std::error_code ec;
    std::filesystem::copy_file(source, local_path, ec);
    if (ec) return Status::IOError("download of " + file.name + ": " + ec.message());
    std::string content = ReadAll(source);
    if (content.size() != file.size || Crc32(content) != file.crc32) {
      return Status::Corruption("shared/" + file.name + ": size or crc differs");
    }
    return Status::OK();
  }

  const std::string& dir() const { return dir_; }

  std::atomic<uint64_t> uploaded_bytes{0};
  std::atomic<int> uploads{0};

 private:
  static std::string ReadAll(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string dir_;
};

}  // namespace floe::runtime::testing
