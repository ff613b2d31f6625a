#include "floe/io/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include "floe/io/object_store.h"

namespace floe::io {
namespace {

constexpr size_t kBufferSize = 1 << 20;

// Without a FileIO there are no S3 settings to reach an object with.
Status NotALocalPath(const std::string& path) {
  return Status::InvalidArgument("'" + path +
                                 "' is on object storage: it is reached through the FileIO of a "
                                 "catalog, sink or checkpoint storage, not as a local file");
}

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  std::string msg = what + " '" + path + "': " + std::strerror(err);
  if (err == ENOENT) return Status::NotFound(msg);
  if (err == EEXIST) return Status::AlreadyExists(msg);
  return Status::IOError(msg);
}

std::string TempNameFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng(std::random_device{}());
  return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(rng() & 0xffffff);
}

Status WriteTempSynced(const std::string& tmp, std::string_view data) {
  FLOE_ASSIGN_OR_RAISE(auto file, WritableFile::Create(tmp, /*exclusive=*/true));
  Status st = file->Append(data);
  if (st.ok()) st = file->Sync();
  if (st.ok()) st = file->Close();
  if (!st.ok()) ::unlink(tmp.c_str());
  return st;
}

}  // namespace

WritableFile::~WritableFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<WritableFile>> WritableFile::Create(const std::string& path,
                                                           bool exclusive) {
  if (IsS3Uri(path)) return NotALocalPath(path);
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return ErrnoStatus("cannot create", path, errno);
  return std::unique_ptr<WritableFile>(new WritableFile(path, fd));
}

Status WritableFile::Upload() {
  FLOE_RETURN_NOT_OK(store_->Put(path_, buffer_, exclusive_));
  uploaded_ = true;
  exclusive_ = false;  // it exists now: later uploads replace our own object
  return Status::OK();
}

Status WritableFile::Append(std::string_view data) {
  if (object_) {
    if (!open_) return Status::Internal("append to closed file '" + path_ + "'");
    size_ += static_cast<int64_t>(data.size());
    buffer_.append(data);
    uploaded_ = false;
    return Status::OK();
  }
  if (fd_ < 0) return Status::Internal("append to closed file '" + path_ + "'");
  size_ += static_cast<int64_t>(data.size());
  if (buffer_.size() + data.size() > kBufferSize) {
    FLOE_RETURN_NOT_OK(FlushBuffer());
    if (data.size() >= kBufferSize) {
      while (!data.empty()) {
        ssize_t n = ::write(fd_, data.data(), data.size());
        if (n < 0) {
          if (errno == EINTR) continue;
          return ErrnoStatus("cannot write", path_, errno);
        }
        data.remove_prefix(static_cast<size_t>(n));
      }
      return Status::OK();
    }
  }
  buffer_.append(data);
  return Status::OK();
}

Status WritableFile::FlushBuffer() {
  std::string_view rest = buffer_;
  while (!rest.empty()) {
    ssize_t n = ::write(fd_, rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot write", path_, errno);
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
  buffer_.clear();
  return Status::OK();
}

Status WritableFile::Sync() {
  if (object_) return uploaded_ ? Status::OK() : Upload();
  FLOE_RETURN_NOT_OK(FlushBuffer());
  if (::fsync(fd_) != 0) return ErrnoStatus("cannot fsync", path_, errno);
  return Status::OK();
}

Status WritableFile::Close() {
  if (object_) {
    if (!open_) return Status::OK();
    open_ = false;
    Status st = uploaded_ ? Status::OK() : Upload();
    buffer_.clear();
    buffer_.shrink_to_fit();
    return st;
  }
  if (fd_ < 0) return Status::OK();
  Status st = FlushBuffer();
  if (::close(fd_) != 0 && st.ok()) st = ErrnoStatus("cannot close", path_, errno);
  fd_ = -1;
  return st;
}

Result<std::string> ReadFile(const std::string& path) {
  if (IsS3Uri(path)) return NotALocalPath(path);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", path, errno);
  std::string out;
  struct stat sb;
  if (::fstat(fd, &sb) == 0 && sb.st_size > 0) out.reserve(static_cast<size_t>(sb.st_size));
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return ErrnoStatus("cannot read", path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Result<std::string> ReadFileRange(const std::string& path, uint64_t offset, uint64_t length) {
  if (IsS3Uri(path)) return NotALocalPath(path);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", path, errno);
  std::string out(length, '\0');
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, out.data() + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return ErrnoStatus("cannot read", path, err);
    }
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  if (done < length) {
    return Status::Corruption("file '" + path + "' is truncated: wanted " + std::to_string(length) +
                              " bytes at offset " + std::to_string(offset) + ", got " +
                              std::to_string(done));
  }
  return out;
}

Result<uint64_t> FileSize(const std::string& path) {
  if (IsS3Uri(path)) return NotALocalPath(path);
  struct stat sb;
  if (::stat(path.c_str(), &sb) != 0) return ErrnoStatus("cannot stat", path, errno);
  return static_cast<uint64_t>(sb.st_size);
}

Result<FileStamp> StampOf(const std::string& path) {
  struct stat sb;
  if (::stat(path.c_str(), &sb) != 0) return ErrnoStatus("cannot stat", path, errno);
  return FileStamp{static_cast<uint64_t>(sb.st_dev), static_cast<uint64_t>(sb.st_ino),
                   static_cast<uint64_t>(sb.st_size),
                   static_cast<int64_t>(sb.st_mtim.tv_sec) * 1000000000 + sb.st_mtim.tv_nsec};
}

Status WriteFileExclusive(const std::string& path, std::string_view data) {
  if (IsS3Uri(path)) return NotALocalPath(path);
  std::string tmp = TempNameFor(path);
  FLOE_RETURN_NOT_OK(WriteTempSynced(tmp, data));
  int rc = ::link(tmp.c_str(), path.c_str());
  int err = errno;
  ::unlink(tmp.c_str());
  if (rc != 0) return ErrnoStatus("cannot create", path, err);
  return SyncDir(DirName(path));
}

Status WriteFileReplace(const std::string& path, std::string_view data) {
  if (IsS3Uri(path)) return NotALocalPath(path);
  std::string tmp = TempNameFor(path);
  FLOE_RETURN_NOT_OK(WriteTempSynced(tmp, data));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus("cannot rename onto", path, err);
  }
  return SyncDir(DirName(path));
}

bool Exists(const std::string& path) {
  if (IsS3Uri(path)) return false;
  struct stat sb;
  return ::stat(path.c_str(), &sb) == 0;
}

Status CreateDirs(const std::string& path) {
  if (IsS3Uri(path)) return NotALocalPath(path);
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Status::IOError("cannot create directory '" + path + "': " + ec.message());
  return Status::OK();
}

Status RemoveFile(const std::string& path) {
  if (IsS3Uri(path)) return NotALocalPath(path);
  if (::unlink(path.c_str()) != 0) return ErrnoStatus("cannot remove", path, errno);
  return Status::OK();
}

Status RemoveTree(const std::string& path) {
  if (IsS3Uri(path)) return NotALocalPath(path);
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return Status::IOError("cannot remove " + path + ": " + ec.message());
  return Status::OK();
}

Status SyncDir(const std::string& path) {
  if (IsS3Uri(path)) return NotALocalPath(path);
  int fd = ::open(path.empty() ? "." : path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open directory", path, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus("cannot fsync directory", path, err);
  return Status::OK();
}

Result<std::vector<std::string>> ListDir(const std::string& dir) {
  if (IsS3Uri(dir)) return NotALocalPath(dir);
  std::error_code ec;
  std::vector<std::string> names;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) {
      return Status::NotFound("no directory '" + dir + "'");
    }
    return Status::IOError("cannot list '" + dir + "': " + ec.message());
  }
  for (const auto& e : it) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::vector<FileEntry>> ListFilesRecursive(const std::string& dir) {
  std::vector<FileEntry> out;
  if (IsS3Uri(dir)) return NotALocalPath(dir);
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return out;
    return Status::IOError("cannot list '" + dir + "': " + ec.message());
  }
  for (; it != end; it.increment(ec)) {
    if (ec) return Status::IOError("cannot list '" + dir + "': " + ec.message());
    if (!it->is_regular_file(ec)) continue;
    FileEntry e;
    e.path = AbsolutePath(it->path().string());
    e.size = static_cast<int64_t>(it->file_size(ec));
    auto mtime = fs::last_write_time(it->path(), ec);
    if (ec == std::errc::no_such_file_or_directory) {
      ec.clear();  // removed or renamed (a temp file) since it was listed: not there
      continue;
    }
    if (ec)
      return Status::IOError("reading the modification time of " + e.path + ": " + ec.message());
    e.mtime_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::file_clock::to_sys(mtime).time_since_epoch())
                     .count();
    out.push_back(std::move(e));
  }
  if (ec) return Status::IOError("cannot list '" + dir + "': " + ec.message());
  std::sort(out.begin(), out.end(),
            [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
  return out;
}

std::string AbsolutePath(const std::string& path) {
  if (IsS3Uri(path)) return path;
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::current_path() / p;
  std::string s = p.lexically_normal().string();
  if (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string JoinPath(std::string_view a, std::string_view b) {
  std::string out(a);
  if (!out.empty() && out.back() != '/') out.push_back('/');
  out.append(b);
  return out;
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace floe::io
