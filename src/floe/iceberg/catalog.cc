#include "floe/iceberg/catalog.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "floe/common/crash_point.h"
#include "floe/iceberg/commit_internal.h"
#include "floe/iceberg/table_paths.h"
#include "floe/io/file.h"
#include "floe/io/location.h"
#include "floe/io/s3_client.h"

namespace floe::iceberg {

namespace {

constexpr const char* kVersionHint = "version-hint.text";
constexpr const char* kMaxPreviousVersions = "write.metadata.previous-versions-max";
constexpr const char* kDeleteAfterCommit = "write.metadata.delete-after-commit.enabled";
constexpr int64_t kDefaultMaxPreviousVersions = 100;

bool IsName(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool ParseVersion(std::string_view s, int64_t* out) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 1;
}

// "v12.metadata.json" -> 12; false for anything else (temp files, other names).
bool VersionOfFileName(std::string_view name, int64_t* out) {
  constexpr std::string_view kSuffix = ".metadata.json";
  if (name.size() <= 1 + kSuffix.size() || name[0] != 'v') return false;
  if (name.substr(name.size() - kSuffix.size()) != kSuffix) return false;
  std::string_view digits = name.substr(1, name.size() - 1 - kSuffix.size());
  if (!std::all_of(digits.begin(), digits.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return false;
  }
  return ParseVersion(digits, out);
}

std::string MetadataFileName(int64_t version) {
  return "v" + std::to_string(version) + ".metadata.json";
}

}  // namespace

Result<TableIdentifier> TableIdentifier::Parse(std::string_view text) {
  size_t dot = text.find('.');
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("bad table name '" + std::string(text) +
                                   "': " + std::string(why) +
                                   "; expected 'namespace.table' with names made of "
                                   "letters, digits and _");
  };
  if (dot == std::string_view::npos) return bad("no namespace");
  if (text.find('.', dot + 1) != std::string_view::npos) return bad("too many dots");
  TableIdentifier id{std::string(text.substr(0, dot)), std::string(text.substr(dot + 1))};
  if (!IsName(id.ns)) return bad("invalid namespace");
  if (!IsName(id.name)) return bad("invalid table name");
  return id;
}

std::string PathToUri(const std::string& absolute_path) {
  if (io::IsS3Uri(absolute_path)) return absolute_path;
  return "file://" + absolute_path;
}

Result<std::string> UriToPath(std::string_view uri) {
  // Metadata holds absolute locations only: a relative path is not one.
  if (!io::HasUriScheme(uri) && (uri.empty() || uri[0] != '/')) {
    return Status::InvalidArgument("'" + std::string(uri) +
                                   "' is not a local file URI (expected file:///absolute/path)");
  }
  return io::ResolveLocation(uri, "location");
}

Result<std::unique_ptr<FileSystemCatalog>> FileSystemCatalog::Make(const std::string& warehouse) {
  if (warehouse.empty()) return Status::InvalidArgument("warehouse path is empty");
  FLOE_ASSIGN_OR_RAISE(std::string abs, io::ResolveLocation(warehouse, "warehouse"));
  if (io::IsS3Uri(abs)) {
    return Status::InvalidArgument(
        "the filesystem catalog ('hadoop') cannot keep tables at " + warehouse +
        ": it commits by creating a file exclusively, which object storage does not promise; use "
        "the JDBC catalog ('catalog-type' = 'jdbc') or a REST catalog ('catalog-type' = "
        "'rest'), which commit in a database or a service");
  }
  FLOE_RETURN_NOT_OK(io::CreateDirs(abs));
  return std::make_unique<FileSystemCatalog>(PrivateTag{}, std::move(abs));
}

std::string FileSystemCatalog::DefaultTableLocation(const TableIdentifier& id) const {
  return PathToUri(io::JoinPath(io::JoinPath(warehouse_, id.ns), id.name));
}

namespace {

struct TablePaths {
  std::string table;
  std::string metadata;
  std::string hint;
};

TablePaths PathsOf(const std::string& warehouse, const TableIdentifier& id) {
  TablePaths p;
  p.table = io::JoinPath(io::JoinPath(warehouse, id.ns), id.name);
  p.metadata = io::JoinPath(p.table, "metadata");
  p.hint = io::JoinPath(p.metadata, kVersionHint);
  return p;
}

// The newest version in the metadata dir: the hint when it names an existing file, else the
// highest v<N> listed; then probe upward because the hint may lag (a committer can crash or lose
// a race between writing v<N+1> and updating the hint). 0 if there is no metadata file.
// `*hint_current` (if given): whether the hint names that newest version.
Result<int64_t> FindCurrentVersion(const TablePaths& p, bool* hint_current = nullptr) {
  int64_t version = 0;
  Result<std::string> hint = io::ReadFile(p.hint);
  int64_t hinted = -1;
  const bool parsed = hint.ok() && ParseVersion(*hint, &hinted);
  if (!parsed) hinted = -1;
  if (parsed && io::Exists(io::JoinPath(p.metadata, MetadataFileName(hinted)))) {
    version = hinted;
  } else {
    Result<std::vector<std::string>> names = io::ListDir(p.metadata);
    if (!names.ok()) return names.status();
    for (const std::string& name : *names) {
      int64_t v;
      if (VersionOfFileName(name, &v)) version = std::max(version, v);
    }
  }
  if (version == 0) return version;
  while (io::Exists(io::JoinPath(p.metadata, MetadataFileName(version + 1)))) ++version;
  if (hint_current != nullptr) *hint_current = hinted == version;
  return version;
}

// Writes `version` to the hint, then re-checks for newer versions: a concurrent committer may
// have written a newer hint just before ours replaced it. Whoever writes the hint last then
// leaves the newest version there (any version created after its write has its own committer
// writing the hint later), unless a committer crashed between its metadata write and its hint.
void UpdateHint(const TablePaths& p, int64_t version) {
  for (int i = 0; i < 100; ++i) {
    if (!io::WriteFileReplace(p.hint, std::to_string(version)).ok()) return;
    int64_t newest = version;
    while (io::Exists(io::JoinPath(p.metadata, MetadataFileName(newest + 1)))) ++newest;
    if (newest == version) return;
    version = newest;
  }
}

}  // namespace

Result<LoadedTable> FileSystemCatalog::CreateTable(const TableIdentifier& id, const Schema& schema,
                                                   const PartitionSpec& spec,
                                                   std::map<std::string, std::string> properties) {
  if (!IsName(id.ns) || !IsName(id.name)) {
    return Status::InvalidArgument("bad table identifier '" + id.ToString() + "'");
  }
  TablePaths p = PathsOf(warehouse_, id);
  if (io::Exists(p.metadata)) {
    FLOE_ASSIGN_OR_RAISE(int64_t existing, FindCurrentVersion(p));
    if (existing > 0) {
      return Status::AlreadyExists("table " + id.ToString() + " already exists at " + p.table);
    }
  }
  FLOE_ASSIGN_OR_RAISE(TableMetadata md, NewTableMetadata(schema, spec, DefaultTableLocation(id),
                                                          std::move(properties)));
  FLOE_RETURN_NOT_OK(io::CreateDirs(p.metadata));
  std::string path = io::JoinPath(p.metadata, MetadataFileName(1));
  Status st = io::WriteFileExclusive(path, TableMetadataToJson(md));
  if (st.IsAlreadyExists()) {
    return Status::AlreadyExists("table " + id.ToString() +
                                 " already exists (created "
                                 "concurrently) at " +
                                 p.table);
  }
  FLOE_RETURN_NOT_OK(st);
  UpdateHint(p, 1);
  return LoadedTable{id, std::move(md), path, 1};
}

Result<LoadedTable> FileSystemCatalog::LoadTable(const TableIdentifier& id) {
  TablePaths p = PathsOf(warehouse_, id);
  if (!io::Exists(p.metadata)) {
    return Status::NotFound("table " + id.ToString() + " does not exist (no " + p.metadata + ")");
  }
  bool hint_current = false;
  FLOE_ASSIGN_OR_RAISE(int64_t version, FindCurrentVersion(p, &hint_current));
  if (version == 0) {
    return Status::NotFound("table " + id.ToString() + " has no metadata file in " + p.metadata);
  }
  // A committer killed between its metadata file and the hint leaves the hint behind, and
  // readers such as icebird trust it: the next load puts it right (best effort).
  if (!hint_current) UpdateHint(p, version);
  std::string path = io::JoinPath(p.metadata, MetadataFileName(version));
  auto cached = cache_.find(id.ToString());
  if (cached != cache_.end() && cached->second.path == path) {
    Result<io::FileStamp> stamp = io::StampOf(path);
    if (stamp.ok() && *stamp == cached->second.stamp) {
      return LoadedTable{id, cached->second.metadata, path, version};
    }
  }
  FLOE_ASSIGN_OR_RAISE(std::string text, io::ReadFile(path));
  Result<TableMetadata> md = TableMetadataFromJson(text, path);
  if (!md.ok()) return md.status();
  Remember(id, path, *md);
  return LoadedTable{id, std::move(md).value(), path, version};
}

void FileSystemCatalog::Remember(const TableIdentifier& id, const std::string& path,
                                 const TableMetadata& md) {
  // Stamped after the write or read: a file replaced since (it never is: versions are created
  // exclusively) would show a new stamp and be read again.
  Result<io::FileStamp> stamp = io::StampOf(path);
  if (!stamp.ok()) {
    cache_.erase(id.ToString());
    return;
  }
  cache_[id.ToString()] = CachedMetadata{path, *stamp, md};
}

Result<LoadedTable> FileSystemCatalog::CommitTable(const LoadedTable& base, TableMetadata updated) {
  if (base.version < 1 || base.metadata_location.empty()) {
    return Status::InvalidArgument("CommitTable: base of " + base.id.ToString() +
                                   " was not loaded from this catalog");
  }
  if (updated.table_uuid != base.metadata.table_uuid) {
    return Status::InvalidArgument("CommitTable: table-uuid changed from " +
                                   base.metadata.table_uuid + " to " + updated.table_uuid);
  }
  FLOE_RETURN_NOT_OK(CheckCommitPaths(base.id.ToString(), base.metadata, updated));
  TablePaths p = PathsOf(warehouse_, base.id);
  int64_t next = base.version + 1;
  std::string path = io::JoinPath(p.metadata, MetadataFileName(next));
  // Cheap early check; the exclusive create below is what decides.
  if (io::Exists(path)) {
    return Status::Conflict("table " + base.id.ToString() + ": version " + std::to_string(next) +
                            " was committed concurrently; reload and retry");
  }

  std::vector<MetadataLogEntry> dropped = PrepareCommittedMetadata(base, updated);
  const bool delete_old = DeletesOldMetadataFiles(updated);

  // Test-only fault injection (docs/exactly-once.md): a crash here leaves nothing committed.
  CrashPoint("before-metadata-file");
  Status st = io::WriteFileExclusive(path, TableMetadataToJson(updated));
  if (st.IsAlreadyExists()) {
    return Status::Conflict("table " + base.id.ToString() + ": version " + std::to_string(next) +
                            " was committed concurrently; reload and retry");
  }
  FLOE_RETURN_NOT_OK(st);
  if (delete_old) {
    // Old versions are deleted on this table, so an exclusive create no longer proves `base` was
    // current: a committer more than previous-versions-max versions behind could re-create a
    // deleted v<next>. A newer version on disk means this file is such a ghost: undo it.
    FLOE_ASSIGN_OR_RAISE(std::vector<std::string> names, io::ListDir(p.metadata));
    for (const std::string& name : names) {
      int64_t v;
      if (VersionOfFileName(name, &v) && v > next) {
        (void)io::RemoveFile(path);
        return Status::Conflict("table " + base.id.ToString() + ": version " + std::to_string(v) +
                                " exists, base version " + std::to_string(base.version) +
                                " is stale; reload and retry");
      }
    }
  }
  // Committed, but version-hint.text still names the previous version.
  CrashPoint("after-metadata-file-before-hint");
  // Committed. floe's LoadTable probes past a stale hint, so failing to write it is harmless;
  // but readers such as icebird trust the hint, so keep it current.
  UpdateHint(p, next);
  if (delete_old) {
    // Iceberg's rule: the versions that fell out of the metadata log are deleted, best effort
    // (a leftover file is harmless; LoadTable takes the newest version).
    for (const MetadataLogEntry& e : dropped) {
      Result<std::string> old = UriToPath(e.metadata_file);
      if (!old.ok() || io::DirName(*old) != p.metadata) continue;  // only this table's own
      int64_t v;
      if (!VersionOfFileName(old->substr(old->rfind('/') + 1), &v) || v >= next) continue;
      (void)io::RemoveFile(*old);
    }
  }
  Remember(base.id, path, updated);
  return LoadedTable{base.id, std::move(updated), path, next};
}

std::vector<MetadataLogEntry> PrepareCommittedMetadata(const LoadedTable& base,
                                                       TableMetadata& updated) {
  updated.last_updated_ms = std::max(internal::NowMs(), base.metadata.last_updated_ms);
  updated.metadata_log.push_back(
      MetadataLogEntry{base.metadata.last_updated_ms, PathToUri(base.metadata_location)});
  int64_t max_entries = kDefaultMaxPreviousVersions;
  std::string configured = updated.Property(kMaxPreviousVersions, "");
  int64_t parsed;
  if (!configured.empty() && ParseVersion(configured, &parsed)) max_entries = parsed;
  std::vector<MetadataLogEntry> dropped;
  if (static_cast<int64_t>(updated.metadata_log.size()) > max_entries) {
    auto keep_from = updated.metadata_log.end() - static_cast<std::ptrdiff_t>(max_entries);
    dropped.assign(updated.metadata_log.begin(), keep_from);
    updated.metadata_log.erase(updated.metadata_log.begin(), keep_from);
  }
  return dropped;
}

bool DeletesOldMetadataFiles(const TableMetadata& metadata) {
  std::string delete_after = metadata.Property(kDeleteAfterCommit, "false");
  return delete_after == "true" || delete_after == "TRUE" || delete_after == "True";
}

Status EnsureNamespace(Catalog& catalog, const std::string& ns) {
  Status st = catalog.CreateNamespace(ns, {});
  return st.IsAlreadyExists() ? Status::OK() : st;
}

bool IsValidName(std::string_view name) { return IsName(name); }

std::string NewMetadataFileName(int64_t version) {
  std::string digits = std::to_string(version);
  if (digits.size() < 5) digits.insert(0, 5 - digits.size(), '0');
  return digits + "-" + internal::NewUuid() + ".metadata.json";
}

int64_t VersionOfMetadataFileName(std::string_view file_name) {
  size_t dash = file_name.find('-');
  int64_t version = -1;
  if (dash == std::string_view::npos || dash == 0) return -1;
  auto [p, ec] = std::from_chars(file_name.data(), file_name.data() + dash, version);
  if (ec != std::errc() || p != file_name.data() + dash || version < 0) return -1;
  return version;
}

Status FileSystemCatalog::DropTable(const TableIdentifier& id, bool) {
  FLOE_RETURN_NOT_OK(LoadTable(id).status());
  cache_.erase(id.ToString());
  return io::RemoveTree(PathsOf(warehouse_, id).table);
}

Status FileSystemCatalog::CreateNamespace(const std::string& ns,
                                          const std::map<std::string, std::string>& properties) {
  if (!IsName(ns)) return Status::InvalidArgument("bad namespace '" + ns + "'");
  if (!properties.empty()) {
    return Status::InvalidArgument(
        "the filesystem catalog keeps no namespace properties; use a JDBC or REST catalog");
  }
  std::string dir = io::JoinPath(warehouse_, ns);
  if (io::Exists(dir)) return Status::AlreadyExists("namespace '" + ns + "' already exists");
  return io::CreateDirs(dir);
}

Result<std::map<std::string, std::string>> FileSystemCatalog::LoadNamespace(const std::string& ns) {
  if (!IsName(ns) || !io::Exists(io::JoinPath(warehouse_, ns))) {
    return Status::NotFound("namespace '" + ns + "' does not exist in " + warehouse_);
  }
  return std::map<std::string, std::string>{};
}

Result<std::vector<std::string>> FileSystemCatalog::ListNamespaces() {
  FLOE_ASSIGN_OR_RAISE(std::vector<std::string> names, io::ListDir(warehouse_));
  std::vector<std::string> out;
  for (std::string& name : names) {
    if (IsName(name) && io::ListDir(io::JoinPath(warehouse_, name)).ok()) {
      out.push_back(std::move(name));
    }
  }
  return out;
}

Result<std::vector<TableIdentifier>> FileSystemCatalog::ListTables(const std::string& ns) {
  if (!IsName(ns)) return Status::InvalidArgument("bad namespace '" + ns + "'");
  std::string dir = io::JoinPath(warehouse_, ns);
  Result<std::vector<std::string>> names = io::ListDir(dir);
  if (!names.ok()) {
    if (names.status().IsNotFound()) {
      return Status::NotFound("namespace '" + ns + "' does not exist in " + warehouse_);
    }
    return names.status();
  }
  std::vector<TableIdentifier> out;
  for (const std::string& name : *names) {
    if (!IsName(name)) continue;
    TableIdentifier id{ns, name};
    Result<int64_t> version = FindCurrentVersion(PathsOf(warehouse_, id));
    if (version.ok() && *version > 0) out.push_back(std::move(id));
  }
  return out;
}

}  // namespace floe::iceberg
