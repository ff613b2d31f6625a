// Files of failed attempts (docs/exactly-once.md): the writers' file names, and the restore-time
// removal of files that a job's earlier attempts left and nothing references.

#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "floe/connectors/iceberg/iceberg_sink_internal.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/io/file.h"
#include "floe/runtime/checkpoint_storage.h"

namespace floe::connectors::internal {

namespace {

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

bool AllOf(std::string_view s, bool (*pred)(char)) {
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

constexpr std::string_view kCommitterVertexSuffix = "-iceberg-committer";

// Adds the local path of every file in `files` to `out`.
Status AddPaths(const std::vector<iceberg::DataFile>& files, std::set<std::string>* out) {
  for (const iceberg::DataFile& f : files) {
    FLOE_ASSIGN_OR_RAISE(std::string path, iceberg::UriToPath(f.file_path));
    out->insert(io::AbsolutePath(path));
  }
  return Status::OK();
}

// Every data and delete file of every snapshot of the table (all branches and tags).
Status AddTableFiles(const io::FileIO& file_io, const iceberg::TableMetadata& metadata,
                     std::set<std::string>* out) {
  std::set<std::string> manifests_read;
  for (const iceberg::Snapshot& snapshot : metadata.snapshots) {
    FLOE_ASSIGN_OR_RAISE(std::vector<iceberg::ManifestFile> manifests,
                         iceberg::ReadManifestList(file_io, snapshot.manifest_list));
    for (const iceberg::ManifestFile& manifest : manifests) {
      if (!manifests_read.insert(manifest.manifest_path).second) continue;
      FLOE_ASSIGN_OR_RAISE(std::vector<iceberg::ManifestEntry> entries,
                           iceberg::ReadManifest(file_io, manifest, metadata));
      for (const iceberg::ManifestEntry& e : entries) {
        FLOE_ASSIGN_OR_RAISE(std::string path, iceberg::UriToPath(e.data_file.file_path));
        out->insert(io::AbsolutePath(path));
      }
    }
  }
  return Status::OK();
}

// The pending files in the state of every Iceberg committer of `checkpoint` (whichever sink or
// table: two sinks of one job may write one table with the same job tag).
Status AddCommitterFiles(const runtime::CompletedCheckpoint& checkpoint,
                         std::set<std::string>* out) {
  for (const auto& [task, blob] : checkpoint.task_states) {
    std::string_view vertex(task);
    vertex = vertex.substr(0, vertex.rfind('/'));
    if (!EndsWith(vertex, kCommitterVertexSuffix)) continue;
    runtime::StateReader reader(blob);
    Result<std::vector<CommitterState>> states = DecodeCommitterStates(reader);
    if (!states.ok()) {
      return states.status().WithContext(
          "state of '" + task + "' in " +
          (checkpoint.dir.empty() ? "the restored checkpoint" : checkpoint.dir));
    }
    for (const CommitterState& state : *states) {
      for (const auto& [id, pending] : state.pending) {
        FLOE_RETURN_NOT_OK(AddPaths(pending.data_files, out));
        FLOE_RETURN_NOT_OK(AddPaths(pending.delete_files, out));
      }
    }
  }
  return Status::OK();
}

struct Candidate {
  std::string path;
  WriterFileName name;
  int64_t bytes = 0;
};

}  // namespace

std::string FileJobTag(const std::string& job_id) {
  if (job_id.empty()) return "job";
  if (job_id.size() == 32 && AllOf(job_id, IsLowerHex)) return job_id.substr(0, 8);
  std::string out;
  for (char c : job_id) {
    if (IsAlnum(c)) out.push_back(c);
    if (out.size() == 8) break;
  }
  uint32_t h = 0x811c9dc5u;  // FNV-1a 32
  for (char c : job_id) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x01000193u;
  }
  char hash[9];
  std::snprintf(hash, sizeof(hash), "%08x", h);
  return out + "x" + hash;
}

std::optional<WriterFileName> ParseWriterFileName(std::string_view name) {
  constexpr std::string_view kExtension = ".parquet";
  if (!EndsWith(name, kExtension)) return std::nullopt;
  name.remove_suffix(kExtension.size());
  for (std::string_view suffix :
       {std::string_view("-eq-deletes"), std::string_view("-pos-deletes")}) {
    if (EndsWith(name, suffix)) {
      name.remove_suffix(suffix.size());
      break;
    }
  }
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t dash = name.find('-', start);
    parts.push_back(name.substr(start, dash == std::string_view::npos ? dash : dash - start));
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  if (parts.size() != 5) return std::nullopt;
  const std::string_view tag = parts[0], subtask = parts[1], attempt = parts[2], k = parts[3],
                         n = parts[4];
  if (tag.empty() || !AllOf(tag, IsAlnum)) return std::nullopt;
  const bool compaction = subtask == "rw";
  if (!compaction && (subtask.size() < 5 || !AllOf(subtask, IsDigit))) return std::nullopt;
  if (attempt.size() != 8 || !AllOf(attempt, IsLowerHex)) return std::nullopt;
  if (k.empty() || !AllOf(k, IsDigit) || n.size() < 5 || !AllOf(n, IsDigit)) return std::nullopt;
  WriterFileName out;
  out.job_tag = std::string(tag);
  out.compaction = compaction;
  out.attempt = std::string(attempt);
  if ((!compaction &&
       std::from_chars(subtask.data(), subtask.data() + subtask.size(), out.subtask).ec !=
           std::errc()) ||
      std::from_chars(k.data(), k.data() + k.size(), out.checkpoint).ec != std::errc()) {
    return std::nullopt;
  }
  return out;
}

Result<std::set<std::string>> FilesHeldByCheckpoints(const FailedAttemptScope& scope) {
  std::set<std::string> held;
  if (scope.restored != nullptr) FLOE_RETURN_NOT_OK(AddCommitterFiles(*scope.restored, &held));
  if (scope.checkpoint_dir.empty()) return held;
  runtime::CheckpointStorage::Options so;
  so.checkpoint_dir = scope.checkpoint_dir;
  so.savepoint_dir = scope.savepoint_dir;
  so.job_id = scope.job_id;
  so.file_io = scope.checkpoint_file_io;
  FLOE_ASSIGN_OR_RAISE(auto storage, runtime::CheckpointStorage::Make(std::move(so)));
  FLOE_ASSIGN_OR_RAISE(std::vector<runtime::CheckpointId> completed, storage->ListCompleted());
  for (runtime::CheckpointId id : completed) {
    FLOE_ASSIGN_OR_RAISE(runtime::CompletedCheckpoint checkpoint, storage->Load(id));
    FLOE_RETURN_NOT_OK(AddCommitterFiles(checkpoint, &held));
  }
  const std::string& savepoint_dir = storage->options().savepoint_dir;
  const io::FileIO& file_io = scope.checkpoint_file_io;
  Result<std::vector<std::string>> savepoints = file_io.ListDir(savepoint_dir);
  if (!savepoints.ok() && !savepoints.status().IsNotFound()) return savepoints.status();
  if (savepoints.ok()) {
    for (const std::string& entry : *savepoints) {
      std::string dir = io::JoinPath(savepoint_dir, entry);
      if (!file_io.Exists(io::JoinPath(dir, runtime::CheckpointStorage::kMetadataFile))) continue;
      FLOE_ASSIGN_OR_RAISE(runtime::CompletedCheckpoint savepoint,
                           runtime::CheckpointStorage::LoadPath(file_io, dir));
      FLOE_RETURN_NOT_OK(AddCommitterFiles(savepoint, &held));
    }
  }
  return held;
}

Result<FailedAttemptCleanup> RemoveFailedAttemptFiles(const io::FileIO& table_file_io,
                                                      const iceberg::TableMetadata& metadata,
                                                      const FailedAttemptScope& scope) {
  FailedAttemptCleanup done;
  if (scope.job_id.empty() || scope.checkpoint_dir.empty()) return done;
  FLOE_ASSIGN_OR_RAISE(iceberg::FileWriterConfig config,
                       iceberg::ConfigFromTableProperties(table_file_io, metadata, ""));

  // This job's files, by name only (cheap; usually there is nothing more to do).
  const std::string tag = FileJobTag(scope.job_id);
  std::vector<Candidate> candidates;
  FLOE_ASSIGN_OR_RAISE(std::vector<io::FileEntry> files,
                       table_file_io.ListFilesRecursive(config.data_dir));
  for (io::FileEntry& f : files) {
    std::optional<WriterFileName> name = ParseWriterFileName(f.path.substr(f.path.rfind('/') + 1));
    if (!name || name->job_tag != tag) continue;
    candidates.push_back(Candidate{std::move(f.path), std::move(*name), f.size});
  }
  if (candidates.empty()) return done;

  // Everything that may still reference one of them.
  FLOE_ASSIGN_OR_RAISE(std::set<std::string> referenced, FilesHeldByCheckpoints(scope));
  FLOE_RETURN_NOT_OK(AddTableFiles(table_file_io, metadata, &referenced));
  runtime::CheckpointStorage::Options so;
  so.checkpoint_dir = scope.checkpoint_dir;
  so.savepoint_dir = scope.savepoint_dir;
  so.job_id = scope.job_id;
  so.file_io = scope.checkpoint_file_io;
  FLOE_ASSIGN_OR_RAISE(auto storage, runtime::CheckpointStorage::Make(std::move(so)));
  // A savepoint moved out of the savepoint dir (`floe stop --savepoint DIR`) is out of sight;
  // it can hold only files with k <= its id (a file of k is handed over at a barrier >= k).
  FLOE_ASSIGN_OR_RAISE(runtime::CheckpointId savepoint_floor, storage->HighestSavepointId());

  for (const Candidate& c : candidates) {
    if (referenced.count(c.path) > 0) continue;
    if (!c.name.compaction && c.name.checkpoint <= savepoint_floor.value) {
      ++done.kept_for_savepoints;
      continue;
    }
    if (!table_file_io.RemoveFile(c.path).ok()) continue;  // gone already, or not ours
    ++done.files;
    done.bytes += c.bytes;
    done.attempts.insert(c.name.attempt);
  }
  return done;
}

}  // namespace floe::connectors::internal
