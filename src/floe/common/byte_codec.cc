#include "floe/common/byte_codec.h"

#include <cstring>

namespace floe {

// One append per integer, not one push_back per byte: state blobs are written per window and
// group, on the hot path of aggregations.
void ByteWriter::PutU32(uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  buf_.append(b, sizeof b);
}

void ByteWriter::PutU64(uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  buf_.append(b, sizeof b);
}

void ByteWriter::PutDouble(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  PutU64(bits);
}

void AppendLengthPrefixed(std::string_view v, std::string* out) {
  const uint32_t n = static_cast<uint32_t>(v.size());
  const char length[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                          static_cast<char>((n >> 16) & 0xff), static_cast<char>(n >> 24)};
  out->append(length, sizeof length);
  out->append(v);
}

void ByteWriter::PutString(std::string_view v) { AppendLengthPrefixed(v, &buf_); }

void ByteWriter::PutVarU64(uint64_t v) {
  char b[10];
  size_t n = 0;
  for (; v >= 0x80; v >>= 7) b[n++] = static_cast<char>((v & 0x7f) | 0x80);
  b[n++] = static_cast<char>(v);
  buf_.append(b, n);
}

void ByteWriter::PutVarBytes(std::string_view v) {
  PutVarU64(v.size());
  buf_.append(v);
}

Result<uint64_t> ByteReader::GetVarU64() {
  const size_t at = pos_;
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    FLOE_RETURN_NOT_OK(Need(1, "varint"));
    const auto byte = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && byte > 1) break;  // past 64 bits
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return v;
  }
  return Status::Corruption("state blob: bad varint at offset " + std::to_string(at));
}

Result<int64_t> ByteReader::GetVarI64() {
  FLOE_ASSIGN_OR_RAISE(uint64_t v, GetVarU64());
  return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

Result<std::string_view> ByteReader::GetVarBytesView() {
  FLOE_ASSIGN_OR_RAISE(uint64_t n, GetVarU64());
  return Take(n);
}

Status ByteReader::Need(size_t n, const char* what) const {
  if (data_.size() - pos_ < n) {
    return Status::Corruption("state blob truncated: reading " + std::string(what) + " of " +
                              std::to_string(n) + " bytes at offset " + std::to_string(pos_) +
                              ", blob has " + std::to_string(data_.size()) + " bytes");
  }
  return Status::OK();
}

Result<uint8_t> ByteReader::GetU8() {
  FLOE_RETURN_NOT_OK(Need(1, "u8"));
  return static_cast<uint8_t>(data_[pos_++]);
}

Result<bool> ByteReader::GetBool() {
  size_t at = pos_;
  FLOE_ASSIGN_OR_RAISE(uint8_t v, GetU8());
  if (v > 1) {
    return Status::Corruption("state blob: bad boolean " + std::to_string(v) + " at offset " +
                              std::to_string(at));
  }
  return v == 1;
}

Result<uint32_t> ByteReader::GetU32() {
  FLOE_RETURN_NOT_OK(Need(4, "u32"));
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
  pos_ += 4;
  return v;
}

Result<uint64_t> ByteReader::GetU64() {
  FLOE_RETURN_NOT_OK(Need(8, "u64"));
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
  pos_ += 8;
  return v;
}

Result<int64_t> ByteReader::GetI64() {
  FLOE_ASSIGN_OR_RAISE(uint64_t v, GetU64());
  return static_cast<int64_t>(v);
}

Result<double> ByteReader::GetDouble() {
  FLOE_ASSIGN_OR_RAISE(uint64_t bits, GetU64());
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

Result<std::string> ByteReader::GetString() {
  FLOE_ASSIGN_OR_RAISE(std::string_view view, GetBytesView());
  return std::string(view);
}

Result<std::string_view> ByteReader::GetBytesView() {
  FLOE_ASSIGN_OR_RAISE(uint32_t n, GetU32());
  return Take(n);
}

Result<std::string_view> ByteReader::Take(uint64_t n) {
  FLOE_RETURN_NOT_OK(Need(n, "string"));
  std::string_view out = data_.substr(pos_, n);
  pos_ += n;
  return out;
}

Status ByteReader::ExpectEnd() const {
  if (AtEnd()) return Status::OK();
  return Status::Corruption("state blob has " + std::to_string(remaining()) +
                            " unread bytes at offset " + std::to_string(pos_));
}

}  // namespace floe
