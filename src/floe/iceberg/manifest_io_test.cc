#include "floe/iceberg/manifest_io.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "floe/format/avro/container.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/commit_test_util.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using commit_testing::ScratchDir;
using Json = nlohmann::json;

Schema TestSchema() {
  Schema s;
  s.schema_id = 3;
  s.fields = {
      {"id", DataType::Int64(), false, 1},    {"name", DataType::String(), true, 2},
      {"ts", DataType::Timestamp(), true, 3}, {"price", DataType::Decimal(10, 2), true, 4},
      {"score", DataType::Double(), true, 5}, {"day", DataType::Date(), true, 6},
  };
  return s;
}

PartitionSpec PartitionedSpec() {
  PartitionSpec spec;
  spec.spec_id = 2;
  spec.fields = {
      {2, 1000, "name", Transform{TransformKind::kIdentity, 0}},
      {3, 1001, "ts_day", Transform{TransformKind::kDay, 0}},
      {1, 1002, "id_bucket", Transform{TransformKind::kBucket, 8}},
      {4, 1003, "price", Transform{TransformKind::kIdentity, 0}},
      {5, 1004, "score", Transform{TransformKind::kIdentity, 0}},
      {6, 1005, "day", Transform{TransformKind::kIdentity, 0}},
  };
  return spec;
}

DataFile FullDataFile(const std::string& path, PartitionTuple partition) {
  DataFile f;
  f.content = FileContent::kData;
  f.file_path = path;
  f.file_format = "PARQUET";
  f.partition = std::move(partition);
  f.record_count = 1234;
  f.file_size_in_bytes = 56789;
  f.column_sizes = {{1, 100}, {2, 200}};
  f.value_counts = {{1, 1234}, {2, 1234}};
  f.null_value_counts = {{1, 0}, {2, 17}};
  f.nan_value_counts = {{5, 3}};
  f.lower_bounds = {{1, std::string("\x01\0\0\0\0\0\0\0", 8)}, {2, "aardvark"}};
  f.upper_bounds = {{1, std::string("\xff\0\0\0\0\0\0\0", 8)}, {2, "zebra"}};
  f.split_offsets = {4, 1048576};
  f.sort_order_id = 0;
  return f;
}

ManifestEntry Added(DataFile f) {
  ManifestEntry e;
  e.status = EntryStatus::kAdded;
  e.data_file = std::move(f);
  return e;
}

// Reads the raw container (header and records) of a written file.
std::unique_ptr<avro::ContainerReader> OpenRaw(const std::string& path) {
  Result<std::string> bytes = io::ReadFile(path);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  if (!bytes.ok()) return nullptr;
  Result<std::unique_ptr<avro::ContainerReader>> reader =
      avro::ContainerReader::Open(std::move(bytes).value(), path);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return nullptr;
  return std::move(reader).value();
}

// Every record field has "field-id", every array "element-id" unless it is a logicalType "map"
// array (whose key/value record fields carry the ids). Collects offending paths.
void CollectMissingIds(const Json& type, const std::string& at, std::vector<std::string>* out) {
  if (type.is_array()) {
    for (const Json& branch : type) CollectMissingIds(branch, at, out);
    return;
  }
  if (!type.is_object()) return;
  const std::string t = type.value("type", "");
  if (t == "record") {
    for (const Json& f : type["fields"]) {
      std::string name = at + "." + f.value("name", "?");
      if (!f.contains("field-id") || !f["field-id"].is_number_integer()) out->push_back(name);
      CollectMissingIds(f["type"], name, out);
    }
  } else if (t == "array") {
    bool map = type.value("logicalType", "") == "map";
    if (!map && !type.contains("element-id")) out->push_back(at + "[]");
    if (map) {
      const Json& items = type["items"];
      if (!items.is_object() || items.value("type", "") != "record" ||
          items["fields"].size() != 2 || items["fields"][0].value("name", "") != "key" ||
          items["fields"][1].value("name", "") != "value") {
        out->push_back(at + " (map array without key/value record)");
      }
    }
    CollectMissingIds(type["items"], at + "[]", out);
  } else if (t == "map") {
    if (!type.contains("key-id") || !type.contains("value-id")) out->push_back(at + "{}");
    CollectMissingIds(type["values"], at + "{}", out);
  }
}

// Field id of `name` within the record type `record`.
int FieldId(const Json& record, const std::string& name) {
  for (const Json& f : record["fields"]) {
    if (f["name"] == name) return f.value("field-id", -1);
  }
  return -2;
}

const Json& FieldType(const Json& record, const std::string& name) {
  static const Json kNull;
  for (const Json& f : record["fields"]) {
    if (f["name"] == name) return f["type"];
  }
  return kNull;
}

TEST(ManifestIo, RoundTripsEveryDataFileFieldUnpartitioned) {
  ScratchDir dir;
  Schema schema = TestSchema();
  PartitionSpec spec;  // unpartitioned, id 0
  std::vector<ManifestEntry> entries;
  entries.push_back(Added(FullDataFile("file:///t/data/a.parquet", {})));
  DataFile minimal;
  minimal.file_path = "file:///t/data/b.parquet";
  minimal.record_count = 1;
  minimal.file_size_in_bytes = 10;
  entries.push_back(Added(minimal));

  const std::string path = dir.path() + "/m0.avro";
  FLOE_ASSERT_OK_AND_ASSIGN(ManifestFile mf, WriteManifest(io::FileIO(), path, schema, spec,
                                                           ManifestContent::kData, 42, entries));
  EXPECT_EQ(mf.manifest_path, PathToUri(path));
  FLOE_ASSERT_OK_AND_ASSIGN(uint64_t size, io::FileSize(path));
  EXPECT_EQ(mf.manifest_length, static_cast<int64_t>(size));
  EXPECT_EQ(mf.partition_spec_id, 0);
  EXPECT_EQ(mf.content, ManifestContent::kData);
  EXPECT_EQ(mf.added_snapshot_id, 42);
  EXPECT_EQ(mf.added_files_count, 2);
  EXPECT_EQ(mf.existing_files_count, 0);
  EXPECT_EQ(mf.deleted_files_count, 0);
  EXPECT_EQ(mf.added_rows_count, 1235);
  EXPECT_TRUE(mf.partitions.empty());

  mf.sequence_number = 9;
  mf.min_sequence_number = 9;
  TableMetadata metadata;
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestEntry> read,
                            ReadManifest(io::FileIO(), mf, metadata));
  ASSERT_EQ(read.size(), 2u);
  for (size_t i = 0; i < read.size(); ++i) {
    ManifestEntry want = entries[i];
    want.snapshot_id = 42;
    want.sequence_number = 9;
    want.file_sequence_number = 9;
    EXPECT_EQ(read[i], want) << i;
  }
}

TEST(ManifestIo, RoundTripsPartitionedDataWithSummaries) {
  ScratchDir dir;
  Schema schema = TestSchema();
  PartitionSpec spec = PartitionedSpec();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<ManifestEntry> entries = {
      Added(FullDataFile("file:///t/a",
                         {Value{std::string("m")}, Value{int32_t{19000}}, Value{int32_t{3}},
                          Value{Int128{-12345}}, Value{1.5}, Value{int32_t{19001}}})),
      Added(FullDataFile("file:///t/b", {Value{}, Value{int32_t{18000}}, Value{int32_t{7}},
                                         Value{Int128{99999}}, Value{nan}, Value{}})),
      Added(FullDataFile("file:///t/c", {Value{std::string("b")}, Value{}, Value{int32_t{0}},
                                         Value{}, Value{-2.0}, Value{int32_t{5}}})),
  };
  const std::string path = dir.path() + "/m1.avro";
  FLOE_ASSERT_OK_AND_ASSIGN(ManifestFile mf, WriteManifest(io::FileIO(), path, schema, spec,
                                                           ManifestContent::kData, 7, entries));
  EXPECT_EQ(mf.partition_spec_id, 2);
  ASSERT_EQ(mf.partitions.size(), 6u);
  EXPECT_TRUE(mf.partitions[0].contains_null);
  EXPECT_EQ(mf.partitions[0].contains_nan, false);
  EXPECT_EQ(mf.partitions[0].lower_bound, SerializeValue(DataType::String(), std::string("b")));
  EXPECT_EQ(mf.partitions[0].upper_bound, SerializeValue(DataType::String(), std::string("m")));
  EXPECT_TRUE(mf.partitions[1].contains_null);
  EXPECT_EQ(mf.partitions[1].lower_bound, SerializeValue(DataType::Int32(), int32_t{18000}));
  EXPECT_EQ(mf.partitions[1].upper_bound, SerializeValue(DataType::Int32(), int32_t{19000}));
  EXPECT_FALSE(mf.partitions[2].contains_null);
  EXPECT_EQ(mf.partitions[2].lower_bound, SerializeValue(DataType::Int32(), int32_t{0}));
  EXPECT_EQ(mf.partitions[2].upper_bound, SerializeValue(DataType::Int32(), int32_t{7}));
  EXPECT_EQ(mf.partitions[3].lower_bound, SerializeValue(DataType::Decimal(10, 2), Int128{-12345}));
  EXPECT_EQ(mf.partitions[3].upper_bound, SerializeValue(DataType::Decimal(10, 2), Int128{99999}));
  EXPECT_FALSE(mf.partitions[4].contains_null);
  EXPECT_EQ(mf.partitions[4].contains_nan, true);
  EXPECT_EQ(mf.partitions[4].lower_bound, SerializeValue(DataType::Double(), -2.0));
  EXPECT_EQ(mf.partitions[4].upper_bound, SerializeValue(DataType::Double(), 1.5));
  EXPECT_TRUE(mf.partitions[5].contains_null);

  mf.sequence_number = 4;
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestEntry> read,
                            ReadManifest(io::FileIO(), mf, TableMetadata{}));
  ASSERT_EQ(read.size(), entries.size());
  for (size_t i = 0; i < read.size(); ++i) {
    const DataFile& got = read[i].data_file;
    ASSERT_EQ(got.partition.size(), 6u);
    for (size_t p = 0; p < 6; ++p) {
      const Value& want = entries[i].data_file.partition[p];
      if (std::holds_alternative<double>(want) && std::isnan(std::get<double>(want))) {
        ASSERT_TRUE(std::holds_alternative<double>(got.partition[p]));
        EXPECT_TRUE(std::isnan(std::get<double>(got.partition[p])));
      } else {
        EXPECT_EQ(got.partition[p], want) << "file " << i << " field " << p;
      }
    }
    EXPECT_EQ(got.spec_id, 2);
    EXPECT_EQ(got.file_path, entries[i].data_file.file_path);
  }

  // The partition record: ids 1000+, nullable unions with default null, result types.
  auto raw = OpenRaw(path);
  ASSERT_NE(raw, nullptr);
  Json avro_schema = Json::parse(*raw->metadata("avro.schema"));
  const Json& data_file = FieldType(avro_schema, "data_file");
  const Json& partition = FieldType(data_file, "partition");
  ASSERT_EQ(partition["fields"].size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const Json& f = partition["fields"][i];
    EXPECT_EQ(f["field-id"], 1000 + static_cast<int>(i));
    EXPECT_EQ(f["type"][0], "null");
    EXPECT_TRUE(f.contains("default") && f["default"].is_null());
  }
  EXPECT_EQ(partition["fields"][0]["type"][1], "string");
  EXPECT_EQ(partition["fields"][1]["type"][1]["logicalType"], "date");  // day(ts)
  EXPECT_EQ(partition["fields"][2]["type"][1], "int");                  // bucket[8](id)
  EXPECT_EQ(partition["fields"][3]["type"][1]["type"], "fixed");
  EXPECT_EQ(partition["fields"][3]["type"][1]["size"], 5);  // decimal(10, 2)
  EXPECT_EQ(partition["fields"][3]["type"][1]["logicalType"], "decimal");
  EXPECT_EQ(partition["fields"][4]["type"][1], "double");
  EXPECT_EQ(partition["fields"][5]["type"][1]["logicalType"], "date");
}

TEST(ManifestIo, RoundTripsPositionAndEqualityDeletes) {
  ScratchDir dir;
  Schema schema = TestSchema();
  PartitionSpec spec;
  spec.spec_id = 1;
  spec.fields = {{2, 1000, "name", Transform{TransformKind::kIdentity, 0}}};
  DataFile pos = FullDataFile("file:///t/pos.parquet", {Value{std::string("x")}});
  pos.content = FileContent::kPositionDeletes;
  pos.sort_order_id.reset();
  DataFile eq = FullDataFile("file:///t/eq.parquet", {Value{std::string("y")}});
  eq.content = FileContent::kEqualityDeletes;
  eq.equality_ids = {1, 2};
  const std::string path = dir.path() + "/d.avro";
  FLOE_ASSERT_OK_AND_ASSIGN(
      ManifestFile mf, WriteManifest(io::FileIO(), path, schema, spec, ManifestContent::kDeletes, 5,
                                     {Added(pos), Added(eq)}));
  EXPECT_EQ(mf.content, ManifestContent::kDeletes);
  mf.sequence_number = 2;
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestEntry> read,
                            ReadManifest(io::FileIO(), mf, TableMetadata{}));
  ASSERT_EQ(read.size(), 2u);
  pos.spec_id = 1;
  eq.spec_id = 1;
  EXPECT_EQ(read[0].data_file, pos);
  EXPECT_EQ(read[1].data_file, eq);

  auto raw = OpenRaw(path);
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->metadata("content"), "deletes");
}

TEST(ManifestIo, AddedEntriesInheritSequenceNumbersExistingOnesKeepTheirs) {
  ScratchDir dir;
  Schema schema = TestSchema();
  PartitionSpec spec;
  ManifestEntry added = Added(FullDataFile("file:///t/new", {}));
  ManifestEntry existing;
  existing.status = EntryStatus::kExisting;
  existing.snapshot_id = 11;
  existing.sequence_number = 3;
  existing.file_sequence_number = 4;
  existing.data_file = FullDataFile("file:///t/old", {});
  ManifestEntry deleted = existing;
  deleted.status = EntryStatus::kDeleted;
  deleted.data_file.file_path = "file:///t/gone";
  const std::string path = dir.path() + "/m.avro";
  FLOE_ASSERT_OK_AND_ASSIGN(
      ManifestFile mf, WriteManifest(io::FileIO(), path, schema, spec, ManifestContent::kData, 99,
                                     {added, existing, deleted}));
  EXPECT_EQ(mf.added_files_count, 1);
  EXPECT_EQ(mf.existing_files_count, 1);
  EXPECT_EQ(mf.deleted_files_count, 1);
  EXPECT_EQ(mf.existing_rows_count, 1234);
  EXPECT_EQ(mf.deleted_rows_count, 1234);

  // On disk, the added entry's sequence numbers are null (so a retried commit only rewrites
  // the manifest list); the snapshot id is written.
  auto raw = OpenRaw(path);
  ASSERT_NE(raw, nullptr);
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<avro::Value> records, raw->ReadAll());
  ASSERT_EQ(records.size(), 3u);
  const avro::Node& root = raw->schema().root();
  EXPECT_TRUE(records[0].FieldByName(root, "sequence_number")->is_null());
  EXPECT_TRUE(records[0].FieldByName(root, "file_sequence_number")->is_null());
  EXPECT_EQ(records[0].FieldByName(root, "snapshot_id")->long_value(), 99);
  EXPECT_EQ(records[1].FieldByName(root, "sequence_number")->long_value(), 3);
  EXPECT_EQ(records[1].FieldByName(root, "file_sequence_number")->long_value(), 4);

  for (int64_t seq : {int64_t{5}, int64_t{6}}) {  // the same file under two sequence numbers
    mf.sequence_number = seq;
    FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestEntry> read,
                              ReadManifest(io::FileIO(), mf, TableMetadata{}));
    ASSERT_EQ(read.size(), 3u);
    EXPECT_EQ(read[0].snapshot_id, 99);
    EXPECT_EQ(read[0].sequence_number, seq);
    EXPECT_EQ(read[0].file_sequence_number, seq);
    EXPECT_EQ(read[1].snapshot_id, 11);
    EXPECT_EQ(read[1].sequence_number, 3);
    EXPECT_EQ(read[1].file_sequence_number, 4);
    EXPECT_EQ(read[2].status, EntryStatus::kDeleted);
    EXPECT_EQ(read[2].sequence_number, 3);
  }
}

TEST(ManifestIo, RejectsExistingEntriesWithoutSequenceNumbers) {
  ScratchDir dir;
  ManifestEntry existing;
  existing.status = EntryStatus::kExisting;
  existing.data_file = FullDataFile("file:///t/old", {});
  Result<ManifestFile> mf = WriteManifest(io::FileIO(), dir.path() + "/m.avro", TestSchema(),
                                          PartitionSpec{}, ManifestContent::kData, 1, {existing});
  ASSERT_FALSE(mf.ok());
  EXPECT_TRUE(mf.status().IsInvalidArgument()) << mf.status().ToString();
  EXPECT_FALSE(io::Exists(dir.path() + "/m.avro"));
}

TEST(ManifestIo, RejectsFilesOfTheOtherContentAndBadPartitions) {
  ScratchDir dir;
  DataFile del = FullDataFile("file:///t/del", {});
  del.content = FileContent::kPositionDeletes;
  Result<ManifestFile> mixed =
      WriteManifest(io::FileIO(), dir.path() + "/a.avro", TestSchema(), PartitionSpec{},
                    ManifestContent::kData, 1, {Added(del)});
  EXPECT_TRUE(mixed.status().IsInvalidArgument()) << mixed.status().ToString();
  Result<ManifestFile> data_in_deletes =
      WriteManifest(io::FileIO(), dir.path() + "/b.avro", TestSchema(), PartitionSpec{},
                    ManifestContent::kDeletes, 1, {Added(FullDataFile("file:///t/x", {}))});
  EXPECT_TRUE(data_in_deletes.status().IsInvalidArgument());
  Result<ManifestFile> arity =
      WriteManifest(io::FileIO(), dir.path() + "/c.avro", TestSchema(), PartitionedSpec(),
                    ManifestContent::kData, 1, {Added(FullDataFile("file:///t/x", {}))});
  EXPECT_TRUE(arity.status().IsInvalidArgument());
  Result<ManifestFile> type = WriteManifest(
      io::FileIO(), dir.path() + "/d.avro", TestSchema(), PartitionedSpec(), ManifestContent::kData,
      1,
      {Added(FullDataFile("file:///t/x",
                          {Value{int64_t{1}}, Value{}, Value{}, Value{}, Value{}, Value{}}))});
  EXPECT_TRUE(type.status().IsInvalidArgument());
}

TEST(ManifestIo, HeaderCarriesSchemaSpecAndFieldIdsEverywhere) {
  ScratchDir dir;
  Schema schema = TestSchema();
  PartitionSpec spec = PartitionedSpec();
  const std::string path = dir.path() + "/m.avro";
  FLOE_ASSERT_OK_AND_ASSIGN(
      ManifestFile mf,
      WriteManifest(io::FileIO(), path, schema, spec, ManifestContent::kData, 1,
                    {Added(FullDataFile("file:///t/a",
                                        {Value{}, Value{}, Value{}, Value{}, Value{}, Value{}}))}));
  (void)mf;
  auto raw = OpenRaw(path);
  ASSERT_NE(raw, nullptr);
  Json avro_schema = Json::parse(*raw->metadata("avro.schema"));
  std::vector<std::string> missing;
  CollectMissingIds(avro_schema, "manifest_entry", &missing);
  EXPECT_TRUE(missing.empty()) << ::testing::PrintToString(missing);

  EXPECT_EQ(FieldId(avro_schema, "status"), 0);
  EXPECT_EQ(FieldId(avro_schema, "snapshot_id"), 1);
  EXPECT_EQ(FieldId(avro_schema, "sequence_number"), 3);
  EXPECT_EQ(FieldId(avro_schema, "file_sequence_number"), 4);
  EXPECT_EQ(FieldId(avro_schema, "data_file"), 2);
  const Json& df = FieldType(avro_schema, "data_file");
  const std::vector<std::pair<std::string, int>> ids = {
      {"content", 134},          {"file_path", 100},     {"file_format", 101},
      {"partition", 102},        {"record_count", 103},  {"file_size_in_bytes", 104},
      {"column_sizes", 108},     {"value_counts", 109},  {"null_value_counts", 110},
      {"nan_value_counts", 137}, {"lower_bounds", 125},  {"upper_bounds", 128},
      {"key_metadata", 131},     {"split_offsets", 132}, {"equality_ids", 135},
      {"sort_order_id", 140}};
  for (const auto& [name, id] : ids) EXPECT_EQ(FieldId(df, name), id) << name;
  // Map key/value ids and list element ids.
  const std::vector<std::tuple<std::string, int, int>> maps = {
      {"column_sizes", 117, 118},     {"value_counts", 119, 120}, {"null_value_counts", 121, 122},
      {"nan_value_counts", 138, 139}, {"lower_bounds", 126, 127}, {"upper_bounds", 129, 130}};
  for (const auto& [name, key_id, value_id] : maps) {
    const Json& t = FieldType(df, name)[1];
    EXPECT_EQ(t["logicalType"], "map") << name;
    EXPECT_EQ(t["items"]["fields"][0]["field-id"], key_id) << name;
    EXPECT_EQ(t["items"]["fields"][1]["field-id"], value_id) << name;
  }
  EXPECT_EQ(FieldType(df, "split_offsets")[1]["element-id"], 133);
  EXPECT_EQ(FieldType(df, "equality_ids")[1]["element-id"], 136);

  // v2 header key-value metadata.
  EXPECT_EQ(raw->metadata("format-version"), "2");
  EXPECT_EQ(raw->metadata("content"), "data");
  EXPECT_EQ(raw->metadata("schema-id"), "3");
  EXPECT_EQ(raw->metadata("partition-spec-id"), "2");
  FLOE_ASSERT_OK_AND_ASSIGN(Schema header_schema, SchemaFromJson(*raw->metadata("schema")));
  EXPECT_EQ(header_schema, schema);
  Json spec_fields = Json::parse(*raw->metadata("partition-spec"));
  ASSERT_TRUE(spec_fields.is_array());
  ASSERT_EQ(spec_fields.size(), 6u);
  EXPECT_EQ(spec_fields[2]["field-id"], 1002);
  EXPECT_EQ(spec_fields[2]["source-id"], 1);
  EXPECT_EQ(spec_fields[2]["transform"], "bucket[8]");
}

TEST(ManifestIo, ManifestListRoundTripsWithHeader) {
  ScratchDir dir;
  ManifestFile a;
  a.manifest_path = "file:///t/metadata/a-m0.avro";
  a.manifest_length = 4242;
  a.partition_spec_id = 1;
  a.content = ManifestContent::kData;
  a.sequence_number = 8;
  a.min_sequence_number = 2;
  a.added_snapshot_id = 77;
  a.added_files_count = 3;
  a.existing_files_count = 4;
  a.deleted_files_count = 5;
  a.added_rows_count = 30;
  a.existing_rows_count = 40;
  a.deleted_rows_count = 50;
  a.partitions = {PartitionFieldSummary{true, false, std::string("\x01\0\0\0", 4),
                                        std::string("\x09\0\0\0", 4)},
                  PartitionFieldSummary{false, std::nullopt, std::nullopt, std::nullopt}};
  ManifestFile b;
  b.manifest_path = "file:///t/metadata/b-m1.avro";
  b.content = ManifestContent::kDeletes;
  b.added_snapshot_id = 9007199254740993;  // > 2^53
  const std::string path = dir.path() + "/snap-1-1-x.avro";
  FLOE_ASSERT_OK(WriteManifestList(io::FileIO(), path, 9007199254740993, 12, 8, {a, b}));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestFile> read,
                            ReadManifestList(io::FileIO(), PathToUri(path)));
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0], a);
  EXPECT_EQ(read[1], b);

  auto raw = OpenRaw(path);
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->metadata("snapshot-id"), "9007199254740993");
  EXPECT_EQ(raw->metadata("parent-snapshot-id"), "12");
  EXPECT_EQ(raw->metadata("sequence-number"), "8");
  EXPECT_EQ(raw->metadata("format-version"), "2");
  Json avro_schema = Json::parse(*raw->metadata("avro.schema"));
  std::vector<std::string> missing;
  CollectMissingIds(avro_schema, "manifest_file", &missing);
  EXPECT_TRUE(missing.empty()) << ::testing::PrintToString(missing);
  const std::vector<std::pair<std::string, int>> ids = {
      {"manifest_path", 500},        {"manifest_length", 501},
      {"partition_spec_id", 502},    {"content", 517},
      {"sequence_number", 515},      {"min_sequence_number", 516},
      {"added_snapshot_id", 503},    {"added_files_count", 504},
      {"existing_files_count", 505}, {"deleted_files_count", 506},
      {"added_rows_count", 512},     {"existing_rows_count", 513},
      {"deleted_rows_count", 514},   {"partitions", 507},
      {"key_metadata", 519}};
  for (const auto& [name, id] : ids) EXPECT_EQ(FieldId(avro_schema, name), id) << name;
  const Json& partitions = FieldType(avro_schema, "partitions")[1];
  EXPECT_EQ(partitions["element-id"], 508);
  EXPECT_EQ(FieldId(partitions["items"], "contains_null"), 509);
  EXPECT_EQ(FieldId(partitions["items"], "contains_nan"), 518);
  EXPECT_EQ(FieldId(partitions["items"], "lower_bound"), 510);
  EXPECT_EQ(FieldId(partitions["items"], "upper_bound"), 511);

  // No parent: "null", as Java writes it.
  const std::string first = dir.path() + "/snap-2-1-y.avro";
  FLOE_ASSERT_OK(WriteManifestList(io::FileIO(), first, 2, std::nullopt, 1, {}));
  auto raw_first = OpenRaw(first);
  ASSERT_NE(raw_first, nullptr);
  EXPECT_EQ(raw_first->metadata("parent-snapshot-id"), "null");
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestFile> empty, ReadManifestList(io::FileIO(), first));
  EXPECT_TRUE(empty.empty());
}

TEST(ManifestIo, SmallFilesUseNullCodecLargeOnesDeflate) {
  ScratchDir dir;
  Schema schema = TestSchema();
  const std::string small = dir.path() + "/small.avro";
  FLOE_ASSERT_OK_AND_ASSIGN(
      ManifestFile s,
      WriteManifest(io::FileIO(), small, schema, PartitionSpec{}, ManifestContent::kData, 1,
                    {Added(FullDataFile("file:///t/a", {}))}));
  std::vector<ManifestEntry> many;
  for (int i = 0; i < 200; ++i) {
    many.push_back(Added(FullDataFile("file:///t/data/" + std::to_string(i) + ".parquet", {})));
  }
  const std::string large = dir.path() + "/large.avro";
  FLOE_ASSERT_OK_AND_ASSIGN(
      ManifestFile l,
      WriteManifest(io::FileIO(), large, schema, PartitionSpec{}, ManifestContent::kData, 1, many));
  auto raw_small = OpenRaw(small);
  auto raw_large = OpenRaw(large);
  ASSERT_NE(raw_small, nullptr);
  ASSERT_NE(raw_large, nullptr);
  EXPECT_EQ(raw_small->codec(), avro::Codec::kNull);
  EXPECT_EQ(raw_large->codec(), avro::Codec::kDeflate);
  l.sequence_number = 1;
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestEntry> read,
                            ReadManifest(io::FileIO(), l, TableMetadata{}));
  ASSERT_EQ(read.size(), 200u);
  EXPECT_EQ(read[199].data_file.file_path, "file:///t/data/199.parquet");
  (void)s;
}

TEST(ManifestIo, NeverOverwritesAManifest) {
  ScratchDir dir;
  const std::string path = dir.path() + "/m.avro";
  FLOE_ASSERT_OK(io::WriteFileExclusive(path, "x"));
  Result<ManifestFile> mf = WriteManifest(io::FileIO(), path, TestSchema(), PartitionSpec{},
                                          ManifestContent::kData, 1, {});
  EXPECT_TRUE(mf.status().IsAlreadyExists()) << mf.status().ToString();
}

TEST(ManifestIo, MissingFilesAreNotFoundCorruptOnesCorruption) {
  ScratchDir dir;
  Result<std::vector<ManifestFile>> missing =
      ReadManifestList(io::FileIO(), dir.path() + "/nope.avro");
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
  const std::string bad = dir.path() + "/bad.avro";
  FLOE_ASSERT_OK(io::WriteFileExclusive(bad, "Obj\x01garbage"));
  Result<std::vector<ManifestFile>> corrupt = ReadManifestList(io::FileIO(), bad);
  EXPECT_TRUE(corrupt.status().IsCorruption()) << corrupt.status().ToString();
}

}  // namespace
}  // namespace floe::iceberg
