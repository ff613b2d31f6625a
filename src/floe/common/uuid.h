#pragma once

#include <cstdint>
#include <string>

namespace floe {

// A version 4 (random) UUID in its 36-character text form, as Java's UUID.toString(), from 128
// random bits (`hi`, `lo`); the version and variant bits are set here.
inline std::string UuidV4Text(uint64_t hi, uint64_t lo) {
  hi = (hi & ~uint64_t{0xf000}) | uint64_t{0x4000};              // version 4
  lo = (lo & ~(uint64_t{0xc0} << 56)) | (uint64_t{0x80} << 56);  // variant 10
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 32; ++i) {
    const uint64_t word = i < 16 ? hi : lo;
    out.push_back(kHex[(word >> (60 - 4 * (i % 16))) & 0xf]);
    if (i == 7 || i == 11 || i == 15 || i == 19) out.push_back('-');
  }
  return out;
}

}  // namespace floe
