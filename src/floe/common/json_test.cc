#include "floe/common/json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace floe {
namespace {

const char kReplacement[] = "\xef\xbf\xbd";  // U+FFFD

TEST(ParseJson, MalformedTextIsAnErrorNamingTheDocument) {
  for (std::string text : {std::string(""), std::string("  \n"), std::string("{"),
                           std::string("{\"a\":1}}"), std::string("[1,]"), std::string("nul"),
                           std::string("\x00\x01", 2), std::string("{\"a\":\"\xff\"}")}) {
    Result<Json> j = ParseJson(text, JsonPath("run.json"));
    ASSERT_FALSE(j.ok()) << text;
    EXPECT_TRUE(j.status().IsCorruption());
    EXPECT_EQ(j.status().message().rfind("run.json: ", 0), 0u) << j.status().message();
  }
  EXPECT_EQ(ParseJson("{", JsonPath("run.json")).status().message(),
            "run.json: not valid JSON (1 bytes)");
  EXPECT_EQ(ParseJson("", JsonPath("run.json")).status().message(),
            "run.json: empty, expected JSON");
  // A request's errors are the client's to fix.
  EXPECT_TRUE(ParseOrderedJson("[", JsonPath("request", StatusCode::kInvalidArgument))
                  .status()
                  .IsInvalidArgument());
}

TEST(ParseJson, OneValueParses) {
  Result<Json> j = ParseJson(" {\"b\":[1,2],\"a\":\"\xc3\xa9\"}\n", JsonPath("x"));
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["a"], "\xc3\xa9");
  Result<OrderedJson> o = ParseOrderedJson(R"({"b":1,"a":2})", JsonPath("x"));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(DumpJson(*o), R"({"b":1,"a":2})");  // insertion order kept
  // Deep nesting is no stack overflow.
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(ParseJson(deep, JsonPath("x")).ok());
}

TEST(DumpJson, InvalidUtf8IsReplacedInValuesAndKeys) {
  Json j = Json::object();
  j["file"] = "bad\xff.json";
  j["cut\xc3"] = "\xed\xa0\x80";  // a truncated sequence, a UTF-16 surrogate
  EXPECT_EQ(DumpJson(j), std::string("{\"cut") + kReplacement + "\":\"" + kReplacement +
                             kReplacement + kReplacement + "\",\"file\":\"bad" + kReplacement +
                             ".json\"}");
  OrderedJson o = OrderedJson::object();
  o["name"] = "\xff";
  EXPECT_EQ(DumpJson(o, 1), std::string("{\n \"name\": \"") + kReplacement + "\"\n}");
  // What was written parses again.
  EXPECT_TRUE(ParseJson(DumpJson(j), JsonPath("x")).ok());
  // Valid UTF-8 is written as is, not \u-escaped.
  EXPECT_EQ(DumpJson(Json("\xc3\xa9\xf0\x9f\x98\x80")), "\"\xc3\xa9\xf0\x9f\x98\x80\"");
}

TEST(IsValidUtf8, AcceptsUtf8AndNothingElse) {
  for (std::string s :
       {std::string(""), std::string("plain"), std::string("\xc3\xa9"), std::string("\xe2\x82\xac"),
        std::string("\xf0\x9f\x98\x80"), std::string("\xf4\x8f\xbf\xbf"), std::string("a\0b", 3)}) {
    EXPECT_TRUE(IsValidUtf8(s)) << s;
  }
  for (std::string s : {std::string("\xff"), std::string("bad\xfe.json"), std::string("\xc3"),
                        std::string("\xe2\x82"), std::string("\x80"), std::string("\xc0\xaf"),
                        std::string("\xe0\x80\xaf"), std::string("\xed\xa0\x80"),
                        std::string("\xf4\x90\x80\x80"), std::string("\xc3\x28")}) {
    EXPECT_FALSE(IsValidUtf8(s)) << s;
  }
}

TEST(JsonBytes, BytesThatAreNotUtf8RoundTripExactly) {
  for (std::string name : {std::string("/data/in/a.json"), std::string("/data/in/bad\xff.json"),
                           std::string("\xc3"), std::string("x\0y", 3), std::string("")}) {
    Json j = Json::object();
    SetJsonBytes(j, "file", name);
    EXPECT_EQ(j.contains("file_hex"), !IsValidUtf8(name)) << name;
    Result<Json> back = ParseJson(DumpJson(j), JsonPath("position"));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    std::string read;
    ASSERT_TRUE(JsonObject(*back, JsonPath("position")).RequiredBytes("file", &read).ok());
    EXPECT_EQ(read, name);
  }
  Json j = Json::object();
  SetJsonBytes(j, "file", "bad\xff");
  EXPECT_EQ(DumpJson(j), std::string("{\"file\":\"bad") + kReplacement +
                             "\",\"file_hex\":\"626164ff\"}");  // readable, and exact
  std::string out;
  EXPECT_EQ(JsonObject(Json::parse(R"({"file_hex":"6g"})"), JsonPath("position"))
                .RequiredBytes("file", &out)
                .message(),
            "position: field 'file_hex': expected hex digits");
  EXPECT_EQ(JsonObject(Json::parse(R"({"file_hex":"616"})"), JsonPath("position"))
                .RequiredBytes("file", &out)
                .message(),
            "position: field 'file_hex': expected an even number of hex digits");
  EXPECT_EQ(
      JsonObject(Json::parse("{}"), JsonPath("position")).RequiredBytes("file", &out).message(),
      "position: field 'file': required field is missing");
}

TEST(JsonObject, WrongTypesAreErrorsNamingTheDocumentAndTheField) {
  Json j = Json::parse(R"({"pid":"12","name":7,"ok":1,"props":{"a":"x","b":2},"ids":[1,"2"],
                           "nothing":null,"tables":[{"table":5}]})");
  JsonObject f(j, JsonPath("job.json"));
  int64_t pid = 0;
  EXPECT_EQ(f.Get("pid", &pid).message(), "job.json: field 'pid': expected integer, got string");
  std::string name;
  EXPECT_EQ(f.Get("name", &name).message(), "job.json: field 'name': expected string, got integer");
  bool ok = false;
  EXPECT_EQ(f.Get("ok", &ok).message(), "job.json: field 'ok': expected boolean, got integer");
  std::map<std::string, std::string> props;
  EXPECT_EQ(f.Get("props", &props).message(),
            "job.json: field 'props.b': expected string, got integer");
  std::vector<int64_t> ids;
  EXPECT_EQ(f.Get("ids", &ids).message(), "job.json: field 'ids[1]': expected integer, got string");
  EXPECT_EQ(f.Get("nothing", &name).message(),
            "job.json: field 'nothing': expected string, got null");
  const Json* tables = nullptr;
  ASSERT_TRUE(f.RequiredArray("tables", &tables).ok());
  JsonPath table_at = f.at().Child("tables").Index(0);
  EXPECT_EQ(JsonObject(tables->at(0), table_at).Get("table", &name).message(),
            "job.json: field 'tables[0].table': expected string, got integer");
  EXPECT_EQ(f.RequiredObject("tables", &tables).message(),
            "job.json: field 'tables': expected object, got array");
  EXPECT_EQ(f.Required("absent", &name).message(),
            "job.json: field 'absent': required field is missing");
  // Nothing was written by a failed read.
  EXPECT_EQ(pid, 0);
  EXPECT_EQ(name, "");
  EXPECT_TRUE(props.empty());
  // The path's code is the errors' code.
  JsonObject request(j, JsonPath("", StatusCode::kInvalidArgument));
  Status st = request.Required("name", &name);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message(), "field 'name': expected string, got integer");
}

TEST(JsonObject, AbsentMembersAndNullForOptionals) {
  Json j = Json::parse(R"({"parent":null,"id":5,"list":null})");
  JsonObject f(j, JsonPath("x"));
  std::string s = "kept";
  EXPECT_TRUE(f.Get("absent", &s).ok());
  EXPECT_EQ(s, "kept");
  std::optional<int64_t> parent = 3;
  EXPECT_TRUE(f.Get("parent", &parent).ok());
  EXPECT_FALSE(parent.has_value());
  std::optional<int32_t> id;
  EXPECT_TRUE(f.Required("id", &id).ok());
  EXPECT_EQ(id, 5);
  const Json* list = &j;
  EXPECT_TRUE(f.GetArray("list", &list).ok());  // null: as if absent
  EXPECT_EQ(list, nullptr);
  EXPECT_TRUE(f.GetArray("absent", &list).ok());
  EXPECT_EQ(f.RequiredArray("list", &list).message(), "x: field 'list': expected array, got null");
  EXPECT_TRUE(f.Has("parent"));
  EXPECT_FALSE(f.Has("absent"));
}

TEST(JsonObject, IntegersAreRangeCheckedForTheirType) {
  Json j = Json::parse(R"({"small":-5,"big":4294967296,"max":18446744073709551615,"f":1.0})");
  JsonObject f(j, JsonPath("x"));
  int i = 0;
  EXPECT_TRUE(f.Get("small", &i).ok());
  EXPECT_EQ(i, -5);
  EXPECT_EQ(f.Get("big", &i).message(),
            "x: field 'big': integer 4294967296 out of range (-2147483648 to 2147483647)");
  uint32_t u32 = 0;
  EXPECT_EQ(f.Get("small", &u32).message(),
            "x: field 'small': integer -5 out of range (0 to 4294967295)");
  uint64_t u64 = 0;
  EXPECT_TRUE(f.Get("max", &u64).ok());
  EXPECT_EQ(u64, UINT64_MAX);
  int64_t i64 = 0;
  EXPECT_FALSE(f.Get("max", &i64).ok());
  EXPECT_EQ(f.Get("f", &i64).message(), "x: field 'f': expected integer, got number");
  double d = 0;
  EXPECT_TRUE(f.Get("f", &d).ok());
  EXPECT_TRUE(f.Get("small", &d).ok());
  EXPECT_EQ(d, -5.0);
}

TEST(JsonObject, AValueThatIsNotAnObjectFailsEveryRead) {
  Json j = Json::parse("[1]");
  JsonObject f(j, JsonPath("reply"));
  std::string s;
  EXPECT_EQ(f.Check().message(), "reply: expected object, got array");
  EXPECT_EQ(f.Get("a", &s).message(), "reply: expected object, got array");
  EXPECT_EQ(f.Find("a"), nullptr);
  // Also for Iceberg's ordered documents.
  OrderedJson o = OrderedJson::parse(R"({"s":[1]})");
  JsonObject g(o, JsonPath("v1.metadata.json"));
  EXPECT_EQ(g.Get("s", &s).message(), "v1.metadata.json: field 's': expected string, got array");
}

}  // namespace
}  // namespace floe
