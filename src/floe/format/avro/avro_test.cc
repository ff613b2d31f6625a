#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "floe/format/avro/container.h"
#include "floe/format/avro/encoding.h"
#include "floe/format/avro/schema.h"
#include "floe/format/avro/value.h"
#include "floe/io/file.h"

namespace floe::avro {
namespace {

using Json = nlohmann::json;

std::string Hex(std::string_view s) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

std::shared_ptr<const Schema> MustParse(std::string_view json) {
  auto r = ParseSchema(json);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : nullptr;
}

std::string Encode(std::string_view schema_json, const Value& v) {
  auto schema = MustParse(schema_json);
  std::string out;
  Status st = EncodeValue(schema->root(), v, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  // Every encoding must decode back to the same value, consuming exactly its bytes.
  std::string_view in = out;
  Value back;
  st = DecodeValue(schema->root(), &in, &back);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(in.empty());
  EXPECT_TRUE(back == v);
  return Hex(out);
}

// The JSON form the interop script compares against: longs as strings (JS numbers lose
// precision), bytes/fixed as hex, unions as the plain value, enums as their symbol.
Json ToJson(const Node& n, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      return nullptr;
    case Value::Kind::kBoolean:
      return v.boolean_value();
    case Value::Kind::kInt:
      return v.int_value();
    case Value::Kind::kLong:
      return std::to_string(v.long_value());
    case Value::Kind::kFloat:
      return static_cast<double>(v.float_value());
    case Value::Kind::kDouble:
      return v.double_value();
    case Value::Kind::kString:
      return v.string_value();
    case Value::Kind::kBytes:
    case Value::Kind::kFixed:
      return Hex(v.bytes_value());
    default:
      break;
  }
  const Node* node = &n;
  if (node->type == Type::kUnion) {
    for (const Node* b : node->branches) {
      bool match = (b->type == Type::kEnum && v.kind() == Value::Kind::kEnum) ||
                   (b->type == Type::kArray && v.kind() == Value::Kind::kArray) ||
                   (b->type == Type::kMap && v.kind() == Value::Kind::kMap) ||
                   (b->type == Type::kRecord && v.kind() == Value::Kind::kRecord);
      if (match) {
        node = b;
        break;
      }
    }
  }
  switch (v.kind()) {
    case Value::Kind::kEnum:
      return node->symbols.at(v.enum_index());
    case Value::Kind::kArray: {
      Json a = Json::array();
      for (const auto& item : v.items()) a.push_back(ToJson(*node->items, item));
      return a;
    }
    case Value::Kind::kMap: {
      Json o = Json::object();
      for (const auto& [k, item] : v.entries()) o[k] = ToJson(*node->items, item);
      return o;
    }
    case Value::Kind::kRecord: {
      Json o = Json::object();
      for (size_t i = 0; i < node->fields.size(); ++i) {
        o[node->fields[i].name] = ToJson(*node->fields[i].type, v.fields()[i]);
      }
      return o;
    }
    default:
      return nullptr;
  }
}

// With FLOE_INTEROP_DIR set, leaves the file and its expected records for tests/interop (avsc).
void DumpForInterop(const std::string& name, const std::string& file, const Schema& schema,
                    const std::vector<Value>& records) {
  const char* dir = std::getenv("FLOE_INTEROP_DIR");
  if (dir == nullptr || *dir == '\0') return;
  std::string avro_dir = io::JoinPath(dir, "avro");
  ASSERT_TRUE(io::CreateDirs(avro_dir).ok());
  Json expected = Json::array();
  for (const auto& r : records) expected.push_back(ToJson(schema.root(), r));
  ASSERT_TRUE(io::WriteFileReplace(io::JoinPath(avro_dir, name + ".avro"), file).ok());
  ASSERT_TRUE(
      io::WriteFileReplace(io::JoinPath(avro_dir, name + ".expected.json"), expected.dump(1)).ok());
}

std::string WriteFile(const std::shared_ptr<const Schema>& schema,
                      const std::vector<Value>& records, Codec codec, size_t per_block = 4096,
                      std::vector<std::pair<std::string, std::string>> metadata = {}) {
  auto w = ContainerWriter::Make(schema, std::move(metadata), codec, per_block);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  for (const auto& r : records) {
    Status st = (*w)->Add(r);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  EXPECT_EQ((*w)->num_records(), static_cast<int64_t>(records.size()));
  auto f = (*w)->Finish();
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : "";
}

std::vector<Value> ReadFile(const std::string& bytes) {
  auto r = ContainerReader::Open(bytes, "test.avro");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  auto all = (*r)->ReadAll();
  EXPECT_TRUE(all.ok()) << all.status().ToString();
  return all.ok() ? *all : std::vector<Value>{};
}

// ---------------------------------------------------------------------------------------------
// Binary encoding: the spec's examples, byte for byte.

TEST(AvroEncoding, ZigzagVarintsMatchSpecTable) {
  auto hex = [](int64_t v) {
    std::string s;
    AppendVarint(v, &s);
    return Hex(s);
  };
  EXPECT_EQ(hex(0), "00");
  EXPECT_EQ(hex(-1), "01");
  EXPECT_EQ(hex(1), "02");
  EXPECT_EQ(hex(-2), "03");
  EXPECT_EQ(hex(2), "04");
  EXPECT_EQ(hex(-64), "7f");
  EXPECT_EQ(hex(64), "8001");
  EXPECT_EQ(hex(std::numeric_limits<int64_t>::max()), "feffffffffffffffff01");
  EXPECT_EQ(hex(std::numeric_limits<int64_t>::min()), "ffffffffffffffffff01");
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{300}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    std::string s;
    AppendVarint(v, &s);
    std::string_view in = s;
    int64_t back = 0;
    ASSERT_TRUE(ReadVarint(&in, &back).ok());
    EXPECT_EQ(back, v);
    EXPECT_TRUE(in.empty());
  }
}

TEST(AvroEncoding, PrimitivesMatchSpec) {
  EXPECT_EQ(Encode("\"null\"", Value::Null()), "");
  EXPECT_EQ(Encode("\"boolean\"", Value::Boolean(true)), "01");
  EXPECT_EQ(Encode("\"boolean\"", Value::Boolean(false)), "00");
  EXPECT_EQ(Encode("\"int\"", Value::Int(-64)), "7f");
  EXPECT_EQ(Encode("\"int\"", Value::Int(std::numeric_limits<int32_t>::min())), "ffffffff0f");
  EXPECT_EQ(Encode("\"long\"", Value::Long(64)), "8001");
  EXPECT_EQ(Encode("\"float\"", Value::Float(1.0f)), "0000803f");
  EXPECT_EQ(Encode("\"double\"", Value::Double(1.0)), "000000000000f03f");
  EXPECT_EQ(Encode("\"double\"", Value::Double(-2.5)), "00000000000004c0");
  EXPECT_EQ(Encode("\"string\"", Value::String("foo")), "06666f6f");
  EXPECT_EQ(Encode("\"bytes\"", Value::Bytes(Bytes({0, 255}))), "0400ff");
  EXPECT_EQ(Encode("\"string\"", Value::String("")), "00");
  // Logical types are attributes; the physical encoding is unchanged.
  EXPECT_EQ(Encode(R"({"type": "long", "logicalType": "timestamp-micros"})", Value::Long(1)), "02");
}

TEST(AvroEncoding, ComplexTypesMatchSpec) {
  // Spec: record {a: long, b: string} with a=27, b="foo" -> 36 06 66 6f 6f.
  EXPECT_EQ(Encode(R"({"type":"record","name":"test","fields":[{"name":"a","type":"long"},
                      {"name":"b","type":"string"}]})",
                   Value::Record({Value::Long(27), Value::String("foo")})),
            "3606666f6f");
  // Spec: array of longs [3, 27] -> 04 06 36 00.
  EXPECT_EQ(
      Encode(R"({"type":"array","items":"long"})", Value::Array({Value::Long(3), Value::Long(27)})),
      "04063600");
  EXPECT_EQ(Encode(R"({"type":"array","items":"long"})", Value::Array({})), "00");
  // Spec: union ["null","string"]: null -> 00, "a" -> 02 02 61.
  EXPECT_EQ(Encode(R"(["null","string"])", Value::Null()), "00");
  EXPECT_EQ(Encode(R"(["null","string"])", Value::String("a")), "020261");
  EXPECT_EQ(Encode(R"({"type":"map","values":"int"})",
                   Value::Map({{"a", Value::Int(1)}, {"b", Value::Int(-1)}})),
            "04026102026201"
            "00");
  EXPECT_EQ(Encode(R"({"type":"enum","name":"E","symbols":["A","B","C"]})", Value::Enum(2)), "04");
  EXPECT_EQ(Encode(R"({"type":"fixed","name":"md5","size":3})", Value::Fixed("abc")), "616263");
}

TEST(AvroEncoding, UnionPicksFirstMatchingNamedBranchTheValueFits) {
  const char* schema = R"([
    {"type":"record","name":"One","fields":[{"name":"a","type":"int"}]},
    {"type":"record","name":"Two","fields":[{"name":"a","type":"int"},{"name":"b","type":"int"}]},
    {"type":"fixed","name":"F2","size":2},
    {"type":"fixed","name":"F3","size":3}])";
  EXPECT_EQ(Encode(schema, Value::Record({Value::Int(1)})), "0002");
  EXPECT_EQ(Encode(schema, Value::Record({Value::Int(1), Value::Int(2)})), "020204");
  EXPECT_EQ(Encode(schema, Value::Fixed("ab")), "046162");
  EXPECT_EQ(Encode(schema, Value::Fixed("abc")), "06616263");
}

TEST(AvroEncoding, ValidationErrorNamesFieldPath) {
  auto schema = MustParse(R"({"type":"record","name":"manifest_file","fields":[
      {"name":"manifest_path","type":"string"},
      {"name":"partitions","type":["null",{"type":"array","items":
        {"type":"record","name":"r508","fields":[{"name":"contains_null","type":"boolean"}]}}]},
      {"name":"tags","type":{"type":"map","values":"long"}}]})");
  std::string out;
  Status st = EncodeValue(schema->root(),
                          Value::Record({Value::String("p"),
                                         Value::Array({Value::Record({Value::Boolean(true)}),
                                                       Value::Record({Value::Long(3)})}),
                                         Value::Map({})}),
                          &out);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message(), "manifest_file.partitions[1].contains_null: expected boolean, got long");

  out.clear();
  st = EncodeValue(
      schema->root(),
      Value::Record({Value::String("p"), Value::Null(), Value::Map({{"k", Value::String("x")}})}),
      &out);
  EXPECT_EQ(st.message(), "manifest_file.tags[\"k\"]: expected long, got string");

  out.clear();
  st = EncodeValue(schema->root(), Value::Record({Value::Null(), Value::Null(), Value::Map({})}),
                   &out);
  EXPECT_EQ(st.message(), "manifest_file.manifest_path: expected string, got null");

  out.clear();
  st = EncodeValue(schema->root(), Value::Record({Value::String("p")}), &out);
  EXPECT_EQ(st.message(), "manifest_file: expected record manifest_file with 3 fields, got 1");

  out.clear();
  st = EncodeValue(schema->root(),
                   Value::Record({Value::String("p"), Value::Int(1), Value::Map({})}), &out);
  EXPECT_EQ(st.message(), "manifest_file.partitions: expected union [null, array], got int");

  auto e = MustParse(R"({"type":"enum","name":"E","symbols":["A"]})");
  out.clear();
  EXPECT_TRUE(EncodeValue(e->root(), Value::Enum(1), &out).IsInvalidArgument());
  auto f = MustParse(R"({"type":"fixed","name":"F","size":4})");
  EXPECT_TRUE(EncodeValue(f->root(), Value::Fixed("abc"), &out).IsInvalidArgument());
}

TEST(AvroDecoding, RejectsMalformedDatums) {
  auto decode = [](std::string_view schema_json, const std::string& bytes) {
    auto schema = MustParse(schema_json);
    std::string_view in = bytes;
    Value v;
    return DecodeValue(schema->root(), &in, &v);
  };
  auto expect_corrupt = [&](std::string_view schema_json, const std::string& bytes,
                            std::string_view needle) {
    Status st = decode(schema_json, bytes);
    EXPECT_TRUE(st.IsCorruption()) << st.ToString();
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
  };
  expect_corrupt("\"long\"", Bytes({0x80, 0x80}), "truncated varint");
  expect_corrupt("\"long\"", std::string(10, '\xff') + "\x01", "varint");
  expect_corrupt("\"long\"", std::string(9, '\xff') + "\x03", "varint longer than 64 bits");
  expect_corrupt("\"int\"", Bytes({0x80, 0x80, 0x80, 0x80, 0x10}), "out of int range");
  expect_corrupt("\"string\"", Bytes({0x01}), "negative string length");
  expect_corrupt("\"bytes\"", Bytes({0x0a, 'a'}), "bytes length 5 exceeds the 1 bytes left");
  expect_corrupt("\"boolean\"", Bytes({0x02}), "boolean byte 2");
  expect_corrupt("\"double\"", Bytes({0, 0, 0}), "truncated double");
  expect_corrupt(R"(["null","int"])", Bytes({0x04}), "union index 2 out of range");
  expect_corrupt(R"(["null","int"])", Bytes({0x01}), "union index -1 out of range");
  expect_corrupt(R"({"type":"enum","name":"E","symbols":["A"]})", Bytes({0x02}),
                 "enum index 1 out of range");
  // A block claiming a billion longs in 3 bytes is refused before allocating for it.
  expect_corrupt(R"({"type":"array","items":"long"})", Bytes({0x80, 0xa8, 0xd6, 0xb9, 0x07, 0}),
                 "cannot fit");
  expect_corrupt(R"({"type":"array","items":"null"})", Bytes({0x80, 0xa8, 0xd6, 0xb9, 0x07}),
                 "cannot fit");
  expect_corrupt(R"({"type":"map","values":"int"})", Bytes({0x02, 0x09}), "map key");
  // Recursive schema + deep input: bounded depth, no stack overflow.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep.push_back(0x02);
  expect_corrupt(R"({"type":"record","name":"L","fields":[{"name":"next","type":["null","L"]}]})",
                 deep, "nested deeper");
  // Negative array block count comes with a byte size.
  auto schema = MustParse(R"({"type":"array","items":"int"})");
  std::string neg = Bytes({0x03, 0x04, 0x02, 0x04, 0x00});  // count -2, size 2, items 1, 2
  std::string_view in = neg;
  Value v;
  ASSERT_TRUE(DecodeValue(schema->root(), &in, &v).ok());
  EXPECT_TRUE(v == Value::Array({Value::Int(1), Value::Int(2)}));
}

// ---------------------------------------------------------------------------------------------
// Schemas

TEST(AvroSchema, ParsesIcebergAttributes) {
  auto s = MustParse(R"({"type":"record","name":"manifest_entry","fields":[
    {"name":"status","type":"int","field-id":0},
    {"name":"snapshot_id","type":["null","long"],"default":null,"field-id":1},
    {"name":"data_file","type":{"type":"record","name":"r2","fields":[
      {"name":"file_path","type":"string","doc":"Location URI","field-id":100},
      {"name":"column_sizes","type":["null",{"type":"array","logicalType":"map","items":
        {"type":"record","name":"k117_v118","fields":[{"name":"key","type":"int","field-id":117},
          {"name":"value","type":"long","field-id":118}]}}],"field-id":108},
      {"name":"props","type":{"type":"map","values":"string","key-id":7,"value-id":8},"field-id":9},
      {"name":"ids","type":{"type":"array","items":"int","element-id":136},"field-id":135},
      {"name":"amount","type":{"type":"fixed","name":"dec","size":16,"logicalType":"decimal",
        "precision":38,"scale":2},"field-id":10}]},"field-id":2}]})");
  ASSERT_NE(s, nullptr);
  const Node& root = s->root();
  EXPECT_EQ(root.type, Type::kRecord);
  EXPECT_EQ(root.name, "manifest_entry");
  EXPECT_EQ(root.fields[0].field_id, 0);
  EXPECT_EQ(root.FieldIndex("data_file"), 2);
  EXPECT_EQ(root.FieldIndex("nope"), -1);
  const Node& df = *root.fields[2].type;
  EXPECT_EQ(root.fields[2].field_id, 2);
  EXPECT_EQ(df.fields[df.FieldIndex("file_path")].field_id, 100);
  const Node& cs = *df.fields[1].type;
  ASSERT_EQ(cs.type, Type::kUnion);
  EXPECT_EQ(cs.BranchIndex(Type::kArray), 1);
  EXPECT_EQ(cs.branches[1]->logical_type, "map");
  EXPECT_EQ(cs.branches[1]->items->fields[1].field_id, 118);
  const Node& props = *df.fields[2].type;
  EXPECT_EQ(props.key_id, 7);
  EXPECT_EQ(props.value_id, 8);
  EXPECT_EQ(df.fields[3].type->element_id, 136);
  const Node& amount = *df.fields[4].type;
  EXPECT_EQ(amount.logical_type, "decimal");
  EXPECT_EQ(amount.precision, 38);
  EXPECT_EQ(amount.scale, 2);
  EXPECT_EQ(amount.fixed_size, 16);
}

TEST(AvroSchema, ResolvesNamespacesAndRecursion) {
  auto s = MustParse(R"({"type":"record","name":"Node","namespace":"a.b","fields":[
    {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["X","Y"]}},
    {"name":"k2","type":"Kind"},
    {"name":"k3","type":"a.b.Kind"},
    {"name":"other","type":{"type":"fixed","name":"c.Hash","size":4}},
    {"name":"h2","type":"c.Hash"},
    {"name":"children","type":{"type":"array","items":"Node"}}]})");
  ASSERT_NE(s, nullptr);
  const Node& root = s->root();
  EXPECT_EQ(root.name, "a.b.Node");
  EXPECT_EQ(root.fields[0].type->name, "a.b.Kind");
  EXPECT_EQ(root.fields[1].type, root.fields[0].type);
  EXPECT_EQ(root.fields[2].type, root.fields[0].type);
  EXPECT_EQ(root.fields[4].type->name, "c.Hash");
  EXPECT_EQ(root.fields[5].type->items, &root);
  Value leaf = Value::Record({Value::Enum(0), Value::Enum(1), Value::Enum(0), Value::Fixed("abcd"),
                              Value::Fixed("efgh"), Value::Array({})});
  Value tree = Value::Record({Value::Enum(1), Value::Enum(1), Value::Enum(1), Value::Fixed("0000"),
                              Value::Fixed("1111"), Value::Array({leaf, leaf})});
  auto file = WriteFile(s, {tree, leaf}, Codec::kNull);
  auto back = ReadFile(file);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(back[0] == tree);
  EXPECT_TRUE(back[1] == leaf);
}

TEST(AvroSchema, RejectsInvalidSchemas) {
  auto bad = [](std::string_view json, std::string_view needle) {
    auto r = ParseSchema(json);
    ASSERT_FALSE(r.ok()) << json;
    EXPECT_TRUE(r.status().IsInvalidArgument());
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  };
  bad("{", "not valid JSON");
  bad("\"nope\"", "unknown type \"nope\"");
  bad("42", "expected a type name");
  bad(R"({"type":"record","name":"R"})", "without a \"fields\" array");
  bad(R"({"type":"record","fields":[]})", "without \"name\"");
  bad(R"({"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"a","type":"int"}]})",
      "duplicate field name");
  bad(R"({"type":"record","name":"R","fields":[{"name":"a","type":"Missing"}]})",
      "R.a: unknown type \"Missing\"");
  bad(R"({"type":"record","name":"R","fields":[{"name":"a-b","type":"int"}]})",
      "invalid field name");
  bad(R"({"type":"record","name":"R","fields":[{"name":"a","type":"int","field-id":"1"}]})",
      "\"field-id\" must be an int");
  bad(R"(["int","int"])", "union holds \"int\" twice");
  bad(R"(["int",["null"]])", "union directly inside a union");
  bad(R"([])", "empty union");
  bad(R"({"type":"fixed","name":"F"})", "non-negative integer \"size\"");
  bad(R"({"type":"enum","name":"E","symbols":["A","A"]})", "symbol \"A\" twice");
  bad(R"({"type":"array"})", "without \"items\"");
  bad(R"({"type":"map"})", "without \"values\"");
  bad(R"([{"type":"fixed","name":"F","size":1},{"type":"fixed","name":"F","size":2}])",
      "defined twice");
  std::string deep;
  for (int i = 0; i < 1000; ++i) deep += "{\"type\":\"array\",\"items\":";
  deep += "\"int\"";
  for (int i = 0; i < 1000; ++i) deep += "}";
  bad(deep, "nested too deeply");
}

// ---------------------------------------------------------------------------------------------
// Object container files

constexpr const char* kAllTypesSchema = R"({
  "type": "record", "name": "all_types", "namespace": "floe.test",
  "fields": [
    {"name": "n", "type": "null", "field-id": 1},
    {"name": "b", "type": "boolean", "field-id": 2},
    {"name": "i", "type": "int", "field-id": 3},
    {"name": "l", "type": "long", "field-id": 4},
    {"name": "f", "type": "float", "field-id": 5},
    {"name": "d", "type": "double", "field-id": 6},
    {"name": "by", "type": "bytes", "field-id": 7},
    {"name": "s", "type": "string", "field-id": 8},
    {"name": "e", "type": {"type": "enum", "name": "color", "symbols": ["RED", "GREEN", "BLUE"]},
     "field-id": 9},
    {"name": "fx", "type": {"type": "fixed", "name": "uuid", "size": 16, "logicalType": "uuid"},
     "field-id": 10},
    {"name": "arr", "type": {"type": "array", "items": "long", "element-id": 12}, "field-id": 11},
    {"name": "m", "type": {"type": "map", "values": ["null", "string"], "key-id": 14,
     "value-id": 15}, "field-id": 13},
    {"name": "opt", "type": ["null", "long"], "default": null, "field-id": 16},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros",
     "adjust-to-utc": true}, "field-id": 17},
    {"name": "nested", "type": ["null", {"type": "record", "name": "inner", "fields": [
      {"name": "x", "type": "int", "field-id": 19},
      {"name": "c", "type": "color", "field-id": 20},
      {"name": "tags", "type": {"type": "array", "items": "string", "element-id": 22},
       "field-id": 21}]}], "field-id": 18}
  ]})";

class RandomValues {
 public:
  explicit RandomValues(uint64_t seed) : rng_(seed) {}

  // Generates a value of `n`. NaN and infinities only when `special_floats` (JSON can't carry
  // them, so interop files leave them out).
  Value Make(const Node& n, bool special_floats, int depth = 0) {
    switch (n.type) {
      case Type::kNull:
        return Value::Null();
      case Type::kBoolean:
        return Value::Boolean(Pick(2) == 1);
      case Type::kInt:
        return Value::Int(static_cast<int32_t>(Int64()));
      case Type::kLong:
        // Timestamps stay within +-2^52 us (+-142 years), as real ones do; avsc reads a
        // logical-typed long with its default long type, which refuses values beyond 2^53.
        if (!n.logical_type.empty()) {
          return Value::Long(static_cast<int64_t>(rng_() % (uint64_t{1} << 53)) -
                             (int64_t{1} << 52));
        }
        return Value::Long(Int64());
      case Type::kFloat:
        return Value::Float(static_cast<float>(Double(special_floats)));
      case Type::kDouble:
        return Value::Double(Double(special_floats));
      case Type::kBytes:
        return Value::Bytes(RandomBytes(Pick(20)));
      case Type::kString:
        return Value::String(RandomString(Pick(20)));
      case Type::kFixed:
        return Value::Fixed(RandomBytes(n.fixed_size));
      case Type::kEnum:
        return Value::Enum(static_cast<int32_t>(Pick(n.symbols.size())));
      case Type::kUnion:
        return Make(*n.branches[Pick(n.branches.size())], special_floats, depth);
      case Type::kArray: {
        std::vector<Value> items;
        size_t len = depth > 3 ? 0 : Pick(6);
        for (size_t i = 0; i < len; ++i) items.push_back(Make(*n.items, special_floats, depth + 1));
        return Value::Array(std::move(items));
      }
      case Type::kMap: {
        Value::MapEntries entries;
        size_t len = depth > 3 ? 0 : Pick(5);
        for (size_t i = 0; i < len; ++i) {
          // Distinct keys: readers that build objects would merge duplicates.
          entries.emplace_back("k" + std::to_string(i) + RandomString(3),
                               Make(*n.items, special_floats, depth + 1));
        }
        return Value::Map(std::move(entries));
      }
      case Type::kRecord: {
        std::vector<Value> fields;
        for (const auto& f : n.fields) fields.push_back(Make(*f.type, special_floats, depth + 1));
        return Value::Record(std::move(fields));
      }
    }
    return Value::Null();
  }

 private:
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  int64_t Int64() {
    // Mix of small values (1-byte varints) and full-range ones, including the extremes.
    switch (Pick(4)) {
      case 0:
        return static_cast<int64_t>(Pick(200)) - 100;
      case 1:
        return Pick(2) ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
      default:
        return static_cast<int64_t>(rng_());
    }
  }
  double Double(bool special) {
    if (special && Pick(8) == 0) {
      const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                                 std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity(), -0.0};
      return specials[Pick(4)];
    }
    return std::uniform_real_distribution<double>(-1e6, 1e6)(rng_);
  }
  std::string RandomBytes(size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(rng_()));
    return s;
  }
  std::string RandomString(size_t n) {
    static const char* kPieces[] = {"a", "Z", "0", " ", "\"", "\\", "\n", "é", "中", "😀", "\x01"};
    std::string s;
    for (size_t i = 0; i < n; ++i) s += kPieces[Pick(std::size(kPieces))];
    return s;
  }
  std::mt19937_64 rng_;
};

TEST(AvroContainer, RoundTripsEveryTypeWithBothCodecs) {
  auto schema = MustParse(kAllTypesSchema);
  ASSERT_NE(schema, nullptr);
  std::vector<Value> records;
  RandomValues gen(42);
  for (int i = 0; i < 300; ++i) records.push_back(gen.Make(schema->root(), false));
  for (Codec codec : {Codec::kNull, Codec::kDeflate}) {
    for (size_t per_block : {size_t{1}, size_t{7}, size_t{4096}}) {
      std::string file = WriteFile(schema, records, codec, per_block);
      auto reader = ContainerReader::Open(file, "all.avro");
      ASSERT_TRUE(reader.ok()) << reader.status().ToString();
      EXPECT_EQ((*reader)->codec(), codec);
      auto back = (*reader)->ReadAll();
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      ASSERT_EQ(back->size(), records.size());
      for (size_t i = 0; i < records.size(); ++i) EXPECT_TRUE((*back)[i] == records[i]) << i;
    }
    std::string name = codec == Codec::kNull ? "all_types_null" : "all_types_deflate";
    DumpForInterop(name, WriteFile(schema, records, codec, 50), *schema, records);
  }
}

TEST(AvroContainer, RandomValuesRoundTripIncludingNaNAndInfinity) {
  auto schema = MustParse(kAllTypesSchema);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    RandomValues gen(seed);
    std::vector<Value> records;
    for (int i = 0; i < 50; ++i) records.push_back(gen.Make(schema->root(), true));
    Codec codec = seed % 2 ? Codec::kDeflate : Codec::kNull;
    auto back = ReadFile(WriteFile(schema, records, codec, 1 + seed));
    ASSERT_EQ(back.size(), records.size());
    for (size_t i = 0; i < records.size(); ++i)
      EXPECT_TRUE(back[i] == records[i]) << seed << "/" << i;
  }
}

TEST(AvroContainer, HeaderLayoutAndMetadata) {
  auto schema = MustParse(R"({"type":"record","name":"r","fields":[{"name":"a","type":"int"}]})");
  std::string file = WriteFile(schema, {Value::Record({Value::Int(1)})}, Codec::kNull, 4096,
                               {{"format-version", "2"}, {"content", "data"}});
  ASSERT_EQ(file.substr(0, 4), std::string("Obj\x01", 4));
  // Map block: 4 entries (zigzag 8), then "avro.schema" (length 11 -> 0x16).
  EXPECT_EQ(Hex(file.substr(4, 2)), "0816");
  EXPECT_EQ(file.substr(6, 11), "avro.schema");
  auto r = ContainerReader::Open(file, "meta.avro");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->metadata("format-version"), "2");
  EXPECT_EQ((*r)->metadata("content"), "data");
  EXPECT_EQ((*r)->metadata("avro.codec"), "null");
  EXPECT_EQ((*r)->metadata("missing"), std::nullopt);
  EXPECT_EQ((*r)->all_metadata().size(), 4u);
  // Tail: one block of 1 record, 1 byte, value 1 -> 02 02 02, then the same sync as the header.
  std::string sync = file.substr(file.size() - 16);
  EXPECT_EQ(Hex(file.substr(file.size() - 19, 3)), "020202");
  EXPECT_EQ(file.substr(file.size() - 19 - 16, 16), sync);

  auto bad = ContainerWriter::Make(schema, {{"avro.codec", "x"}}, Codec::kNull);
  EXPECT_TRUE(bad.status().IsInvalidArgument());
}

constexpr const char* kManifestListSchema =
    R"({"type":"record","name":"manifest_file","fields":[)"
    R"({"name":"manifest_path","type":"string","doc":"Location URI with FS scheme","field-id":500},)"
    R"({"name":"manifest_length","type":"long","field-id":501},)"
    R"({"name":"partition_spec_id","type":"int","field-id":502},)"
    R"({"name":"content","type":"int","field-id":517},)"
    R"({"name":"sequence_number","type":"long","field-id":515},)"
    R"({"name":"min_sequence_number","type":"long","field-id":516},)"
    R"({"name":"added_snapshot_id","type":"long","field-id":503},)"
    R"({"name":"added_files_count","type":"int","field-id":504},)"
    R"({"name":"partitions","type":["null",{"type":"array","items":{"type":"record",)"
    R"("name":"r508","fields":[{"name":"contains_null","type":"boolean","field-id":509},)"
    R"({"name":"lower_bound","type":["null","bytes"],"field-id":510}]},"element-id":508}],)"
    R"("default":null,"field-id":507}]})";

TEST(AvroContainer, IcebergSchemaAttributesSurviveTheHeaderVerbatim) {
  auto schema = MustParse(kManifestListSchema);
  ASSERT_NE(schema, nullptr);
  const Node& root = schema->root();
  auto entry = [&](std::string path, int64_t snapshot) {
    std::vector<Value> f(root.fields.size());
    f[root.FieldIndex("manifest_path")] = Value::String(std::move(path));
    f[root.FieldIndex("manifest_length")] = Value::Long(4242);
    f[root.FieldIndex("partition_spec_id")] = Value::Int(0);
    f[root.FieldIndex("content")] = Value::Int(0);
    f[root.FieldIndex("sequence_number")] = Value::Long(7);
    f[root.FieldIndex("min_sequence_number")] = Value::Long(3);
    f[root.FieldIndex("added_snapshot_id")] = Value::Long(snapshot);
    f[root.FieldIndex("added_files_count")] = Value::Int(2);
    f[root.FieldIndex("partitions")] =
        Value::Array({Value::Record({Value::Boolean(false), Value::Bytes(Bytes({1, 0, 0, 0}))}),
                      Value::Record({Value::Boolean(true), Value::Null()})});
    return Value::Record(std::move(f));
  };
  std::vector<Value> records = {entry("s3://b/m1.avro", 8333017788700497002),
                                entry("s3://b/m2.avro", -1)};
  records[1].mutable_items()[root.FieldIndex("partitions")] = Value::Null();
  std::string file = WriteFile(schema, records, Codec::kDeflate, 4096,
                               {{"format-version", "2"}, {"snapshot-id", "8333017788700497002"}});
  auto r = ContainerReader::Open(file, "snap-1.avro");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->metadata("avro.schema"), std::string(kManifestListSchema));
  EXPECT_EQ((*r)->schema().json(), kManifestListSchema);
  const Node& rroot = (*r)->schema().root();
  EXPECT_EQ(rroot.fields[rroot.FieldIndex("added_snapshot_id")].field_id, 503);
  const Node& parts = *rroot.fields[rroot.FieldIndex("partitions")].type->branches[1];
  EXPECT_EQ(parts.element_id, 508);
  EXPECT_EQ(parts.items->fields[1].field_id, 510);
  auto back = (*r)->ReadAll();
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 2u);
  EXPECT_TRUE((*back)[0] == records[0]);
  const Value* path = (*back)[1].FieldByName(rroot, "manifest_path");
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(path->string_value(), "s3://b/m2.avro");
  EXPECT_EQ((*back)[0].FieldByName(rroot, "added_snapshot_id")->long_value(), 8333017788700497002);
  EXPECT_EQ((*back)[0].FieldByName(rroot, "no_such_field"), nullptr);
  DumpForInterop("iceberg_manifest_list", file, *schema, records);
}

TEST(AvroContainer, WriterFailsOnInvalidRecordAndStaysFailed) {
  auto schema = MustParse(R"({"type":"record","name":"r","fields":[{"name":"a","type":"int"}]})");
  auto w = ContainerWriter::Make(schema, {}, Codec::kNull);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Add(Value::Record({Value::Int(1)})).ok());
  Status st = (*w)->Add(Value::Record({Value::Long(1)}));
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message(), "avro record 1: r.a: expected int, got long");
  EXPECT_FALSE((*w)->Add(Value::Record({Value::Int(2)})).ok());
  EXPECT_FALSE((*w)->Finish().ok());
}

TEST(AvroContainer, EmptyFileAndFlushedPrefixAreReadable) {
  auto schema = MustParse(R"({"type":"record","name":"r","fields":[{"name":"a","type":"int"}]})");
  EXPECT_TRUE(ReadFile(WriteFile(schema, {}, Codec::kDeflate)).empty());
  auto w = ContainerWriter::Make(schema, {}, Codec::kDeflate);
  ASSERT_TRUE((*w)->Add(Value::Record({Value::Int(5)})).ok());
  int64_t before = (*w)->estimated_size();
  ASSERT_TRUE((*w)->Flush().ok());
  EXPECT_GT((*w)->estimated_size(), before);
  ASSERT_TRUE((*w)->Add(Value::Record({Value::Int(6)})).ok());
  auto f = (*w)->Finish();
  ASSERT_TRUE(f.ok());
  auto back = ReadFile(*f);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].fields()[0].int_value(), 6);
}

// ---------------------------------------------------------------------------------------------
// Corrupt and truncated files

Status ReadAllStatus(const std::string& bytes) {
  auto r = ContainerReader::Open(bytes, "bad.avro");
  if (!r.ok()) return r.status();
  auto all = (*r)->ReadAll();
  return all.ok() ? Status::OK() : all.status();
}

void ExpectCorruption(const std::string& bytes, std::string_view needle) {
  Status st = ReadAllStatus(bytes);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_TRUE(st.message().starts_with("bad.avro: ")) << st.message();
  EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
}

std::string SmallFile(Codec codec) {
  auto schema = MustParse(kAllTypesSchema);
  RandomValues gen(7);
  std::vector<Value> records;
  for (int i = 0; i < 6; ++i) records.push_back(gen.Make(schema->root(), true));
  return WriteFile(schema, records, codec, 2);
}

TEST(AvroCorruption, NamedErrorsForKnownDamage) {
  std::string good = SmallFile(Codec::kNull);
  ASSERT_TRUE(ReadAllStatus(good).ok());
  ExpectCorruption("", "bad magic");
  ExpectCorruption("Obj\x02", "bad magic");
  std::string bad = good;
  bad[bad.size() - 1] ^= 1;
  ExpectCorruption(bad, "sync marker mismatch");
  ExpectCorruption(good.substr(0, good.size() - 5), "truncated sync marker");
  ExpectCorruption(good.substr(0, 30), "header");
}

TEST(AvroCorruption, BlockLevelDamageIsCorruptionNamingTheFile) {
  auto schema =
      MustParse(R"({"type":"record","name":"r","fields":[{"name":"u","type":["null","int"]}]})");
  std::string file = WriteFile(schema, {Value::Record({Value::Int(1)})}, Codec::kNull);
  // Tail: count 1 (02), size 2 (04), union index 1 (02), int 1 (02), sync (16).
  size_t at = file.size() - 16 - 4;
  ASSERT_EQ(Hex(file.substr(at, 4)), "02040202");
  auto patched = [&](std::initializer_list<int> bytes) {
    return file.substr(0, at) + Bytes(bytes) + file.substr(file.size() - 16);
  };
  ExpectCorruption(patched({0x02, 0x04, 0x04, 0x02}),
                   "block 0, record 0: union index 2 out of range");
  ExpectCorruption(patched({0x02, 0x7e, 0x02, 0x02}), "size 63 exceeds");
  ExpectCorruption(patched({0x02, 0x03, 0x02, 0x02}), "size -2 exceeds");
  ExpectCorruption(patched({0x01, 0x04, 0x02, 0x02}), "negative record count");
  ExpectCorruption(patched({0x40, 0x04, 0x02, 0x02}), "32 records cannot fit in 2 bytes");
  ExpectCorruption(patched({0x02, 0x06, 0x02, 0x02, 0x00}), "1 bytes left after its last record");
  ExpectCorruption(patched({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),
                   "varint");
  std::string header_only = file.substr(0, at);
  EXPECT_TRUE(ReadAllStatus(header_only).ok());

  // Deflate: garbage data and truncated streams.
  std::string dfile = WriteFile(schema, {Value::Record({Value::Int(1)})}, Codec::kDeflate);
  // The header ends with the first occurrence of the sync marker.
  size_t hdr_end = dfile.find(dfile.substr(dfile.size() - 16)) + 16;
  std::string garbage = dfile.substr(0, hdr_end) + Bytes({0x02, 0x08, 0xff, 0xff, 0xff, 0xff}) +
                        dfile.substr(dfile.size() - 16);
  ExpectCorruption(garbage, "bad deflate data");
  std::string deflated = dfile.substr(hdr_end, dfile.size() - 16 - hdr_end);
  // deflated = count(02) size(n) data; cut the data short by one byte and fix the size.
  std::string data = deflated.substr(2, deflated.size() - 3);
  std::string cut = dfile.substr(0, hdr_end) + "\x02";
  AppendVarint(static_cast<int64_t>(data.size()), &cut);
  cut += data + dfile.substr(dfile.size() - 16);
  ExpectCorruption(cut, "deflate");

  // Unsupported codec is NotImplemented, not corruption.
  std::string snappy = file;
  size_t pos = snappy.find("null", snappy.find("avro.codec"));
  snappy.replace(pos, 4, "zstd");
  Status st = ReadAllStatus(snappy);
  EXPECT_EQ(st.code(), StatusCode::kNotImplemented) << st.ToString();
  // A damaged schema in the header is corruption.
  std::string bad_schema = file;
  bad_schema[bad_schema.find("\"record\"") + 1] = 'X';
  ExpectCorruption(bad_schema, "header avro.schema");
}

TEST(AvroCorruption, EveryTruncationIsOkOrCorruption) {
  for (Codec codec : {Codec::kNull, Codec::kDeflate}) {
    std::string good = SmallFile(codec);
    for (size_t len = 0; len < good.size(); ++len) {
      Status st = ReadAllStatus(good.substr(0, len));
      // Truncation at a block boundary yields a shorter valid file.
      if (!st.ok()) {
        EXPECT_TRUE(st.IsCorruption()) << len << ": " << st.ToString();
      }
    }
  }
}

TEST(AvroCorruption, EveryByteFlipIsOkOrAnError) {
  for (Codec codec : {Codec::kNull, Codec::kDeflate}) {
    std::string good = SmallFile(codec);
    for (size_t i = 0; i < good.size(); ++i) {
      for (int mask : {0x01, 0x80, 0xff}) {
        std::string bad = good;
        bad[i] = static_cast<char>(bad[i] ^ mask);
        Status st = ReadAllStatus(bad);
        if (!st.ok()) {
          EXPECT_TRUE(st.IsCorruption() || st.code() == StatusCode::kNotImplemented)
              << i << ": " << st.ToString();
        }
      }
    }
  }
}

}  // namespace
}  // namespace floe::avro
