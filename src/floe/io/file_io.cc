#include "floe/io/file_io.h"

namespace floe::io {

FileIO::FileIO(S3Config s3) : store_(std::make_shared<internal::ObjectStore>(std::move(s3))) {}

Result<FileIO> FileIO::FromOptions(const std::map<std::string, std::string>& options,
                                   const S3OptionNames& names) {
  if (!HasS3Options(options, names)) return FileIO(S3ConfigFromEnvironment());
  FLOE_ASSIGN_OR_RAISE(S3Config s3, S3ConfigFromOptions(options, names));
  return FileIO(std::move(s3));
}

Result<internal::ObjectStore*> FileIO::StoreFor(const std::string& uri) const {
  if (!store_) {
    return Status::InvalidArgument(
        "'" + uri + "' is on object storage, and there are no S3 settings here to reach it with");
  }
  return store_.get();
}

Result<std::unique_ptr<WritableFile>> FileIO::NewWritableFile(const std::string& path,
                                                              bool exclusive) const {
  if (!IsS3Uri(path)) return WritableFile::Create(path, exclusive);
  FLOE_RETURN_NOT_OK(ParseS3Uri(path).status());
  FLOE_RETURN_NOT_OK(StoreFor(path).status());
  auto file = std::unique_ptr<WritableFile>(new WritableFile(path, -1));
  file->store_ = store_;
  file->object_ = true;
  file->exclusive_ = exclusive;
  return file;
}

Result<std::string> FileIO::ReadFile(const std::string& path) const {
  if (!IsS3Uri(path)) return io::ReadFile(path);
  FLOE_ASSIGN_OR_RAISE(internal::ObjectStore * store, StoreFor(path));
  std::string out;
  FLOE_RETURN_NOT_OK(store->WithObject(
      path, [&](S3Client& c, const std::string& bucket, const std::string& key) -> Status {
        FLOE_ASSIGN_OR_RAISE(out, c.Get(bucket, key));
        return Status::OK();
      }));
  return out;
}

Result<std::string> FileIO::ReadFileRange(const std::string& path, uint64_t offset,
                                          uint64_t length) const {
  if (!IsS3Uri(path)) return io::ReadFileRange(path, offset, length);
  FLOE_ASSIGN_OR_RAISE(internal::ObjectStore * store, StoreFor(path));
  std::string out;
  FLOE_RETURN_NOT_OK(store->WithObject(
      path, [&](S3Client& c, const std::string& bucket, const std::string& key) -> Status {
        FLOE_ASSIGN_OR_RAISE(out, c.GetRange(bucket, key, offset, length));
        return Status::OK();
      }));
  return out;
}

Result<uint64_t> FileIO::FileSize(const std::string& path) const {
  if (!IsS3Uri(path)) return io::FileSize(path);
  FLOE_ASSIGN_OR_RAISE(internal::ObjectStore * store, StoreFor(path));
  uint64_t size = 0;
  FLOE_RETURN_NOT_OK(store->WithObject(
      path, [&](S3Client& c, const std::string& bucket, const std::string& key) -> Status {
        FLOE_ASSIGN_OR_RAISE(S3Object o, c.Head(bucket, key));
        size = static_cast<uint64_t>(o.size);
        return Status::OK();
      }));
  return size;
}

Status FileIO::WriteFileExclusive(const std::string& path, std::string_view data) const {
  if (!IsS3Uri(path)) return io::WriteFileExclusive(path, data);
  // A conditional write (If-None-Match: *); a store that ignores it overwrites, so catalogs
  // that need an atomic create refuse object storage (docs/catalogs.md).
  FLOE_ASSIGN_OR_RAISE(internal::ObjectStore * store, StoreFor(path));
  return store->Put(path, data, /*if_absent=*/true);
}

Status FileIO::WriteFileReplace(const std::string& path, std::string_view data) const {
  if (!IsS3Uri(path)) return io::WriteFileReplace(path, data);
  FLOE_ASSIGN_OR_RAISE(internal::ObjectStore * store, StoreFor(path));
  return store->Put(path, data, /*if_absent=*/false);
}

bool FileIO::Exists(const std::string& path) const {
  if (!IsS3Uri(path)) return io::Exists(path);
  return FileSize(path).ok();
}

Status FileIO::CreateDirs(const std::string& path) const {
  if (!IsS3Uri(path)) return io::CreateDirs(path);
  return StoreFor(path).status();  // object storage has no directories
}

Status FileIO::RemoveFile(const std::string& path) const {
  if (!IsS3Uri(path)) return io::RemoveFile(path);
  FLOE_ASSIGN_OR_RAISE(internal::ObjectStore * store, StoreFor(path));
  return store->WithObject(path, [](S3Client& c, const std::string& bucket,
                                    const std::string& key) { return c.Delete(bucket, key); });
}

Status FileIO::RemoveTree(const std::string& path) const {
  if (!IsS3Uri(path)) return io::RemoveTree(path);
  FLOE_ASSIGN_OR_RAISE(internal::ObjectStore * store, StoreFor(path));
  FLOE_ASSIGN_OR_RAISE(std::vector<FileEntry> files, store->ListFiles(path));
  for (const FileEntry& f : files) FLOE_RETURN_NOT_OK(RemoveFile(f.path));
  return Status::OK();
}

Status FileIO::SyncDir(const std::string& path) const {
  if (!IsS3Uri(path)) return io::SyncDir(path);
  return StoreFor(path).status();
}

Result<std::vector<FileEntry>> FileIO::ListFilesRecursive(const std::string& dir) const {
  if (!IsS3Uri(dir)) return io::ListFilesRecursive(dir);
  FLOE_ASSIGN_OR_RAISE(internal::ObjectStore * store, StoreFor(dir));
  return store->ListFiles(dir);
}

Result<std::vector<std::string>> FileIO::ListDir(const std::string& dir) const {
  if (!IsS3Uri(dir)) return io::ListDir(dir);
  FLOE_ASSIGN_OR_RAISE(internal::ObjectStore * store, StoreFor(dir));
  // A directory is every key below it: the first name of each, once.
  FLOE_ASSIGN_OR_RAISE(std::vector<FileEntry> files, store->ListFiles(dir));
  if (files.empty()) return Status::NotFound("no directory '" + dir + "'");
  std::vector<std::string> names;
  const size_t skip = dir.size() + (dir.back() == '/' ? 0 : 1);
  for (const FileEntry& f : files) {
    std::string name = f.path.substr(skip, f.path.find('/', skip) - skip);
    if (names.empty() || names.back() != name) names.push_back(std::move(name));
  }
  return names;
}

std::optional<S3Config> FileIO::s3_config() const {
  if (!store_) return std::nullopt;
  return store_->config();
}

S3Counters FileIO::s3_counters() const { return store_ ? store_->totals() : S3Counters{}; }

}  // namespace floe::io
