#include "floe/runtime/checkpoint_storage.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <system_error>

#include "floe/io/file.h"
#include "floe/io/file_io.h"
#include "floe/runtime/state.h"
#include "floe/runtime/task_state.h"

namespace floe::runtime {
namespace {

constexpr std::string_view kMagic = "FLOECKPT";
// 1: before incremental checkpoints; 2: each task also lists its shared files.
constexpr uint32_t kFormatVersionFull = 1;
constexpr uint32_t kFormatVersionShared = 2;
constexpr std::string_view kChkPrefix = "chk-";
constexpr std::string_view kTempPrefix = ".tmp-";
// Large shared files (RocksDB SSTs of hundreds of MB) are copied this much at a time.
constexpr uint64_t kCopyChunk = 8 << 20;
constexpr size_t kMaxSharedName = 200;  // leaves room for the temp file's prefix and suffix

std::optional<uint64_t> ParseChkName(std::string_view name) {
  if (name.substr(0, kChkPrefix.size()) != kChkPrefix) return std::nullopt;
  std::string_view digits = name.substr(kChkPrefix.size());
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty()) {
    return std::nullopt;
  }
  return v;
}

std::string Hex(uint64_t v, int digits) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%0*llx", digits, static_cast<unsigned long long>(v));
  return std::string(buf, static_cast<size_t>(digits));
}

// A file name for a task's state: the name made filesystem-safe, plus a hash of the exact name
// so two names that sanitize alike stay distinct.
std::string StateFileName(const std::string& task) {
  std::string safe;
  for (char c : task) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_';
    safe.push_back(ok ? c : '_');
  }
  if (safe.size() > 100) safe.resize(100);
  return safe + "-" + Hex(Crc32(task), 8) + ".state";
}

// Every shared file a loaded checkpoint lists must be in the `shared/` beside its directory
// with its size (one listing, not a request per file: there may be thousands on S3). The CRC
// is checked when a backend downloads the file.
Status CheckSharedFiles(const io::FileIO& file_io, CompletedCheckpoint* c) {
  const std::string what = (c->is_savepoint ? "savepoint " : "checkpoint ") + c->id.ToString();
  if (c->is_savepoint) {
    return Status::Corruption(what + " in '" + c->dir +
                              "' lists shared files; savepoints are self-contained");
  }
  std::string dir = c->dir;  // "s3://b/job/chk-7/" keeps its slash through AbsolutePath
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  c->shared_dir = io::JoinPath(io::DirName(dir), CheckpointStorage::kSharedDir);
  FLOE_ASSIGN_OR_RAISE(std::vector<io::FileEntry> entries,
                       file_io.ListFilesRecursive(c->shared_dir));
  std::map<std::string, int64_t> sizes;
  for (io::FileEntry& e : entries) sizes.emplace(std::move(e.path), e.size);
  for (const auto& [task, files] : c->task_shared) {
    for (const SharedStateFile& f : files) {
      const std::string path = io::JoinPath(c->shared_dir, f.name);
      auto it = sizes.find(path);
      if (it == sizes.end()) {
        return Status::Corruption(what + " needs shared/" + f.name + " (task '" + task +
                                  "'), which is missing: no '" + path + "'");
      }
      if (static_cast<uint64_t>(it->second) != f.size) {
        return Status::Corruption(what + " needs shared/" + f.name + " (task '" + task + "') of " +
                                  std::to_string(f.size) + " bytes, but '" + path + "' has " +
                                  std::to_string(it->second));
      }
    }
  }
  return Status::OK();
}

// Deletes a completed checkpoint: `_metadata` first, so a crash midway leaves a directory that
// is no longer a checkpoint rather than one with missing files.
Status DeleteCompleted(const io::FileIO& file_io, const std::string& dir) {
  std::string meta = io::JoinPath(dir, CheckpointStorage::kMetadataFile);
  if (file_io.Exists(meta)) {
    FLOE_RETURN_NOT_OK(file_io.RemoveFile(meta));
    FLOE_RETURN_NOT_OK(file_io.SyncDir(dir));
  }
  return file_io.RemoveTree(dir);
}

}  // namespace

std::string EncodeCheckpointMetadata(const CompletedCheckpoint& header,
                                     const std::vector<TaskStateHandle>& states) {
  const bool shared = std::any_of(states.begin(), states.end(),
                                  [](const TaskStateHandle& s) { return !s.shared.empty(); });
  StateWriter w;
  for (char c : kMagic) w.PutU8(static_cast<uint8_t>(c));
  w.PutU32(shared ? kFormatVersionShared : kFormatVersionFull);
  w.PutU64(header.id.value);
  w.PutBool(header.is_savepoint);
  w.PutString(header.job_id);
  w.PutI64(header.timestamp_millis);
  w.PutU32(static_cast<uint32_t>(states.size()));
  for (const TaskStateHandle& s : states) {
    w.PutString(s.task);
    w.PutString(s.file);
    w.PutU64(s.size);
    w.PutU32(s.crc32);
    if (!shared) continue;
    w.PutU32(static_cast<uint32_t>(s.shared.size()));
    for (const SharedStateFile& f : s.shared) {
      w.PutString(f.name);
      w.PutU64(f.size);
      w.PutU32(f.crc32);
    }
  }
  uint32_t crc = Crc32(w.data());
  w.PutU32(crc);
  return w.Finish();
}

namespace {

Status DecodeSharedFiles(StateReader& r, TaskStateHandle* s) {
  FLOE_ASSIGN_OR_RAISE(uint32_t n, r.GetU32());
  for (uint32_t i = 0; i < n; ++i) {  // no reserve: a hostile count runs out of bytes first
    SharedStateFile f;
    FLOE_ASSIGN_OR_RAISE(f.name, r.GetString());
    FLOE_ASSIGN_OR_RAISE(f.size, r.GetU64());
    FLOE_ASSIGN_OR_RAISE(f.crc32, r.GetU32());
    if (Status bad = CheckpointSharedStateStore::CheckName(f.name); !bad.ok()) {
      return Status::Corruption("checkpoint metadata: task '" + s->task + "': " + bad.message());
    }
    s->shared.push_back(std::move(f));
  }
  return Status::OK();
}

Result<TaskStateHandle> DecodeTaskState(StateReader& r, uint32_t version) {
  TaskStateHandle s;
  FLOE_ASSIGN_OR_RAISE(s.task, r.GetString());
  FLOE_ASSIGN_OR_RAISE(s.file, r.GetString());
  FLOE_ASSIGN_OR_RAISE(s.size, r.GetU64());
  FLOE_ASSIGN_OR_RAISE(s.crc32, r.GetU32());
  if (s.file.empty() || s.file.find('/') != std::string::npos || s.file[0] == '.') {
    return Status::Corruption("checkpoint metadata: bad state file name '" + s.file + "'");
  }
  if (version >= kFormatVersionShared) FLOE_RETURN_NOT_OK(DecodeSharedFiles(r, &s));
  return s;
}

}  // namespace

Result<CheckpointMetadata> DecodeCheckpointMetadata(std::string_view data) {
  if (data.size() < kMagic.size() + 8 || data.substr(0, kMagic.size()) != kMagic) {
    return Status::Corruption("checkpoint metadata: bad magic (not a floe _metadata file)");
  }
  std::string_view body = data.substr(0, data.size() - 4);
  StateReader tail(data.substr(data.size() - 4));
  FLOE_ASSIGN_OR_RAISE(uint32_t want_crc, tail.GetU32());
  if (Crc32(body) != want_crc) {
    return Status::Corruption("checkpoint metadata: checksum mismatch");
  }
  StateReader r(body.substr(kMagic.size()));
  CheckpointMetadata m;
  FLOE_ASSIGN_OR_RAISE(uint32_t version, r.GetU32());
  if (version != kFormatVersionFull && version != kFormatVersionShared) {
    return Status::Corruption("checkpoint metadata: unsupported format version " +
                              std::to_string(version) + " (this floe reads 1 and 2)");
  }
  FLOE_ASSIGN_OR_RAISE(uint64_t id, r.GetU64());
  m.header.id = CheckpointId(id);
  FLOE_ASSIGN_OR_RAISE(m.header.is_savepoint, r.GetBool());
  FLOE_ASSIGN_OR_RAISE(m.header.job_id, r.GetString());
  FLOE_ASSIGN_OR_RAISE(m.header.timestamp_millis, r.GetI64());
  FLOE_ASSIGN_OR_RAISE(uint32_t n, r.GetU32());
  for (uint32_t i = 0; i < n; ++i) {
    FLOE_ASSIGN_OR_RAISE(TaskStateHandle s, DecodeTaskState(r, version));
    m.states.push_back(std::move(s));
  }
  FLOE_RETURN_NOT_OK(r.ExpectEnd());
  return m;
}

namespace {

// CRC-32 of the first `size` bytes of `path`, read in chunks and appended to `copy` if given.
Result<uint32_t> ReadInChunks(const io::FileIO& file_io, const std::string& path, uint64_t size,
                              io::WritableFile* copy) {
  uint32_t crc = 0;
  for (uint64_t offset = 0; offset < size; offset += kCopyChunk) {
    FLOE_ASSIGN_OR_RAISE(std::string chunk,
                         file_io.ReadFileRange(path, offset, std::min(kCopyChunk, size - offset)));
    crc = Crc32(chunk, crc);
    if (copy != nullptr) FLOE_RETURN_NOT_OK(copy->Append(chunk));
  }
  return crc;
}

// Size and CRC-32 of a file. NotFound if it is missing.
Result<SharedStateFile> Fingerprint(const io::FileIO& file_io, const std::string& path) {
  SharedStateFile f;
  FLOE_ASSIGN_OR_RAISE(f.size, file_io.FileSize(path));
  FLOE_ASSIGN_OR_RAISE(f.crc32, ReadInChunks(file_io, path, f.size, nullptr));
  return f;
}

}  // namespace

Status CheckpointSharedStateStore::CheckName(std::string_view name) {
  const bool bad = name.empty() || name.size() > kMaxSharedName || name[0] == '.' ||
                   name.find_first_of(std::string_view("/\\\0", 3)) != std::string_view::npos;
  if (!bad) return Status::OK();
  return Status::InvalidArgument(
      "shared state file name '" + std::string(name.substr(0, kMaxSharedName)) +
      "' is not a plain file name (1 to " + std::to_string(kMaxSharedName) +
      " bytes, no '/', '\\' or NUL, not starting with '.'; got " + std::to_string(name.size()) +
      " bytes)");
}

std::string CheckpointSharedStateStore::PathOf(const std::string& name) const {
  return io::JoinPath(dir_, name);
}

Result<SharedStateFile> CheckpointSharedStateStore::Upload(const std::string& local_path,
                                                           const std::string& name) {
  FLOE_RETURN_NOT_OK(CheckName(name));
  {
    // Before any byte moves, so retention sees the upload as one that may belong to a
    // checkpoint in flight from the moment it could appear in the directory.
    MutexLock lock(mu_);
    uploads_[name] = next_upload_++;
  }
  const std::string dest = PathOf(name);
  SharedStateFile file{name, 0, 0};
  Status st =
      io::IsS3Uri(dest) ? PutObject(local_path, dest, &file) : CopyToLocal(local_path, dest, &file);
  if (st.IsAlreadyExists()) st = SettleExisting(dest, file);
  if (!st.ok()) return st;
  return file;
}

Status CheckpointSharedStateStore::CopyToLocal(const std::string& local_path,
                                               const std::string& dest, SharedStateFile* file) {
  FLOE_RETURN_NOT_OK(io::CreateDirs(dir_));
  FLOE_ASSIGN_OR_RAISE(uint64_t size, io::FileSize(local_path));
  thread_local std::mt19937_64 rng(std::random_device{}());
  const std::string temp_name = std::string(kTempPrefix) + file->name + "-" + Hex(rng(), 16);
  const std::string temp = PathOf(temp_name);
  {
    MutexLock lock(mu_);
    temps_.insert(temp_name);
  }
  Status st = [&]() -> Status {
    FLOE_ASSIGN_OR_RAISE(auto out, io::WritableFile::Create(temp, /*exclusive=*/true));
    FLOE_ASSIGN_OR_RAISE(file->crc32, ReadInChunks(io::FileIO(), local_path, size, out.get()));
    file->size = size;
    FLOE_RETURN_NOT_OK(out->Sync());
    FLOE_RETURN_NOT_OK(out->Close());
    // link(2) never replaces: of two uploads of one name exactly one creates it.
    std::error_code ec;
    std::filesystem::create_hard_link(temp, dest, ec);
    if (ec == std::errc::file_exists) return Status::AlreadyExists("'" + dest + "' exists");
    if (ec) return Status::IOError("cannot link '" + temp + "' to '" + dest + "': " + ec.message());
    return io::SyncDir(dir_);
  }();
  (void)io::RemoveFile(temp);
  MutexLock lock(mu_);
  temps_.erase(temp_name);
  return st;
}

Status CheckpointSharedStateStore::PutObject(const std::string& local_path, const std::string& dest,
                                             SharedStateFile* file) {
  FLOE_ASSIGN_OR_RAISE(std::string data, io::ReadFile(local_path));
  file->size = data.size();
  file->crc32 = Crc32(data);
  return file_io_.WriteFileExclusive(dest, data);
}

Status CheckpointSharedStateStore::SettleExisting(const std::string& dest,
                                                  const SharedStateFile& file) const {
  FLOE_ASSIGN_OR_RAISE(SharedStateFile there, Fingerprint(file_io_, dest));
  if (there.size == file.size && there.crc32 == file.crc32) return Status::OK();
  return Status::AlreadyExists("shared state file '" + dest + "' exists with other bytes (size " +
                               std::to_string(there.size) + ", CRC-32 " + Hex(there.crc32, 8) +
                               "; uploading size " + std::to_string(file.size) + ", CRC-32 " +
                               Hex(file.crc32, 8) + ")");
}

Status CheckpointSharedStateStore::Download(const SharedStateFile& file,
                                            const std::string& local_path) const {
  FLOE_RETURN_NOT_OK(CheckName(file.name));
  const std::string src = PathOf(file.name);
  auto size = file_io_.FileSize(src);
  if (!size.ok()) {
    if (size.status().IsNotFound()) {
      return Status::NotFound("shared state file '" + src + "' is missing");
    }
    return size.status();
  }
  auto mismatch = [&](const std::string& what) {
    return Status::Corruption("shared state file '" + src +
                              "' does not match what the checkpoint lists: " + what);
  };
  if (*size != file.size) {
    return mismatch("size " + std::to_string(*size) + ", expected " + std::to_string(file.size));
  }
  FLOE_ASSIGN_OR_RAISE(auto out, io::WritableFile::Create(local_path, /*exclusive=*/false));
  FLOE_ASSIGN_OR_RAISE(uint32_t crc, ReadInChunks(file_io_, src, file.size, out.get()));
  FLOE_RETURN_NOT_OK(out->Close());
  if (crc != file.crc32) {
    (void)io::RemoveFile(local_path);
    return mismatch("CRC-32 " + Hex(crc, 8) + ", expected " + Hex(file.crc32, 8));
  }
  return Status::OK();
}

void CheckpointSharedStateStore::NoteCheckpointStarted(CheckpointId id) {
  MutexLock lock(mu_);
  started_[id] = next_upload_;
}

// Why DeleteUnreferenced never deletes a file that a retained or in-flight checkpoint needs,
// given the contract in the header (a checkpoint lists every shared file of the state at its
// barrier; a file leaves the state for good unless uploaded again; one uploading process):
//   * Retained completed checkpoints: their files are in `referenced` (the caller read every
//     retained `_metadata`, and stops before deleting anything if one cannot be read).
//   * A checkpoint K in flight when retention runs after `latest` (L) completed: K > L, since
//     the coordinator subsumes older pending checkpoints when L completes. A file f that K
//     lists either was part of the state at L's barrier, so L (retained: the latest is never
//     deleted) lists it; or it joined the state after that barrier, so its Upload began after L
//     was started (NoteCheckpointStarted runs before L's barriers go out), and it is kept.
//   * A file whose upload began before L started and that no retained checkpoint lists was
//     uploaded for a checkpoint J < L: it is not part of the state at L's barrier (L would list
//     it), so no later checkpoint will list it without uploading it again; and an Upload takes
//     its order under the same lock this check holds, so a new Upload of the same name is
//     either seen here (kept) or runs after the file was deleted (and writes it anew).
//   * Kills: the store of a new process knows no upload of the dead one. Between an upload and
//     `_metadata`: that checkpoint never completes and nobody lists the file, so it goes.
//     Between `_metadata` and retention: the new process's retention keeps what the retained
//     checkpoints list. During retention: `_metadata` went first, so a checkpoint either lists
//     its files (complete, all of them there) or is no checkpoint.
//   * A checkpoint L started by an earlier process: every upload of this store counts as after
//     it (`started_` has no L: order 0).
// Temp files of running uploads are skipped; others are leftovers of a killed upload.
Status CheckpointSharedStateStore::DeleteUnreferenced(const std::set<std::string>& referenced,
                                                      std::optional<CheckpointId> latest) {
  FLOE_ASSIGN_OR_RAISE(std::vector<io::FileEntry> files, file_io_.ListFilesRecursive(dir_));
  const std::string prefix = dir_ + "/";
  for (const io::FileEntry& f : files) {
    if (f.path.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string name = f.path.substr(prefix.size());
    if (name.find('/') != std::string::npos || referenced.count(name) > 0) continue;
    MutexLock lock(mu_);
    if (MayBelongToACheckpointInFlight(name, latest)) continue;
    // NotFound: gone since the listing (the temp file of an upload that has finished since).
    if (Status st = file_io_.RemoveFile(f.path); !st.ok() && !st.IsNotFound()) return st;
  }
  if (!latest) return Status::OK();
  // What can no longer be protected need not be remembered.
  MutexLock lock(mu_);
  const uint64_t floor = started_.count(*latest) ? started_[*latest] : 0;
  std::erase_if(uploads_, [&](const auto& u) { return u.second < floor; });
  std::erase_if(started_, [&](const auto& s) { return s.first < *latest; });
  return Status::OK();
}

bool CheckpointSharedStateStore::MayBelongToACheckpointInFlight(
    const std::string& name, std::optional<CheckpointId> latest) {
  if (name.compare(0, kTempPrefix.size(), kTempPrefix) == 0) return temps_.count(name) > 0;
  if (!latest) return false;
  auto upload = uploads_.find(name);
  if (upload == uploads_.end()) return false;
  auto started = started_.find(*latest);
  return started == started_.end() || upload->second >= started->second;
}

Result<std::unique_ptr<CheckpointStorage>> CheckpointStorage::Make(Options options) {
  if (options.checkpoint_dir.empty()) {
    return Status::InvalidArgument("execution.checkpointing.dir is not set");
  }
  if (options.num_retained < 1) {
    return Status::InvalidArgument("state.checkpoints.num-retained must be >= 1, got " +
                                   std::to_string(options.num_retained));
  }
  options.checkpoint_dir = io::AbsolutePath(options.checkpoint_dir);
  if (options.savepoint_dir.empty()) {
    options.savepoint_dir = io::JoinPath(options.checkpoint_dir, "savepoints");
  } else {
    options.savepoint_dir = io::AbsolutePath(options.savepoint_dir);
  }
  FLOE_RETURN_NOT_OK(options.file_io.CreateDirs(options.checkpoint_dir));
  return std::unique_ptr<CheckpointStorage>(new CheckpointStorage(std::move(options)));
}

CheckpointStorage::CheckpointStorage(Options options)
    : options_(std::move(options)),
      shared_(std::make_unique<CheckpointSharedStateStore>(
          options_.file_io, io::JoinPath(options_.checkpoint_dir, kSharedDir))) {}

std::string CheckpointStorage::CheckpointDir(CheckpointId id) const {
  return io::JoinPath(options_.checkpoint_dir, std::string(kChkPrefix) + id.ToString());
}

Result<CheckpointLocation> CheckpointStorage::InitCheckpoint(CheckpointId id,
                                                             bool is_savepoint) const {
  CheckpointLocation loc{id, is_savepoint, ""};
  if (is_savepoint) {
    // Recorded before the savepoint's directory exists (so before any barrier is injected):
    // ids must never be reused, and a savepoint's directory lives elsewhere and may be moved
    // (`floe stop --savepoint DIR`), so scanning chk-* alone would not see it. A failover from
    // an older checkpoint then continues above the savepoint's id instead of taking it again
    // for different positions (sinks compare ids, e.g. the Iceberg table's floe.checkpoint-id).
    FLOE_ASSIGN_OR_RAISE(CheckpointId recorded, HighestSavepointId());
    if (id > recorded) {
      FLOE_RETURN_NOT_OK(options_.file_io.WriteFileReplace(
          io::JoinPath(options_.checkpoint_dir, kSavepointFloorFile), id.ToString() + "\n"));
    }
    thread_local std::mt19937_64 rng(std::random_device{}());
    std::string prefix = options_.job_id.substr(0, 6);
    if (prefix.empty()) prefix = "000000";
    loc.dir = io::JoinPath(options_.savepoint_dir,
                           "savepoint-" + prefix + "-" + Hex(rng() & 0xffffffffffffULL, 12));
  } else {
    loc.dir = CheckpointDir(id);
    shared_->NoteCheckpointStarted(id);
  }
  if (options_.file_io.Exists(loc.dir)) {
    return Status::AlreadyExists("checkpoint directory '" + loc.dir + "' already exists");
  }
  FLOE_RETURN_NOT_OK(options_.file_io.CreateDirs(loc.dir));
  return loc;
}

Result<TaskStateHandle> CheckpointStorage::WriteTaskState(const io::FileIO& file_io,
                                                          const CheckpointLocation& location,
                                                          const std::string& task,
                                                          std::string_view blob,
                                                          std::vector<SharedStateFile> shared) {
  TaskStateHandle h{task, StateFileName(task), blob.size(), Crc32(blob), std::move(shared)};
  FLOE_RETURN_NOT_OK(file_io.WriteFileExclusive(io::JoinPath(location.dir, h.file), blob));
  return h;
}

Status CheckpointStorage::Finalize(const CheckpointLocation& location,
                                   const std::vector<TaskStateHandle>& states,
                                   int64_t timestamp_millis) const {
  for (const TaskStateHandle& s : states) {
    if (!s.shared.empty() && location.is_savepoint) {
      return Status::InvalidArgument("savepoint " + location.id.ToString() + ": task '" + s.task +
                                     "' lists shared files; savepoints are self-contained");
    }
    for (const SharedStateFile& f : s.shared) {
      FLOE_RETURN_NOT_OK(CheckpointSharedStateStore::CheckName(f.name));
    }
  }
  CompletedCheckpoint header;
  header.id = location.id;
  header.is_savepoint = location.is_savepoint;
  header.job_id = options_.job_id;
  header.timestamp_millis = timestamp_millis;
  return options_.file_io.WriteFileExclusive(io::JoinPath(location.dir, kMetadataFile),
                                             EncodeCheckpointMetadata(header, states));
}

Status CheckpointStorage::Discard(const CheckpointLocation& location) const {
  if (options_.file_io.Exists(io::JoinPath(location.dir, kMetadataFile))) {
    return Status::Internal("refusing to discard completed checkpoint '" + location.dir + "'");
  }
  return options_.file_io.RemoveTree(location.dir);
}

Result<std::vector<CheckpointId>> CheckpointStorage::ListCheckpointDirs() const {
  auto names = options_.file_io.ListDir(options_.checkpoint_dir);
  if (!names.ok()) {
    if (names.status().IsNotFound()) return std::vector<CheckpointId>{};
    return names.status();
  }
  std::vector<CheckpointId> ids;
  for (const std::string& n : *names) {
    if (auto id = ParseChkName(n)) ids.push_back(CheckpointId(*id));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<std::vector<CheckpointId>> CheckpointStorage::ListCompleted() const {
  FLOE_ASSIGN_OR_RAISE(auto ids, ListCheckpointDirs());
  std::vector<CheckpointId> out;
  for (CheckpointId id : ids) {
    if (options_.file_io.Exists(io::JoinPath(CheckpointDir(id), kMetadataFile))) {
      out.push_back(id);
    }
  }
  return out;
}

Result<std::optional<CheckpointId>> CheckpointStorage::LatestCompleted() const {
  FLOE_ASSIGN_OR_RAISE(auto ids, ListCompleted());
  if (ids.empty()) return std::optional<CheckpointId>();
  return std::optional<CheckpointId>(ids.back());
}

Result<CheckpointId> CheckpointStorage::HighestSavepointId() const {
  const std::string path = io::JoinPath(options_.checkpoint_dir, kSavepointFloorFile);
  auto text = options_.file_io.ReadFile(path);
  if (!text.ok()) {
    if (text.status().IsNotFound()) return CheckpointId();
    return text.status();
  }
  std::string t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || t.empty()) {
    return Status::Corruption("'" + path + "' does not hold a checkpoint id: '" + t + "'");
  }
  return CheckpointId(v);
}

void CheckpointPins::Pin(CheckpointId id) {
  MutexLock lock(mu_);
  in_flight_.insert(id);
}

void CheckpointPins::Settle(CheckpointId through, std::set<CheckpointId> named) {
  MutexLock lock(mu_);
  known_ = true;
  named_ = std::move(named);
  in_flight_.erase(in_flight_.begin(), in_flight_.upper_bound(through));
}

bool CheckpointPins::Pinned(CheckpointId id) const {
  MutexLock lock(mu_);
  return !known_ || named_.count(id) > 0 || in_flight_.count(id) > 0;
}

std::string ClaimStatePointer(std::string_view checkpoint_dir, CheckpointId id,
                              std::string_view task) {
  return io::JoinPath(checkpoint_dir, std::string(kChkPrefix) + id.ToString()) + "#" +
         std::string(task);
}

std::optional<CheckpointId> ClaimStateCheckpointOf(std::string_view pointer,
                                                   std::string_view checkpoint_dir) {
  Result<std::string> dir = ClaimStateCheckpoint(pointer);
  if (!dir.ok()) return std::nullopt;
  const std::string mine = io::JoinPath(checkpoint_dir, "");
  if (dir->size() <= mine.size() || dir->compare(0, mine.size(), mine) != 0) return std::nullopt;
  std::optional<uint64_t> n = ParseChkName(std::string_view(*dir).substr(mine.size()));
  if (!n) return std::nullopt;
  return CheckpointId(*n);
}

Result<std::string> ClaimStateCheckpoint(std::string_view pointer) {
  const size_t hash = pointer.rfind('#');
  if (hash == std::string_view::npos || hash == 0 || hash + 1 == pointer.size()) {
    return Status::InvalidArgument("'" + std::string(pointer) +
                                   "' is not a partition's state (<checkpoint dir>#<task>)");
  }
  return std::string(pointer.substr(0, hash));
}

Result<std::string> ReadClaimState(const io::FileIO& file_io, std::string_view pointer) {
  FLOE_ASSIGN_OR_RAISE(std::string dir, ClaimStateCheckpoint(pointer));
  const std::string task(pointer.substr(dir.size() + 1));
  Result<CompletedCheckpoint> loaded = CheckpointStorage::LoadPath(file_io, dir);
  if (!loaded.ok()) {
    return loaded.status().WithContext("the partition's state '" + std::string(pointer) + "'");
  }
  auto blob = loaded->task_states.find(task);
  if (blob == loaded->task_states.end()) {
    return Status::NotFound("the partition's state '" + std::string(pointer) + "': checkpoint '" +
                            dir + "' has no state of task '" + task + "'");
  }
  if (loaded->task_shared.count(task) > 0) {
    return Status::InvalidArgument("the partition's state '" + std::string(pointer) +
                                   "' is an incremental checkpoint's: its files hold every key "
                                   "group");
  }
  FLOE_ASSIGN_OR_RAISE(std::optional<KeyedTaskState> parts, ParseKeyedTaskState(blob->second));
  if (!parts) {
    return Status::InvalidArgument("the partition's state '" + std::string(pointer) + "': task '" +
                                   task + "' keeps no keyed state");
  }
  return std::string(parts->keyed_state);
}

Result<CheckpointId> CheckpointStorage::HighestIdOnDisk() const {
  FLOE_ASSIGN_OR_RAISE(auto ids, ListCheckpointDirs());
  FLOE_ASSIGN_OR_RAISE(CheckpointId savepoints, HighestSavepointId());
  CheckpointId chk = ids.empty() ? CheckpointId() : ids.back();
  return std::max(chk, savepoints);
}

bool CheckpointStorage::Pinned(CheckpointId id) const {
  return options_.pins != nullptr && options_.pins->Pinned(id);
}

Status CheckpointStorage::ApplyRetention() const {
  FLOE_ASSIGN_OR_RAISE(auto done, ListCompleted());
  if (done.empty()) return Status::OK();
  const CheckpointId latest = done.back();
  const size_t keep = static_cast<size_t>(options_.num_retained);
  const size_t retained = std::min(keep, done.size());
  for (size_t i = 0; i + retained < done.size(); ++i) {
    if (Pinned(done[i])) continue;
    FLOE_RETURN_NOT_OK(DeleteCompleted(options_.file_io, CheckpointDir(done[i])));
  }
  // Leftovers of aborted checkpoints older than the latest completed one can go too.
  FLOE_RETURN_NOT_OK(RemoveIncomplete(latest));
  FLOE_ASSIGN_OR_RAISE(std::set<std::string> listed, SharedFilesListedBy(std::vector<CheckpointId>(
                                                         done.end() - retained, done.end())));
  return shared_->DeleteUnreferenced(listed, latest);
}

Result<std::set<std::string>> CheckpointStorage::SharedFilesListedBy(
    const std::vector<CheckpointId>& ids) const {
  std::set<std::string> names;
  for (CheckpointId id : ids) {
    const std::string meta_path = io::JoinPath(CheckpointDir(id), kMetadataFile);
    // Any failure here stops retention before it deletes a shared file this checkpoint may list.
    FLOE_ASSIGN_OR_RAISE(std::string data, options_.file_io.ReadFile(meta_path));
    auto meta = DecodeCheckpointMetadata(data);
    if (!meta.ok()) return meta.status().WithContext(meta_path);
    for (const TaskStateHandle& s : meta->states) {
      for (const SharedStateFile& f : s.shared) names.insert(f.name);
    }
  }
  return names;
}

Status CheckpointStorage::RemoveIncomplete(CheckpointId below) const {
  FLOE_ASSIGN_OR_RAISE(auto ids, ListCheckpointDirs());
  for (CheckpointId id : ids) {
    if (id >= below) break;
    std::string dir = CheckpointDir(id);
    if (!options_.file_io.Exists(io::JoinPath(dir, kMetadataFile))) {
      FLOE_RETURN_NOT_OK(options_.file_io.RemoveTree(dir));
    }
  }
  return Status::OK();
}

Status CheckpointStorage::DiscardAllCheckpoints() const {
  FLOE_ASSIGN_OR_RAISE(auto ids, ListCheckpointDirs());
  bool kept = false;
  for (CheckpointId id : ids) {
    if (Pinned(id)) {
      kept = true;
      continue;
    }
    FLOE_RETURN_NOT_OK(DeleteCompleted(options_.file_io, CheckpointDir(id)));
  }
  // Pins belong to jobs without incremental checkpoints: nothing in shared/ is theirs.
  if (kept) return Status::OK();
  return shared_->DeleteUnreferenced({}, std::nullopt);
}

Result<CompletedCheckpoint> CheckpointStorage::Load(CheckpointId id) const {
  std::string dir = CheckpointDir(id);
  if (!options_.file_io.Exists(io::JoinPath(dir, kMetadataFile))) {
    return Status::NotFound("checkpoint " + id.ToString() + " is not complete: no " +
                            kMetadataFile + " in '" + dir + "'");
  }
  return LoadPath(options_.file_io, dir);
}

Result<CompletedCheckpoint> CheckpointStorage::LoadPath(const io::FileIO& file_io,
                                                        const std::string& path) {
  std::string dir = io::AbsolutePath(path);
  if (dir.size() > 10 && dir.substr(dir.size() - 10) == "/_metadata") dir = io::DirName(dir);
  std::string meta_path = io::JoinPath(dir, kMetadataFile);
  auto data = file_io.ReadFile(meta_path);
  if (!data.ok()) {
    if (data.status().IsNotFound()) {
      return Status::NotFound("'" + dir + "' is not a completed checkpoint or savepoint: no " +
                              kMetadataFile);
    }
    return data.status();
  }
  auto meta = DecodeCheckpointMetadata(*data);
  if (!meta.ok()) return meta.status().WithContext(meta_path);
  CompletedCheckpoint out = std::move(meta->header);
  out.dir = dir;
  for (const TaskStateHandle& s : meta->states) {
    std::string file = io::JoinPath(dir, s.file);
    auto blob = file_io.ReadFile(file);
    if (!blob.ok()) {
      return Status::Corruption("checkpoint " + out.id.ToString() + ": state of task '" + s.task +
                                "' unreadable: " + blob.status().ToString());
    }
    if (blob->size() != s.size || Crc32(*blob) != s.crc32) {
      return Status::Corruption("checkpoint " + out.id.ToString() + ": state file '" + file +
                                "' of task '" + s.task + "' does not match _metadata (size " +
                                std::to_string(blob->size()) + ", expected " +
                                std::to_string(s.size) + ", or checksum differs)");
    }
    if (!out.task_states.emplace(s.task, std::move(*blob)).second) {
      return Status::Corruption("checkpoint " + out.id.ToString() + ": task '" + s.task +
                                "' listed twice");
    }
    if (!s.shared.empty()) out.task_shared[s.task] = s.shared;
  }
  if (!out.task_shared.empty()) FLOE_RETURN_NOT_OK(CheckSharedFiles(file_io, &out));
  return out;
}

}  // namespace floe::runtime
