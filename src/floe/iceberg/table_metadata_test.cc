#include "floe/iceberg/table_metadata.h"

#include <gtest/gtest.h>

#include <cctype>
#include <functional>

#include <nlohmann/json.hpp>

namespace floe::iceberg {
namespace {

Schema TestSchema() {
  Schema s;
  s.fields = {{"seq", DataType::Int64(), false, 1},
              {"npi", DataType::String(), false, 2},
              {"ts", DataType::TimestampTz(), true, 3},
              {"amount", DataType::Decimal(12, 2), true, 7}};
  s.identifier_field_ids = {1};
  return s;
}

PartitionSpec TestSpec() {
  PartitionSpec spec;
  spec.fields = {{3, 0, "ts_day", {TransformKind::kDay, 0}},
                 {2, 0, "npi_bucket", {TransformKind::kBucket, 8}}};
  return spec;
}

TableMetadata RichMetadata() {
  TableMetadata md = NewTableMetadata(TestSchema(), TestSpec(), "file:///wh/db/t",
                                      {{"write.upsert.enabled", "true"}, {"k", "v\"quoted\""}})
                         .ValueOrDie();
  Schema s1 = TestSchema();
  s1.schema_id = 1;
  s1.fields.push_back({"extra", DataType::Double(), true, 8});
  md.schemas.push_back(s1);
  md.current_schema_id = 1;
  md.last_column_id = 8;
  PartitionSpec spec1;
  spec1.spec_id = 1;
  spec1.fields = {{1, 1002, "seq_trunc", {TransformKind::kTruncate, 100}}};
  md.partition_specs.push_back(spec1);
  md.default_spec_id = 1;
  md.last_partition_id = 1002;
  // Ids above 2^53 must survive exactly.
  const int64_t id1 = 9007199254740993LL, id2 = 9223372036854775807LL;
  Snapshot a;
  a.snapshot_id = id1;
  a.sequence_number = 1;
  a.timestamp_ms = 1700000000000;
  a.manifest_list = "file:///wh/db/t/metadata/snap-1.avro";
  a.summary = {{"operation", "append"}, {"added-data-files", "3"}, {"floe.commit", "x"}};
  a.schema_id = 0;
  Snapshot b;
  b.snapshot_id = id2;
  b.parent_snapshot_id = id1;
  b.sequence_number = 2;
  b.timestamp_ms = 1700000001000;
  b.manifest_list = "file:///wh/db/t/metadata/snap-2.avro";
  b.summary = {{"operation", "delete"}};
  md.snapshots = {a, b};
  md.current_snapshot_id = id2;
  md.last_sequence_number = 2;
  md.snapshot_log = {{a.timestamp_ms, id1}, {b.timestamp_ms, id2}};
  md.metadata_log = {{1699999999000, "file:///wh/db/t/metadata/v1.metadata.json"}};
  md.refs["main"] = SnapshotRef{id2, "branch"};
  md.refs["audit"] = SnapshotRef{id1, "tag"};
  return md;
}

// xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx, lowercase hex.
bool IsUuidV4(const std::string& s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (s[i] == '-')) return false;
    if (!dash && !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
    if (!dash && std::isupper(static_cast<unsigned char>(s[i]))) return false;
  }
  return s[14] == '4' && std::string("89ab").find(s[19]) != std::string::npos;
}

TEST(NewTableMetadata, SetsIdsUuidAndDefaults) {
  Result<TableMetadata> r = NewTableMetadata(TestSchema(), TestSpec(), "file:///wh/db/t/", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const TableMetadata& md = *r;
  EXPECT_EQ(md.format_version, 2);
  EXPECT_TRUE(IsUuidV4(md.table_uuid)) << md.table_uuid;
  EXPECT_EQ(md.location, "file:///wh/db/t");
  EXPECT_EQ(md.last_column_id, 7);
  EXPECT_EQ(md.last_partition_id, 1001);
  EXPECT_EQ(md.default_spec().fields[0].field_id, 1000);
  EXPECT_EQ(md.default_spec().fields[1].field_id, 1001);
  EXPECT_EQ(md.current_schema().fields.size(), 4u);
  EXPECT_EQ(md.current_snapshot(), nullptr);
  EXPECT_GT(md.last_updated_ms, 1600000000000);
  EXPECT_NE(NewTableMetadata(TestSchema(), TestSpec(), "x", {})->table_uuid, md.table_uuid);

  Result<TableMetadata> unpartitioned = NewTableMetadata(TestSchema(), {}, "file:///x", {});
  ASSERT_TRUE(unpartitioned.ok());
  EXPECT_EQ(unpartitioned->last_partition_id, 999);
}

TEST(NewTableMetadata, RejectsBadSchemasAndSpecs) {
  Schema nullable_key = TestSchema();
  nullable_key.identifier_field_ids = {3};
  EXPECT_TRUE(NewTableMetadata(nullable_key, {}, "file:///x", {}).status().IsInvalidArgument());
  Schema dup = TestSchema();
  dup.fields.push_back({"seq", DataType::Int32(), true, 9});
  EXPECT_FALSE(NewTableMetadata(dup, {}, "file:///x", {}).ok());
  PartitionSpec bad;
  bad.fields = {{2, 0, "npi_hour", {TransformKind::kHour, 0}}};
  EXPECT_FALSE(NewTableMetadata(TestSchema(), bad, "file:///x", {}).ok());
  PartitionSpec missing;
  missing.fields = {{42, 0, "x", {TransformKind::kIdentity, 0}}};
  EXPECT_FALSE(NewTableMetadata(TestSchema(), missing, "file:///x", {}).ok());
}

TEST(TableMetadataJson, RoundTripsRichMetadata) {
  TableMetadata md = RichMetadata();
  std::string json = TableMetadataToJson(md);
  Result<TableMetadata> back = TableMetadataFromJson(json, "test.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, md);
  EXPECT_EQ(TableMetadataToJson(*back), json);
  // 64-bit ids are written as exact integers.
  EXPECT_NE(json.find("9223372036854775807"), std::string::npos);
  EXPECT_NE(json.find("9007199254740993"), std::string::npos);
  EXPECT_EQ(back->current_snapshot()->parent_snapshot_id, 9007199254740993LL);
  EXPECT_EQ(back->current_snapshot()->operation(), "delete");
  EXPECT_EQ(back->Property("write.upsert.enabled", "false"), "true");
  EXPECT_EQ(back->Property("missing", "fallback"), "fallback");
}

TEST(TableMetadataJson, WritesEveryRequiredV2Field) {
  TableMetadata md = *NewTableMetadata(TestSchema(), TestSpec(), "file:///wh/db/t", {});
  nlohmann::json j = nlohmann::json::parse(TableMetadataToJson(md));
  for (const char* key :
       {"format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms",
        "last-column-id", "schemas", "current-schema-id", "partition-specs", "default-spec-id",
        "last-partition-id", "sort-orders", "default-sort-order-id", "properties", "snapshots",
        "snapshot-log", "metadata-log", "refs"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["format-version"], 2);
  EXPECT_EQ(j["current-snapshot-id"], -1);
  EXPECT_EQ(j["sort-orders"], nlohmann::json::parse(R"([{"order-id":0,"fields":[]}])"));
  EXPECT_TRUE(j["refs"].empty());
  Result<TableMetadata> back = TableMetadataFromJson(TableMetadataToJson(md), "t");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, md);

  TableMetadata rich = RichMetadata();
  j = nlohmann::json::parse(TableMetadataToJson(rich));
  EXPECT_EQ(j["refs"]["main"]["type"], "branch");
  EXPECT_EQ(j["refs"]["main"]["snapshot-id"].get<int64_t>(), 9223372036854775807LL);
  EXPECT_EQ(j["snapshots"][0]["summary"]["operation"], "append");
  EXPECT_FALSE(j["snapshots"][0].contains("parent-snapshot-id"));
  EXPECT_EQ(j["partition-specs"][0]["fields"][1]["transform"], "bucket[8]");
}

// What Spark or Trino put in a table floe writes to: a sort order (Java numbers the first one
// 1 and declares no unsorted order), statistics files, partition statistics, refs with their
// own retention. floe acts on none of them but must write every one back as it found it.
nlohmann::json OtherEnginesMetadata() {
  nlohmann::json j = nlohmann::json::parse(TableMetadataToJson(RichMetadata()));
  j["sort-orders"] = nlohmann::json::parse(
      R"([{"order-id":1,"fields":[{"transform":"identity","source-id":1,"direction":"asc",)"
      R"("null-order":"nulls-first"},{"transform":"bucket[4]","source-id":2,"direction":"desc",)"
      R"("null-order":"nulls-last"}]}])");
  j["default-sort-order-id"] = 1;
  j["statistics"] = nlohmann::json::parse(
      R"([{"snapshot-id":9223372036854775807,"statistics-path":"file:/wh/db/t/metadata/s2.stats",)"
      R"("file-size-in-bytes":413,"file-footer-size-in-bytes":371,"blob-metadata":[{"type":)"
      R"("apache-datasketches-theta-v1","snapshot-id":9223372036854775807,"sequence-number":2,)"
      R"("fields":[1],"properties":{"ndv":"12"}}]},{"snapshot-id":9007199254740993,)"
      R"("statistics-path":"file:/wh/db/t/metadata/s1.stats","file-size-in-bytes":400,)"
      R"("file-footer-size-in-bytes":360,"blob-metadata":[]}])");
  j["partition-statistics"] = nlohmann::json::parse(
      R"([{"snapshot-id":9007199254740993,"statistics-path":"file:/wh/db/t/metadata/p1.parquet",)"
      R"("file-size-in-bytes":1024}])");
  j["refs"]["main"]["min-snapshots-to-keep"] = 5;
  j["refs"]["main"]["max-snapshot-age-ms"] = 86400000;
  j["refs"]["audit"]["max-ref-age-ms"] = 3600000;
  return j;
}

TEST(TableMetadataJson, KeepsSortOrdersStatisticsAndRefRetentionAsOtherEnginesWroteThem) {
  const nlohmann::json theirs = OtherEnginesMetadata();
  Result<TableMetadata> md = TableMetadataFromJson(theirs.dump(), "v3.metadata.json");
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  EXPECT_EQ(md->default_sort_order_id, 1);
  ASSERT_EQ(md->sort_orders.size(), 1u);
  EXPECT_FALSE(md->sort_orders[0].unsorted);
  // floe does not sort: its files claim no order rather than order 1.
  EXPECT_EQ(md->WrittenSortOrderId(), std::nullopt);
  EXPECT_EQ(RichMetadata().WrittenSortOrderId(), 0);
  ASSERT_EQ(md->statistics.size(), 2u);
  EXPECT_EQ(md->statistics[1].path, "file:/wh/db/t/metadata/s1.stats");
  EXPECT_EQ(md->refs.at("main").min_snapshots_to_keep, 5);
  EXPECT_EQ(md->refs.at("audit").max_ref_age_ms, 3600000);

  // Written back: each field equal to what was read (numbers, key order within an entry, ids).
  nlohmann::json ours = nlohmann::json::parse(TableMetadataToJson(*md));
  for (const char* key :
       {"sort-orders", "default-sort-order-id", "statistics", "partition-statistics", "refs"}) {
    EXPECT_EQ(ours[key], theirs[key]) << key;
  }
  Result<TableMetadata> back = TableMetadataFromJson(ours.dump(), "v4.metadata.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *md);

  // A new snapshot on main keeps main's retention; expiring a snapshot drops its statistics.
  TableMetadata next = *md;
  next.SetMain(9007199254740993LL);
  EXPECT_EQ(next.refs.at("main").min_snapshots_to_keep, 5);
  EXPECT_EQ(next.refs.at("main").snapshot_id, 9007199254740993LL);
  EXPECT_EQ(next.current_snapshot_id, 9007199254740993LL);
  next.RemoveSnapshots({9223372036854775807LL});
  ASSERT_EQ(next.statistics.size(), 1u);
  EXPECT_EQ(next.statistics[0].snapshot_id, 9007199254740993LL);
  EXPECT_EQ(next.partition_statistics.size(), 1u);
  next.RemoveSnapshots({9007199254740993LL});
  EXPECT_TRUE(next.statistics.empty());
  EXPECT_TRUE(next.partition_statistics.empty());
  EXPECT_TRUE(next.snapshots.empty());

  nlohmann::json bad = theirs;
  bad["default-sort-order-id"] = 7;
  EXPECT_NE(TableMetadataFromJson(bad.dump(), "t")
                .status()
                .message()
                .find("'default-sort-order-id': no sort order with id 7"),
            std::string::npos);
  bad = theirs;
  bad["statistics"][0].erase("statistics-path");
  EXPECT_NE(TableMetadataFromJson(bad.dump(), "t")
                .status()
                .message()
                .find("'statistics[0].statistics-path'"),
            std::string::npos);
  bad = theirs;
  bad["refs"]["main"]["min-snapshots-to-keep"] = "five";
  EXPECT_NE(TableMetadataFromJson(bad.dump(), "t")
                .status()
                .message()
                .find("'refs.main.min-snapshots-to-keep'"),
            std::string::npos);
}

TEST(TableMetadataJson, AcceptsNullOrMissingCurrentSnapshotAndAddsMain) {
  TableMetadata md = RichMetadata();
  nlohmann::json j = nlohmann::json::parse(TableMetadataToJson(md));
  j.erase("refs");
  Result<TableMetadata> r = TableMetadataFromJson(j.dump(), "t");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->refs.at("main").snapshot_id, *md.current_snapshot_id);

  j = nlohmann::json::parse(TableMetadataToJson(*NewTableMetadata(TestSchema(), {}, "f", {})));
  j["current-snapshot-id"] = nullptr;
  r = TableMetadataFromJson(j.dump(), "t");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->current_snapshot_id.has_value());
  j.erase("current-snapshot-id");
  j.erase("snapshots");
  j.erase("snapshot-log");
  j.erase("metadata-log");
  j.erase("properties");
  r = TableMetadataFromJson(j.dump(), "t");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->current_snapshot_id.has_value());
}

TEST(TableMetadataJson, ErrorsNameTheFileAndTheField) {
  TableMetadata md = RichMetadata();
  nlohmann::json good = nlohmann::json::parse(TableMetadataToJson(md));
  struct Case {
    std::function<void(nlohmann::json&)> mutate;
    std::string expect;
  } cases[] = {
      {[](auto& j) { j.erase("table-uuid"); }, "'table-uuid': required field is missing"},
      {[](auto& j) { j["last-column-id"] = "7"; }, "'last-column-id': expected integer"},
      {[](auto& j) { j["last-column-id"] = 1.5; }, "'last-column-id': expected integer"},
      {[](auto& j) { j["last-column-id"] = 1; }, "'last-column-id'"},
      {[](auto& j) { j["snapshots"][1].erase("manifest-list"); }, "'snapshots[1].manifest-list'"},
      {[](auto& j) { j["snapshots"][0]["summary"].erase("operation"); },
       "'snapshots[0].summary.operation'"},
      {[](auto& j) { j["snapshots"][0]["summary"]["x"] = 1; }, "'snapshots[0].summary.x'"},
      {[](auto& j) { j["current-snapshot-id"] = 12345; }, "'current-snapshot-id'"},
      {[](auto& j) { j["current-schema-id"] = 9; }, "'current-schema-id'"},
      {[](auto& j) { j["default-spec-id"] = 9; }, "'default-spec-id'"},
      {[](auto& j) { j["schemas"][0]["fields"][1]["type"] = "varchar"; },
       "'schemas[0].fields[1].type'"},
      {[](auto& j) { j["partition-specs"] = 3; }, "'partition-specs': expected array"},
      {[](auto& j) { j["refs"]["main"]["type"] = "twig"; }, "'refs.main.type'"},
      {[](auto& j) { j["metadata-log"][0]["timestamp-ms"] = nullptr; },
       "'metadata-log[0].timestamp-ms'"},
      {[](auto& j) { j["last-updated-ms"] = 18446744073709551615ULL; }, "out of range"},
      {[](auto& j) { j["properties"]["n"] = 3; }, "'properties.n'"},
      {[](auto& j) { j.erase("sort-orders"); }, "'sort-orders'"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = good;
    c.mutate(j);
    Result<TableMetadata> r = TableMetadataFromJson(j.dump(), "/wh/db/t/metadata/v3.metadata.json");
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
    EXPECT_NE(r.status().message().find("/wh/db/t/metadata/v3.metadata.json"), std::string::npos)
        << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos)
        << "want '" << c.expect << "' in: " << r.status().ToString();
  }
  nlohmann::json j = good;
  j["format-version"] = 3;
  EXPECT_EQ(TableMetadataFromJson(j.dump(), "f").status().code(), StatusCode::kNotImplemented);
}

TEST(TableMetadataJson, TruncatedOrCorruptTextIsCorruptionNeverACrash) {
  std::string json = TableMetadataToJson(RichMetadata());
  ASSERT_TRUE(TableMetadataFromJson(json, "v2.metadata.json").ok());
  for (size_t len = 0; len < json.size(); ++len) {
    std::string_view cut(json.data(), len);
    Result<TableMetadata> r = TableMetadataFromJson(cut, "v2.metadata.json");
    // Cutting only trailing whitespace could leave valid JSON; everything else must fail.
    if (r.ok()) {
      EXPECT_EQ(json.find_first_not_of(" \n\r\t", len), std::string::npos);
      continue;
    }
    EXPECT_TRUE(r.status().IsCorruption()) << len << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find("v2.metadata.json"), std::string::npos);
  }
  // Byte flips: must never crash or throw; any outcome but a crash is acceptable.
  for (size_t i = 0; i < json.size(); i += 7) {
    std::string bad = json;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    (void)TableMetadataFromJson(bad, "v2.metadata.json");
  }
  for (const char* text :
       {"", "null", "[]", "42", "\"str\"", "{}", "{\"format-version\":2}", "\xff\xfe", "{\"a\":"}) {
    Result<TableMetadata> r = TableMetadataFromJson(text, "x.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  }
}

TEST(TableMetadataJson, InvalidUtf8InPropertiesDoesNotThrow) {
  TableMetadata md = RichMetadata();
  md.properties["bad"] = "\xff\xfe";
  std::string json = TableMetadataToJson(md);
  EXPECT_TRUE(TableMetadataFromJson(json, "t").ok());
}

TEST(TableMetadata, Accessors) {
  TableMetadata md = RichMetadata();
  EXPECT_EQ(md.current_schema().schema_id, 1);
  EXPECT_EQ(md.default_spec().spec_id, 1);
  EXPECT_NE(md.FindSpec(0), nullptr);
  EXPECT_EQ(md.FindSpec(5), nullptr);
  EXPECT_EQ(md.current_snapshot()->snapshot_id, 9223372036854775807LL);
  EXPECT_EQ(md.FindSnapshot(9007199254740993LL)->operation(), "append");
  EXPECT_EQ(md.FindSnapshot(1), nullptr);
}

// A writer's grown schema joins the table's by field id: new ids above last-column-id are added
// optional, wider types widen; an id the table gave another name, or a new column under a name
// the table has, is refused naming the column; a schema the table already holds changes nothing.
TEST(AdoptWrittenSchema, AddsTheWritersColumnsByIdAndRefusesADivergedTable) {
  Schema table;
  table.fields = {{"id", DataType::Int64(), false, 1}, {"n", DataType::Int32(), true, 2}};
  TableMetadata base = NewTableMetadata(table, PartitionSpec{}, "file:///t", {}).ValueOrDie();
  Schema written = table;
  written.fields[1].type = DataType::Int64();
  written.fields.push_back({"email", DataType::String(), false, 3});
  std::vector<std::string> changes;
  TableMetadata grown = AdoptWrittenSchema(base, written, &changes).ValueOrDie();
  EXPECT_EQ(changes, (std::vector<std::string>{"widened column 'n' INT -> BIGINT",
                                               "added column 'email' STRING (id 3)"}));
  EXPECT_EQ(grown.current_schema_id, 1);
  EXPECT_EQ(grown.last_column_id, 3);
  EXPECT_TRUE(grown.current_schema().FindByName("email")->nullable);
  EXPECT_EQ(AdoptWrittenSchema(grown, written).ValueOrDie().schemas.size(), 2u);

  Schema renamed = written;
  renamed.fields[2].name = "phone";
  Result<TableMetadata> r = AdoptWrittenSchema(grown, renamed);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "the files were written with column 'phone' as id 3, which the table names 'email'");
  Schema reused = table;  // 'n' again, under a new id
  reused.fields.push_back({"n", DataType::Int64(), true, 4});
  r = AdoptWrittenSchema(base, reused);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("column 'n' (id 4)"), std::string::npos)
      << r.status().ToString();
  Schema narrowed = table;
  narrowed.fields[0].type = DataType::Int32();
  EXPECT_FALSE(AdoptWrittenSchema(base, narrowed).ok());
}

}  // namespace
}  // namespace floe::iceberg
