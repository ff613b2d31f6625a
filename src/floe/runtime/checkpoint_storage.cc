#include "floe/runtime/checkpoint_storage.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <random>
#include <system_error>

#include "floe/io/file.h"
#include "floe/io/file_io.h"
#include "floe/runtime/state.h"

namespace floe::runtime {
namespace {

constexpr std::string_view kMagic = "FLOECKPT";
constexpr uint32_t kFormatVersion = 1;
constexpr std::string_view kChkPrefix = "chk-";

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
  StateWriter w;
  for (char c : kMagic) w.PutU8(static_cast<uint8_t>(c));
  w.PutU32(kFormatVersion);
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
  }
  uint32_t crc = Crc32(w.data());
  w.PutU32(crc);
  return w.Finish();
}

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
  if (version != kFormatVersion) {
    return Status::Corruption("checkpoint metadata: unsupported format version " +
                              std::to_string(version));
  }
  FLOE_ASSIGN_OR_RAISE(uint64_t id, r.GetU64());
  m.header.id = CheckpointId(id);
  FLOE_ASSIGN_OR_RAISE(m.header.is_savepoint, r.GetBool());
  FLOE_ASSIGN_OR_RAISE(m.header.job_id, r.GetString());
  FLOE_ASSIGN_OR_RAISE(m.header.timestamp_millis, r.GetI64());
  FLOE_ASSIGN_OR_RAISE(uint32_t n, r.GetU32());
  for (uint32_t i = 0; i < n; ++i) {
    TaskStateHandle s;
    FLOE_ASSIGN_OR_RAISE(s.task, r.GetString());
    FLOE_ASSIGN_OR_RAISE(s.file, r.GetString());
    FLOE_ASSIGN_OR_RAISE(s.size, r.GetU64());
    FLOE_ASSIGN_OR_RAISE(s.crc32, r.GetU32());
    if (s.file.empty() || s.file.find('/') != std::string::npos || s.file[0] == '.') {
      return Status::Corruption("checkpoint metadata: bad state file name '" + s.file + "'");
    }
    m.states.push_back(std::move(s));
  }
  FLOE_RETURN_NOT_OK(r.ExpectEnd());
  return m;
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
                                                          std::string_view blob) {
  TaskStateHandle h{task, StateFileName(task), blob.size(), Crc32(blob)};
  FLOE_RETURN_NOT_OK(file_io.WriteFileExclusive(io::JoinPath(location.dir, h.file), blob));
  return h;
}

Status CheckpointStorage::Finalize(const CheckpointLocation& location,
                                   const std::vector<TaskStateHandle>& states,
                                   int64_t timestamp_millis) const {
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

Result<CheckpointId> CheckpointStorage::HighestIdOnDisk() const {
  FLOE_ASSIGN_OR_RAISE(auto ids, ListCheckpointDirs());
  FLOE_ASSIGN_OR_RAISE(CheckpointId savepoints, HighestSavepointId());
  CheckpointId chk = ids.empty() ? CheckpointId() : ids.back();
  return std::max(chk, savepoints);
}

Status CheckpointStorage::ApplyRetention() const {
  FLOE_ASSIGN_OR_RAISE(auto done, ListCompleted());
  if (done.empty()) return Status::OK();
  const CheckpointId latest = done.back();
  const size_t keep = static_cast<size_t>(options_.num_retained);
  for (size_t i = 0; i + keep < done.size(); ++i) {
    FLOE_RETURN_NOT_OK(DeleteCompleted(options_.file_io, CheckpointDir(done[i])));
  }
  // Leftovers of aborted checkpoints older than the latest completed one can go too.
  return RemoveIncomplete(latest);
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
  for (CheckpointId id : ids) {
    FLOE_RETURN_NOT_OK(DeleteCompleted(options_.file_io, CheckpointDir(id)));
  }
  return Status::OK();
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
  }
  return out;
}

}  // namespace floe::runtime
