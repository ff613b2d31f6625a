#include "floe/format/parquet/encoding.h"

#include <random>
#include <vector>

#include "floe/format/parquet/compression.h"
#include "gtest/gtest.h"

namespace floe::parquet {
namespace {

std::vector<uint32_t> RoundTrip(const std::vector<uint32_t>& v, int bw, std::string* encoded) {
  encoded->clear();
  EncodeRleHybrid(v.data(), v.size(), bw, encoded);
  std::vector<uint32_t> out(v.size());
  RleHybridDecoder dec(*encoded, bw);
  Status st = dec.Decode(out.data(), out.size());
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

TEST(RleHybrid, EncodesLongRunsAsRleRuns) {
  std::vector<uint32_t> v(100, 5);
  std::string enc;
  EXPECT_EQ(RoundTrip(v, 3, &enc), v);
  // One RLE run: varint(100 << 1) = 0xC8 0x01, then the value in one byte.
  EXPECT_EQ(enc, "\xc8\x01\x05");
}

TEST(RleHybrid, BitPacksShortRunsLsbFirst) {
  std::vector<uint32_t> v = {0, 1, 2, 3, 4, 5, 6, 7};
  std::string enc;
  EXPECT_EQ(RoundTrip(v, 3, &enc), v);
  // Encodings.md example: header (1 group << 1 | 1) then 10001000 11000110 11111010.
  EXPECT_EQ(enc, "\x03\x88\xc6\xfa");
}

TEST(RleHybrid, RoundTripsRandomDataAtEveryWidth) {
  std::mt19937_64 rng(7);
  for (int bw = 0; bw <= 32; ++bw) {
    for (size_t n : {0, 1, 7, 8, 9, 63, 64, 1000, 4097}) {
      std::vector<uint32_t> v(n);
      uint64_t mask = bw == 32 ? 0xffffffffu : ((uint64_t{1} << bw) - 1);
      for (size_t i = 0; i < n; ++i) {
        // Mix runs and noise.
        v[i] = (rng() % 3 == 0 && i > 0) ? v[i - 1] : static_cast<uint32_t>(rng() & mask);
        if (i > 100 && i < 200) v[i] = static_cast<uint32_t>(mask);
      }
      std::string enc;
      ASSERT_EQ(RoundTrip(v, bw, &enc), v) << "bw=" << bw << " n=" << n;
    }
  }
}

TEST(RleHybrid, ByteLevelsRoundTrip) {
  std::vector<uint8_t> v;
  for (int i = 0; i < 1000; ++i) v.push_back((i / 13) % 2 == 0 || i % 5 == 0);
  std::string enc;
  EncodeRleHybrid(v.data(), v.size(), 1, &enc);
  std::vector<uint8_t> out(v.size());
  RleHybridDecoder dec(enc, 1);
  ASSERT_TRUE(dec.Decode(out.data(), out.size()).ok());
  EXPECT_EQ(out, v);
}

TEST(RleHybrid, TruncatedOrWideDataIsCorruption) {
  std::vector<uint32_t> out(100);
  RleHybridDecoder empty("", 3);
  EXPECT_TRUE(empty.Decode(out.data(), 1).IsCorruption());
  // The decoder keeps a view: the bytes must outlive it.
  const std::string short_bytes("\x08\x01", 2);  // 4 ones, then nothing
  RleHybridDecoder short_run(short_bytes, 3);
  EXPECT_TRUE(short_run.Decode(out.data(), 5).IsCorruption());
  const std::string wide_bytes("\x08\x09", 2);  // value 9 does not fit 3 bits
  RleHybridDecoder wide(wide_bytes, 3);
  EXPECT_TRUE(wide.Decode(out.data(), 1).IsCorruption());
  const std::string packed_bytes("\x05\xff", 2);  // 2 groups claimed, 1 byte present
  RleHybridDecoder packed(packed_bytes, 3);
  EXPECT_TRUE(packed.Decode(out.data(), 16).IsCorruption());
}

TEST(PackBits, PacksLsbFirst) {
  std::vector<uint8_t> v = {1, 0, 1, 1, 0, 0, 0, 0, 1};
  std::string out;
  PackBits(v.data(), v.size(), &out);
  EXPECT_EQ(out, std::string("\x0d\x01", 2));
}

TEST(Crc32, MatchesTheGzipCheckValue) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32(""), 0u);
  std::string big(1000, 'x');
  EXPECT_EQ(Crc32(big.substr(500), Crc32(big.substr(0, 500))), Crc32(big));
}

TEST(Compression, EveryCodecRoundTrips) {
  std::string data;
  for (int i = 0; i < 10000; ++i) data += std::to_string(i % 97);
  for (Compression c : {Compression::kUncompressed, Compression::kSnappy, Compression::kZstd}) {
    auto comp = PageCompressor::Make(c, 3);
    ASSERT_TRUE(comp.ok());
    std::string packed;
    ASSERT_TRUE((*comp)->Compress(data, &packed).ok());
    if (c != Compression::kUncompressed) {
      EXPECT_LT(packed.size(), data.size());
    }
    PageDecompressor d;
    std::string back;
    ASSERT_TRUE(d.Decompress(ToCodec(c), packed, data.size(), &back).ok());
    EXPECT_EQ(back, data);
    // A wrong claimed size or damaged data is Corruption, not a crash.
    EXPECT_TRUE(d.Decompress(ToCodec(c), packed, data.size() + 1, &back).IsCorruption());
    std::string damaged = packed;
    damaged.resize(damaged.size() / 2);
    EXPECT_FALSE(d.Decompress(ToCodec(c), damaged, data.size(), &back).ok());
  }
  PageDecompressor d;
  std::string out;
  EXPECT_EQ(d.Decompress(format::CompressionCodec::kGzip, "x", 1, &out).code(),
            StatusCode::kNotImplemented);
}

TEST(Compression, RejectsBadZstdLevels) {
  EXPECT_TRUE(PageCompressor::Make(Compression::kZstd, 1000).status().IsInvalidArgument());
}

}  // namespace
}  // namespace floe::parquet
