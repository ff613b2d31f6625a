#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe::io {

namespace internal {
class ObjectStore;
}  // namespace internal

// Local files. The functions here refuse s3:// URIs (InvalidArgument; Exists is false): objects
// are reached through a FileIO (file_io.h), which holds the settings of the store they are on.

// WritableFile appends to a new local file through a user-space buffer.
// Lifecycle: Create -> Append* -> [Sync] -> Close. Not thread-safe. The destructor closes the
// descriptor without syncing (an abandoned file is left for the caller to remove).
// An s3:// file (FileIO::NewWritableFile) is kept in memory and uploaded whole (in parts when
// large) by Sync and by a Close after appends; an abandoned one is never uploaded.
class WritableFile {
 public:
  ~WritableFile();
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;

  // Creates `path`. With `exclusive`, fails with AlreadyExists if it exists; otherwise truncates.
  static Result<std::unique_ptr<WritableFile>> Create(const std::string& path, bool exclusive);

  Status Append(std::string_view data);
  // Flushes the buffer and fsyncs the file (data is durable once this returns OK).
  Status Sync();
  Status Close();
  // Bytes appended so far (including buffered ones).
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  friend class FileIO;
  WritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status FlushBuffer();
  Status Upload();

  std::string path_;
  int fd_ = -1;
  // s3:// only: the whole object is in buffer_; `uploaded_` once it is stored as it is now.
  std::shared_ptr<internal::ObjectStore> store_;
  bool object_ = false;
  bool exclusive_ = false;
  bool open_ = true;
  bool uploaded_ = false;
  int64_t size_ = 0;
  std::string buffer_;
};

// Whole-file read. NotFound if the file does not exist.
Result<std::string> ReadFile(const std::string& path);
// Reads `length` bytes at `offset`; Corruption if the file is shorter.
Result<std::string> ReadFileRange(const std::string& path, uint64_t offset, uint64_t length);
Result<uint64_t> FileSize(const std::string& path);
// What tells one version of a file from another without reading it: a file replaced or
// rewritten gets a different stamp.
struct FileStamp {
  uint64_t device = 0, inode = 0, size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
Result<FileStamp> StampOf(const std::string& path);

// Writes `data` to `path` only if `path` does not exist yet, atomically and durably: readers
// see either nothing or the whole file. Of two concurrent writers exactly one succeeds; the
// other gets AlreadyExists. (Temp file + fsync + link(2), which never overwrites.)
Status WriteFileExclusive(const std::string& path, std::string_view data);
// Replaces `path` atomically and durably (temp file + fsync + rename).
Status WriteFileReplace(const std::string& path, std::string_view data);

bool Exists(const std::string& path);
Status CreateDirs(const std::string& path);
Status RemoveFile(const std::string& path);
// Removes `path` and everything under it; OK if it does not exist.
Status RemoveTree(const std::string& path);
Status SyncDir(const std::string& path);
// A regular file found by ListFilesRecursive.
struct FileEntry {
  std::string path;  // absolute path or s3:// URI
  int64_t size = 0;
  int64_t mtime_ms = 0;
};
// Every regular file under `dir`, at any depth, sorted by path. An empty list if `dir` does not
// exist.
Result<std::vector<FileEntry>> ListFilesRecursive(const std::string& dir);
// Names (not paths) of the entries in `dir`, sorted. NotFound if `dir` does not exist.
Result<std::vector<std::string>> ListDir(const std::string& dir);
// Absolute, lexically normalized form of `path` (no symlink resolution).
std::string AbsolutePath(const std::string& path);
std::string JoinPath(std::string_view a, std::string_view b);
std::string DirName(const std::string& path);

}  // namespace floe::io
