#pragma once

#include <map>
#include <memory>
#include <string>

#include "floe/catalog/sql_database.h"
#include "floe/iceberg/catalog.h"

namespace floe::catalog {

// Iceberg's JDBC catalog (Java JdbcCatalog's tables, so Java and Python clients share the
// database):
//   iceberg_tables(catalog_name, table_namespace, table_name, metadata_location,
//                  previous_metadata_location, iceberg_type)
//   iceberg_namespace_properties(catalog_name, namespace, property_key, property_value)
// A commit writes <location>/metadata/<NNNNN>-<uuid>.metadata.json, then swaps the row's
// metadata_location with `UPDATE ... WHERE metadata_location = <base>`: of several committers
// holding one base exactly one changes a row. A database without iceberg_type (Iceberg's
// schema V0) is used as it is.
class JdbcCatalog final : public iceberg::Catalog {
 public:
  // Creates the two tables if missing. `warehouse` is an absolute local path or an s3://
  // location; the tables' files are read and written with `file_io`.
  static Result<std::unique_ptr<JdbcCatalog>> Make(std::unique_ptr<SqlDatabase> db,
                                                   std::string catalog_name, std::string warehouse,
                                                   io::FileIO file_io);

  Result<iceberg::LoadedTable> CreateTable(const iceberg::TableIdentifier& id,
                                           const iceberg::Schema& schema,
                                           const iceberg::PartitionSpec& spec,
                                           std::map<std::string, std::string> properties) override;
  Result<iceberg::LoadedTable> LoadTable(const iceberg::TableIdentifier& id) override;
  // Conflict when the row no longer holds base's metadata file (the new file is removed);
  // Unavailable when the database was lost during the swap: the outcome is unknown and the
  // new file is kept (the next load tells).
  Result<iceberg::LoadedTable> CommitTable(const iceberg::LoadedTable& base,
                                           iceberg::TableMetadata updated) override;
  Result<std::vector<iceberg::TableIdentifier>> ListTables(const std::string& ns) override;
  // With `purge`, the table's directory under its location is removed too.
  Status DropTable(const iceberg::TableIdentifier& id, bool purge) override;
  Status CreateNamespace(const std::string& ns,
                         const std::map<std::string, std::string>& properties) override;
  Result<std::map<std::string, std::string>> LoadNamespace(const std::string& ns) override;
  Result<std::vector<std::string>> ListNamespaces() override;
  std::string DefaultTableLocation(const iceberg::TableIdentifier& id) const override;
  const io::FileIO& file_io() const override { return file_io_; }

  JdbcCatalog(std::unique_ptr<SqlDatabase> db, std::string catalog_name, std::string warehouse,
              io::FileIO file_io)
      : db_(std::move(db)),
        name_(std::move(catalog_name)),
        warehouse_(std::move(warehouse)),
        file_io_(std::move(file_io)) {}

 private:
  Status InitializeTables();
  // The row's metadata_location; NotFound if there is no such table.
  Result<std::string> CurrentLocation(const iceberg::TableIdentifier& id);
  Result<iceberg::LoadedTable> Read(const iceberg::TableIdentifier& id, const std::string& uri);
  std::string Where() const;

  std::unique_ptr<SqlDatabase> db_;
  std::string name_;
  std::string warehouse_;
  io::FileIO file_io_;
  bool typed_ = true;  // the iceberg_type column exists (schema V1)
  // Metadata files are never rewritten, so the last one read per table is reused as is.
  std::map<std::string, iceberg::LoadedTable> cache_;
};

}  // namespace floe::catalog
