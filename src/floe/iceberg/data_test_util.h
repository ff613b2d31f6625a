#pragma once

// Test-only helpers shared by data_writer_test.cc, scan_test.cc and rewrite_test.cc.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/civil_time.h"
#include "floe/common/record_batch.h"
#include "floe/common/testing/temp_dir.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/data_writer.h"
#include "floe/iceberg/partition_spec.h"
#include "floe/iceberg/rewrite.h"
#include "floe/iceberg/scan.h"
#include "floe/iceberg/schema.h"
#include "floe/iceberg/snapshot_update.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::iceberg::testing {

#define FLOE_ASSERT_OK(expr)                                  \
  do {                                                        \
    ::floe::Status _st = (expr);                              \
    ASSERT_TRUE(_st.ok()) << #expr << ": " << _st.ToString(); \
  } while (false)

#define FLOE_ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                 \
  auto FLOE_CONCAT_(_res_, __LINE__) = (rexpr);                               \
  ASSERT_TRUE(FLOE_CONCAT_(_res_, __LINE__).ok())                             \
      << #rexpr << ": " << FLOE_CONCAT_(_res_, __LINE__).status().ToString(); \
  lhs = std::move(FLOE_CONCAT_(_res_, __LINE__)).value()

// A fresh directory, removed on destruction.
using ::floe::testing::TempDir;

using Row = std::vector<Value>;

inline RecordBatch MakeBatch(std::shared_ptr<const BatchSchema> schema,
                             const std::vector<Row>& rows) {
  RecordBatch batch(schema);
  for (const Row& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) AppendValue(&batch.mutable_column(c), row[c]);
  }
  return batch;
}

inline std::vector<Row> RowsOf(const RecordBatch& batch) {
  std::vector<Row> rows(batch.num_rows());
  for (size_t r = 0; r < batch.num_rows(); ++r) {
    for (size_t c = 0; c < batch.num_columns(); ++c) rows[r].push_back(ValueAt(batch.column(c), r));
  }
  return rows;
}

inline std::vector<Row> Sorted(std::vector<Row> rows) {
  std::sort(rows.begin(), rows.end());
  return rows;
}

inline std::string Describe(const std::vector<Row>& rows, const std::vector<DataType>& types) {
  std::string out;
  for (const Row& row : rows) {
    out += "(";
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) out += ", ";
      out +=
          std::holds_alternative<std::monostate>(row[c]) ? "null" : ValueToString(types[c], row[c]);
    }
    out += ")\n";
  }
  return out;
}

inline int64_t Micros(int y, int m, int d, int hh = 0) {
  return DaysFromCivil(y, m, d) * kMicrosPerDay + hh * kMicrosPerHour;
}

// A table in a filesystem catalog plus helpers to commit writer output and scan it back. With
// `for_interop` and FLOE_INTEROP_DIR set, the table lives under $FLOE_INTEROP_DIR/warehouse so an
// independent reader can check it afterwards.
class TableHarness {
 public:
  static Result<std::unique_ptr<TableHarness>> Make(const std::string& tmp, const std::string& ns,
                                                    const std::string& name, const Schema& schema,
                                                    const std::string& partition_clause,
                                                    std::map<std::string, std::string> props,
                                                    bool for_interop = false) {
    auto h = std::make_unique<TableHarness>();
    const char* interop = std::getenv("FLOE_INTEROP_DIR");
    if (for_interop && interop != nullptr) h->interop_dir_ = interop;
    std::string warehouse =
        h->interop_dir_.empty() ? tmp + "/warehouse" : h->interop_dir_ + "/warehouse";
    FLOE_ASSIGN_OR_RAISE(h->catalog_, FileSystemCatalog::Make(warehouse));
    h->id_ = TableIdentifier{ns, name};
    if (!h->interop_dir_.empty()) {
      std::error_code ec;  // a rerun replaces the previous run's table
      std::filesystem::remove_all(h->catalog_->warehouse() + "/" + ns + "/" + name, ec);
    }
    PartitionSpec spec;
    if (!partition_clause.empty()) {
      FLOE_ASSIGN_OR_RAISE(spec, ParsePartitionClause(partition_clause, schema));
    }
    FLOE_ASSIGN_OR_RAISE(LoadedTable t, h->catalog_->CreateTable(h->id_, schema, spec, props));
    (void)t;
    return h;
  }

  Result<TableMetadata> Load() {
    FLOE_ASSIGN_OR_RAISE(LoadedTable t, catalog_->LoadTable(id_));
    return std::move(t.metadata);
  }

  Result<FileWriterConfig> Config(const TableMetadata& md) {
    return ConfigFromTableProperties(io::FileIO(), md,
                                     "00000-0-test-" + std::to_string(++writers_));
  }

  Result<Snapshot> Commit(const WriteResult& files) {
    SnapshotChanges changes;
    changes.added_data_files = files.data_files;
    changes.added_delete_files = files.delete_files;
    return CommitSnapshot(*catalog_, id_, changes);
  }

  // Runs one DeltaWriter commit: each (is_delete, batch) goes to Delete or Add.
  Result<Snapshot> CommitDelta(WriteMode mode,
                               const std::vector<std::pair<bool, RecordBatch>>& batches) {
    FLOE_ASSIGN_OR_RAISE(TableMetadata md, Load());
    FLOE_ASSIGN_OR_RAISE(FileWriterConfig config, Config(md));
    FLOE_ASSIGN_OR_RAISE(auto writer, DeltaWriter::Make(md, mode, config));
    for (const auto& [is_delete, batch] : batches) {
      FLOE_RETURN_NOT_OK(is_delete ? writer->Delete(batch) : writer->Add(batch));
    }
    FLOE_ASSIGN_OR_RAISE(WriteResult result, writer->Finish());
    return Commit(result);
  }

  Result<RewriteResult> Compact(const CompactOptions& options) {
    return RewriteDataFiles(*catalog_, id_, options);
  }

  Result<std::vector<Row>> Scan(std::optional<int64_t> snapshot_id = std::nullopt) {
    FLOE_ASSIGN_OR_RAISE(TableMetadata md, Load());
    std::vector<Row> rows;
    FLOE_RETURN_NOT_OK(ScanTable(io::FileIO(), md, snapshot_id, [&](const RecordBatch& b) {
      for (Row& r : RowsOf(b)) rows.push_back(std::move(r));
      return Status::OK();
    }));
    return rows;
  }

  const TableIdentifier& id() const { return id_; }
  FileSystemCatalog& catalog() { return *catalog_; }
  const std::string& interop_dir() const { return interop_dir_; }

 private:
  std::unique_ptr<FileSystemCatalog> catalog_;
  TableIdentifier id_;
  std::string interop_dir_;
  int writers_ = 0;
};

inline std::vector<DataType> TypesOf(const Schema& s) {
  std::vector<DataType> t;
  for (const Field& f : s.fields) t.push_back(f.type);
  return t;
}

}  // namespace floe::iceberg::testing
