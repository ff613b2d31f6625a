#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/status.h"
#include "floe/format/avro/schema.h"
#include "floe/format/avro/value.h"

namespace floe::avro {

// Block compression of an object container file.
enum class Codec : uint8_t {
  kNull,     // "null": blocks stored as is
  kDeflate,  // "deflate": raw RFC 1951 deflate, no zlib header or checksum
};

// ContainerWriter builds an Avro object container file in memory (Iceberg manifests and
// manifest lists are small, and they are written with one WriteFileExclusive call).
// Lifecycle: Make -> Add* -> Finish. Once an operation failed, the writer stays failed and every
// later call returns that error. Not thread-safe.
// The header holds "avro.schema" (the schema's JSON text, verbatim, so Iceberg's field-id and
// friends survive), "avro.codec", then the caller's metadata in the order given.
class ContainerWriter {
 public:
  // REQUIRES: schema's root is a record (what Iceberg and most readers expect) — other roots are
  // allowed too. Metadata keys must not start with "avro." (InvalidArgument).
  static Result<std::unique_ptr<ContainerWriter>> Make(
      std::shared_ptr<const Schema> schema,
      std::vector<std::pair<std::string, std::string>> metadata, Codec codec,
      size_t records_per_block = 4096);

  // Validates `record` against the schema (InvalidArgument naming the field path) and appends it.
  Status Add(const Value& record);
  // Ends the current block, so the bytes so far form a readable file prefix up to this point.
  Status Flush();
  // Writes the last block and returns the whole file. The writer cannot be used afterwards.
  Result<std::string> Finish();

  int64_t num_records() const { return num_records_; }
  // Bytes of the file so far, counting the open block uncompressed: use it to roll files.
  int64_t estimated_size() const { return static_cast<int64_t>(file_.size() + block_.size()); }
  const Schema& schema() const { return *schema_; }

 private:
  struct PrivateTag {};

 public:
  // Use Make().
  ContainerWriter(PrivateTag, std::shared_ptr<const Schema> schema, Codec codec,
                  size_t records_per_block);

 private:
  std::shared_ptr<const Schema> schema_;
  Codec codec_;
  size_t records_per_block_;
  std::array<uint8_t, 16> sync_{};
  std::string file_;   // header and finished blocks
  std::string block_;  // encoded records of the open block
  std::string scratch_;
  int64_t block_records_ = 0;
  int64_t num_records_ = 0;
  bool finished_ = false;
  Status error_;
};

// ContainerReader decodes an Avro object container file held in memory, with the schema stored in
// its header (no reader-schema resolution). Lifecycle: Open -> Next* (or ReadAll). Not
// thread-safe. Every problem with the bytes is Corruption naming the file and what is wrong; an
// unsupported codec is NotImplemented.
class ContainerReader {
 public:
  static Result<std::unique_ptr<ContainerReader>> Open(std::string bytes,
                                                       std::string name_for_errors);

  const Schema& schema() const { return *schema_; }
  const std::shared_ptr<const Schema>& shared_schema() const { return schema_; }
  Codec codec() const { return codec_; }
  // Value of header metadata `key` (including "avro.schema" / "avro.codec"), if present.
  std::optional<std::string> metadata(std::string_view key) const;
  const std::vector<std::pair<std::string, std::string>>& all_metadata() const { return metadata_; }

  // Decodes the next record into *out. Returns false at the end of the file.
  Result<bool> Next(Value* out);
  // Decodes all remaining records.
  Result<std::vector<Value>> ReadAll();

 private:
  struct PrivateTag {};

 public:
  // Use Open().
  ContainerReader(PrivateTag, std::string bytes, std::string name)
      : bytes_(std::move(bytes)), name_(std::move(name)) {}

 private:
  Status ReadHeader();
  // Loads the next block into block_data_; returns false at a clean end of file.
  Result<bool> NextBlock();
  Status Corrupt(std::string_view what) const;

  std::string bytes_;
  std::string name_;
  std::shared_ptr<const Schema> schema_;
  Codec codec_ = Codec::kNull;
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::string sync_;
  size_t pos_ = 0;               // next unread byte of bytes_
  int64_t block_index_ = -1;     // index of the block being decoded, for messages
  int64_t block_remaining_ = 0;  // records left in the current block
  int64_t record_in_block_ = 0;  // index of the next record within the block, for messages
  std::string inflated_;         // decompressed block (deflate)
  std::string_view block_data_;  // undecoded rest of the current block
};

}  // namespace floe::avro
