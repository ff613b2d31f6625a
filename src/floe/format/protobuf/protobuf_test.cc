#include <gtest/gtest.h>

#include <random>

#include "floe/format/protobuf/message_decoder.h"
#include "floe/format/protobuf/proto_schema.h"

namespace floe::protobuf {
namespace {

constexpr const char* kProto = R"(
// Orders as a producer's .proto declares them.
syntax = "proto3";
package shop.v1;
import "google/protobuf/timestamp.proto";
option java_package = "com.example.shop";

message Order {
  int64 id = 1;
  string item = 2;
  optional int32 qty = 3;
  Status status = 4;
  google.protobuf.Timestamp placed = 5;
  double price = 6;
  repeated string tags = 7 [packed = false];
  map<string, int32> counts = 8;
  Detail detail = 9;
  sint64 delta = 10;
  bool rush = 11;
  oneof contact { string email = 12; string phone = 13; }
  reserved 14, 15;
  message Detail { string note = 1; }
  enum Status { STATUS_UNSPECIFIED = 0; NEW = 1; SHIPPED = 2; }
}
message Other { int32 x = 1; }
service Shop { rpc Get (Order) returns (Order); }
)";

// Wire-format helpers.
void Varint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void Key(int number, int wire, std::string* out) { Varint((uint64_t(number) << 3) | wire, out); }
void Bytes(int number, std::string_view v, std::string* out) {
  Key(number, 2, out);
  Varint(v.size(), out);
  out->append(v);
}
void Fixed64(int number, uint64_t v, std::string* out) {
  Key(number, 1, out);
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

std::shared_ptr<const BatchSchema> Columns() {
  auto s = std::make_shared<BatchSchema>();
  s->fields = {Field{"id", DataType::Int64(), false, 1},
               Field{"item", DataType::String(), true, 2},
               Field{"qty", DataType::Int32(), true, 3},
               Field{"status", DataType::String(), true, 4},
               Field{"placed", DataType::TimestampTz(), true, 5},
               Field{"price", DataType::Double(), true, 6},
               Field{"delta", DataType::Int64(), true, 7},
               Field{"rush", DataType::Boolean(), true, 8},
               Field{"email", DataType::String(), true, 9},
               Field{"missing", DataType::String(), true, 10}};
  return s;
}

std::string Order(int64_t id) {
  std::string m;
  Key(1, 0, &m);
  Varint(static_cast<uint64_t>(id), &m);
  Bytes(2, "widget", &m);
  Key(4, 0, &m);
  Varint(2, &m);  // SHIPPED
  std::string ts;
  Key(1, 0, &ts);
  Varint(1700000000, &ts);
  Key(2, 0, &ts);
  Varint(123456789, &ts);
  Bytes(5, ts, &m);
  double price = 9.5;
  Fixed64(6, std::bit_cast<uint64_t>(price), &m);
  Bytes(7, "a", &m);  // repeated, skipped
  std::string entry;
  Bytes(1, "k", &entry);
  Bytes(8, entry, &m);  // map entry, skipped
  Key(10, 0, &m);
  Varint(3, &m);  // zigzag -2
  Bytes(12, "a@b.c", &m);
  Bytes(2, "gadget", &m);  // the last occurrence wins
  return m;
}

TEST(ProtoSchema, ParsesMessagesNestedTypesAndSkipsTheRest) {
  auto schema = ParseProto(kProto);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  ASSERT_EQ((*schema)->messages().size(), 2u);
  const ProtoMessage& order = *(*schema)->messages()[0];
  EXPECT_EQ(order.full_name, "shop.v1.Order");
  ASSERT_EQ(order.nested.size(), 1u);
  EXPECT_EQ(order.nested[0]->full_name, "shop.v1.Order.Detail");
  EXPECT_EQ(order.FindByName("status")->enumeration->full_name, "shop.v1.Order.Status");
  EXPECT_EQ(order.FindByName("placed")->message->full_name, "google.protobuf.Timestamp");
  EXPECT_EQ(order.FindByName("detail")->message, order.nested[0]);
  EXPECT_TRUE(order.FindByName("counts")->repeated);
  EXPECT_FALSE(order.FindByName("item")->has_presence);  // proto3 scalar
  EXPECT_TRUE(order.FindByName("qty")->has_presence);    // proto3 optional
  EXPECT_TRUE(order.FindByName("email")->has_presence);  // oneof member
  EXPECT_EQ((*(*schema)->MessageAt({0, 0}))->full_name, "shop.v1.Order.Detail");
  EXPECT_EQ((*(*schema)->MessageAt({1}))->full_name, "shop.v1.Other");
  EXPECT_FALSE((*schema)->MessageAt({2}).ok());
}

TEST(ProtoSchema, ErrorsNameTheLine) {
  auto refused = [](const std::string& text, const std::string& needle) {
    auto schema = ParseProto(text);
    ASSERT_FALSE(schema.ok()) << needle;
    EXPECT_NE(schema.status().message().find(needle), std::string::npos)
        << schema.status().ToString();
  };
  refused("syntax = \"proto3\";\nmessage A { int64 id = ; }", "line 2: expected a field number");
  refused("message A {\n  Unknown u = 1;\n}", "line 2: field 'u' has type 'Unknown'");
  refused("message A { int64 id = 1; string id = 2; }", "has field 'id' or number 2 twice");
  refused("message A { int64 id = 1;", "expected '}'");
  refused("/* open", "the end of a /* comment */");
  refused("message A { int64 id = 99999999999999999999999; }", "expected a field number");
  refused("message A { oneof a { oneof b { int32 x = 1; } } }", "a oneof holds fields only");
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "message M" + std::to_string(i) + " { ";
  refused(deep, "nested less deeply");
}

// Mutated schema text (a registry is outside the process): an error or a schema, never a crash.
TEST(ProtoSchema, MutatedTextNeverCrashes) {
  std::mt19937 rng(7);
  const std::string base = kProto;
  const std::string alphabet = "{};=<>[]()\"'/*.-0123456789 \nmessage";
  for (int i = 0; i < 5000; ++i) {
    std::string text = base;
    for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) {
      text[rng() % text.size()] = alphabet[rng() % alphabet.size()];
    }
    if (rng() % 5 == 0) text.resize(rng() % text.size());
    (void)ParseProto(text);
  }
}

TEST(MessageDecoder, DecodesFieldsByNameWithProto3Defaults) {
  auto schema = ParseProto(kProto).ValueOrDie();
  auto decoder = MessageDecoder::Make(schema, *schema->messages()[0], Columns()).ValueOrDie();
  RecordBatch rows(Columns());
  ASSERT_TRUE(decoder->Decode(Order(7), &rows).ok());
  std::string empty;  // every field absent: only id is NOT NULL, and it is a proto3 scalar (0)
  ASSERT_TRUE(decoder->Decode(empty, &rows).ok());
  ASSERT_EQ(rows.num_rows(), 2u);
  EXPECT_EQ(rows.column(0).Get<int64_t>(0), 7);
  EXPECT_EQ(rows.column(1).GetBytes(0), "gadget");
  EXPECT_TRUE(rows.column(2).IsNull(0));  // optional, absent
  EXPECT_EQ(rows.column(3).GetBytes(0), "SHIPPED");
  EXPECT_EQ(rows.column(4).Get<int64_t>(0), int64_t{1700000000} * 1000000 + 123456);
  EXPECT_EQ(rows.column(5).Get<double>(0), 9.5);
  EXPECT_EQ(rows.column(6).Get<int64_t>(0), -2);
  EXPECT_EQ(rows.column(7).Get<bool>(0), false);
  EXPECT_EQ(rows.column(8).GetBytes(0), "a@b.c");
  EXPECT_TRUE(rows.column(9).IsNull(0));
  EXPECT_EQ(rows.column(0).Get<int64_t>(1), 0);
  EXPECT_EQ(rows.column(1).GetBytes(1), "");
  EXPECT_EQ(rows.column(3).GetBytes(1), "STATUS_UNSPECIFIED");
  EXPECT_TRUE(rows.column(4).IsNull(1));
  EXPECT_TRUE(rows.column(8).IsNull(1));
}

TEST(MessageDecoder, BadBytesAndUnfitColumnsAreRefusedNamingTheField) {
  auto schema = ParseProto(kProto).ValueOrDie();
  const ProtoMessage& order = *schema->messages()[0];
  auto decoder = MessageDecoder::Make(schema, order, Columns()).ValueOrDie();
  RecordBatch rows(Columns());
  std::string wrong_wire;
  Bytes(1, "x", &wrong_wire);
  Status st = decoder->Decode(wrong_wire, &rows);
  EXPECT_NE(st.message().find("field 'id': wire type 2"), std::string::npos) << st.ToString();
  std::string bad_utf8;
  Bytes(2, "\xff\xfe", &bad_utf8);
  st = decoder->Decode(bad_utf8, &rows);
  EXPECT_NE(st.message().find("field 'item' is not valid UTF-8"), std::string::npos)
      << st.ToString();
  // Every cut of a message and random bytes: an error or a row, never a crash.
  const std::string full = Order(9);
  std::mt19937 rng(42);
  for (size_t n = 0; n < full.size(); ++n) (void)decoder->Decode(full.substr(0, n), &rows);
  for (int i = 0; i < 20000; ++i) {
    std::string junk = full;
    junk[rng() % junk.size()] = static_cast<char>(rng());
    (void)decoder->Decode(junk, &rows);
  }
  for (size_t r = 0; r < rows.num_rows(); ++r) EXPECT_FALSE(rows.column(0).IsNull(r));

  auto refused = [&](const char* column, DataType type, bool nullable, const std::string& needle) {
    auto s = std::make_shared<BatchSchema>();
    s->fields = {Field{column, type, nullable, 1}};
    auto made = MessageDecoder::Make(schema, order, s);
    ASSERT_FALSE(made.ok()) << needle;
    EXPECT_NE(made.status().message().find(needle), std::string::npos) << made.status().ToString();
  };
  refused("tags", DataType::String(), true, "field 'tags' is repeated");
  refused("detail", DataType::String(), true, "cannot be read into column 'detail'");
  refused("item", DataType::Int64(), true, "cannot be read into column 'item' BIGINT");
  refused("nope", DataType::Int64(), false, "column 'nope' is NOT NULL, and message shop.v1.Order");
}

TEST(MessageDecoder, ConfluentMessageIndexes) {
  std::vector<int64_t> indexes = {7, 7, 7};  // replaced, not appended to
  std::string_view zero("\x00rest", 5);
  ASSERT_TRUE(ReadMessageIndexes(&zero, &indexes).ok());
  EXPECT_EQ(indexes, (std::vector<int64_t>{0}));
  EXPECT_EQ(zero, "rest");
  std::string two;
  Varint(4, &two);  // zigzag 2 entries
  Varint(2, &two);  // 1
  Varint(0, &two);  // 0
  std::string_view v(two);
  ASSERT_TRUE(ReadMessageIndexes(&v, &indexes).ok());
  EXPECT_EQ(indexes, (std::vector<int64_t>{1, 0}));
  std::string_view cut("\x04\x02", 2);
  EXPECT_FALSE(ReadMessageIndexes(&cut, &indexes).ok());
}

// Capturing: the message's fields no column names, with the types they become, absent ones as a
// column reads them (null with presence, else the default); repeated fields, maps and other
// messages stay out. A message with nothing to capture gives null.
TEST(MessageDecoder, CapturesTheFieldsNoColumnNames) {
  auto schema = ParseProto(kProto).ValueOrDie();
  auto columns = std::make_shared<BatchSchema>();
  columns->fields = {Field{"id", DataType::Int64(), false, 1},
                     Field{"$undeclared", DataType::String(), true, 0}};
  auto decoder =
      MessageDecoder::MakeCapturing(schema, *schema->messages()[0], columns).ValueOrDie();
  ASSERT_NE(decoder->captured(), nullptr);
  RecordBatch rows(columns);
  ASSERT_TRUE(decoder->Decode(Order(7), &rows).ok());
  std::string cut = Order(8);
  EXPECT_FALSE(decoder->Decode(cut.substr(0, cut.size() - 2), &rows).ok());
  ASSERT_EQ(rows.num_rows(), 1u);
  ASSERT_TRUE(rows.Validate().ok());
  std::vector<std::string> got;
  UndeclaredFieldsReader reader(rows.column(1).GetBytes(0));
  UndeclaredField f;
  while (*reader.Next(&f)) {
    std::string value = f.is_null ? "null" : "";
    if (!f.is_null && f.type.id == TypeId::kString) value = std::string(f.value);
    got.push_back(std::string(f.name) + ":" + SqlTypeName(f.type) +
                  (value.empty() ? "" : "=" + value));
  }
  EXPECT_EQ(got,
            (std::vector<std::string>{"item:STRING=gadget", "qty:INT=null", "status:STRING=SHIPPED",
                                      "placed:TIMESTAMP_LTZ", "price:DOUBLE", "delta:BIGINT",
                                      "rush:BOOLEAN", "email:STRING=a@b.c", "phone:STRING=null"}));

  // Every cut and 5,000 mutations of a message: an error or a row, whose packed fields read back.
  const std::string full = Order(9);
  std::mt19937 rng(50);
  for (size_t n = 0; n < full.size(); ++n) (void)decoder->Decode(full.substr(0, n), &rows);
  for (int i = 0; i < 5000; ++i) {
    std::string junk = full;
    junk[rng() % junk.size()] = static_cast<char>(rng());
    (void)decoder->Decode(junk, &rows);
  }
  ASSERT_TRUE(rows.Validate().ok());
  for (size_t r = 0; r < rows.num_rows(); ++r) {
    UndeclaredFieldsReader back(rows.column(1).GetBytes(r));
    for (;;) {
      Result<bool> more = back.Next(&f);
      ASSERT_TRUE(more.ok()) << more.status().ToString();
      if (!*more) break;
    }
  }

  auto just_x = std::make_shared<BatchSchema>();
  just_x->fields = {Field{"x", DataType::Int32(), true, 1},
                    Field{"$undeclared", DataType::String(), true, 0}};
  auto other = MessageDecoder::MakeCapturing(schema, *schema->messages()[1], just_x);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  RecordBatch xs(just_x);
  ASSERT_TRUE((*other)->Decode("", &xs).ok());
  EXPECT_TRUE(xs.column(1).IsNull(0));
}

}  // namespace
}  // namespace floe::protobuf
