#include "floe/iceberg/table_paths.h"

#include <set>

#include "floe/iceberg/catalog.h"

namespace floe::iceberg {
namespace {

constexpr const char* kPathProperties[] = {"write.data.path", "write.metadata.path"};

// "/a/b" or "s3://bucket/a/b", without trailing slashes; "" when it has a "." or ".." segment
// or is neither form.
std::string Canonical(const std::string& uri_or_path) {
  std::string p = uri_or_path;
  if (p.rfind("file:", 0) == 0) {
    Result<std::string> local = UriToPath(p);
    if (!local.ok()) return "";
    p = *local;
  }
  // Iceberg's equal_schemes: s3a and s3n name the same objects as s3.
  for (const char* alias : {"s3a://", "s3n://"}) {
    if (p.rfind(alias, 0) == 0) p = "s3://" + p.substr(6);
  }
  const bool s3 = p.rfind("s3://", 0) == 0;
  if (!s3 && (p.empty() || p[0] != '/')) return "";
  const size_t body = s3 ? 5 : 0;
  std::string out = p.substr(0, body);
  size_t i = body;
  while (i <= p.size()) {
    size_t slash = p.find('/', i);
    if (slash == std::string::npos) slash = p.size();
    std::string segment = p.substr(i, slash - i);
    if (segment == "." || segment == "..") return "";
    if (!segment.empty()) out += (out.size() > body ? "/" : (s3 ? "" : "/")) + segment;
    i = slash + 1;
  }
  return out;
}

}  // namespace

bool IsInsideLocation(const std::string& location, const std::string& uri_or_path) {
  const std::string root = Canonical(location);
  const std::string path = Canonical(uri_or_path);
  if (root.empty() || path.empty() || path.size() <= root.size() + 1) return false;
  return path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
}

Status CheckPathProperties(const std::string& table, const TableMetadata& metadata,
                           const TableMetadata* base) {
  for (const char* key : kPathProperties) {
    auto it = metadata.properties.find(key);
    if (it == metadata.properties.end()) continue;
    if (base != nullptr && base->location == metadata.location &&
        base->Property(key, "") == it->second) {
      continue;  // unchanged: another tool's table stays writable by its other commits
    }
    if (!IsInsideLocation(metadata.location, it->second)) {
      return Status::InvalidArgument(
          "table " + table + ": property " + key + " = '" + it->second +
          "' is not inside the table's location '" + metadata.location +
          "': floe keeps every file of a table under its location, so that its maintenance "
          "deletes nothing of another table's; use a path below the location");
    }
  }
  return Status::OK();
}

Status CheckCommitPaths(const std::string& table, const TableMetadata& base,
                        const TableMetadata& updated) {
  if (updated.location != base.location && !IsInsideLocation(base.location, updated.location)) {
    return Status::InvalidArgument("table " + table + ": location '" + updated.location +
                                   "' is not inside the table's location '" + base.location +
                                   "': a table may not move onto other files");
  }
  FLOE_RETURN_NOT_OK(CheckPathProperties(table, updated, &base));
  std::set<int64_t> known;
  for (const Snapshot& s : base.snapshots) known.insert(s.snapshot_id);
  for (const Snapshot& s : updated.snapshots) {
    if (known.count(s.snapshot_id) > 0) continue;
    if (!IsInsideLocation(updated.location, s.manifest_list)) {
      return Status::InvalidArgument(
          "table " + table + ": snapshot " + std::to_string(s.snapshot_id) + "'s manifest-list '" +
          s.manifest_list + "' is not inside the table's location '" + updated.location +
          "': a snapshot may reference only the table's own metadata");
    }
  }
  return Status::OK();
}

}  // namespace floe::iceberg
