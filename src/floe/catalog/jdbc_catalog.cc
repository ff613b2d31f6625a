#include "floe/catalog/jdbc_catalog.h"

#include <algorithm>

#include "floe/common/crash_point.h"
#include "floe/iceberg/table_paths.h"
#include "floe/io/file.h"
#include "floe/io/s3_client.h"

namespace floe::catalog {

namespace {

using iceberg::LoadedTable;
using iceberg::TableIdentifier;
using iceberg::TableMetadata;

// Iceberg's JdbcUtil, schema V1 (V0 lacks iceberg_type).
constexpr const char* kCreateTables =
    "CREATE TABLE IF NOT EXISTS iceberg_tables ("
    "catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
    "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
    "previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), "
    "PRIMARY KEY (catalog_name, table_namespace, table_name))";
constexpr const char* kCreateNamespaceProperties =
    "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
    "catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, "
    "property_key VARCHAR(255), property_value VARCHAR(1000), "
    "PRIMARY KEY (catalog_name, namespace, property_key))";
constexpr const char* kExistsProperty = "exists";

std::string FileName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

Result<std::unique_ptr<JdbcCatalog>> JdbcCatalog::Make(std::unique_ptr<SqlDatabase> db,
                                                       std::string catalog_name,
                                                       std::string warehouse, io::FileIO file_io) {
  if (catalog_name.empty()) return Status::InvalidArgument("JDBC catalog name is empty");
  if (warehouse.empty() || (warehouse[0] != '/' && !io::IsS3Uri(warehouse))) {
    return Status::InvalidArgument("JDBC catalog warehouse '" + warehouse +
                                   "' is not an absolute local path or an s3:// location");
  }
  auto catalog = std::make_unique<JdbcCatalog>(std::move(db), std::move(catalog_name),
                                               std::move(warehouse), std::move(file_io));
  FLOE_RETURN_NOT_OK(catalog->InitializeTables());
  return catalog;
}

std::string JdbcCatalog::Where() const {
  return "JDBC catalog '" + name_ + "' (" + db_->description() + ")";
}

Status JdbcCatalog::InitializeTables() {
  for (const char* ddl : {kCreateTables, kCreateNamespaceProperties}) {
    Result<int64_t> done = db_->Execute(ddl, {});
    // Two processes creating the same table at once: PostgreSQL lets one of the
    // IF NOT EXISTS statements fail on its own catalog's unique index.
    if (!done.ok() && done.status().IsAlreadyExists()) done = db_->Execute(ddl, {});
    if (!done.ok()) return done.status().WithContext(Where() + ": creating its tables");
  }
  typed_ = db_->Query("SELECT iceberg_type FROM iceberg_tables WHERE 1 = 0", {}).ok();
  return Status::OK();
}

std::string JdbcCatalog::DefaultTableLocation(const TableIdentifier& id) const {
  return iceberg::PathToUri(io::JoinPath(io::JoinPath(warehouse_, id.ns), id.name));
}

Result<std::string> JdbcCatalog::CurrentLocation(const TableIdentifier& id) {
  std::string sql =
      "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND "
      "table_namespace = ? AND table_name = ?";
  if (typed_) sql += " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)";
  FLOE_ASSIGN_OR_RAISE(std::vector<SqlRow> rows, db_->Query(sql, {name_, id.ns, id.name}));
  if (rows.empty()) {
    return Status::NotFound("table " + id.ToString() + " does not exist in " + Where());
  }
  if (!rows[0][0] || rows[0][0]->empty()) {
    return Status::Corruption("table " + id.ToString() + " in " + Where() +
                              " has no metadata_location");
  }
  return *rows[0][0];
}

Result<LoadedTable> JdbcCatalog::Read(const TableIdentifier& id, const std::string& uri) {
  auto cached = cache_.find(id.ToString());
  FLOE_ASSIGN_OR_RAISE(std::string path, iceberg::UriToPath(uri));
  if (cached != cache_.end() && cached->second.metadata_location == path) return cached->second;
  Result<std::string> text = file_io_.ReadFile(path);
  if (!text.ok()) {
    return text.status().WithContext("table " + id.ToString() + " in " + Where() +
                                     ": its current metadata file");
  }
  FLOE_ASSIGN_OR_RAISE(TableMetadata md, iceberg::TableMetadataFromJson(*text, path));
  LoadedTable loaded{id, std::move(md), path, iceberg::VersionOfMetadataFileName(FileName(path))};
  cache_[id.ToString()] = loaded;
  return loaded;
}

Result<LoadedTable> JdbcCatalog::LoadTable(const TableIdentifier& id) {
  FLOE_ASSIGN_OR_RAISE(std::string uri, CurrentLocation(id));
  return Read(id, uri);
}

Result<LoadedTable> JdbcCatalog::CreateTable(const TableIdentifier& id,
                                             const iceberg::Schema& schema,
                                             const iceberg::PartitionSpec& spec,
                                             std::map<std::string, std::string> properties) {
  if (!iceberg::IsValidName(id.ns) || !iceberg::IsValidName(id.name)) {
    return Status::InvalidArgument("bad table identifier '" + id.ToString() + "'");
  }
  FLOE_RETURN_NOT_OK(LoadNamespace(id.ns).status());
  if (CurrentLocation(id).ok()) {
    return Status::AlreadyExists("table " + id.ToString() + " already exists in " + Where());
  }
  std::string location = DefaultTableLocation(id);
  FLOE_ASSIGN_OR_RAISE(TableMetadata md,
                       iceberg::NewTableMetadata(schema, spec, location, std::move(properties)));
  FLOE_ASSIGN_OR_RAISE(std::string table_dir, iceberg::UriToPath(location));
  std::string dir = io::JoinPath(table_dir, "metadata");
  FLOE_RETURN_NOT_OK(file_io_.CreateDirs(dir));
  std::string path = io::JoinPath(dir, iceberg::NewMetadataFileName(0));
  FLOE_RETURN_NOT_OK(file_io_.WriteFileExclusive(path, iceberg::TableMetadataToJson(md)));
  std::string sql =
      typed_ ? "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
               "metadata_location, previous_metadata_location, iceberg_type) "
               "VALUES (?, ?, ?, ?, NULL, 'TABLE')"
             : "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
               "metadata_location, previous_metadata_location) VALUES (?, ?, ?, ?, NULL)";
  Result<int64_t> inserted = db_->Execute(sql, {name_, id.ns, id.name, iceberg::PathToUri(path)});
  if (!inserted.ok()) {
    (void)file_io_.RemoveFile(path);
    if (inserted.status().IsAlreadyExists()) {
      return Status::AlreadyExists("table " + id.ToString() + " already exists in " + Where() +
                                   " (created concurrently)");
    }
    return inserted.status().WithContext("creating table " + id.ToString());
  }
  LoadedTable loaded{id, std::move(md), path, 0};
  cache_[id.ToString()] = loaded;
  return loaded;
}

Result<LoadedTable> JdbcCatalog::CommitTable(const LoadedTable& base, TableMetadata updated) {
  if (base.metadata_location.empty()) {
    return Status::InvalidArgument("CommitTable: base of " + base.id.ToString() +
                                   " was not loaded from this catalog");
  }
  if (updated.table_uuid != base.metadata.table_uuid) {
    return Status::InvalidArgument("CommitTable: table-uuid changed from " +
                                   base.metadata.table_uuid + " to " + updated.table_uuid);
  }
  FLOE_RETURN_NOT_OK(iceberg::CheckCommitPaths(base.id.ToString(), base.metadata, updated));
  std::string base_uri = iceberg::PathToUri(base.metadata_location);
  // Cheap early check, as Java's JdbcTableOperations does; the UPDATE below decides.
  FLOE_ASSIGN_OR_RAISE(std::string current, CurrentLocation(base.id));
  auto stale = [&] {
    return Status::Conflict(
        "table " + base.id.ToString() + " in " + Where() + " was committed concurrently (base " +
        FileName(base.metadata_location) + " is no longer current); " + "reload and retry");
  };
  if (current != base_uri) return stale();

  std::vector<iceberg::MetadataLogEntry> dropped = iceberg::PrepareCommittedMetadata(base, updated);
  FLOE_ASSIGN_OR_RAISE(std::string table_dir, iceberg::UriToPath(updated.location));
  // A file name not of Iceberg's form (another writer's) counts as version -1, as in Java.
  int64_t next = std::max<int64_t>(base.version, -1) + 1;
  std::string path =
      io::JoinPath(io::JoinPath(table_dir, "metadata"), iceberg::NewMetadataFileName(next));
  CrashPoint("before-metadata-file");
  FLOE_RETURN_NOT_OK(file_io_.WriteFileExclusive(path, iceberg::TableMetadataToJson(updated)));
  CrashPoint("after-metadata-file-before-swap");
  std::string sql =
      "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
      "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND "
      "metadata_location = ?";
  if (typed_) sql += " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)";
  Result<int64_t> changed = db_->Execute(
      sql, {iceberg::PathToUri(path), base_uri, name_, base.id.ns, base.id.name, base_uri});
  if (!changed.ok()) {
    // The statement may or may not have run: keep the file, which is harmless if unused.
    return Status::Unavailable("commit to table " + base.id.ToString() +
                               " has an unknown outcome: " + changed.status().message());
  }
  if (*changed != 1) {
    (void)file_io_.RemoveFile(path);
    return stale();
  }
  if (iceberg::DeletesOldMetadataFiles(updated)) {
    for (const iceberg::MetadataLogEntry& e : dropped) {
      Result<std::string> old = iceberg::UriToPath(e.metadata_file);
      if (old.ok() && io::DirName(*old) == io::DirName(path)) (void)file_io_.RemoveFile(*old);
    }
  }
  LoadedTable committed{base.id, std::move(updated), path, next};
  cache_[base.id.ToString()] = committed;
  return committed;
}

Result<std::vector<TableIdentifier>> JdbcCatalog::ListTables(const std::string& ns) {
  FLOE_RETURN_NOT_OK(LoadNamespace(ns).status());
  std::string sql =
      "SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?";
  if (typed_) sql += " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)";
  sql += " ORDER BY table_name";
  FLOE_ASSIGN_OR_RAISE(std::vector<SqlRow> rows, db_->Query(sql, {name_, ns}));
  std::vector<TableIdentifier> out;
  for (const SqlRow& row : rows) {
    if (row[0]) out.push_back(TableIdentifier{ns, *row[0]});
  }
  return out;
}

Status JdbcCatalog::DropTable(const TableIdentifier& id, bool purge) {
  std::string location;
  if (purge) {
    FLOE_ASSIGN_OR_RAISE(LoadedTable table, LoadTable(id));
    FLOE_ASSIGN_OR_RAISE(location, iceberg::UriToPath(table.metadata.location));
  }
  std::string sql =
      "DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND "
      "table_name = ?";
  if (typed_) sql += " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)";
  FLOE_ASSIGN_OR_RAISE(int64_t deleted, db_->Execute(sql, {name_, id.ns, id.name}));
  cache_.erase(id.ToString());
  if (deleted == 0) {
    return Status::NotFound("table " + id.ToString() + " does not exist in " + Where());
  }
  return location.empty() ? Status::OK() : file_io_.RemoveTree(location);
}

Status JdbcCatalog::CreateNamespace(const std::string& ns,
                                    const std::map<std::string, std::string>& properties) {
  if (!iceberg::IsValidName(ns)) return Status::InvalidArgument("bad namespace '" + ns + "'");
  if (LoadNamespace(ns).ok()) {
    return Status::AlreadyExists("namespace '" + ns + "' already exists in " + Where());
  }
  std::map<std::string, std::string> rows = properties;
  rows[kExistsProperty] = "true";
  for (const auto& [key, value] : rows) {
    Result<int64_t> inserted = db_->Execute(
        "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, "
        "property_value) VALUES (?, ?, ?, ?)",
        {name_, ns, key, value});
    if (!inserted.ok()) {
      if (inserted.status().IsAlreadyExists()) {
        return Status::AlreadyExists("namespace '" + ns + "' already exists in " + Where() +
                                     " (created concurrently)");
      }
      return inserted.status();
    }
  }
  return Status::OK();
}

Result<std::map<std::string, std::string>> JdbcCatalog::LoadNamespace(const std::string& ns) {
  FLOE_ASSIGN_OR_RAISE(
      std::vector<SqlRow> rows,
      db_->Query("SELECT property_key, property_value FROM iceberg_namespace_properties "
                 "WHERE catalog_name = ? AND namespace = ?",
                 {name_, ns}));
  std::map<std::string, std::string> properties;
  for (const SqlRow& row : rows) {
    if (row[0] && *row[0] != kExistsProperty) properties[*row[0]] = row[1].value_or("");
  }
  if (rows.empty()) {
    // Java's catalog also counts a namespace that only its tables name.
    FLOE_ASSIGN_OR_RAISE(std::vector<SqlRow> tables,
                         db_->Query("SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND "
                                    "table_namespace = ? LIMIT 1",
                                    {name_, ns}));
    if (tables.empty()) {
      return Status::NotFound("namespace '" + ns + "' does not exist in " + Where());
    }
  }
  return properties;
}

Result<std::vector<std::string>> JdbcCatalog::ListNamespaces() {
  FLOE_ASSIGN_OR_RAISE(
      std::vector<SqlRow> rows,
      db_->Query("SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ? UNION "
                 "SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ? "
                 "ORDER BY 1",
                 {name_, name_}));
  std::vector<std::string> out;
  for (const SqlRow& row : rows) {
    if (row[0]) out.push_back(*row[0]);
  }
  return out;
}

}  // namespace floe::catalog
