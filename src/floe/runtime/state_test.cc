#include "floe/runtime/state.h"

#include <gtest/gtest.h>

namespace floe::runtime {
namespace {

TEST(StateWriter, RoundTripsEveryType) {
  StateWriter w;
  w.PutU8(7);
  w.PutBool(true);
  w.PutU32(0xdeadbeef);
  w.PutU64(0x0123456789abcdefULL);
  w.PutI64(-42);
  w.PutDouble(2.5);
  w.PutString("hello");
  w.PutBytes(std::string("\0\1\2", 3));
  std::string blob = w.Finish();

  StateReader r(blob);
  EXPECT_EQ(*r.GetU8(), 7);
  EXPECT_EQ(*r.GetBool(), true);
  EXPECT_EQ(*r.GetU32(), 0xdeadbeefu);
  EXPECT_EQ(*r.GetU64(), 0x0123456789abcdefULL);
  EXPECT_EQ(*r.GetI64(), -42);
  EXPECT_EQ(*r.GetDouble(), 2.5);
  EXPECT_EQ(*r.GetString(), "hello");
  EXPECT_EQ(*r.GetBytes(), std::string("\0\1\2", 3));
  EXPECT_TRUE(r.AtEnd());
  EXPECT_TRUE(r.ExpectEnd().ok());
}

TEST(StateWriter, EncodesLittleEndian) {
  StateWriter w;
  w.PutU32(0x04030201);
  EXPECT_EQ(w.data(), std::string("\x01\x02\x03\x04", 4));
}

TEST(StateReader, TruncatedInputIsCorruption) {
  StateWriter w;
  w.PutU64(1);
  std::string blob = w.Finish();
  StateReader r(std::string_view(blob).substr(0, 5));
  auto v = r.GetU64();
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(v.status().IsCorruption()) << v.status().ToString();
}

TEST(StateReader, StringLengthBeyondBlobIsCorruption) {
  StateWriter w;
  w.PutU32(1000);  // claims 1000 bytes follow
  w.PutU8('x');
  std::string blob = w.Finish();
  StateReader r(blob);
  auto s = r.GetString();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().IsCorruption());
}

TEST(StateReader, BadBooleanAndTrailingBytesAreCorruption) {
  std::string blob("\x05", 1);
  StateReader r(blob);
  EXPECT_TRUE(r.GetBool().status().IsCorruption());
  StateReader r2(blob);
  EXPECT_TRUE(r2.ExpectEnd().IsCorruption());
}

TEST(Crc32, MatchesTheStandardCheckValue) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32(""), 0u);
  EXPECT_EQ(Crc32("6789", Crc32("12345")), 0xCBF43926u);
}

}  // namespace
}  // namespace floe::runtime
