#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/io/file.h"
#include "floe/io/object_store.h"
#include "floe/io/s3_client.h"

namespace floe::io {

// FileIO reads and writes the files of whoever holds it (a catalog and its tables, a sink, a
// checkpoint storage): local paths as file.h does, and s3:// objects with the S3 settings it was
// made with. Two FileIOs never share settings, so two catalogs on two stores (or a REST catalog
// with the settings its server vends) each reach their own. There is no process-wide default.
//
// A cheap handle: copies share the settings, a pool of S3 clients (S3Client is not thread-safe)
// and the request counters. Thread-safe.
class FileIO {
 public:
  // Local files only: an s3:// path is InvalidArgument naming the settings that are missing.
  FileIO() = default;
  // Local files, and s3:// objects with `s3`. Credentials are checked when an object is first
  // reached, so a job that never touches s3:// needs none.
  explicit FileIO(S3Config s3);
  // The settings `options` sets under `names` (object_store.h) over the AWS environment's; the
  // environment's alone when none of `names` is set. InvalidArgument as S3ConfigFromOptions.
  static Result<FileIO> FromOptions(const std::map<std::string, std::string>& options,
                                    const S3OptionNames& names);

  // The same operations as file.h's, on local paths or s3:// URIs (directories are prefixes
  // there: CreateDirs and SyncDir do nothing, ListDir lists the names below).
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                        bool exclusive) const;
  Result<std::string> ReadFile(const std::string& path) const;
  Result<std::string> ReadFileRange(const std::string& path, uint64_t offset,
                                    uint64_t length) const;
  Result<uint64_t> FileSize(const std::string& path) const;
  // On S3 a conditional create (If-None-Match: *): AlreadyExists when the key exists on a store
  // that honours it (AWS S3, MinIO); a store that ignores it overwrites.
  Status WriteFileExclusive(const std::string& path, std::string_view data) const;
  Status WriteFileReplace(const std::string& path, std::string_view data) const;
  bool Exists(const std::string& path) const;
  Status CreateDirs(const std::string& path) const;
  Status RemoveFile(const std::string& path) const;
  Status RemoveTree(const std::string& path) const;
  Status SyncDir(const std::string& path) const;
  Result<std::vector<FileEntry>> ListFilesRecursive(const std::string& dir) const;
  Result<std::vector<std::string>> ListDir(const std::string& dir) const;

  // The S3 settings, if it has any (for tests and messages; never print the secrets).
  std::optional<S3Config> s3_config() const;
  // Requests and bytes of every S3 call made through this FileIO and its copies.
  S3Counters s3_counters() const;

 private:
  Result<internal::ObjectStore*> StoreFor(const std::string& uri) const;

  std::shared_ptr<internal::ObjectStore> store_;  // null: local files only
};

}  // namespace floe::io
