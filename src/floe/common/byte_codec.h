#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "floe/common/status.h"

namespace floe {

// Appends ByteWriter::PutString's form of `v` (u32 length, little-endian, then the bytes) to
// *out: for a caller that builds a small blob in a string it keeps, without a ByteWriter.
void AppendLengthPrefixed(std::string_view v, std::string* out);

// ByteWriter builds a binary blob: fixed-width little-endian integers and length-prefixed byte
// strings, in an order only its writer knows (operator state blobs, the DataFile wire form).
// Writers should put a format version first so a later release can still read old blobs.
// Not thread-safe.
class ByteWriter {
 public:
  ByteWriter() = default;
  // Writes into `buffer`, emptied first: a caller that hands the same string back for each blob
  // (Finish returns it) allocates once.
  explicit ByteWriter(std::string buffer) : buf_(std::move(buffer)) { buf_.clear(); }

  void PutU8(uint8_t v) { buf_.push_back(static_cast<char>(v)); }
  void PutBool(bool v) { PutU8(v ? 1 : 0); }
  void PutU32(uint32_t v);
  void PutU64(uint64_t v);
  void PutI64(int64_t v) { PutU64(static_cast<uint64_t>(v)); }
  void PutDouble(double v);
  // u32 length + bytes.
  void PutString(std::string_view v);
  void PutBytes(std::string_view v) { PutString(v); }
  // Appends `v` as is (a blob another writer finished).
  void PutRaw(std::string_view v) { buf_.append(v); }
  // Compact forms, for blobs kept per key and window: LEB128 (7 bits a byte, low first), signed
  // values zigzag-mapped so small negatives stay short, and byte strings with a varint length.
  void PutVarU64(uint64_t v);
  void PutVarI64(int64_t v) {
    PutVarU64((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  void PutVarBytes(std::string_view v);

  size_t size() const { return buf_.size(); }
  const std::string& data() const { return buf_; }
  // Returns the blob and leaves the writer empty.
  std::string Finish() { return std::move(buf_); }

 private:
  std::string buf_;
};

// ByteReader reads what a ByteWriter wrote. Every read is bounds-checked: reading past the
// end or a length that does not fit returns Corruption naming the offset, never UB. The reader
// views `data`, which must outlive it.
class ByteReader {
 public:
  explicit ByteReader(std::string_view data) : data_(data) {}

  Result<uint8_t> GetU8();
  Result<bool> GetBool();
  Result<uint32_t> GetU32();
  Result<uint64_t> GetU64();
  Result<int64_t> GetI64();
  Result<double> GetDouble();
  Result<std::string> GetString();
  Result<std::string> GetBytes() { return GetString(); }
  // As GetBytes, viewing the reader's data instead of copying it.
  Result<std::string_view> GetBytesView();
  // What PutVarU64 / PutVarI64 / PutVarBytes wrote; more than 10 bytes, or a 10th byte over 1, is
  // Corruption.
  Result<uint64_t> GetVarU64();
  Result<int64_t> GetVarI64();
  Result<std::string_view> GetVarBytesView();
  // The next n bytes as they are (what PutRaw wrote), viewed.
  Result<std::string_view> GetRawView(uint64_t n) { return Take(n); }

  bool AtEnd() const { return pos_ == data_.size(); }
  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }
  // Corruption unless every byte was consumed (catches a reader/writer mismatch).
  Status ExpectEnd() const;

 private:
  Status Need(size_t n, const char* what) const;
  // The next n bytes of a string, viewed.
  Result<std::string_view> Take(uint64_t n);

  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace floe
