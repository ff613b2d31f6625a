#include "floe/verify/table_verify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "floe/format/json/json_lines.h"
#include "floe/iceberg/data_writer.h"
#include "floe/iceberg/schema.h"
#include "floe/iceberg/snapshot_update.h"
#include "floe/io/file.h"
#include "floe/runtime/test_util.h"

namespace floe::verify {
namespace {

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i <= to; ++i) v.push_back(i);
  return v;
}

TEST(TableVerify, MissingValuesAreReportedAsRuns) {
  std::vector<int64_t> present = Range(1, 1000);
  for (int64_t v : Range(1201, 5002)) present.push_back(v);
  for (int64_t v : Range(5004, 6000)) present.push_back(v);
  present.push_back(7);  // duplicates do not matter
  std::sort(present.begin(), present.end());
  std::vector<ValueRun> runs = MissingRuns(present, 1, 6000);
  EXPECT_EQ(runs, (std::vector<ValueRun>{{1001, 1200}, {5003, 5003}}));
  EXPECT_EQ(FormatRuns(runs), "1001..1200, 5003");

  EXPECT_EQ(MissingRuns({}, 1, 5), (std::vector<ValueRun>{{1, 5}}));
  EXPECT_EQ(MissingRuns({0, 2, 9}, 1, 5), (std::vector<ValueRun>{{1, 1}, {3, 5}}));
  EXPECT_EQ(MissingRuns({1, 2, 3}, 1, 3), (std::vector<ValueRun>{}));
  EXPECT_EQ(MissingRuns({5}, 1, 5), (std::vector<ValueRun>{{1, 4}}));
  std::vector<ValueRun> many;
  for (int64_t i = 0; i < 25; ++i) many.push_back({i * 10, i * 10});
  std::string text = FormatRuns(many, 3);
  EXPECT_EQ(text, "0, 10, 20, ... (22 more runs)");
}

TEST(TableVerify, ParsesExpectRange) {
  auto r = ParseExpectRange("seq:1..12000");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->column, "seq");
  EXPECT_EQ(r->first, 1);
  EXPECT_EQ(r->last, 12000);
  EXPECT_FALSE(ParseExpectRange("seq").ok());
  EXPECT_FALSE(ParseExpectRange("seq:1-5").ok());
  EXPECT_FALSE(ParseExpectRange("seq:9..5").ok());
  EXPECT_NE(ParseExpectRange(":1..2").status().message().find("COLUMN:FIRST..LAST"),
            std::string::npos);
}

class VerifyTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    catalog_ = iceberg::FileSystemCatalog::Make(tmp_.path() + "/wh").ValueOrDie();
    iceberg::Schema schema;
    schema.fields = {Field{"seq", DataType::Int64(), false, 1},
                     Field{"name", DataType::String(), true, 2},
                     Field{"ts", DataType::Timestamp(), true, 3}};
    ASSERT_TRUE(catalog_->CreateTable(id_, schema, {}, {}).ok());
  }
  void Append(const std::vector<std::pair<int64_t, std::string>>& rows) {
    auto table = catalog_->LoadTable(id_).ValueOrDie();
    auto config =
        iceberg::ConfigFromTableProperties(io::FileIO(), table.metadata, "t" + std::to_string(n_++))
            .ValueOrDie();
    auto writer = iceberg::DeltaWriter::Make(table.metadata, iceberg::WriteMode::kAppend, config)
                      .ValueOrDie();
    RecordBatch b(table.metadata.current_schema().ToBatchSchema());
    for (const auto& [seq, name] : rows) {
      b.mutable_column(0).Append<int64_t>(seq);
      b.mutable_column(1).AppendBytes(name);
      b.mutable_column(2).Append<int64_t>(seq * 1000000);
    }
    ASSERT_TRUE(writer->Add(b).ok());
    auto result = writer->Finish().ValueOrDie();
    iceberg::SnapshotChanges changes;
    changes.added_data_files = result.data_files;
    ASSERT_TRUE(iceberg::CommitSnapshot(*catalog_, id_, changes).ok());
  }

  runtime::testing::TempDir tmp_;
  std::unique_ptr<iceberg::FileSystemCatalog> catalog_;
  iceberg::TableIdentifier id_{"ns", "t"};
  int n_ = 0;
};

TEST_F(VerifyTableTest, CleanTableHasNoFindings) {
  Append({{1, "a"}, {2, "b"}});
  Append({{3, "c"}});
  VerifyOptions o;
  o.unique_column = "seq";
  o.expect_range = VerifyOptions::Range{"seq", 1, 3};
  auto report = VerifyTable(*catalog_, id_, o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->rows, 3);
  EXPECT_EQ(report->snapshots, 2);
  EXPECT_EQ(report->data_files, 2);
  EXPECT_EQ(report->findings(), 0);
  EXPECT_EQ(report->ToText(),
            "table ns.t: 3 rows; 2 snapshots; 2 data files, 0 delete files (0 delete rows)\n"
            "unique seq: no duplicates\n"
            "range seq 1..3: complete\n"
            "result: OK\n");
}

TEST_F(VerifyTableTest, ReportsDuplicatesMissingRunsAndDifferences) {
  Append({{1, "a"}, {2, "b"}, {3, "c"}, {5, "e"}, {7, "g"}});
  Append({{7, "g"}, {8, "h"}, {20, "x"}});
  std::string expected = tmp_.path() + "/expected.jsonl";
  // 2 differs (name), 4 is missing from the table, 20 and 5 are not expected; ts written in
  // another accepted form still matches; columns not in a line are not compared.
  ASSERT_TRUE(io::WriteFileExclusive(expected,
                                     "{\"seq\":1,\"name\":\"a\",\"ts\":\"1970-01-01 00:00:01\"}\n"
                                     "{\"seq\":2,\"name\":\"B\"}\n"
                                     "\n"
                                     "{\"seq\":3}\n"
                                     "{\"seq\":4,\"name\":\"d\"}\n"
                                     "{\"seq\":7,\"name\":\"g\"}\n"
                                     "{\"seq\":8,\"name\":\"h\"}\n")
                  .ok());
  VerifyOptions o;
  o.unique_column = "seq";
  o.expect_range = VerifyOptions::Range{"seq", 1, 10};
  o.expected_file = expected;
  o.key_column = "seq";
  auto r = VerifyTable(*catalog_, id_, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const VerifyReport& report = *r;
  EXPECT_EQ(report.rows, 8);
  EXPECT_EQ(report.duplicate_values, 1);
  EXPECT_EQ(report.duplicate_rows, 1);
  EXPECT_EQ(report.duplicate_examples, (std::vector<std::string>{"7 (x2)"}));
  EXPECT_EQ(report.missing_count, 4);
  EXPECT_EQ(report.missing_runs, (std::vector<ValueRun>{{4, 4}, {6, 6}, {9, 10}}));
  EXPECT_EQ(report.outside_range, 1);
  EXPECT_EQ(report.expected_rows, 6);
  EXPECT_EQ(report.missing_keys, 1);
  EXPECT_EQ(report.extra_keys, 2);
  EXPECT_EQ(report.duplicate_keys, 1);
  EXPECT_EQ(report.differing_rows, 1);
  ASSERT_EQ(report.difference_examples.size(), 1u);
  EXPECT_EQ(report.difference_examples[0], "seq=2: name: table \"b\", expected \"B\"");
  std::string text = report.ToText();
  EXPECT_NE(text.find("unique seq: 1 values occur more than once (1 extra rows), e.g. 7 (x2)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("range seq 1..10: missing 4 in 3 runs: 4, 6, 9..10; 1 rows outside the "
                      "range, e.g. 20"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("1 keys missing from the table, e.g. seq=4"), std::string::npos) << text;
  EXPECT_NE(text.find("result: 11 findings"), std::string::npos) << text;
}

TEST_F(VerifyTableTest, ErrorsNameTheColumnOrTheLine) {
  Append({{1, "a"}});
  VerifyOptions o;
  o.unique_column = "nope";
  auto r = VerifyTable(*catalog_, id_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--unique nope: the table has no such column"),
            std::string::npos);
  o = {};
  o.expect_range = VerifyOptions::Range{"name", 1, 2};
  EXPECT_NE(VerifyTable(*catalog_, id_, o).status().message().find("not INT or BIGINT"),
            std::string::npos);
  std::string bad = tmp_.path() + "/bad.jsonl";
  ASSERT_TRUE(io::WriteFileExclusive(bad, "{\"seq\":1}\n{\"seq\":\n").ok());
  o = {};
  o.expected_file = bad;
  o.key_column = "seq";
  r = VerifyTable(*catalog_, id_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.jsonl:2: not a JSON object"), std::string::npos)
      << r.status().ToString();
}

TEST(RosterExpected, EqualsABruteForceModel) {
  connectors::RosterOptions o;
  o.seed = 7;
  o.events = 3000;
  o.providers = 300;
  o.sources = 3;
  std::string lines = RosterExpectedJsonLines(o);

  // Model: per npi the event with the highest revision.
  connectors::RosterGenerator g(o);
  RecordBatch all = g.Next(static_cast<size_t>(o.events));
  ASSERT_EQ(all.num_rows(), 3000u);
  auto schema = connectors::RosterGenerator::Schema();
  int npi = schema->FieldIndex("npi");
  int revision = schema->FieldIndex("revision");
  std::map<std::string, size_t> best;
  for (size_t r = 0; r < all.num_rows(); ++r) {
    std::string key(all.column(npi).GetBytes(r));
    auto it = best.find(key);
    if (it == best.end() ||
        all.column(revision).Get<int32_t>(r) > all.column(revision).Get<int32_t>(it->second)) {
      best[key] = r;
    }
  }
  std::string model;
  for (const auto& [key, row] : best) json::AppendRowAsJson(all, row, &model);
  EXPECT_EQ(lines, model);
  EXPECT_EQ(static_cast<size_t>(std::count(lines.begin(), lines.end(), '\n')), best.size());
}

}  // namespace
}  // namespace floe::verify
