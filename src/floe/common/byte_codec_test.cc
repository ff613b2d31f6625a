#include "floe/common/byte_codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace floe {
namespace {

// Varints read back what was written at every length boundary, both signs, and a byte string
// after them; small values take one byte.
TEST(ByteCodec, VarintsRoundTripAtEveryLengthBoundary) {
  std::vector<uint64_t> unsigned_values = {
      0, 1, 127, 128, 16383, 16384, std::numeric_limits<uint64_t>::max()};
  for (int shift = 7; shift < 64; shift += 7) {
    unsigned_values.push_back((uint64_t{1} << shift) - 1);
    unsigned_values.push_back(uint64_t{1} << shift);
  }
  const std::vector<int64_t> signed_values = {0,
                                              -1,
                                              1,
                                              -64,
                                              64,
                                              -65,
                                              std::numeric_limits<int64_t>::min(),
                                              std::numeric_limits<int64_t>::max()};
  ByteWriter w;
  for (uint64_t v : unsigned_values) w.PutVarU64(v);
  for (int64_t v : signed_values) w.PutVarI64(v);
  w.PutVarBytes("window");
  const std::string blob = w.Finish();
  ByteReader r(blob);
  for (uint64_t v : unsigned_values) EXPECT_EQ(*r.GetVarU64(), v);
  for (int64_t v : signed_values) EXPECT_EQ(*r.GetVarI64(), v);
  EXPECT_EQ(*r.GetVarBytesView(), "window");
  EXPECT_TRUE(r.ExpectEnd().ok());

  ByteWriter small;
  small.PutVarU64(127);
  small.PutVarI64(-64);
  EXPECT_EQ(small.size(), 2u);
}

// Hostile bytes: a varint that never ends, one past 64 bits, and a length past the blob are
// Corruption, never a read out of bounds.
TEST(ByteCodec, BadVarintsAreCorruption) {
  for (const std::string& bad : {std::string("\x80\x80", 2), std::string(11, '\xff'),
                                 std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10),
                                 std::string("\x05"
                                             "ab",
                                             3)}) {
    ByteReader r(bad);
    Result<std::string_view> v = r.GetVarBytesView();
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().code(), StatusCode::kCorruption) << v.status().ToString();
  }
}

}  // namespace
}  // namespace floe
