#pragma once

// Test-only helpers shared by data_writer_test.cc and scan_test.cc.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "floe/common/civil_time.h"
#include "floe/common/record_batch.h"
#include "floe/common/testing/temp_dir.h"
#include "floe/iceberg/schema.h"
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

}  // namespace floe::iceberg::testing
