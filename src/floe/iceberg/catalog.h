#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/iceberg/table_metadata.h"
#include "floe/io/file.h"
#include "floe/io/file_io.h"

namespace floe::iceberg {

// "namespace.table" (one namespace level for now).
struct TableIdentifier {
  std::string ns;
  std::string name;

  // Errors explain the expected form; names are [A-Za-z0-9_]+.
  static Result<TableIdentifier> Parse(std::string_view text);
  std::string ToString() const { return ns + "." + name; }
  bool operator==(const TableIdentifier&) const = default;
};

// A table's metadata as loaded from a catalog, with where it came from (the commit base).
struct LoadedTable {
  TableIdentifier id;
  TableMetadata metadata;
  std::string metadata_location;  // absolute path of the metadata file
  int64_t version = 0;            // N of v<N>.metadata.json in the filesystem catalog
};

// Catalog is where tables are found and where the atomic metadata swap happens.
// Implementations must be safe to use from several processes at once: CommitTable succeeds
// for exactly one of several committers holding the same base. Thread-compatible.
class Catalog {
 public:
  virtual ~Catalog() = default;
  // AlreadyExists if the table exists.
  virtual Result<LoadedTable> CreateTable(const TableIdentifier& id, const Schema& schema,
                                          const PartitionSpec& spec,
                                          std::map<std::string, std::string> properties) = 0;
  // NotFound if the table does not exist; Corruption if its metadata cannot be read.
  virtual Result<LoadedTable> LoadTable(const TableIdentifier& id) = 0;
  // Swaps `base` for `updated`, appending base's metadata file to updated's metadata log and
  // setting last-updated-ms. Conflict if `base` is no longer the current version (reload,
  // re-apply, retry); nothing changes then.
  virtual Result<LoadedTable> CommitTable(const LoadedTable& base, TableMetadata updated) = 0;
  virtual Result<std::vector<TableIdentifier>> ListTables(const std::string& ns) = 0;
  // Forgets the table (NotFound if missing); with `purge` its directory (data and metadata)
  // goes too.
  virtual Status DropTable(const TableIdentifier& id, bool purge) = 0;
  // AlreadyExists if it exists. CreateTable needs the namespace (as Iceberg's catalogs do).
  virtual Status CreateNamespace(const std::string& ns,
                                 const std::map<std::string, std::string>& properties) = 0;
  // NotFound if the namespace does not exist.
  virtual Result<std::map<std::string, std::string>> LoadNamespace(const std::string& ns) = 0;
  virtual Result<std::vector<std::string>> ListNamespaces() = 0;
  // Absolute file:// URI where a new table's files go.
  virtual std::string DefaultTableLocation(const TableIdentifier& id) const = 0;
  // What the files of this catalog's tables (metadata, manifests, data) are read and written
  // with: local paths, and s3:// objects with this catalog's own S3 settings.
  virtual const io::FileIO& file_io() const = 0;
};

// What every catalog's commit does to the new metadata before writing it: sets last-updated-ms,
// appends the base's file to the metadata log and cuts the log to
// write.metadata.previous-versions-max (default 100). Returns the entries cut off; a catalog
// deletes their files after its commit succeeded when DeletesOldMetadataFiles(updated).
std::vector<MetadataLogEntry> PrepareCommittedMetadata(const LoadedTable& base,
                                                       TableMetadata& updated);
bool DeletesOldMetadataFiles(const TableMetadata& metadata);
// Iceberg's name for version `version` of a table's metadata in catalogs that keep the current
// file's location themselves (JDBC, REST): "00042-<uuid>.metadata.json"; and back (-1 if
// `file_name` is not of that form).
std::string NewMetadataFileName(int64_t version);
int64_t VersionOfMetadataFileName(std::string_view file_name);
// CreateNamespace that treats an existing namespace as success.
Status EnsureNamespace(Catalog& catalog, const std::string& ns);
// Namespace and table names: [A-Za-z0-9_]+.
bool IsValidName(std::string_view name);

// The filesystem ("hadoop") catalog, floe's embedded default:
//   <warehouse>/<ns>/<table>/metadata/v<N>.metadata.json  created without overwriting
//   <warehouse>/<ns>/<table>/metadata/version-hint.text   holds N (a hint; listing decides)
//   <warehouse>/<ns>/<table>/data/...                      data and delete files
class FileSystemCatalog final : public Catalog {
 public:
  // `warehouse` may be relative; it is made absolute once here.
  static Result<std::unique_ptr<FileSystemCatalog>> Make(const std::string& warehouse);

  Result<LoadedTable> CreateTable(const TableIdentifier& id, const Schema& schema,
                                  const PartitionSpec& spec,
                                  std::map<std::string, std::string> properties) override;
  Result<LoadedTable> LoadTable(const TableIdentifier& id) override;
  Result<LoadedTable> CommitTable(const LoadedTable& base, TableMetadata updated) override;
  Result<std::vector<TableIdentifier>> ListTables(const std::string& ns) override;
  // The table is its directory: dropping removes it, purge or not (as Iceberg's HadoopCatalog).
  Status DropTable(const TableIdentifier& id, bool purge) override;
  // A namespace is a directory under the warehouse; it has no properties.
  Status CreateNamespace(const std::string& ns,
                         const std::map<std::string, std::string>& properties) override;
  Result<std::map<std::string, std::string>> LoadNamespace(const std::string& ns) override;
  Result<std::vector<std::string>> ListNamespaces() override;
  std::string DefaultTableLocation(const TableIdentifier& id) const override;
  // Local files only, as its warehouse.
  const io::FileIO& file_io() const override { return file_io_; }

  const std::string& warehouse() const { return warehouse_; }

 private:
  struct PrivateTag {
    explicit PrivateTag() = default;
  };  // lets Make use std::make_unique while others must call Make

 public:
  FileSystemCatalog(PrivateTag, std::string warehouse) : warehouse_(std::move(warehouse)) {}

 private:
  // The metadata this catalog last loaded or committed per table: a streaming committer loads
  // the version it wrote itself a second earlier, and parsing it again would make every commit
  // cost as much as the table's history (the JSON grows with each snapshot kept).
  struct CachedMetadata {
    std::string path;
    io::FileStamp stamp;
    TableMetadata metadata;
  };
  void Remember(const TableIdentifier& id, const std::string& path, const TableMetadata& md);

  std::string warehouse_;                        // absolute path
  io::FileIO file_io_;                           // no S3 settings
  std::map<std::string, CachedMetadata> cache_;  // by "ns.table"
};

// "file:///abs/path" <-> "/abs/path"; s3:// URIs stay as they are (a FileIO takes them).
std::string PathToUri(const std::string& absolute_path);
Result<std::string> UriToPath(std::string_view uri);

}  // namespace floe::iceberg
