#pragma once

// Helpers shared by the connector tests: a collecting Collector, a collecting sink operator for
// LocalJob runs, table descriptors from SQL column lists, temp directories.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/testing/temp_dir.h"
#include "floe/connectors/connector.h"
#include "floe/format/json/json_lines.h"
#include "floe/runtime/operator.h"
#include "floe/sql/parser.h"

namespace floe::connectors::testing {

// Collects what an operator emits (direct operator tests, no runtime).
class CollectingCollector final : public runtime::Collector {
 public:
  Status Emit(RecordBatch batch) override {
    batches.push_back(std::move(batch));
    return Status::OK();
  }
  Status EmitSide(int port, RecordBatch batch) override {
    side[port].push_back(std::move(batch));
    return Status::OK();
  }
  Status EmitWatermark(runtime::Watermark watermark) override {
    watermarks.push_back(watermark);
    return Status::OK();
  }
  Status EmitClaimChange(const runtime::ClaimChange& change) override {
    claims.emplace_back(batches.size(), change);
    return Status::OK();
  }
  std::vector<RecordBatch> batches;
  std::map<int, std::vector<RecordBatch>> side;  // by side output
  std::vector<runtime::Watermark> watermarks;
  // Each claim change with the number of batches emitted before it.
  std::vector<std::pair<size_t, runtime::ClaimChange>> claims;
};

// Every row of `batches` as a JSON line (AppendRowAsJson): an order-preserving, type-aware
// rendering that is easy to compare.
inline std::vector<std::string> JsonRows(const std::vector<RecordBatch>& batches) {
  std::vector<std::string> rows;
  for (const RecordBatch& b : batches) {
    for (size_t i = 0; i < b.num_rows(); ++i) {
      std::string line;
      json::AppendRowAsJson(b, i, &line);
      rows.push_back(std::move(line));
    }
  }
  return rows;
}

inline std::vector<int64_t> Int64Column(const std::vector<RecordBatch>& batches, size_t col) {
  std::vector<int64_t> v;
  for (const RecordBatch& b : batches) {
    for (size_t i = 0; i < b.num_rows(); ++i) v.push_back(b.column(col).Get<int64_t>(i));
  }
  return v;
}

// What a CollectingSink saw, shared across its subtasks and runs.
struct Collected {
  std::mutex mu;
  std::vector<RecordBatch> batches;
  std::vector<uint64_t> completed;  // checkpoint ids notified
  std::vector<RecordBatch> Batches() {
    std::lock_guard lock(mu);
    return batches;
  }
};

// A sink operator that keeps every batch in a Collected.
class CollectingSink final : public runtime::Operator {
 public:
  explicit CollectingSink(std::shared_ptr<Collected> out) : out_(std::move(out)) {}
  Status ProcessBatch(const RecordBatch& batch, int, runtime::Collector&) override {
    std::lock_guard lock(out_->mu);
    out_->batches.push_back(batch);
    return Status::OK();
  }
  Status OnCheckpointComplete(runtime::CheckpointId id) override {
    std::lock_guard lock(out_->mu);
    out_->completed.push_back(id.value);
    return Status::OK();
  }

 private:
  std::shared_ptr<Collected> out_;
};

inline runtime::OperatorFactory CollectingSinkFactory(std::shared_ptr<Collected> out) {
  return [out](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
    return std::unique_ptr<runtime::Operator>(std::make_unique<CollectingSink>(out));
  };
}

// A table descriptor from "CREATE TABLE name (<columns>) WITH (<options>)" through the real
// parser (field ids 1..n, primary-key columns NOT NULL as the planner does).
inline TableDescriptor Table(const std::string& name, const std::string& columns,
                             std::map<std::string, std::string> options) {
  Result<sql::Script> script = sql::ParseScript("CREATE TABLE " + name + " (" + columns + ")");
  EXPECT_TRUE(script.ok()) << script.status().ToString();
  TableDescriptor d;
  d.name = name;
  auto schema = std::make_shared<BatchSchema>();
  const sql::CreateTable& t = script->tables.at(0);
  int32_t id = 1;
  for (const sql::ColumnDef& c : t.columns) {
    bool in_key = false;
    for (const std::string& k : t.primary_key) in_key |= k == c.name;
    schema->fields.push_back(Field{c.name, c.type, !c.not_null && !in_key, id++});
  }
  d.schema = std::move(schema);
  d.primary_key = t.primary_key;
  d.options = std::move(options);
  return d;
}

inline runtime::OperatorContext Context(const std::string& vertex, uint32_t subtask = 0,
                                        uint32_t parallelism = 1) {
  runtime::OperatorContext ctx;
  ctx.task.vertex = vertex;
  ctx.task.subtask = runtime::SubtaskIndex(subtask);
  ctx.task.parallelism = parallelism;
  return ctx;
}

using ::floe::testing::TempDir;

}  // namespace floe::connectors::testing
