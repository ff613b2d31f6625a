// Avro encoding of Iceberg v2 manifests and manifest lists (spec "Manifests", "Manifest Lists",
// Appendix A "Avro"). The Avro schemas are built here from the spec's field ids; every field
// carries "field-id", arrays "element-id", and int-keyed maps are arrays of {key, value} records
// with logicalType "map" as the spec requires for non-string keys.

#include "floe/iceberg/manifest_io.h"

#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/format/avro/container.h"
#include "floe/format/avro/schema.h"
#include "floe/format/avro/value.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/json_internal.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using Json = OrderedJson;

// Files whose records encode to fewer bytes than this are written with codec "null": they
// gain nothing from compression, and icebird's inflater (hyparquet-compressors' gunzip, used
// for Avro "deflate") restarts decoding recursively about 128 KiB / block-size times after a
// raw deflate block, which overflows the stack for blocks of a few dozen bytes and fails
// outright for compressed blocks of 8 bytes or less. Larger files use "deflate".
constexpr size_t kDeflateThreshold = 4096;

// ---------------------------------------------------------------------------------------------
// Schema JSON
// ---------------------------------------------------------------------------------------------

// Avro names must match [A-Za-z_][A-Za-z0-9_]*; other characters are escaped as Java's
// AvroSchemaUtil does ("_x" + hex code, a leading digit as "_" + digit).
std::string AvroName(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    bool alpha = std::isalpha(c) != 0 || c == '_';
    bool digit = std::isdigit(c) != 0;
    if (alpha || (digit && i > 0)) {
      out.push_back(static_cast<char>(c));
    } else if (digit) {
      out += "_";
      out.push_back(static_cast<char>(c));
    } else {
      static const char* kHex = "0123456789ABCDEF";
      out += "_x";
      if (c >= 16) out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out.empty() ? std::string("_") : out;
}

Json Optional(Json type) { return Json::array({"null", std::move(type)}); }

Json RequiredField(const std::string& name, Json type, int32_t id) {
  Json f;
  f["name"] = name;
  f["type"] = std::move(type);
  f["field-id"] = id;
  return f;
}

Json OptionalField(const std::string& name, Json type, int32_t id) {
  Json f;
  f["name"] = name;
  f["type"] = Optional(std::move(type));
  f["default"] = nullptr;
  f["field-id"] = id;
  return f;
}

// map<int, value_type> in the array form with logicalType "map".
Json IntMap(int32_t key_id, int32_t value_id, const char* value_type) {
  Json record;
  record["type"] = "record";
  record["name"] = "k" + std::to_string(key_id) + "_v" + std::to_string(value_id);
  record["fields"] = Json::array(
      {RequiredField("key", "int", key_id), RequiredField("value", value_type, value_id)});
  Json array;
  array["type"] = "array";
  array["items"] = std::move(record);
  array["logicalType"] = "map";
  return array;
}

Json List(const char* element_type, int32_t element_id) {
  Json array;
  array["type"] = "array";
  array["items"] = element_type;
  array["element-id"] = element_id;
  return array;
}

// Bytes of the fixed type holding an unscaled decimal of `precision` digits (spec Appendix A:
// the minimum number of bytes for the precision).
int DecimalBytes(int precision) {
  unsigned __int128 max_unscaled = 1;
  for (int i = 0; i < precision; ++i) max_unscaled *= 10;
  max_unscaled -= 1;
  for (int n = 1; n < 16; ++n) {
    unsigned __int128 limit = static_cast<unsigned __int128>(1) << (8 * n - 1);
    if (max_unscaled < limit) return n;
  }
  return 16;
}

Result<Json> PartitionValueType(const DataType& type, const std::string& fixed_name) {
  switch (type.id) {
    case TypeId::kBoolean:
      return Json("boolean");
    case TypeId::kInt32:
      return Json("int");
    case TypeId::kInt64:
      return Json("long");
    case TypeId::kFloat:
      return Json("float");
    case TypeId::kDouble:
      return Json("double");
    case TypeId::kString:
      return Json("string");
    case TypeId::kBinary:
      return Json("bytes");
    case TypeId::kDate: {
      Json j;
      j["type"] = "int";
      j["logicalType"] = "date";
      return j;
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: {
      Json j;
      j["type"] = "long";
      j["logicalType"] = "timestamp-micros";
      j["adjust-to-utc"] = type.id == TypeId::kTimestampTz;
      return j;
    }
    case TypeId::kTime: {
      Json j;
      j["type"] = "long";
      j["logicalType"] = "time-micros";
      return j;
    }
    case TypeId::kDecimal: {
      Json j;
      j["type"] = "fixed";
      j["name"] = fixed_name;
      j["size"] = DecimalBytes(type.precision);
      j["logicalType"] = "decimal";
      j["precision"] = type.precision;
      j["scale"] = type.scale;
      return j;
    }
  }
  return Status::Internal("unknown partition type");
}

Result<std::string> ManifestEntrySchemaJson(const PartitionSpec& spec,
                                            const std::vector<DataType>& types) {
  Json partition_fields = Json::array();
  std::set<std::string> fixed_names;
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    const PartitionField& pf = spec.fields[i];
    // Java's name for decimal fixed types, made unique: named types must not repeat inline.
    std::string fixed_name =
        "decimal_" + std::to_string(types[i].precision) + "_" + std::to_string(types[i].scale);
    if (!fixed_names.insert(fixed_name).second) fixed_name += "_" + std::to_string(pf.field_id);
    FLOE_ASSIGN_OR_RAISE(Json type, PartitionValueType(types[i], fixed_name));
    partition_fields.push_back(OptionalField(AvroName(pf.name), std::move(type), pf.field_id));
  }
  Json partition;
  partition["type"] = "record";
  partition["name"] = "r102";
  partition["fields"] = std::move(partition_fields);

  Json data_file_fields = Json::array({
      RequiredField("content", "int", 134),
      RequiredField("file_path", "string", 100),
      RequiredField("file_format", "string", 101),
      RequiredField("partition", std::move(partition), 102),
      RequiredField("record_count", "long", 103),
      RequiredField("file_size_in_bytes", "long", 104),
      OptionalField("column_sizes", IntMap(117, 118, "long"), 108),
      OptionalField("value_counts", IntMap(119, 120, "long"), 109),
      OptionalField("null_value_counts", IntMap(121, 122, "long"), 110),
      OptionalField("nan_value_counts", IntMap(138, 139, "long"), 137),
      OptionalField("lower_bounds", IntMap(126, 127, "bytes"), 125),
      OptionalField("upper_bounds", IntMap(129, 130, "bytes"), 128),
      OptionalField("key_metadata", "bytes", 131),
      OptionalField("split_offsets", List("long", 133), 132),
      OptionalField("equality_ids", List("int", 136), 135),
      OptionalField("sort_order_id", "int", 140),
  });
  Json data_file;
  data_file["type"] = "record";
  data_file["name"] = "r2";
  data_file["fields"] = std::move(data_file_fields);

  Json entry;
  entry["type"] = "record";
  entry["name"] = "manifest_entry";
  entry["fields"] = Json::array({
      RequiredField("status", "int", 0),
      OptionalField("snapshot_id", "long", 1),
      OptionalField("sequence_number", "long", 3),
      OptionalField("file_sequence_number", "long", 4),
      RequiredField("data_file", std::move(data_file), 2),
  });
  return DumpJson(entry);
}

std::string ManifestListSchemaJson() {
  Json summary;
  summary["type"] = "record";
  summary["name"] = "r508";
  summary["fields"] = Json::array({
      RequiredField("contains_null", "boolean", 509),
      OptionalField("contains_nan", "boolean", 518),
      OptionalField("lower_bound", "bytes", 510),
      OptionalField("upper_bound", "bytes", 511),
  });
  Json partitions;
  partitions["type"] = "array";
  partitions["items"] = std::move(summary);
  partitions["element-id"] = 508;

  Json root;
  root["type"] = "record";
  root["name"] = "manifest_file";
  root["fields"] = Json::array({
      RequiredField("manifest_path", "string", 500),
      RequiredField("manifest_length", "long", 501),
      RequiredField("partition_spec_id", "int", 502),
      RequiredField("content", "int", 517),
      RequiredField("sequence_number", "long", 515),
      RequiredField("min_sequence_number", "long", 516),
      RequiredField("added_snapshot_id", "long", 503),
      RequiredField("added_files_count", "int", 504),
      RequiredField("existing_files_count", "int", 505),
      RequiredField("deleted_files_count", "int", 506),
      RequiredField("added_rows_count", "long", 512),
      RequiredField("existing_rows_count", "long", 513),
      RequiredField("deleted_rows_count", "long", 514),
      OptionalField("partitions", std::move(partitions), 507),
      OptionalField("key_metadata", "bytes", 519),
  });
  return DumpJson(root);
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

std::string Int128ToFixed(Int128 v, int size) {
  std::string out(static_cast<size_t>(size), '\0');
  auto u = static_cast<unsigned __int128>(v);
  for (int i = size - 1; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(static_cast<uint8_t>(u & 0xff));
    u >>= 8;
  }
  return out;
}

Int128 FixedToInt128(const std::string& bytes) {
  unsigned __int128 u = 0;
  if (!bytes.empty() && (static_cast<uint8_t>(bytes[0]) & 0x80) != 0) u = ~u;  // sign-extend
  for (char c : bytes) u = (u << 8) | static_cast<uint8_t>(c);
  return static_cast<Int128>(u);
}

Result<avro::Value> PartitionValueToAvro(const DataType& type, const Value& value,
                                         const std::string& field_name) {
  if (std::holds_alternative<std::monostate>(value)) return avro::Value::Null();
  auto mismatch = [&]() {
    return Status::InvalidArgument("partition field \"" + field_name + "\": value does not match " +
                                   type.ToString());
  };
  switch (type.id) {
    case TypeId::kBoolean:
      if (!std::holds_alternative<bool>(value)) return mismatch();
      return avro::Value::Boolean(std::get<bool>(value));
    case TypeId::kInt32:
    case TypeId::kDate:
      if (!std::holds_alternative<int32_t>(value)) return mismatch();
      return avro::Value::Int(std::get<int32_t>(value));
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTime:
      if (!std::holds_alternative<int64_t>(value)) return mismatch();
      return avro::Value::Long(std::get<int64_t>(value));
    case TypeId::kFloat:
      if (!std::holds_alternative<float>(value)) return mismatch();
      return avro::Value::Float(std::get<float>(value));
    case TypeId::kDouble:
      if (!std::holds_alternative<double>(value)) return mismatch();
      return avro::Value::Double(std::get<double>(value));
    case TypeId::kString:
      if (!std::holds_alternative<std::string>(value)) return mismatch();
      return avro::Value::String(std::get<std::string>(value));
    case TypeId::kBinary:
      if (!std::holds_alternative<std::string>(value)) return mismatch();
      return avro::Value::Bytes(std::get<std::string>(value));
    case TypeId::kDecimal:
      if (!std::holds_alternative<Int128>(value)) return mismatch();
      return avro::Value::Fixed(
          Int128ToFixed(std::get<Int128>(value), DecimalBytes(type.precision)));
  }
  return mismatch();
}

// Decodes a partition value by its Avro type alone, so manifests are readable without the table
// schema (and whatever spec evolution happened since).
Result<Value> PartitionValueFromAvro(const avro::Node& node, const avro::Value& v) {
  if (v.is_null()) return Value{};
  switch (v.kind()) {
    case avro::Value::Kind::kBoolean:
      return Value{v.boolean_value()};
    case avro::Value::Kind::kInt:
      return Value{v.int_value()};
    case avro::Value::Kind::kLong:
      return Value{v.long_value()};
    case avro::Value::Kind::kFloat:
      return Value{v.float_value()};
    case avro::Value::Kind::kDouble:
      return Value{v.double_value()};
    case avro::Value::Kind::kString:
    case avro::Value::Kind::kBytes:
      return Value{v.bytes_value()};
    case avro::Value::Kind::kFixed: {
      const avro::Node* n = &node;
      if (n->type == avro::Type::kUnion) {
        for (const avro::Node* b : n->branches) {
          if (b->type == avro::Type::kFixed) n = b;
        }
      }
      if (n->logical_type != "decimal" || v.bytes_value().size() > 16) {
        return Status::Corruption("unsupported fixed partition value (not a decimal)");
      }
      return Value{FixedToInt128(v.bytes_value())};
    }
    default:
      return Status::Corruption(std::string("unsupported partition value of Avro kind ") +
                                std::string(avro::KindName(v.kind())));
  }
}

template <typename V, typename F>
avro::Value MapToAvro(const std::map<int32_t, V>& m, F&& make_value) {
  if (m.empty()) return avro::Value::Null();
  std::vector<avro::Value> items;
  items.reserve(m.size());
  for (const auto& [k, v] : m) {
    items.push_back(avro::Value::Record({avro::Value::Int(k), make_value(v)}));
  }
  return avro::Value::Array(std::move(items));
}

template <typename T, typename F>
avro::Value ListToAvro(const std::vector<T>& list, F&& make_value) {
  if (list.empty()) return avro::Value::Null();
  std::vector<avro::Value> items;
  items.reserve(list.size());
  for (const T& v : list) items.push_back(make_value(v));
  return avro::Value::Array(std::move(items));
}

avro::Value OptionalLong(const std::optional<int64_t>& v) {
  return v ? avro::Value::Long(*v) : avro::Value::Null();
}

// Reading helpers: records are looked up by field name so that manifests from other writers
// (other field order, extra fields) read too.
class RecordView {
 public:
  RecordView(const avro::Node& node, const avro::Value& value, std::string where)
      : node_(node), value_(value), where_(std::move(where)) {}

  // The field's value (null when the field is absent from the schema).
  const avro::Value& Get(std::string_view name) const {
    static const avro::Value kNull;
    const avro::Value* v = value_.FieldByName(node_, name);
    return v == nullptr ? kNull : *v;
  }
  // The field's schema node with a ["null", T] union unwrapped to T; nullptr when absent.
  const avro::Node* Type(std::string_view name) const {
    int i = node_.FieldIndex(name);
    if (i < 0) return nullptr;
    const avro::Node* t = node_.fields[static_cast<size_t>(i)].type;
    if (t->type == avro::Type::kUnion) {
      for (const avro::Node* b : t->branches) {
        if (b->type != avro::Type::kNull) return b;
      }
    }
    return t;
  }
  Status Missing(std::string_view name) const {
    return Status::Corruption(where_ + ": missing or mistyped field \"" + std::string(name) + "\"");
  }
  Result<int64_t> Long(std::string_view name) const {
    const avro::Value& v = Get(name);
    if (v.kind() == avro::Value::Kind::kLong) return v.long_value();
    if (v.kind() == avro::Value::Kind::kInt) return static_cast<int64_t>(v.int_value());
    return Missing(name);
  }
  Result<int32_t> Int(std::string_view name) const {
    const avro::Value& v = Get(name);
    if (v.kind() == avro::Value::Kind::kInt) return v.int_value();
    return Missing(name);
  }
  Result<std::optional<int64_t>> OptLong(std::string_view name) const {
    const avro::Value& v = Get(name);
    if (v.is_null()) return std::optional<int64_t>();
    if (v.kind() == avro::Value::Kind::kLong) return std::optional<int64_t>(v.long_value());
    return Missing(name);
  }
  Result<std::string> String(std::string_view name) const {
    const avro::Value& v = Get(name);
    if (v.kind() == avro::Value::Kind::kString) return v.string_value();
    return Missing(name);
  }
  const std::string& where() const { return where_; }

 private:
  const avro::Node& node_;
  const avro::Value& value_;
  std::string where_;
};

template <typename V, typename F>
Status MapFromAvro(const RecordView& rec, std::string_view name, F&& get_value,
                   std::map<int32_t, V>* out) {
  const avro::Value& v = rec.Get(name);
  if (v.is_null()) return Status::OK();
  if (v.kind() != avro::Value::Kind::kArray) return rec.Missing(name);
  for (const avro::Value& item : v.items()) {
    if (item.kind() != avro::Value::Kind::kRecord || item.fields().size() != 2 ||
        item.fields()[0].kind() != avro::Value::Kind::kInt) {
      return rec.Missing(name);
    }
    std::optional<V> value = get_value(item.fields()[1]);
    if (!value) return rec.Missing(name);
    (*out)[item.fields()[0].int_value()] = std::move(*value);
  }
  return Status::OK();
}

std::optional<int64_t> AsLong(const avro::Value& v) {
  if (v.kind() == avro::Value::Kind::kLong) return v.long_value();
  return std::nullopt;
}
std::optional<std::string> AsBytes(const avro::Value& v) {
  if (v.kind() == avro::Value::Kind::kBytes) return v.bytes_value();
  return std::nullopt;
}

Result<std::string> LocalPath(const std::string& path_or_uri) {
  if (path_or_uri.rfind("file:", 0) == 0) return UriToPath(path_or_uri);
  return path_or_uri;
}

// Encodes `records` into an Avro container, choosing the codec by size (kDeflateThreshold).
Result<std::string> EncodeContainer(const std::string& schema_json,
                                    const std::vector<std::pair<std::string, std::string>>& meta,
                                    const std::vector<avro::Value>& records) {
  FLOE_ASSIGN_OR_RAISE(std::shared_ptr<const avro::Schema> schema, avro::ParseSchema(schema_json));
  std::string bytes;
  for (avro::Codec codec : {avro::Codec::kNull, avro::Codec::kDeflate}) {
    FLOE_ASSIGN_OR_RAISE(std::unique_ptr<avro::ContainerWriter> writer,
                         avro::ContainerWriter::Make(schema, meta, codec));
    for (const avro::Value& r : records) FLOE_RETURN_NOT_OK(writer->Add(r));
    FLOE_ASSIGN_OR_RAISE(bytes, writer->Finish());
    if (bytes.size() < kDeflateThreshold) break;
  }
  return bytes;
}

Status WriteNewFile(const io::FileIO& file_io, const std::string& path, const std::string& bytes) {
  FLOE_RETURN_NOT_OK(file_io.CreateDirs(io::DirName(path)));
  return file_io.WriteFileExclusive(path, bytes);
}

bool IsNaN(const Value& v) {
  if (const float* f = std::get_if<float>(&v)) return std::isnan(*f);
  if (const double* d = std::get_if<double>(&v)) return std::isnan(*d);
  return false;
}

// What a manifest's summary of one partition field says: whether nulls and NaNs occur, and the
// bounds of the other values.
struct FieldStats {
  bool contains_null = false;
  bool contains_nan = false;
  std::optional<Value> lower;
  std::optional<Value> upper;

  void Add(const DataType& type, const Value& v) {
    if (std::holds_alternative<std::monostate>(v)) {
      contains_null = true;
    } else if (IsNaN(v)) {
      contains_nan = true;
    } else {
      if (!lower || CompareValues(type, v, *lower) < 0) lower = v;
      if (!upper || CompareValues(type, v, *upper) > 0) upper = v;
    }
  }

  PartitionFieldSummary Summary(const DataType& type) const {
    PartitionFieldSummary s;
    s.contains_null = contains_null;
    s.contains_nan = contains_nan;
    if (lower) s.lower_bound = SerializeValue(type, *lower);
    if (upper) s.upper_bound = SerializeValue(type, *upper);
    return s;
  }
};

// Refuses an entry that cannot go into a manifest of `content` for `spec`.
Status CheckManifestEntry(const ManifestEntry& e, ManifestContent content,
                          const PartitionSpec& spec, const std::string& where) {
  const DataFile& f = e.data_file;
  const std::string file_where = where + ": file " + f.file_path;
  bool is_data = f.content == FileContent::kData;
  if (is_data != (content == ManifestContent::kData)) {
    return Status::InvalidArgument(file_where + ": " + (is_data ? "data" : "delete") +
                                   " file in a " + (is_data ? "delete" : "data") + " manifest");
  }
  if (e.status != EntryStatus::kAdded && (!e.sequence_number || !e.file_sequence_number)) {
    return Status::InvalidArgument(file_where +
                                   ": existing and deleted entries need explicit sequence "
                                   "numbers (spec \"Sequence Number Inheritance\")");
  }
  if (f.partition.size() != spec.fields.size()) {
    return Status::InvalidArgument(file_where + ": partition tuple has " +
                                   std::to_string(f.partition.size()) + " values, spec " +
                                   std::to_string(spec.spec_id) + " has " +
                                   std::to_string(spec.fields.size()) + " fields");
  }
  return Status::OK();
}

// Entry `e` as a manifest_entry record, given its partition tuple's record fields; entries
// without a snapshot id get `snapshot_id`.
avro::Value ManifestEntryRecord(const ManifestEntry& e, std::vector<avro::Value> partition,
                                int64_t snapshot_id) {
  const DataFile& f = e.data_file;
  auto long_value = [](int64_t v) { return avro::Value::Long(v); };
  auto bytes_value = [](const std::string& v) { return avro::Value::Bytes(v); };
  avro::Value data_file = avro::Value::Record({
      avro::Value::Int(static_cast<int32_t>(f.content)),
      avro::Value::String(f.file_path),
      avro::Value::String(f.file_format),
      avro::Value::Record(std::move(partition)),
      avro::Value::Long(f.record_count),
      avro::Value::Long(f.file_size_in_bytes),
      MapToAvro(f.column_sizes, long_value),
      MapToAvro(f.value_counts, long_value),
      MapToAvro(f.null_value_counts, long_value),
      MapToAvro(f.nan_value_counts, long_value),
      MapToAvro(f.lower_bounds, bytes_value),
      MapToAvro(f.upper_bounds, bytes_value),
      avro::Value::Null(),  // key_metadata
      ListToAvro(f.split_offsets, long_value),
      ListToAvro(f.equality_ids, [](int32_t v) { return avro::Value::Int(v); }),
      f.sort_order_id ? avro::Value::Int(*f.sort_order_id) : avro::Value::Null(),
  });
  return avro::Value::Record({
      avro::Value::Int(static_cast<int32_t>(e.status)),
      avro::Value::Long(e.snapshot_id.value_or(snapshot_id)),
      OptionalLong(e.sequence_number),
      OptionalLong(e.file_sequence_number),
      std::move(data_file),
  });
}

// Counts entry `e` in the manifest's added / existing / deleted files and rows.
void CountEntry(const ManifestEntry& e, ManifestFile* mf) {
  const int64_t rows = e.data_file.record_count;
  switch (e.status) {
    case EntryStatus::kAdded:
      ++mf->added_files_count;
      mf->added_rows_count += rows;
      break;
    case EntryStatus::kExisting:
      ++mf->existing_files_count;
      mf->existing_rows_count += rows;
      break;
    case EntryStatus::kDeleted:
      ++mf->deleted_files_count;
      mf->deleted_rows_count += rows;
      break;
  }
}

}  // namespace

Result<ManifestFile> WriteManifest(const io::FileIO& file_io, const std::string& path,
                                   const Schema& schema, const PartitionSpec& spec,
                                   ManifestContent content, int64_t snapshot_id,
                                   const std::vector<ManifestEntry>& entries) {
  const std::string where = "manifest " + path;
  FLOE_ASSIGN_OR_RAISE(std::vector<DataType> types, spec.PartitionTypes(schema));
  FLOE_ASSIGN_OR_RAISE(std::string schema_json, ManifestEntrySchemaJson(spec, types));

  ManifestFile mf;
  mf.manifest_path = PathToUri(path);
  mf.partition_spec_id = spec.spec_id;
  mf.content = content;
  mf.added_snapshot_id = snapshot_id;

  std::vector<FieldStats> stats(spec.fields.size());
  std::vector<avro::Value> records;
  records.reserve(entries.size());
  for (const ManifestEntry& e : entries) {
    FLOE_RETURN_NOT_OK(CheckManifestEntry(e, content, spec, where));
    std::vector<avro::Value> partition;
    partition.reserve(spec.fields.size());
    for (size_t i = 0; i < spec.fields.size(); ++i) {
      const Value& v = e.data_file.partition[i];
      FLOE_ASSIGN_OR_RAISE(avro::Value av, PartitionValueToAvro(types[i], v, spec.fields[i].name));
      partition.push_back(std::move(av));
      stats[i].Add(types[i], v);
    }
    records.push_back(ManifestEntryRecord(e, std::move(partition), snapshot_id));
    CountEntry(e, &mf);
  }
  for (size_t i = 0; i < spec.fields.size(); ++i)
    mf.partitions.push_back(stats[i].Summary(types[i]));

  std::string spec_fields = DumpJson(internal::PartitionSpecToJsonValue(spec)["fields"]);
  std::vector<std::pair<std::string, std::string>> meta = {
      {"schema", SchemaToJson(schema)},
      {"schema-id", std::to_string(schema.schema_id)},
      {"partition-spec", spec_fields},
      {"partition-spec-id", std::to_string(spec.spec_id)},
      {"format-version", "2"},
      {"content", content == ManifestContent::kData ? "data" : "deletes"},
  };
  Result<std::string> bytes = EncodeContainer(schema_json, meta, records);
  if (!bytes.ok()) return bytes.status().WithContext(where);
  FLOE_RETURN_NOT_OK(WriteNewFile(file_io, path, *bytes).WithContext(where));
  mf.manifest_length = static_cast<int64_t>(bytes->size());
  return mf;
}

Result<std::vector<ManifestEntry>> ReadManifest(const io::FileIO& file_io,
                                                const ManifestFile& manifest,
                                                const TableMetadata& metadata) {
  (void)metadata;  // manifests are self-describing: partition types come from the Avro schema
  FLOE_ASSIGN_OR_RAISE(std::string path, LocalPath(manifest.manifest_path));
  const std::string where = "manifest " + manifest.manifest_path;
  Result<std::string> bytes = file_io.ReadFile(path);
  if (!bytes.ok()) return bytes.status().WithContext(where);
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<avro::ContainerReader> reader,
                       avro::ContainerReader::Open(std::move(bytes).value(), where));
  std::optional<std::string> spec_id = reader->metadata("partition-spec-id");
  if (spec_id && *spec_id != std::to_string(manifest.partition_spec_id)) {
    return Status::Corruption(where + ": header partition-spec-id " + *spec_id +
                              " differs from the manifest list's " +
                              std::to_string(manifest.partition_spec_id));
  }
  const avro::Node& root = reader->schema().root();
  if (root.type != avro::Type::kRecord) {
    return Status::Corruption(where + ": schema root is not a record");
  }
  FLOE_ASSIGN_OR_RAISE(std::vector<avro::Value> records, reader->ReadAll());

  std::vector<ManifestEntry> out;
  out.reserve(records.size());
  for (size_t r = 0; r < records.size(); ++r) {
    RecordView entry(root, records[r], where + ": entry " + std::to_string(r));
    ManifestEntry e;
    FLOE_ASSIGN_OR_RAISE(int32_t status, entry.Int("status"));
    if (status < 0 || status > 2) return entry.Missing("status");
    e.status = static_cast<EntryStatus>(status);
    FLOE_ASSIGN_OR_RAISE(e.snapshot_id, entry.OptLong("snapshot_id"));
    FLOE_ASSIGN_OR_RAISE(e.sequence_number, entry.OptLong("sequence_number"));
    FLOE_ASSIGN_OR_RAISE(e.file_sequence_number, entry.OptLong("file_sequence_number"));
    // Inheritance (spec "Sequence Number Inheritance"): snapshot ids always, sequence numbers
    // only for ADDED entries.
    if (!e.snapshot_id) e.snapshot_id = manifest.added_snapshot_id;
    if (e.status == EntryStatus::kAdded) {
      if (!e.sequence_number) e.sequence_number = manifest.sequence_number;
      if (!e.file_sequence_number) e.file_sequence_number = manifest.sequence_number;
    } else if (!e.sequence_number || !e.file_sequence_number) {
      return Status::Corruption(entry.where() +
                                ": existing/deleted entry without explicit sequence numbers");
    }

    const avro::Node* df_node = entry.Type("data_file");
    const avro::Value& df_value = entry.Get("data_file");
    if (df_node == nullptr || df_node->type != avro::Type::kRecord ||
        df_value.kind() != avro::Value::Kind::kRecord) {
      return entry.Missing("data_file");
    }
    RecordView df(*df_node, df_value, entry.where() + ".data_file");
    DataFile& f = e.data_file;
    f.spec_id = manifest.partition_spec_id;
    if (df_node->FieldIndex("content") >= 0) {
      FLOE_ASSIGN_OR_RAISE(int32_t c, df.Int("content"));
      if (c < 0 || c > 2) return df.Missing("content");
      f.content = static_cast<FileContent>(c);
    }
    FLOE_ASSIGN_OR_RAISE(f.file_path, df.String("file_path"));
    FLOE_ASSIGN_OR_RAISE(f.file_format, df.String("file_format"));
    FLOE_ASSIGN_OR_RAISE(f.record_count, df.Long("record_count"));
    FLOE_ASSIGN_OR_RAISE(f.file_size_in_bytes, df.Long("file_size_in_bytes"));

    const avro::Node* part_node = df.Type("partition");
    const avro::Value& part_value = df.Get("partition");
    if (part_node == nullptr || part_node->type != avro::Type::kRecord ||
        part_value.kind() != avro::Value::Kind::kRecord ||
        part_value.fields().size() != part_node->fields.size()) {
      return df.Missing("partition");
    }
    for (size_t i = 0; i < part_node->fields.size(); ++i) {
      Result<Value> v = PartitionValueFromAvro(*part_node->fields[i].type, part_value.fields()[i]);
      if (!v.ok()) return v.status().WithContext(df.where() + ".partition");
      f.partition.push_back(std::move(v).value());
    }

    FLOE_RETURN_NOT_OK(MapFromAvro(df, "column_sizes", AsLong, &f.column_sizes));
    FLOE_RETURN_NOT_OK(MapFromAvro(df, "value_counts", AsLong, &f.value_counts));
    FLOE_RETURN_NOT_OK(MapFromAvro(df, "null_value_counts", AsLong, &f.null_value_counts));
    FLOE_RETURN_NOT_OK(MapFromAvro(df, "nan_value_counts", AsLong, &f.nan_value_counts));
    FLOE_RETURN_NOT_OK(MapFromAvro(df, "lower_bounds", AsBytes, &f.lower_bounds));
    FLOE_RETURN_NOT_OK(MapFromAvro(df, "upper_bounds", AsBytes, &f.upper_bounds));

    const avro::Value& splits = df.Get("split_offsets");
    if (splits.kind() == avro::Value::Kind::kArray) {
      for (const avro::Value& v : splits.items()) {
        if (v.kind() != avro::Value::Kind::kLong) return df.Missing("split_offsets");
        f.split_offsets.push_back(v.long_value());
      }
    } else if (!splits.is_null()) {
      return df.Missing("split_offsets");
    }
    const avro::Value& eq = df.Get("equality_ids");
    if (eq.kind() == avro::Value::Kind::kArray) {
      for (const avro::Value& v : eq.items()) {
        if (v.kind() != avro::Value::Kind::kInt) return df.Missing("equality_ids");
        f.equality_ids.push_back(v.int_value());
      }
    } else if (!eq.is_null()) {
      return df.Missing("equality_ids");
    }
    const avro::Value& sort = df.Get("sort_order_id");
    if (sort.kind() == avro::Value::Kind::kInt) {
      f.sort_order_id = sort.int_value();
    } else if (!sort.is_null()) {
      return df.Missing("sort_order_id");
    }
    out.push_back(std::move(e));
  }
  return out;
}

Status WriteManifestList(const io::FileIO& file_io, const std::string& path, int64_t snapshot_id,
                         std::optional<int64_t> parent_snapshot_id, int64_t sequence_number,
                         const std::vector<ManifestFile>& manifests) {
  const std::string where = "manifest list " + path;
  std::vector<avro::Value> records;
  records.reserve(manifests.size());
  for (const ManifestFile& m : manifests) {
    std::vector<avro::Value> partitions;
    partitions.reserve(m.partitions.size());
    for (const PartitionFieldSummary& s : m.partitions) {
      partitions.push_back(avro::Value::Record({
          avro::Value::Boolean(s.contains_null),
          s.contains_nan ? avro::Value::Boolean(*s.contains_nan) : avro::Value::Null(),
          s.lower_bound ? avro::Value::Bytes(*s.lower_bound) : avro::Value::Null(),
          s.upper_bound ? avro::Value::Bytes(*s.upper_bound) : avro::Value::Null(),
      }));
    }
    records.push_back(avro::Value::Record({
        avro::Value::String(m.manifest_path), avro::Value::Long(m.manifest_length),
        avro::Value::Int(m.partition_spec_id), avro::Value::Int(static_cast<int32_t>(m.content)),
        avro::Value::Long(m.sequence_number), avro::Value::Long(m.min_sequence_number),
        avro::Value::Long(m.added_snapshot_id), avro::Value::Int(m.added_files_count),
        avro::Value::Int(m.existing_files_count), avro::Value::Int(m.deleted_files_count),
        avro::Value::Long(m.added_rows_count), avro::Value::Long(m.existing_rows_count),
        avro::Value::Long(m.deleted_rows_count), avro::Value::Array(std::move(partitions)),
        avro::Value::Null(),  // key_metadata
    }));
  }
  std::vector<std::pair<std::string, std::string>> meta = {
      {"snapshot-id", std::to_string(snapshot_id)},
      {"parent-snapshot-id",
       parent_snapshot_id ? std::to_string(*parent_snapshot_id) : std::string("null")},
      {"sequence-number", std::to_string(sequence_number)},
      {"format-version", "2"},
  };
  Result<std::string> bytes = EncodeContainer(ManifestListSchemaJson(), meta, records);
  if (!bytes.ok()) return bytes.status().WithContext(where);
  return WriteNewFile(file_io, path, *bytes).WithContext(where);
}

Result<std::vector<ManifestFile>> ReadManifestList(const io::FileIO& file_io,
                                                   const std::string& path_or_uri) {
  FLOE_ASSIGN_OR_RAISE(std::string path, LocalPath(path_or_uri));
  const std::string where = "manifest list " + path_or_uri;
  Result<std::string> bytes = file_io.ReadFile(path);
  if (!bytes.ok()) return bytes.status().WithContext(where);
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<avro::ContainerReader> reader,
                       avro::ContainerReader::Open(std::move(bytes).value(), where));
  const avro::Node& root = reader->schema().root();
  if (root.type != avro::Type::kRecord) {
    return Status::Corruption(where + ": schema root is not a record");
  }
  FLOE_ASSIGN_OR_RAISE(std::vector<avro::Value> records, reader->ReadAll());
  std::vector<ManifestFile> out;
  out.reserve(records.size());
  for (size_t r = 0; r < records.size(); ++r) {
    RecordView rec(root, records[r], where + ": row " + std::to_string(r));
    ManifestFile m;
    FLOE_ASSIGN_OR_RAISE(m.manifest_path, rec.String("manifest_path"));
    FLOE_ASSIGN_OR_RAISE(m.manifest_length, rec.Long("manifest_length"));
    FLOE_ASSIGN_OR_RAISE(m.partition_spec_id, rec.Int("partition_spec_id"));
    FLOE_ASSIGN_OR_RAISE(int32_t content, rec.Int("content"));
    if (content != 0 && content != 1) return rec.Missing("content");
    m.content = static_cast<ManifestContent>(content);
    FLOE_ASSIGN_OR_RAISE(m.sequence_number, rec.Long("sequence_number"));
    FLOE_ASSIGN_OR_RAISE(m.min_sequence_number, rec.Long("min_sequence_number"));
    FLOE_ASSIGN_OR_RAISE(m.added_snapshot_id, rec.Long("added_snapshot_id"));
    FLOE_ASSIGN_OR_RAISE(m.added_files_count, rec.Int("added_files_count"));
    FLOE_ASSIGN_OR_RAISE(m.existing_files_count, rec.Int("existing_files_count"));
    FLOE_ASSIGN_OR_RAISE(m.deleted_files_count, rec.Int("deleted_files_count"));
    FLOE_ASSIGN_OR_RAISE(m.added_rows_count, rec.Long("added_rows_count"));
    FLOE_ASSIGN_OR_RAISE(m.existing_rows_count, rec.Long("existing_rows_count"));
    FLOE_ASSIGN_OR_RAISE(m.deleted_rows_count, rec.Long("deleted_rows_count"));
    const avro::Value& parts = rec.Get("partitions");
    const avro::Node* parts_node = rec.Type("partitions");
    if (parts.kind() == avro::Value::Kind::kArray && parts_node != nullptr &&
        parts_node->type == avro::Type::kArray && parts_node->items != nullptr &&
        parts_node->items->type == avro::Type::kRecord) {
      for (size_t i = 0; i < parts.items().size(); ++i) {
        RecordView s(*parts_node->items, parts.items()[i],
                     rec.where() + ".partitions[" + std::to_string(i) + "]");
        PartitionFieldSummary summary;
        const avro::Value& cn = s.Get("contains_null");
        if (cn.kind() != avro::Value::Kind::kBoolean) return s.Missing("contains_null");
        summary.contains_null = cn.boolean_value();
        const avro::Value& nan = s.Get("contains_nan");
        if (nan.kind() == avro::Value::Kind::kBoolean) summary.contains_nan = nan.boolean_value();
        summary.lower_bound = AsBytes(s.Get("lower_bound"));
        summary.upper_bound = AsBytes(s.Get("upper_bound"));
        m.partitions.push_back(std::move(summary));
      }
    } else if (!parts.is_null()) {
      return rec.Missing("partitions");
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace floe::iceberg
