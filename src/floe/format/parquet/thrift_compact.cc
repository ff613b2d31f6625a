#include "floe/format/parquet/thrift_compact.h"

#include <cstring>

namespace floe::parquet::thrift {

void CompactWriter::FieldHeader(int16_t id, CType type) {
  int delta = id - last_id_;
  if (delta > 0 && delta <= 15) {
    out_->push_back(static_cast<char>((delta << 4) | static_cast<uint8_t>(type)));
  } else {
    out_->push_back(static_cast<char>(type));
    WriteVarint(ZigZag(id));
  }
  last_id_ = id;
}

void CompactWriter::WriteVarint(uint64_t v) {
  while (v >= 0x80) {
    out_->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_->push_back(static_cast<char>(v));
}

void CompactWriter::FieldDouble(int16_t id, double v) {
  FieldHeader(id, CType::kDouble);
  char buf[8];
  std::memcpy(buf, &v, 8);  // compact protocol doubles are little-endian, as is this host
  out_->append(buf, 8);
}

void CompactWriter::ListBegin(CType elem, int32_t size) {
  if (size < 15) {
    out_->push_back(static_cast<char>((size << 4) | static_cast<uint8_t>(elem)));
  } else {
    out_->push_back(static_cast<char>(0xf0 | static_cast<uint8_t>(elem)));
    WriteVarint(static_cast<uint64_t>(size));
  }
}

Status CompactReader::Error(std::string_view what) const {
  return Status::Corruption("thrift: " + std::string(what) + " at byte " +
                            std::to_string(position()));
}

Status CompactReader::ReadVarint(uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ == end_) return Error("truncated varint");
    uint8_t b = *pos_++;
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *v = result;
      return Status::OK();
    }
  }
  return Error("varint longer than 10 bytes");
}

Status CompactReader::ReadZigZag(int64_t* v) {
  uint64_t u;
  FLOE_RETURN_NOT_OK(ReadVarint(&u));
  *v = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
  return Status::OK();
}

Status CompactReader::StructBegin() {
  if (last_ids_.size() >= kMaxDepth) return Error("structs nested too deeply");
  last_ids_.push_back(last_id_);
  last_id_ = 0;
  return Status::OK();
}

Status CompactReader::StructEnd() {
  if (last_ids_.empty()) return Error("unbalanced struct end");
  last_id_ = last_ids_.back();
  last_ids_.pop_back();
  return Status::OK();
}

Status CompactReader::FieldBegin(CType* type, int16_t* id) {
  if (pos_ == end_) return Error("truncated struct");
  uint8_t b = *pos_++;
  uint8_t t = b & 0x0f;
  if (t == 0) {
    if (b != 0) return Error("bad field header");
    *type = CType::kStop;
    *id = 0;
    return Status::OK();
  }
  if (t > static_cast<uint8_t>(CType::kStruct)) return Error("unknown field type");
  *type = static_cast<CType>(t);
  int delta = b >> 4;
  if (delta != 0) {
    *id = static_cast<int16_t>(last_id_ + delta);
  } else {
    int64_t v;
    FLOE_RETURN_NOT_OK(ReadZigZag(&v));
    if (v < INT16_MIN || v > INT16_MAX) return Error("field id out of range");
    *id = static_cast<int16_t>(v);
  }
  last_id_ = *id;
  return Status::OK();
}

Status CompactReader::ReadBool(CType field_type, bool* v) {
  if (field_type == CType::kBoolTrue) {
    *v = true;
  } else if (field_type == CType::kBoolFalse) {
    *v = false;
  } else {
    return Error("expected a bool");
  }
  return Status::OK();
}

Status CompactReader::ReadListBool(bool* v) {
  if (pos_ == end_) return Error("truncated bool");
  uint8_t b = *pos_++;
  // Writers disagree on false inside lists (0 or 2); accept both.
  if (b > 2) return Error("bad bool");
  *v = b == 1;
  return Status::OK();
}

Status CompactReader::ReadI8(int8_t* v) {
  if (pos_ == end_) return Error("truncated byte");
  *v = static_cast<int8_t>(*pos_++);
  return Status::OK();
}

Status CompactReader::ReadI16(int16_t* v) {
  int64_t x;
  FLOE_RETURN_NOT_OK(ReadZigZag(&x));
  if (x < INT16_MIN || x > INT16_MAX) return Error("i16 out of range");
  *v = static_cast<int16_t>(x);
  return Status::OK();
}

Status CompactReader::ReadI32(int32_t* v) {
  int64_t x;
  FLOE_RETURN_NOT_OK(ReadZigZag(&x));
  if (x < INT32_MIN || x > INT32_MAX) return Error("i32 out of range");
  *v = static_cast<int32_t>(x);
  return Status::OK();
}

Status CompactReader::ReadI64(int64_t* v) { return ReadZigZag(v); }

Status CompactReader::ReadDouble(double* v) {
  if (remaining() < 8) return Error("truncated double");
  std::memcpy(v, pos_, 8);
  pos_ += 8;
  return Status::OK();
}

Status CompactReader::ReadBinary(std::string* v) {
  uint64_t n;
  FLOE_RETURN_NOT_OK(ReadVarint(&n));
  if (n > remaining()) return Error("binary length " + std::to_string(n) + " past the end");
  v->assign(reinterpret_cast<const char*>(pos_), n);
  pos_ += n;
  return Status::OK();
}

Status CompactReader::ListBegin(CType* elem, int32_t* size) {
  if (pos_ == end_) return Error("truncated list header");
  uint8_t b = *pos_++;
  uint8_t t = b & 0x0f;
  if (t == 0 || t > static_cast<uint8_t>(CType::kStruct)) return Error("bad list element type");
  // Inside collections booleans are written with type 1 or 2 interchangeably.
  *elem = t == static_cast<uint8_t>(CType::kBoolFalse) ? CType::kBoolTrue : static_cast<CType>(t);
  uint64_t n = b >> 4;
  if (n == 15) FLOE_RETURN_NOT_OK(ReadVarint(&n));
  if (n > remaining()) return Error("list size " + std::to_string(n) + " past the end");
  *size = static_cast<int32_t>(n);
  return Status::OK();
}

Status CompactReader::Skip(CType type) { return SkipDepth(type, 0); }

Status CompactReader::SkipDepth(CType type, int depth) {
  if (depth > kMaxDepth) return Error("values nested too deeply");
  switch (type) {
    case CType::kBoolTrue:
    case CType::kBoolFalse:
      return Status::OK();  // a bool field's value is in its header
    case CType::kByte: {
      int8_t v;
      return ReadI8(&v);
    }
    case CType::kI16:
    case CType::kI32:
    case CType::kI64: {
      uint64_t v;
      return ReadVarint(&v);
    }
    case CType::kDouble:
      if (remaining() < 8) return Error("truncated double");
      pos_ += 8;
      return Status::OK();
    case CType::kBinary: {
      uint64_t n;
      FLOE_RETURN_NOT_OK(ReadVarint(&n));
      if (n > remaining()) return Error("binary length past the end");
      pos_ += n;
      return Status::OK();
    }
    case CType::kList:
    case CType::kSet: {
      CType elem;
      int32_t n;
      FLOE_RETURN_NOT_OK(ListBegin(&elem, &n));
      for (int32_t i = 0; i < n; ++i) {
        if (elem == CType::kBoolTrue) {
          bool b;
          FLOE_RETURN_NOT_OK(ReadListBool(&b));
        } else {
          FLOE_RETURN_NOT_OK(SkipDepth(elem, depth + 1));
        }
      }
      return Status::OK();
    }
    case CType::kMap: {
      uint64_t n;
      FLOE_RETURN_NOT_OK(ReadVarint(&n));
      if (n == 0) return Status::OK();
      if (n > remaining()) return Error("map size past the end");
      if (pos_ == end_) return Error("truncated map header");
      uint8_t kv = *pos_++;
      CType kt = static_cast<CType>(kv >> 4), vt = static_cast<CType>(kv & 0x0f);
      for (uint64_t i = 0; i < n; ++i) {
        for (CType t : {kt, vt}) {
          if (t == CType::kBoolTrue || t == CType::kBoolFalse) {
            bool b;
            FLOE_RETURN_NOT_OK(ReadListBool(&b));
          } else {
            FLOE_RETURN_NOT_OK(SkipDepth(t, depth + 1));
          }
        }
      }
      return Status::OK();
    }
    case CType::kStruct: {
      FLOE_RETURN_NOT_OK(StructBegin());
      while (true) {
        CType t;
        int16_t id;
        FLOE_RETURN_NOT_OK(FieldBegin(&t, &id));
        if (t == CType::kStop) break;
        FLOE_RETURN_NOT_OK(SkipDepth(t, depth + 1));
      }
      return StructEnd();
    }
    case CType::kStop:
      break;
  }
  return Error("cannot skip unknown type");
}

}  // namespace floe::parquet::thrift
