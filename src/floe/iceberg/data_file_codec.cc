#include "floe/iceberg/data_file_codec.h"

#include <variant>

namespace floe::iceberg {
namespace {

constexpr uint32_t kDataFileVersion = 1;

// Value tags of the DataFile codec's partition values.
enum : uint8_t {
  kNull = 0,
  kBool = 1,
  kInt32 = 2,
  kInt64 = 3,
  kFloat = 4,
  kDouble = 5,
  kBytes = 6,
  kInt128 = 7,
};

void PutInt64Map(const std::map<int32_t, int64_t>& m, ByteWriter& out) {
  out.PutU32(static_cast<uint32_t>(m.size()));
  for (const auto& [k, v] : m) {
    out.PutU32(static_cast<uint32_t>(k));
    out.PutI64(v);
  }
}

Status GetInt64Map(ByteReader& in, std::map<int32_t, int64_t>* m) {
  FLOE_ASSIGN_OR_RAISE(uint32_t n, in.GetU32());
  for (uint32_t i = 0; i < n; ++i) {
    FLOE_ASSIGN_OR_RAISE(uint32_t k, in.GetU32());
    FLOE_ASSIGN_OR_RAISE(int64_t v, in.GetI64());
    (*m)[static_cast<int32_t>(k)] = v;
  }
  return Status::OK();
}

void PutBytesMap(const std::map<int32_t, std::string>& m, ByteWriter& out) {
  out.PutU32(static_cast<uint32_t>(m.size()));
  for (const auto& [k, v] : m) {
    out.PutU32(static_cast<uint32_t>(k));
    out.PutBytes(v);
  }
}

Status GetBytesMap(ByteReader& in, std::map<int32_t, std::string>* m) {
  FLOE_ASSIGN_OR_RAISE(uint32_t n, in.GetU32());
  for (uint32_t i = 0; i < n; ++i) {
    FLOE_ASSIGN_OR_RAISE(uint32_t k, in.GetU32());
    FLOE_ASSIGN_OR_RAISE(std::string v, in.GetBytes());
    (*m)[static_cast<int32_t>(k)] = std::move(v);
  }
  return Status::OK();
}

void PutValue(const Value& v, ByteWriter& out) {
  if (std::holds_alternative<std::monostate>(v)) {
    out.PutU8(kNull);
  } else if (auto* b = std::get_if<bool>(&v)) {
    out.PutU8(kBool);
    out.PutBool(*b);
  } else if (auto* i = std::get_if<int32_t>(&v)) {
    out.PutU8(kInt32);
    out.PutU32(static_cast<uint32_t>(*i));
  } else if (auto* l = std::get_if<int64_t>(&v)) {
    out.PutU8(kInt64);
    out.PutI64(*l);
  } else if (auto* f = std::get_if<float>(&v)) {
    out.PutU8(kFloat);
    out.PutDouble(*f);
  } else if (auto* d = std::get_if<double>(&v)) {
    out.PutU8(kDouble);
    out.PutDouble(*d);
  } else if (auto* s = std::get_if<std::string>(&v)) {
    out.PutU8(kBytes);
    out.PutBytes(*s);
  } else {
    auto u = static_cast<unsigned __int128>(std::get<Int128>(v));
    out.PutU8(kInt128);
    out.PutU64(static_cast<uint64_t>(u));
    out.PutU64(static_cast<uint64_t>(u >> 64));
  }
}

Result<Value> GetValue(ByteReader& in) {
  FLOE_ASSIGN_OR_RAISE(uint8_t tag, in.GetU8());
  switch (tag) {
    case kNull:
      return Value{};
    case kBool: {
      FLOE_ASSIGN_OR_RAISE(bool b, in.GetBool());
      return Value{b};
    }
    case kInt32: {
      FLOE_ASSIGN_OR_RAISE(uint32_t i, in.GetU32());
      return Value{static_cast<int32_t>(i)};
    }
    case kInt64: {
      FLOE_ASSIGN_OR_RAISE(int64_t l, in.GetI64());
      return Value{l};
    }
    case kFloat: {
      FLOE_ASSIGN_OR_RAISE(double d, in.GetDouble());
      return Value{static_cast<float>(d)};
    }
    case kDouble: {
      FLOE_ASSIGN_OR_RAISE(double d, in.GetDouble());
      return Value{d};
    }
    case kBytes: {
      FLOE_ASSIGN_OR_RAISE(std::string s, in.GetBytes());
      return Value{std::move(s)};
    }
    case kInt128: {
      FLOE_ASSIGN_OR_RAISE(uint64_t lo, in.GetU64());
      FLOE_ASSIGN_OR_RAISE(uint64_t hi, in.GetU64());
      auto u = (static_cast<unsigned __int128>(hi) << 64) | lo;
      return Value{static_cast<Int128>(u)};
    }
    default:
      return Status::Corruption("iceberg file description: unknown value tag " +
                                std::to_string(tag));
  }
}

}  // namespace

void EncodeDataFile(const DataFile& f, ByteWriter& out) {
  out.PutU32(kDataFileVersion);
  out.PutU32(static_cast<uint32_t>(f.content));
  out.PutString(f.file_path);
  out.PutString(f.file_format);
  out.PutU32(static_cast<uint32_t>(f.spec_id));
  out.PutU32(static_cast<uint32_t>(f.partition.size()));
  for (const auto& v : f.partition) PutValue(v, out);
  out.PutI64(f.record_count);
  out.PutI64(f.file_size_in_bytes);
  PutInt64Map(f.column_sizes, out);
  PutInt64Map(f.value_counts, out);
  PutInt64Map(f.null_value_counts, out);
  PutInt64Map(f.nan_value_counts, out);
  PutBytesMap(f.lower_bounds, out);
  PutBytesMap(f.upper_bounds, out);
  out.PutU32(static_cast<uint32_t>(f.split_offsets.size()));
  for (int64_t o : f.split_offsets) out.PutI64(o);
  out.PutU32(static_cast<uint32_t>(f.equality_ids.size()));
  for (int32_t id : f.equality_ids) out.PutU32(static_cast<uint32_t>(id));
  out.PutBool(f.sort_order_id.has_value());
  if (f.sort_order_id) out.PutU32(static_cast<uint32_t>(*f.sort_order_id));
}

Result<DataFile> DecodeDataFile(ByteReader& in) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, in.GetU32());
  if (version != kDataFileVersion) {
    return Status::Corruption("iceberg file description: unknown format version " +
                              std::to_string(version));
  }
  DataFile f;
  FLOE_ASSIGN_OR_RAISE(uint32_t content, in.GetU32());
  if (content > 2) {
    return Status::Corruption("iceberg file description: bad content " + std::to_string(content));
  }
  f.content = static_cast<FileContent>(content);
  FLOE_ASSIGN_OR_RAISE(f.file_path, in.GetString());
  FLOE_ASSIGN_OR_RAISE(f.file_format, in.GetString());
  FLOE_ASSIGN_OR_RAISE(uint32_t spec_id, in.GetU32());
  f.spec_id = static_cast<int32_t>(spec_id);
  FLOE_ASSIGN_OR_RAISE(uint32_t partition_size, in.GetU32());
  for (uint32_t i = 0; i < partition_size; ++i) {
    FLOE_ASSIGN_OR_RAISE(Value v, GetValue(in));
    f.partition.push_back(std::move(v));
  }
  FLOE_ASSIGN_OR_RAISE(f.record_count, in.GetI64());
  FLOE_ASSIGN_OR_RAISE(f.file_size_in_bytes, in.GetI64());
  FLOE_RETURN_NOT_OK(GetInt64Map(in, &f.column_sizes));
  FLOE_RETURN_NOT_OK(GetInt64Map(in, &f.value_counts));
  FLOE_RETURN_NOT_OK(GetInt64Map(in, &f.null_value_counts));
  FLOE_RETURN_NOT_OK(GetInt64Map(in, &f.nan_value_counts));
  FLOE_RETURN_NOT_OK(GetBytesMap(in, &f.lower_bounds));
  FLOE_RETURN_NOT_OK(GetBytesMap(in, &f.upper_bounds));
  FLOE_ASSIGN_OR_RAISE(uint32_t splits, in.GetU32());
  for (uint32_t i = 0; i < splits; ++i) {
    FLOE_ASSIGN_OR_RAISE(int64_t o, in.GetI64());
    f.split_offsets.push_back(o);
  }
  FLOE_ASSIGN_OR_RAISE(uint32_t eq, in.GetU32());
  for (uint32_t i = 0; i < eq; ++i) {
    FLOE_ASSIGN_OR_RAISE(uint32_t id, in.GetU32());
    f.equality_ids.push_back(static_cast<int32_t>(id));
  }
  FLOE_ASSIGN_OR_RAISE(bool has_sort, in.GetBool());
  if (has_sort) {
    FLOE_ASSIGN_OR_RAISE(uint32_t sort, in.GetU32());
    f.sort_order_id = static_cast<int32_t>(sort);
  }
  return f;
}

void EncodeDataFiles(const std::vector<DataFile>& files, ByteWriter& out) {
  out.PutU32(static_cast<uint32_t>(files.size()));
  for (const auto& f : files) EncodeDataFile(f, out);
}

Result<std::vector<DataFile>> DecodeDataFiles(ByteReader& in) {
  FLOE_ASSIGN_OR_RAISE(uint32_t n, in.GetU32());
  std::vector<DataFile> files;
  for (uint32_t i = 0; i < n; ++i) {
    FLOE_ASSIGN_OR_RAISE(DataFile f, DecodeDataFile(in));
    files.push_back(std::move(f));
  }
  return files;
}

}  // namespace floe::iceberg
