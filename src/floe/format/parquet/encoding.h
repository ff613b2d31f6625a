#pragma once

// Low-level Parquet encodings shared by the column writers and readers:
//   * the RLE / bit-packing hybrid (Encodings.md "RLE = 3") used for definition levels,
//     dictionary indices and RLE booleans;
//   * LSB-first bit packing (PLAIN booleans, bit-packed runs);
//   * CRC-32 (gzip polynomial) for PageHeader.crc.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "floe/common/status.h"

namespace floe::parquet {

// Number of bits needed to represent `max_value` (0 for 0).
inline int BitWidth(uint64_t max_value) {
  return max_value == 0 ? 0 : 64 - __builtin_clzll(max_value);
}

inline void AppendLE32(uint32_t v, std::string* out) {
  char b[4];
  std::memcpy(b, &v, 4);  // floe only builds for little-endian hosts
  out->append(b, 4);
}

inline void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Appends the RLE/bit-packed hybrid encoding of values[0..n) at `bit_width` (0..32) to `out`
// (no length prefix). Runs of >= 8 equal values become RLE runs; the rest is bit-packed in
// groups of 8, the last group zero-padded (readers stop at the value count they know).
// REQUIRES: every value fits in bit_width bits.
void EncodeRleHybrid(const uint32_t* values, size_t n, int bit_width, std::string* out);
// Same for byte-sized values (definition levels, booleans).
void EncodeRleHybrid(const uint8_t* values, size_t n, int bit_width, std::string* out);

// Packs n 0/1 bytes into ceil(n/8) bytes, LSB first (PLAIN booleans).
void PackBits(const uint8_t* values, size_t n, std::string* out);

// Decodes `n` values of an RLE/bit-packed hybrid stream. Corruption when the data runs out, a
// run is malformed, or (RLE runs) a value does not fit in bit_width.
class RleHybridDecoder {
 public:
  RleHybridDecoder(std::string_view data, int bit_width)
      : pos_(reinterpret_cast<const uint8_t*>(data.data())),
        end_(pos_ + data.size()),
        bit_width_(bit_width) {}

  Status Decode(uint32_t* out, size_t n);
  Status Decode(uint8_t* out, size_t n);  // REQUIRES: bit_width <= 8
  // True if the runs decoded so far end exactly at the end of the data. Writers emit exactly
  // the runs their values need, so stray bytes mean the stream is not what the header says.
  bool AtEnd() const { return pos_ == end_; }

 private:
  template <typename T>
  Status DecodeT(T* out, size_t n);
  Status NextRun();

  const uint8_t* pos_;
  const uint8_t* end_;
  int bit_width_;
  // Current run.
  bool rle_ = false;
  uint32_t rle_value_ = 0;
  uint64_t remaining_ = 0;           // values left in the current run
  const uint8_t* packed_ = nullptr;  // bit-packed run: next group start
  uint64_t packed_index_ = 0;        // index of the next value within the bit-packed run
};

// Unpacks `n` values of `bit_width` bits, LSB first, from `in` starting at value index
// `first` (the caller guarantees the bytes exist).
void UnpackBits(const uint8_t* in, uint64_t first, size_t n, int bit_width, uint32_t* out);

uint32_t Crc32(std::string_view data, uint32_t crc = 0);

// Fast non-cryptographic hashes for the dictionary tables.
inline uint64_t HashInt(uint64_t x) {
  x ^= x >> 31;
  x *= 0x9e3779b97f4a7c15ULL;
  x ^= x >> 29;
  return x;
}
uint64_t HashBytes(const char* p, size_t n);

}  // namespace floe::parquet
