#include "floe/format/avro/container.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <random>

#include "floe/format/avro/encoding.h"

namespace floe::avro {

namespace {

constexpr std::string_view kMagic("Obj\x01", 4);
constexpr size_t kSyncSize = 16;
// Deflate cannot expand data by more than ~1032x, so a larger output means corrupt input; the
// absolute cap keeps hostile files from asking for gigabytes.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr uint64_t kMaxBlockBytes = uint64_t{1} << 30;
// Blocks whose records have zero encoded size (all-null schemas) cost no bytes per record.
constexpr int64_t kMaxZeroSizeRecords = int64_t{1} << 24;
// Keep blocks reasonably sized even when records are large.
constexpr size_t kMaxUncompressedBlock = size_t{16} << 20;

void AppendString(std::string_view s, std::string* out) {
  AppendVarint(static_cast<int64_t>(s.size()), out);
  out->append(s);
}

Status Deflate(std::string_view in, std::string* out) {
  if (in.size() > UINT_MAX / 2) return Status::InvalidArgument("avro block too large to deflate");
  z_stream zs{};
  // Negative window bits: raw deflate (RFC 1951) without zlib header or adler32, as Avro wants.
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("deflateInit2 failed");
  }
  out->resize(deflateBound(&zs, static_cast<uLong>(in.size())));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out->data());
  zs.avail_out = static_cast<uInt>(out->size());
  int rc = deflate(&zs, Z_FINISH);
  size_t produced = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Status::Internal("deflate failed: " + std::to_string(rc));
  out->resize(produced);
  return Status::OK();
}

// Returns a bare description of the problem; the caller adds file and block.
Status Inflate(std::string_view in, std::string* out) {
  out->clear();
  if (in.size() > UINT_MAX) return Status::Corruption("deflate block larger than 4 GiB");
  uint64_t cap = std::min<uint64_t>(kMaxBlockBytes, in.size() * kMaxDeflateRatio + 1024);
  z_stream zs{};
  if (inflateInit2(&zs, -15) != Z_OK) return Status::Internal("inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  size_t produced = 0;
  int rc = Z_OK;
  while (true) {
    if (produced == out->size()) {
      if (out->size() >= cap) {
        rc = Z_MEM_ERROR;
        break;
      }
      out->resize(std::min<uint64_t>(cap, std::max<uint64_t>(4096, out->size() * 2 + in.size())));
    }
    zs.next_out = reinterpret_cast<Bytef*>(out->data() + produced);
    zs.avail_out = static_cast<uInt>(out->size() - produced);
    rc = inflate(&zs, Z_NO_FLUSH);
    produced = out->size() - zs.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) break;  // input ended before the stream did
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;
  }
  std::string msg = zs.msg != nullptr ? zs.msg : "";
  inflateEnd(&zs);
  out->resize(produced);
  if (rc == Z_STREAM_END) return Status::OK();
  if (rc == Z_MEM_ERROR)
    return Status::Corruption("deflate data expands beyond " + std::to_string(cap) + " bytes");
  if (rc == Z_BUF_ERROR) return Status::Corruption("truncated deflate data");
  return Status::Corruption("bad deflate data" + (msg.empty() ? "" : ": " + msg));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ContainerWriter

ContainerWriter::ContainerWriter(PrivateTag, std::shared_ptr<const Schema> schema, Codec codec,
                                 size_t records_per_block)
    : schema_(std::move(schema)), codec_(codec), records_per_block_(records_per_block) {}

Result<std::unique_ptr<ContainerWriter>> ContainerWriter::Make(
    std::shared_ptr<const Schema> schema, std::vector<std::pair<std::string, std::string>> metadata,
    Codec codec, size_t records_per_block) {
  if (schema == nullptr) return Status::InvalidArgument("avro writer: no schema");
  if (records_per_block == 0) return Status::InvalidArgument("avro writer: records_per_block is 0");
  for (const auto& [key, value] : metadata) {
    if (key.starts_with("avro.")) {
      return Status::InvalidArgument("avro writer: metadata key '" + key +
                                     "' is reserved for the avro library");
    }
  }
  auto w =
      std::make_unique<ContainerWriter>(PrivateTag{}, std::move(schema), codec, records_per_block);
  // Sync markers only need to be unlikely to occur in the data; a fresh random one per file.
  std::random_device rd;
  for (size_t i = 0; i < kSyncSize; i += 4) {
    uint32_t r = rd();
    for (size_t j = 0; j < 4; ++j) w->sync_[i + j] = static_cast<uint8_t>(r >> (8 * j));
  }
  std::string& f = w->file_;
  f.append(kMagic);
  AppendVarint(static_cast<int64_t>(metadata.size() + 2), &f);
  AppendString("avro.schema", &f);
  AppendString(w->schema_->json(), &f);
  AppendString("avro.codec", &f);
  AppendString(codec == Codec::kDeflate ? "deflate" : "null", &f);
  for (const auto& [key, value] : metadata) {
    AppendString(key, &f);
    AppendString(value, &f);
  }
  AppendVarint(0, &f);
  f.append(reinterpret_cast<const char*>(w->sync_.data()), kSyncSize);
  return w;
}

Status ContainerWriter::Add(const Value& record) {
  if (!error_.ok()) return error_;
  if (finished_) return error_ = Status::Internal("avro writer: Add after Finish");
  Status st = EncodeValue(schema_->root(), record, &block_);
  if (!st.ok()) return error_ = st.WithContext("avro record " + std::to_string(num_records_));
  ++block_records_;
  ++num_records_;
  if (static_cast<size_t>(block_records_) >= records_per_block_ ||
      block_.size() >= kMaxUncompressedBlock) {
    return Flush();
  }
  return Status::OK();
}

Status ContainerWriter::Flush() {
  if (!error_.ok()) return error_;
  if (finished_) return error_ = Status::Internal("avro writer: Flush after Finish");
  if (block_records_ == 0) return Status::OK();
  std::string_view data = block_;
  if (codec_ == Codec::kDeflate) {
    Status st = Deflate(block_, &scratch_);
    if (!st.ok()) return error_ = st;
    data = scratch_;
  }
  AppendVarint(block_records_, &file_);
  AppendVarint(static_cast<int64_t>(data.size()), &file_);
  file_.append(data);
  file_.append(reinterpret_cast<const char*>(sync_.data()), kSyncSize);
  block_.clear();
  block_records_ = 0;
  return Status::OK();
}

Result<std::string> ContainerWriter::Finish() {
  FLOE_RETURN_NOT_OK(Flush());
  finished_ = true;
  return std::move(file_);
}

// ---------------------------------------------------------------------------------------------
// ContainerReader

Status ContainerReader::Corrupt(std::string_view what) const {
  return Status::Corruption(name_ + ": " + std::string(what));
}

Result<std::unique_ptr<ContainerReader>> ContainerReader::Open(std::string bytes,
                                                               std::string name_for_errors) {
  auto r =
      std::make_unique<ContainerReader>(PrivateTag{}, std::move(bytes), std::move(name_for_errors));
  FLOE_RETURN_NOT_OK(r->ReadHeader());
  return r;
}

Status ContainerReader::ReadHeader() {
  std::string_view in = bytes_;
  if (!in.starts_with(kMagic)) return Corrupt("not an avro object container file (bad magic)");
  in.remove_prefix(kMagic.size());
  auto header_error = [&](const Status& st) { return Corrupt("header metadata: " + st.message()); };
  while (true) {
    int64_t count = 0;
    Status st = ReadVarint(&in, &count);
    if (!st.ok()) return header_error(st);
    if (count == 0) break;
    if (count < 0) {
      if (count == INT64_MIN) return Corrupt("header metadata: bad block count");
      count = -count;
      int64_t size = 0;
      st = ReadVarint(&in, &size);
      if (!st.ok()) return header_error(st);
    }
    // Each entry takes at least two bytes (two length varints).
    if (count > static_cast<int64_t>(in.size() / 2)) {
      return Corrupt("header metadata: " + std::to_string(count) + " entries cannot fit in " +
                     std::to_string(in.size()) + " bytes");
    }
    for (int64_t i = 0; i < count; ++i) {
      std::string_view kv[2];
      for (auto& s : kv) {
        int64_t len = 0;
        st = ReadVarint(&in, &len);
        if (!st.ok()) return header_error(st);
        if (len < 0 || static_cast<uint64_t>(len) > in.size()) {
          return Corrupt("header metadata: length " + std::to_string(len) + " exceeds the " +
                         std::to_string(in.size()) + " bytes left");
        }
        s = in.substr(0, len);
        in.remove_prefix(len);
      }
      metadata_.emplace_back(std::string(kv[0]), std::string(kv[1]));
    }
  }
  if (in.size() < kSyncSize) return Corrupt("truncated header (no sync marker)");
  sync_ = std::string(in.substr(0, kSyncSize));
  in.remove_prefix(kSyncSize);
  pos_ = bytes_.size() - in.size();

  std::optional<std::string> schema_json = metadata("avro.schema");
  if (!schema_json) return Corrupt("header has no avro.schema");
  auto schema = ParseSchema(*schema_json);
  if (!schema.ok()) return Corrupt("header avro.schema: " + schema.status().message());
  schema_ = std::move(schema).value();
  std::string codec = metadata("avro.codec").value_or("null");
  if (codec == "null") {
    codec_ = Codec::kNull;
  } else if (codec == "deflate") {
    codec_ = Codec::kDeflate;
  } else {
    return Status::NotImplemented(name_ + ": avro codec '" + codec + "' is not supported");
  }
  return Status::OK();
}

std::optional<std::string> ContainerReader::metadata(std::string_view key) const {
  for (const auto& [k, v] : metadata_) {
    if (k == key) return v;
  }
  return std::nullopt;
}

Result<bool> ContainerReader::NextBlock() {
  std::string_view in = std::string_view(bytes_).substr(pos_);
  if (in.empty()) return false;
  ++block_index_;
  std::string where =
      "block " + std::to_string(block_index_) + " at offset " + std::to_string(pos_);
  int64_t count = 0;
  int64_t size = 0;
  Status st = ReadVarint(&in, &count);
  if (st.ok()) st = ReadVarint(&in, &size);
  if (!st.ok()) return Corrupt(where + ": " + st.message());
  if (count < 0) return Corrupt(where + ": negative record count " + std::to_string(count));
  if (size < 0 || static_cast<uint64_t>(size) > in.size()) {
    return Corrupt(where + ": size " + std::to_string(size) + " exceeds the " +
                   std::to_string(in.size()) + " bytes left (truncated file?)");
  }
  std::string_view data = in.substr(0, size);
  in.remove_prefix(size);
  if (in.size() < kSyncSize) return Corrupt(where + ": truncated sync marker");
  if (in.substr(0, kSyncSize) != sync_) return Corrupt(where + ": sync marker mismatch");
  in.remove_prefix(kSyncSize);
  pos_ = bytes_.size() - in.size();

  if (codec_ == Codec::kDeflate) {
    st = Inflate(data, &inflated_);
    if (!st.ok()) return Corrupt(where + ": " + st.message());
    data = inflated_;
  }
  int64_t min = schema_->root().min_encoded_size;
  if (min > 0 ? count > static_cast<int64_t>(data.size()) / min : count > kMaxZeroSizeRecords) {
    return Corrupt(where + ": " + std::to_string(count) + " records cannot fit in " +
                   std::to_string(data.size()) + " bytes");
  }
  block_data_ = data;
  block_remaining_ = count;
  record_in_block_ = 0;
  return true;
}

Result<bool> ContainerReader::Next(Value* out) {
  while (block_remaining_ == 0) {
    FLOE_ASSIGN_OR_RAISE(bool more, NextBlock());
    if (!more) return false;
  }
  Status st = DecodeValue(schema_->root(), &block_data_, out);
  if (!st.ok()) {
    return Corrupt("block " + std::to_string(block_index_) + ", record " +
                   std::to_string(record_in_block_) + ": " + st.message());
  }
  ++record_in_block_;
  if (--block_remaining_ == 0 && !block_data_.empty()) {
    return Corrupt("block " + std::to_string(block_index_) + ": " +
                   std::to_string(block_data_.size()) + " bytes left after its last record");
  }
  return true;
}

Result<std::vector<Value>> ContainerReader::ReadAll() {
  std::vector<Value> out;
  while (true) {
    Value v;
    FLOE_ASSIGN_OR_RAISE(bool more, Next(&v));
    if (!more) return out;
    out.push_back(std::move(v));
  }
}

}  // namespace floe::avro
