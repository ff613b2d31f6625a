#include "floe/format/avro/encoding.h"

#include <bit>
#include <limits>
#include <vector>

namespace floe::avro {

void AppendVarint(int64_t v, std::string* out) {
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  char buf[10];
  int n = 0;
  while (z >= 0x80) {
    buf[n++] = static_cast<char>(z | 0x80);
    z >>= 7;
  }
  buf[n++] = static_cast<char>(z);
  out->append(buf, n);
}

namespace {

// Little-endian regardless of the host, as the spec requires.
void AppendLE(uint64_t bits, int bytes, std::string* out) {
  char buf[8];
  for (int i = 0; i < bytes; ++i) buf[i] = static_cast<char>(bits >> (8 * i));
  out->append(buf, bytes);
}

bool KindMatches(Type t, Value::Kind k) {
  switch (t) {
    case Type::kNull:
      return k == Value::Kind::kNull;
    case Type::kBoolean:
      return k == Value::Kind::kBoolean;
    case Type::kInt:
      return k == Value::Kind::kInt;
    case Type::kLong:
      return k == Value::Kind::kLong;
    case Type::kFloat:
      return k == Value::Kind::kFloat;
    case Type::kDouble:
      return k == Value::Kind::kDouble;
    case Type::kBytes:
      return k == Value::Kind::kBytes;
    case Type::kString:
      return k == Value::Kind::kString;
    case Type::kRecord:
      return k == Value::Kind::kRecord;
    case Type::kEnum:
      return k == Value::Kind::kEnum;
    case Type::kArray:
      return k == Value::Kind::kArray;
    case Type::kMap:
      return k == Value::Kind::kMap;
    case Type::kFixed:
      return k == Value::Kind::kFixed;
    case Type::kUnion:
      return false;
  }
  return false;
}

std::string Describe(const Node& n) {
  if (n.type == Type::kUnion) {
    std::string s = "union [";
    for (size_t i = 0; i < n.branches.size(); ++i) {
      if (i > 0) s += ", ";
      s += Describe(*n.branches[i]);
    }
    return s + "]";
  }
  if (!n.name.empty()) return std::string(TypeName(n.type)) + " " + n.name;
  return std::string(TypeName(n.type));
}

// Encodes while tracking where in the datum it is, so that a validation error can name the path
// without building strings on the success path.
class Encoder {
 public:
  explicit Encoder(std::string* out) : out_(out) {}

  Status Encode(const Node& n, const Value& v) {
    if (n.type == Type::kUnion) return EncodeUnion(n, v);
    if (!KindMatches(n.type, v.kind())) {
      return Mismatch("expected " + Describe(n) + ", got " + std::string(KindName(v.kind())));
    }
    switch (n.type) {
      case Type::kNull:
        return Status::OK();
      case Type::kBoolean:
        out_->push_back(v.boolean_value() ? 1 : 0);
        return Status::OK();
      case Type::kInt:
      case Type::kLong:
      case Type::kEnum:
        if (n.type == Type::kEnum &&
            (v.enum_index() < 0 || static_cast<size_t>(v.enum_index()) >= n.symbols.size())) {
          return Mismatch("enum index " + std::to_string(v.enum_index()) + " out of range for " +
                          Describe(n));
        }
        AppendVarint(v.long_value(), out_);
        return Status::OK();
      case Type::kFloat:
        AppendLE(std::bit_cast<uint32_t>(v.float_value()), 4, out_);
        return Status::OK();
      case Type::kDouble:
        AppendLE(std::bit_cast<uint64_t>(v.double_value()), 8, out_);
        return Status::OK();
      case Type::kBytes:
      case Type::kString:
        AppendVarint(static_cast<int64_t>(v.bytes_value().size()), out_);
        out_->append(v.bytes_value());
        return Status::OK();
      case Type::kFixed:
        if (static_cast<int64_t>(v.bytes_value().size()) != n.fixed_size) {
          return Mismatch("expected " + std::to_string(n.fixed_size) + " bytes for " + Describe(n) +
                          ", got " + std::to_string(v.bytes_value().size()));
        }
        out_->append(v.bytes_value());
        return Status::OK();
      case Type::kRecord: {
        if (v.fields().size() != n.fields.size()) {
          return Mismatch("expected " + Describe(n) + " with " + std::to_string(n.fields.size()) +
                          " fields, got " + std::to_string(v.fields().size()));
        }
        for (size_t i = 0; i < n.fields.size(); ++i) {
          path_.push_back({n.fields[i].name, kField});
          FLOE_RETURN_NOT_OK(Encode(*n.fields[i].type, v.fields()[i]));
          path_.pop_back();
        }
        return Status::OK();
      }
      case Type::kArray: {
        const auto& items = v.items();
        if (!items.empty()) AppendVarint(static_cast<int64_t>(items.size()), out_);
        for (size_t i = 0; i < items.size(); ++i) {
          path_.push_back({{}, static_cast<int64_t>(i)});
          FLOE_RETURN_NOT_OK(Encode(*n.items, items[i]));
          path_.pop_back();
        }
        AppendVarint(0, out_);
        return Status::OK();
      }
      case Type::kMap: {
        const auto& entries = v.entries();
        if (!entries.empty()) AppendVarint(static_cast<int64_t>(entries.size()), out_);
        for (const auto& [key, value] : entries) {
          AppendVarint(static_cast<int64_t>(key.size()), out_);
          out_->append(key);
          path_.push_back({key, kMapKey});
          FLOE_RETURN_NOT_OK(Encode(*n.items, value));
          path_.pop_back();
        }
        AppendVarint(0, out_);
        return Status::OK();
      }
      case Type::kUnion:
        break;
    }
    return Status::Internal("unreachable");
  }

  void set_root_name(std::string_view name) { root_name_ = name; }

 private:
  static constexpr int64_t kField = -1;
  static constexpr int64_t kMapKey = -2;
  struct PathElem {
    std::string_view name;
    int64_t index;  // >= 0: array index; kField / kMapKey: `name` is a field name / map key
  };

  Status EncodeUnion(const Node& n, const Value& v) {
    int first = -1;
    int matches = 0;
    for (size_t i = 0; i < n.branches.size(); ++i) {
      if (KindMatches(n.branches[i]->type, v.kind())) {
        if (first < 0) first = static_cast<int>(i);
        ++matches;
      }
    }
    if (first < 0) {
      return Mismatch("expected " + Describe(n) + ", got " + std::string(KindName(v.kind())));
    }
    if (matches == 1) {
      AppendVarint(first, out_);
      return Encode(*n.branches[first], v);
    }
    // Several named types of this kind: use the first the value fits. A failed attempt returns
    // early and leaves its path elements behind, hence the mark.
    size_t path_mark = path_.size();
    Status first_error;
    for (size_t i = first; i < n.branches.size(); ++i) {
      if (!KindMatches(n.branches[i]->type, v.kind())) continue;
      size_t mark = out_->size();
      AppendVarint(static_cast<int64_t>(i), out_);
      Status st = Encode(*n.branches[i], v);
      if (st.ok()) return st;
      out_->resize(mark);
      path_.resize(path_mark);
      if (first_error.ok()) first_error = st;
    }
    return first_error;
  }

  Status Mismatch(std::string what) const {
    std::string path(root_name_.empty() ? "datum" : root_name_);
    for (const auto& e : path_) {
      if (e.index == kField) {
        path += ".";
        path += e.name;
      } else if (e.index == kMapKey) {
        path += "[\"";
        path += e.name;
        path += "\"]";
      } else {
        path += "[" + std::to_string(e.index) + "]";
      }
    }
    return Status::InvalidArgument(path + ": " + what);
  }

  std::string* out_;
  std::vector<PathElem> path_;
  std::string_view root_name_;
};

class Decoder {
 public:
  explicit Decoder(std::string_view* data) : data_(data) {}

  Status Decode(const Node& n, Value* out) {
    switch (n.type) {
      case Type::kNull:
        *out = Value::Null();
        return Status::OK();
      case Type::kBoolean: {
        if (data_->empty()) return Truncated("boolean");
        uint8_t b = static_cast<uint8_t>((*data_)[0]);
        if (b > 1)
          return Status::Corruption("boolean byte " + std::to_string(b) + " is not 0 or 1");
        data_->remove_prefix(1);
        *out = Value::Boolean(b != 0);
        return Status::OK();
      }
      case Type::kInt: {
        int32_t v = 0;
        FLOE_RETURN_NOT_OK(ReadInt(&v, "int"));
        *out = Value::Int(v);
        return Status::OK();
      }
      case Type::kLong: {
        int64_t v = 0;
        FLOE_RETURN_NOT_OK(ReadLong(&v));
        *out = Value::Long(v);
        return Status::OK();
      }
      case Type::kFloat: {
        uint64_t bits = 0;
        FLOE_RETURN_NOT_OK(ReadLE(4, &bits, "float"));
        *out = Value::Float(std::bit_cast<float>(static_cast<uint32_t>(bits)));
        return Status::OK();
      }
      case Type::kDouble: {
        uint64_t bits = 0;
        FLOE_RETURN_NOT_OK(ReadLE(8, &bits, "double"));
        *out = Value::Double(std::bit_cast<double>(bits));
        return Status::OK();
      }
      case Type::kBytes:
      case Type::kString: {
        std::string_view s;
        FLOE_RETURN_NOT_OK(ReadLengthPrefixed(&s, n.type == Type::kString ? "string" : "bytes"));
        *out =
            n.type == Type::kString ? Value::String(std::string(s)) : Value::Bytes(std::string(s));
        return Status::OK();
      }
      case Type::kFixed: {
        if (static_cast<int64_t>(data_->size()) < n.fixed_size) return Truncated("fixed");
        *out = Value::Fixed(std::string(data_->substr(0, n.fixed_size)));
        data_->remove_prefix(n.fixed_size);
        return Status::OK();
      }
      case Type::kEnum: {
        int32_t i = 0;
        FLOE_RETURN_NOT_OK(ReadInt(&i, "enum index"));
        if (i < 0 || static_cast<size_t>(i) >= n.symbols.size()) {
          return Status::Corruption("enum index " + std::to_string(i) + " out of range for " +
                                    n.name + " (" + std::to_string(n.symbols.size()) + " symbols)");
        }
        *out = Value::Enum(i);
        return Status::OK();
      }
      case Type::kUnion: {
        FLOE_RETURN_NOT_OK(Enter());
        int64_t i = 0;
        FLOE_RETURN_NOT_OK(ReadLong(&i));
        if (i < 0 || static_cast<size_t>(i) >= n.branches.size()) {
          return Status::Corruption("union index " + std::to_string(i) + " out of range (" +
                                    std::to_string(n.branches.size()) + " branches)");
        }
        FLOE_RETURN_NOT_OK(Decode(*n.branches[i], out));
        --depth_;
        return Status::OK();
      }
      case Type::kRecord: {
        FLOE_RETURN_NOT_OK(Enter());
        std::vector<Value> fields(n.fields.size());
        for (size_t i = 0; i < n.fields.size(); ++i) {
          FLOE_RETURN_NOT_OK(Decode(*n.fields[i].type, &fields[i]));
        }
        *out = Value::Record(std::move(fields));
        --depth_;
        return Status::OK();
      }
      case Type::kArray: {
        FLOE_RETURN_NOT_OK(Enter());
        std::vector<Value> items;
        FLOE_RETURN_NOT_OK(ReadBlocks(*n.items, [&]() -> Status {
          items.emplace_back();
          return Decode(*n.items, &items.back());
        }));
        *out = Value::Array(std::move(items));
        --depth_;
        return Status::OK();
      }
      case Type::kMap: {
        FLOE_RETURN_NOT_OK(Enter());
        Value::MapEntries entries;
        FLOE_RETURN_NOT_OK(ReadBlocks(*n.items, [&]() -> Status {
          std::string_view key;
          FLOE_RETURN_NOT_OK(ReadLengthPrefixed(&key, "map key"));
          entries.emplace_back(std::string(key), Value());
          return Decode(*n.items, &entries.back().second);
        }));
        *out = Value::Map(std::move(entries));
        --depth_;
        return Status::OK();
      }
    }
    return Status::Internal("unreachable");
  }

  Status ReadLong(int64_t* v) {
    uint64_t z = 0;
    for (int i = 0; i < 10; ++i) {
      if (static_cast<size_t>(i) >= data_->size()) return Truncated("varint");
      uint8_t b = static_cast<uint8_t>((*data_)[i]);
      if (i == 9 && b > 1) return Status::Corruption("varint longer than 64 bits");
      z |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) {
        data_->remove_prefix(i + 1);
        *v = static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
        return Status::OK();
      }
    }
    return Status::Corruption("varint longer than 10 bytes");
  }

 private:
  // Items of zero encoded size (nulls, empty records) cost no input, so their count is capped
  // separately to bound memory.
  static constexpr int64_t kMaxZeroSizeItems = int64_t{1} << 20;

  Status Enter() {
    if (++depth_ > kMaxDepth) {
      return Status::Corruption("datum nested deeper than " + std::to_string(kMaxDepth));
    }
    return Status::OK();
  }

  static Status Truncated(std::string_view what) {
    return Status::Corruption("truncated " + std::string(what));
  }

  Status ReadInt(int32_t* v, std::string_view what) {
    int64_t l = 0;
    FLOE_RETURN_NOT_OK(ReadLong(&l));
    if (l < std::numeric_limits<int32_t>::min() || l > std::numeric_limits<int32_t>::max()) {
      return Status::Corruption(std::string(what) + " " + std::to_string(l) + " out of int range");
    }
    *v = static_cast<int32_t>(l);
    return Status::OK();
  }

  Status ReadLE(int bytes, uint64_t* bits, std::string_view what) {
    if (data_->size() < static_cast<size_t>(bytes)) return Truncated(what);
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
      v |= static_cast<uint64_t>(static_cast<uint8_t>((*data_)[i])) << (8 * i);
    data_->remove_prefix(bytes);
    *bits = v;
    return Status::OK();
  }

  Status ReadLengthPrefixed(std::string_view* s, std::string_view what) {
    int64_t len = 0;
    FLOE_RETURN_NOT_OK(ReadLong(&len));
    if (len < 0)
      return Status::Corruption("negative " + std::string(what) + " length " + std::to_string(len));
    if (static_cast<uint64_t>(len) > data_->size()) {
      return Status::Corruption(std::string(what) + " length " + std::to_string(len) +
                                " exceeds the " + std::to_string(data_->size()) + " bytes left");
    }
    *s = data_->substr(0, len);
    data_->remove_prefix(len);
    return Status::OK();
  }

  // Array and map encoding: blocks of (count, [byte size if count < 0], items), ending with 0.
  template <typename ReadItem>
  Status ReadBlocks(const Node& item, ReadItem read_item) {
    int64_t total = 0;
    while (true) {
      int64_t count = 0;
      FLOE_RETURN_NOT_OK(ReadLong(&count));
      if (count == 0) return Status::OK();
      if (count < 0) {
        if (count == std::numeric_limits<int64_t>::min())
          return Status::Corruption("bad block count");
        count = -count;
        int64_t size = 0;
        FLOE_RETURN_NOT_OK(ReadLong(&size));
        if (size < 0 || static_cast<uint64_t>(size) > data_->size()) {
          return Status::Corruption("block byte size " + std::to_string(size) + " exceeds the " +
                                    std::to_string(data_->size()) + " bytes left");
        }
      }
      int64_t min = item.min_encoded_size;
      if (min > 0 ? count > static_cast<int64_t>(data_->size()) / min
                  : count > kMaxZeroSizeItems - total) {
        return Status::Corruption("block of " + std::to_string(count) +
                                  " items cannot fit in the " + std::to_string(data_->size()) +
                                  " bytes left");
      }
      total += count;
      for (int64_t i = 0; i < count; ++i) FLOE_RETURN_NOT_OK(read_item());
    }
  }

  std::string_view* data_;
  int depth_ = 0;
};

}  // namespace

Status DecodeValue(const Node& schema, std::string_view* data, Value* out) {
  Decoder dec(data);
  return dec.Decode(schema, out);
}

Status ReadVarint(std::string_view* data, int64_t* v) {
  Decoder dec(data);
  return dec.ReadLong(v);
}

Status EncodeValue(const Node& schema, const Value& value, std::string* out) {
  Encoder enc(out);
  enc.set_root_name(schema.name);
  return enc.Encode(schema, value);
}

}  // namespace floe::avro
