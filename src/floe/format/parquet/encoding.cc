#include "floe/format/parquet/encoding.h"

#include <algorithm>
#include <array>

namespace floe::parquet {

namespace {

inline char* PutVarint(uint64_t v, char* p) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

// Writes one bit-packed group of 8 values (exactly bit_width bytes).
template <typename T>
inline char* PackGroup(const T* v, int bit_width, char* p) {
  // 8 values * <= 32 bits fit in 256 bits; accumulate through a 64-bit window.
  uint64_t acc = 0;
  int bits = 0;
  for (int i = 0; i < 8; ++i) {
    acc |= static_cast<uint64_t>(v[i]) << bits;
    bits += bit_width;
    if (bits >= 32) {
      uint32_t w = static_cast<uint32_t>(acc);
      std::memcpy(p, &w, 4);  // little-endian hosts only (see AppendLE32)
      p += 4;
      acc >>= 32;
      bits -= 32;
    }
  }
  while (bits > 0) {
    *p++ = static_cast<char>(acc & 0xff);
    acc >>= 8;
    bits -= 8;
  }
  // 8 * bit_width is a multiple of 8, so nothing is left over.
  return p;
}

template <typename T>
void EncodeRleHybridT(const T* values, size_t n, int bit_width, std::string* out) {
  const int value_bytes = (bit_width + 7) / 8;
  // Worst case: RLE runs cover >= 8 values each (header <= 10 bytes + value), literal runs
  // alternate with them (header <= 10 bytes) and pack whole groups of bit_width bytes.
  const size_t bound = (n / 8 + 2) * (24 + 2 * static_cast<size_t>(bit_width)) + 16;
  const size_t at = out->size();
  out->resize(at + bound);
  char* const base = out->data() + at;
  char* p = base;
  size_t i = 0;
  auto run_length = [&](size_t from) {
    size_t j = from + 1;
    while (j < n && values[j] == values[from]) ++j;
    return j - from;
  };
  while (i < n) {
    size_t run = run_length(i);
    if (run >= 8) {
      p = PutVarint(static_cast<uint64_t>(run) << 1, p);
      uint32_t v = values[i];
      for (int b = 0; b < value_bytes; ++b) *p++ = static_cast<char>((v >> (8 * b)) & 0xff);
      i += run;
      continue;
    }
    // Literal run: whole groups of 8 until a long repeat starts at a group boundary.
    size_t start = i;
    size_t end = i;
    while (end < n) {
      if (end > start && run_length(end) >= 8) break;
      end += 8;
    }
    size_t groups = (std::min(end, n) - start + 7) / 8;
    p = PutVarint((static_cast<uint64_t>(groups) << 1) | 1, p);
    T group[8];
    for (size_t g = 0; g < groups; ++g) {
      size_t base_row = start + g * 8;
      if (base_row + 8 <= n) {
        p = PackGroup(values + base_row, bit_width, p);
      } else {
        for (size_t k = 0; k < 8; ++k) group[k] = base_row + k < n ? values[base_row + k] : 0;
        p = PackGroup(group, bit_width, p);
      }
    }
    i = std::min(end, n);
  }
  out->resize(at + static_cast<size_t>(p - base));
}

}  // namespace

void EncodeRleHybrid(const uint32_t* values, size_t n, int bit_width, std::string* out) {
  EncodeRleHybridT(values, n, bit_width, out);
}

void EncodeRleHybrid(const uint8_t* values, size_t n, int bit_width, std::string* out) {
  EncodeRleHybridT(values, n, bit_width, out);
}

void PackBits(const uint8_t* values, size_t n, std::string* out) {
  size_t at = out->size();
  out->resize(at + (n + 7) / 8, 0);
  auto* p = reinterpret_cast<uint8_t*>(out->data() + at);
  size_t full = n / 8;
  for (size_t g = 0; g < full; ++g) {
    const uint8_t* v = values + g * 8;
    p[g] = static_cast<uint8_t>(v[0] | v[1] << 1 | v[2] << 2 | v[3] << 3 | v[4] << 4 | v[5] << 5 |
                                v[6] << 6 | v[7] << 7);
  }
  for (size_t i = full * 8; i < n; ++i) p[i / 8] |= static_cast<uint8_t>(values[i] << (i % 8));
}

void UnpackBits(const uint8_t* in, uint64_t first, size_t n, int bit_width, uint32_t* out) {
  if (bit_width == 0) {
    std::fill(out, out + n, 0);
    return;
  }
  const uint64_t mask = (uint64_t{1} << bit_width) - 1;
  uint64_t bit = first * bit_width;
  for (size_t i = 0; i < n; ++i, bit += bit_width) {
    const uint8_t* p = in + bit / 8;
    int shift = static_cast<int>(bit % 8);
    // A value spans at most 5 bytes (32 bits + 7 shift); read exactly those it needs.
    int nbytes = (shift + bit_width + 7) / 8;
    uint64_t w = 0;
    for (int b = 0; b < nbytes; ++b) w |= static_cast<uint64_t>(p[b]) << (8 * b);
    out[i] = static_cast<uint32_t>((w >> shift) & mask);
  }
}

Status RleHybridDecoder::NextRun() {
  uint64_t header = 0;
  for (int shift = 0;; shift += 7) {
    if (pos_ == end_) return Status::Corruption("RLE/bit-packed data ended early");
    if (shift > 28) return Status::Corruption("bad RLE run header");
    uint8_t b = *pos_++;
    header |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) break;
  }
  if (header & 1) {
    uint64_t groups = header >> 1;
    uint64_t bytes = groups * static_cast<uint64_t>(bit_width_);  // 8 values * w bits = w bytes
    if (bytes > static_cast<uint64_t>(end_ - pos_)) {
      // Writers may truncate the final bit-packed run to the bytes actually needed; accept
      // whatever is present and let Decode fail if values are missing.
      uint64_t have = static_cast<uint64_t>(end_ - pos_);
      remaining_ = bit_width_ == 0 ? groups * 8 : have * 8 / bit_width_;
      packed_ = pos_;
      pos_ = end_;
    } else {
      remaining_ = groups * 8;
      packed_ = pos_;
      pos_ += bytes;
    }
    rle_ = false;
    packed_index_ = 0;
  } else {
    remaining_ = header >> 1;
    int nbytes = (bit_width_ + 7) / 8;
    if (nbytes > end_ - pos_) return Status::Corruption("RLE run value past the end");
    uint32_t v = 0;
    for (int b = 0; b < nbytes; ++b) v |= static_cast<uint32_t>(pos_[b]) << (8 * b);
    pos_ += nbytes;
    if (bit_width_ < 32 && (v >> bit_width_) != 0) {
      return Status::Corruption("RLE run value wider than " + std::to_string(bit_width_) + " bits");
    }
    rle_ = true;
    rle_value_ = v;
  }
  return Status::OK();
}

template <typename T>
Status RleHybridDecoder::DecodeT(T* out, size_t n) {
  uint32_t buf[64];
  while (n > 0) {
    if (remaining_ == 0) {
      FLOE_RETURN_NOT_OK(NextRun());
      continue;
    }
    size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, n));
    if (rle_) {
      std::fill(out, out + take, static_cast<T>(rle_value_));
    } else {
      take = std::min<size_t>(take, 64);
      UnpackBits(packed_, packed_index_, take, bit_width_, buf);
      for (size_t i = 0; i < take; ++i) out[i] = static_cast<T>(buf[i]);
      packed_index_ += take;
    }
    remaining_ -= take;
    out += take;
    n -= take;
  }
  return Status::OK();
}

Status RleHybridDecoder::Decode(uint32_t* out, size_t n) {
  if (bit_width_ < 0 || bit_width_ > 32) return Status::Corruption("bad bit width");
  return DecodeT(out, n);
}

Status RleHybridDecoder::Decode(uint8_t* out, size_t n) {
  if (bit_width_ < 0 || bit_width_ > 8) return Status::Corruption("bad bit width");
  return DecodeT(out, n);
}

namespace {

// Slicing-by-8 tables for the reflected gzip polynomial 0xEDB88320.
struct CrcTables {
  std::array<std::array<uint32_t, 256>, 8> t;
  CrcTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
    }
  }
};

const CrcTables& Tables() {
  static const CrcTables tables;
  return tables;
}

}  // namespace

uint32_t Crc32(std::string_view data, uint32_t crc) {
  const auto& t = Tables().t;
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  crc = ~crc;
  while (n >= 8) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + 4, 4);
    a ^= crc;
    crc = t[7][a & 0xff] ^ t[6][(a >> 8) & 0xff] ^ t[5][(a >> 16) & 0xff] ^ t[4][a >> 24] ^
          t[3][b & 0xff] ^ t[2][(b >> 8) & 0xff] ^ t[1][(b >> 16) & 0xff] ^ t[0][b >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint64_t HashBytes(const char* p, size_t n) {
  uint64_t h = 0x243f6a8885a308d3ULL ^ (n * 0x9e3779b97f4a7c15ULL);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ HashInt(w)) * 0xff51afd7ed558ccdULL;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ HashInt(w + n)) * 0xc4ceb9fe1a85ec53ULL;
  }
  return HashInt(h);
}

}  // namespace floe::parquet
