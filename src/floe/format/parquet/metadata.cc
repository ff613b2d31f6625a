#include "floe/format/parquet/metadata.h"

#include <type_traits>

#include "floe/format/parquet/thrift_compact.h"

namespace floe::parquet::format {

using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::CType;

// ---------------------------------------------------------------------------------------------
// Encoding. Field ids follow parquet.thrift.

namespace {

void EncodeStatistics(CompactWriter& w, const Statistics& s) {
  if (s.max) w.FieldBinary(1, *s.max);
  if (s.min) w.FieldBinary(2, *s.min);
  if (s.null_count) w.FieldI64(3, *s.null_count);
  if (s.distinct_count) w.FieldI64(4, *s.distinct_count);
  if (s.max_value) w.FieldBinary(5, *s.max_value);
  if (s.min_value) w.FieldBinary(6, *s.min_value);
  if (s.nan_count) w.FieldI64(9, *s.nan_count);
  w.StructEnd();
}

void EncodeEmptyStruct(CompactWriter& w, int16_t id) {
  w.FieldStructBegin(id);
  w.StructEnd();
}

void EncodeLogicalType(CompactWriter& w, const LogicalType& t) {
  switch (t.kind) {
    case LogicalType::kDecimal:
      w.FieldStructBegin(LogicalType::kDecimal);
      w.FieldI32(1, t.scale);
      w.FieldI32(2, t.precision);
      w.StructEnd();
      break;
    case LogicalType::kTime:
    case LogicalType::kTimestamp:
      w.FieldStructBegin(t.kind);
      w.FieldBool(1, t.is_adjusted_to_utc);
      w.FieldStructBegin(2);  // TimeUnit union
      EncodeEmptyStruct(w, static_cast<int16_t>(t.unit));
      w.StructEnd();
      w.StructEnd();
      break;
    case LogicalType::kInteger:
      w.FieldStructBegin(LogicalType::kInteger);
      w.FieldI8(1, t.bit_width);
      w.FieldBool(2, t.is_signed);
      w.StructEnd();
      break;
    default:
      EncodeEmptyStruct(w, t.kind);
      break;
  }
  w.StructEnd();
}

void EncodeSchemaElement(CompactWriter& w, const SchemaElement& e) {
  w.StructBegin();
  if (e.type) w.FieldI32(1, static_cast<int32_t>(*e.type));
  if (e.type_length) w.FieldI32(2, *e.type_length);
  if (e.repetition_type) w.FieldI32(3, static_cast<int32_t>(*e.repetition_type));
  w.FieldBinary(4, e.name);
  if (e.num_children) w.FieldI32(5, *e.num_children);
  if (e.converted_type) w.FieldI32(6, static_cast<int32_t>(*e.converted_type));
  if (e.scale) w.FieldI32(7, *e.scale);
  if (e.precision) w.FieldI32(8, *e.precision);
  if (e.field_id) w.FieldI32(9, *e.field_id);
  if (e.logical_type && e.logical_type->kind != LogicalType::kNone) {
    w.FieldStructBegin(10);
    EncodeLogicalType(w, *e.logical_type);
  }
  w.StructEnd();
}

void EncodeColumnMetaData(CompactWriter& w, const ColumnMetaData& m) {
  w.FieldI32(1, static_cast<int32_t>(m.type));
  w.FieldListBegin(2, CType::kI32, static_cast<int32_t>(m.encodings.size()));
  for (Encoding e : m.encodings) w.WriteI32(static_cast<int32_t>(e));
  w.FieldListBegin(3, CType::kBinary, static_cast<int32_t>(m.path_in_schema.size()));
  for (const auto& p : m.path_in_schema) w.WriteBinary(p);
  w.FieldI32(4, static_cast<int32_t>(m.codec));
  w.FieldI64(5, m.num_values);
  w.FieldI64(6, m.total_uncompressed_size);
  w.FieldI64(7, m.total_compressed_size);
  w.FieldI64(9, m.data_page_offset);
  if (m.index_page_offset) w.FieldI64(10, *m.index_page_offset);
  if (m.dictionary_page_offset) w.FieldI64(11, *m.dictionary_page_offset);
  if (m.statistics) {
    w.FieldStructBegin(12);
    EncodeStatistics(w, *m.statistics);
  }
  w.StructEnd();
}

}  // namespace

void Encode(const FileMetaData& v, std::string* out) {
  CompactWriter w(out);
  w.StructBegin();
  w.FieldI32(1, v.version);
  w.FieldListBegin(2, CType::kStruct, static_cast<int32_t>(v.schema.size()));
  for (const auto& e : v.schema) EncodeSchemaElement(w, e);
  w.FieldI64(3, v.num_rows);
  w.FieldListBegin(4, CType::kStruct, static_cast<int32_t>(v.row_groups.size()));
  for (const auto& rg : v.row_groups) {
    w.StructBegin();
    w.FieldListBegin(1, CType::kStruct, static_cast<int32_t>(rg.columns.size()));
    for (const auto& cc : rg.columns) {
      w.StructBegin();
      if (cc.file_path) w.FieldBinary(1, *cc.file_path);
      w.FieldI64(2, cc.file_offset);
      if (cc.meta_data) {
        w.FieldStructBegin(3);
        EncodeColumnMetaData(w, *cc.meta_data);
      }
      w.StructEnd();
    }
    w.FieldI64(2, rg.total_byte_size);
    w.FieldI64(3, rg.num_rows);
    if (rg.file_offset) w.FieldI64(5, *rg.file_offset);
    if (rg.total_compressed_size) w.FieldI64(6, *rg.total_compressed_size);
    if (rg.ordinal) w.FieldI16(7, *rg.ordinal);
    w.StructEnd();
  }
  if (!v.key_value_metadata.empty()) {
    w.FieldListBegin(5, CType::kStruct, static_cast<int32_t>(v.key_value_metadata.size()));
    for (const auto& kv : v.key_value_metadata) {
      w.StructBegin();
      w.FieldBinary(1, kv.key);
      if (kv.value) w.FieldBinary(2, *kv.value);
      w.StructEnd();
    }
  }
  if (v.created_by) w.FieldBinary(6, *v.created_by);
  if (!v.column_orders.empty()) {
    w.FieldListBegin(7, CType::kStruct, static_cast<int32_t>(v.column_orders.size()));
    for (int16_t order : v.column_orders) {
      w.StructBegin();
      EncodeEmptyStruct(w, order);
      w.StructEnd();
    }
  }
  w.StructEnd();
}

void Encode(const PageHeader& v, std::string* out) {
  CompactWriter w(out);
  w.StructBegin();
  w.FieldI32(1, static_cast<int32_t>(v.type));
  w.FieldI32(2, v.uncompressed_page_size);
  w.FieldI32(3, v.compressed_page_size);
  if (v.crc) w.FieldI32(4, static_cast<int32_t>(*v.crc));
  if (v.data_page_header) {
    const auto& h = *v.data_page_header;
    w.FieldStructBegin(5);
    w.FieldI32(1, h.num_values);
    w.FieldI32(2, static_cast<int32_t>(h.encoding));
    w.FieldI32(3, static_cast<int32_t>(h.definition_level_encoding));
    w.FieldI32(4, static_cast<int32_t>(h.repetition_level_encoding));
    w.StructEnd();
  }
  if (v.dictionary_page_header) {
    const auto& h = *v.dictionary_page_header;
    w.FieldStructBegin(7);
    w.FieldI32(1, h.num_values);
    w.FieldI32(2, static_cast<int32_t>(h.encoding));
    if (h.is_sorted) w.FieldBool(3, *h.is_sorted);
    w.StructEnd();
  }
  if (v.data_page_header_v2) {
    const auto& h = *v.data_page_header_v2;
    w.FieldStructBegin(8);
    w.FieldI32(1, h.num_values);
    w.FieldI32(2, h.num_nulls);
    w.FieldI32(3, h.num_rows);
    w.FieldI32(4, static_cast<int32_t>(h.encoding));
    w.FieldI32(5, h.definition_levels_byte_length);
    w.FieldI32(6, h.repetition_levels_byte_length);
    w.FieldBool(7, h.is_compressed);
    w.StructEnd();
  }
  w.StructEnd();
}

// ---------------------------------------------------------------------------------------------
// Decoding. A field whose wire type does not match the expected one is skipped, as Thrift does;
// required fields are tracked in a bit mask and their absence is Corruption.

namespace {

template <typename T>
struct Wire;
template <>
struct Wire<int8_t> {
  static bool Matches(CType t) { return t == CType::kByte; }
  static Status Read(CompactReader& r, CType, int8_t* v) { return r.ReadI8(v); }
};
template <>
struct Wire<int16_t> {
  static bool Matches(CType t) { return t == CType::kI16; }
  static Status Read(CompactReader& r, CType, int16_t* v) { return r.ReadI16(v); }
};
template <>
struct Wire<int32_t> {
  static bool Matches(CType t) { return t == CType::kI32; }
  static Status Read(CompactReader& r, CType, int32_t* v) { return r.ReadI32(v); }
};
template <>
struct Wire<int64_t> {
  static bool Matches(CType t) { return t == CType::kI64; }
  static Status Read(CompactReader& r, CType, int64_t* v) { return r.ReadI64(v); }
};
template <>
struct Wire<bool> {
  static bool Matches(CType t) { return t == CType::kBoolTrue || t == CType::kBoolFalse; }
  static Status Read(CompactReader& r, CType t, bool* v) { return r.ReadBool(t, v); }
};
template <>
struct Wire<std::string> {
  static bool Matches(CType t) { return t == CType::kBinary; }
  static Status Read(CompactReader& r, CType, std::string* v) { return r.ReadBinary(v); }
};

// Reads field value `v` if the wire type matches, else skips it. Sets bit `bit` of *seen.
template <typename T>
Status Get(CompactReader& r, CType t, T* v, uint32_t* seen = nullptr, int bit = 0) {
  if constexpr (std::is_enum_v<T>) {
    if (t != CType::kI32) return r.Skip(t);
    int32_t x;
    FLOE_RETURN_NOT_OK(r.ReadI32(&x));
    *v = static_cast<T>(x);
  } else {
    if (!Wire<T>::Matches(t)) return r.Skip(t);
    FLOE_RETURN_NOT_OK(Wire<T>::Read(r, t, v));
  }
  if (seen != nullptr) *seen |= 1u << bit;
  return Status::OK();
}

template <typename T>
Status Get(CompactReader& r, CType t, std::optional<T>* v) {
  T x{};
  bool matched = false;
  if constexpr (std::is_enum_v<T>) {
    matched = t == CType::kI32;
  } else {
    matched = Wire<T>::Matches(t);
  }
  if (!matched) return r.Skip(t);
  FLOE_RETURN_NOT_OK(Get(r, t, &x));
  *v = std::move(x);
  return Status::OK();
}

// Calls on_field(type, id) for each field of a struct; on_field must consume or skip it.
template <typename F>
Status ReadStruct(CompactReader& r, F&& on_field) {
  FLOE_RETURN_NOT_OK(r.StructBegin());
  while (true) {
    CType t;
    int16_t id;
    FLOE_RETURN_NOT_OK(r.FieldBegin(&t, &id));
    if (t == CType::kStop) break;
    FLOE_RETURN_NOT_OK(on_field(t, id));
  }
  return r.StructEnd();
}

// Reads a list field; read_elem(elem_type) reads one element. A list of the wrong type is
// skipped.
template <typename F>
Status ReadList(CompactReader& r, CType t, CType want, int32_t* size, F&& read_elem) {
  if (t != CType::kList) return r.Skip(t);
  CType elem;
  FLOE_RETURN_NOT_OK(r.ListBegin(&elem, size));
  for (int32_t i = 0; i < *size; ++i) {
    if (elem != want) {
      if (elem == CType::kBoolTrue) {
        bool b;
        FLOE_RETURN_NOT_OK(r.ReadListBool(&b));
      } else {
        FLOE_RETURN_NOT_OK(r.Skip(elem));
      }
    } else {
      FLOE_RETURN_NOT_OK(read_elem(i));
    }
  }
  if (elem != want) *size = 0;
  return Status::OK();
}

Status Missing(std::string_view field, std::string_view strukt) {
  return Status::Corruption("thrift: missing required field " + std::string(field) + " of " +
                            std::string(strukt));
}

Status CheckRequired(uint32_t seen, uint32_t required,
                     std::initializer_list<std::pair<int, const char*>> names,
                     std::string_view strukt) {
  if ((seen & required) == required) return Status::OK();
  for (const auto& [bit, name] : names) {
    if ((required & (1u << bit)) && !(seen & (1u << bit))) return Missing(name, strukt);
  }
  return Missing("?", strukt);
}

Status DecodeStatistics(CompactReader& r, Statistics* s) {
  return ReadStruct(r, [&](CType t, int16_t id) -> Status {
    switch (id) {
      case 1:
        return Get(r, t, &s->max);
      case 2:
        return Get(r, t, &s->min);
      case 3:
        return Get(r, t, &s->null_count);
      case 4:
        return Get(r, t, &s->distinct_count);
      case 5:
        return Get(r, t, &s->max_value);
      case 6:
        return Get(r, t, &s->min_value);
      case 9:
        return Get(r, t, &s->nan_count);
      default:
        return r.Skip(t);
    }
  });
}

// Reads a union of empty structs and returns the id of its (single) member.
Status DecodeEmptyUnion(CompactReader& r, int16_t* kind) {
  int members = 0;
  FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType t, int16_t id) -> Status {
    ++members;
    *kind = id;
    return r.Skip(t);
  }));
  if (members != 1)
    return Status::Corruption("thrift: union with " + std::to_string(members) + " members");
  return Status::OK();
}

Status DecodeLogicalType(CompactReader& r, LogicalType* lt) {
  int members = 0;
  FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType t, int16_t id) -> Status {
    ++members;
    lt->kind = id;
    if (t != CType::kStruct) return r.Skip(t);
    uint32_t seen = 0;
    switch (id) {
      case LogicalType::kDecimal:
        FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType ft, int16_t fid) -> Status {
          if (fid == 1) return Get(r, ft, &lt->scale, &seen, 1);
          if (fid == 2) return Get(r, ft, &lt->precision, &seen, 2);
          return r.Skip(ft);
        }));
        return CheckRequired(seen, 0b110, {{1, "scale"}, {2, "precision"}}, "DecimalType");
      case LogicalType::kTime:
      case LogicalType::kTimestamp:
        FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType ft, int16_t fid) -> Status {
          if (fid == 1) return Get(r, ft, &lt->is_adjusted_to_utc, &seen, 1);
          if (fid == 2 && ft == CType::kStruct) {
            int16_t unit = 0;
            FLOE_RETURN_NOT_OK(DecodeEmptyUnion(r, &unit));
            lt->unit = static_cast<TimeUnit>(unit);
            seen |= 1u << 2;
            return Status::OK();
          }
          return r.Skip(ft);
        }));
        return CheckRequired(seen, 0b110, {{1, "isAdjustedToUTC"}, {2, "unit"}}, "TimestampType");
      case LogicalType::kInteger:
        FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType ft, int16_t fid) -> Status {
          if (fid == 1) return Get(r, ft, &lt->bit_width, &seen, 1);
          if (fid == 2) return Get(r, ft, &lt->is_signed, &seen, 2);
          return r.Skip(ft);
        }));
        return CheckRequired(seen, 0b110, {{1, "bitWidth"}, {2, "isSigned"}}, "IntType");
      default:
        return r.Skip(t);
    }
  }));
  if (members != 1) {
    return Status::Corruption("thrift: LogicalType union with " + std::to_string(members) +
                              " members");
  }
  return Status::OK();
}

Status DecodeSchemaElement(CompactReader& r, SchemaElement* e) {
  uint32_t seen = 0;
  FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType t, int16_t id) -> Status {
    switch (id) {
      case 1:
        return Get(r, t, &e->type);
      case 2:
        return Get(r, t, &e->type_length);
      case 3:
        return Get(r, t, &e->repetition_type);
      case 4:
        return Get(r, t, &e->name, &seen, 4);
      case 5:
        return Get(r, t, &e->num_children);
      case 6:
        return Get(r, t, &e->converted_type);
      case 7:
        return Get(r, t, &e->scale);
      case 8:
        return Get(r, t, &e->precision);
      case 9:
        return Get(r, t, &e->field_id);
      case 10:
        if (t != CType::kStruct) return r.Skip(t);
        e->logical_type.emplace();
        return DecodeLogicalType(r, &*e->logical_type);
      default:
        return r.Skip(t);
    }
  }));
  return CheckRequired(seen, 1u << 4, {{4, "name"}}, "SchemaElement");
}

Status DecodeColumnMetaData(CompactReader& r, ColumnMetaData* m) {
  uint32_t seen = 0;
  FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType t, int16_t id) -> Status {
    int32_t n = 0;
    switch (id) {
      case 1:
        return Get(r, t, &m->type, &seen, 1);
      case 2:
        seen |= 1u << 2;
        return ReadList(r, t, CType::kI32, &n, [&](int32_t) -> Status {
          int32_t x;
          FLOE_RETURN_NOT_OK(r.ReadI32(&x));
          m->encodings.push_back(static_cast<Encoding>(x));
          return Status::OK();
        });
      case 3:
        seen |= 1u << 3;
        return ReadList(r, t, CType::kBinary, &n, [&](int32_t) -> Status {
          m->path_in_schema.emplace_back();
          return r.ReadBinary(&m->path_in_schema.back());
        });
      case 4:
        return Get(r, t, &m->codec, &seen, 4);
      case 5:
        return Get(r, t, &m->num_values, &seen, 5);
      case 6:
        return Get(r, t, &m->total_uncompressed_size, &seen, 6);
      case 7:
        return Get(r, t, &m->total_compressed_size, &seen, 7);
      case 9:
        return Get(r, t, &m->data_page_offset, &seen, 9);
      case 10:
        return Get(r, t, &m->index_page_offset);
      case 11:
        return Get(r, t, &m->dictionary_page_offset);
      case 12:
        if (t != CType::kStruct) return r.Skip(t);
        m->statistics.emplace();
        return DecodeStatistics(r, &*m->statistics);
      default:
        return r.Skip(t);
    }
  }));
  return CheckRequired(seen, 0b1011111110,
                       {{1, "type"},
                        {2, "encodings"},
                        {3, "path_in_schema"},
                        {4, "codec"},
                        {5, "num_values"},
                        {6, "total_uncompressed_size"},
                        {7, "total_compressed_size"},
                        {9, "data_page_offset"}},
                       "ColumnMetaData");
}

Status DecodeColumnChunk(CompactReader& r, ColumnChunk* c) {
  uint32_t seen = 0;
  FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType t, int16_t id) -> Status {
    switch (id) {
      case 1:
        return Get(r, t, &c->file_path);
      case 2:
        return Get(r, t, &c->file_offset, &seen, 2);
      case 3:
        if (t != CType::kStruct) return r.Skip(t);
        c->meta_data.emplace();
        return DecodeColumnMetaData(r, &*c->meta_data);
      default:
        return r.Skip(t);
    }
  }));
  // file_offset is required by the IDL but deprecated and unused; tolerate writers omitting it.
  return Status::OK();
}

Status DecodeRowGroup(CompactReader& r, RowGroup* g) {
  uint32_t seen = 0;
  FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType t, int16_t id) -> Status {
    int32_t n = 0;
    switch (id) {
      case 1:
        seen |= 1u << 1;
        return ReadList(r, t, CType::kStruct, &n, [&](int32_t) -> Status {
          g->columns.emplace_back();
          return DecodeColumnChunk(r, &g->columns.back());
        });
      case 2:
        return Get(r, t, &g->total_byte_size, &seen, 2);
      case 3:
        return Get(r, t, &g->num_rows, &seen, 3);
      case 5:
        return Get(r, t, &g->file_offset);
      case 6:
        return Get(r, t, &g->total_compressed_size);
      case 7:
        return Get(r, t, &g->ordinal);
      default:
        return r.Skip(t);
    }
  }));
  return CheckRequired(seen, 0b1110, {{1, "columns"}, {2, "total_byte_size"}, {3, "num_rows"}},
                       "RowGroup");
}

}  // namespace

Status Decode(std::string_view data, FileMetaData* out) {
  CompactReader r(data);
  uint32_t seen = 0;
  FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType t, int16_t id) -> Status {
    int32_t n = 0;
    switch (id) {
      case 1:
        return Get(r, t, &out->version, &seen, 1);
      case 2:
        seen |= 1u << 2;
        return ReadList(r, t, CType::kStruct, &n, [&](int32_t) -> Status {
          out->schema.emplace_back();
          return DecodeSchemaElement(r, &out->schema.back());
        });
      case 3:
        return Get(r, t, &out->num_rows, &seen, 3);
      case 4:
        seen |= 1u << 4;
        return ReadList(r, t, CType::kStruct, &n, [&](int32_t) -> Status {
          out->row_groups.emplace_back();
          return DecodeRowGroup(r, &out->row_groups.back());
        });
      case 5:
        return ReadList(r, t, CType::kStruct, &n, [&](int32_t) -> Status {
          KeyValue kv;
          uint32_t kv_seen = 0;
          FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType ft, int16_t fid) -> Status {
            if (fid == 1) return Get(r, ft, &kv.key, &kv_seen, 1);
            if (fid == 2) return Get(r, ft, &kv.value);
            return r.Skip(ft);
          }));
          FLOE_RETURN_NOT_OK(CheckRequired(kv_seen, 0b10, {{1, "key"}}, "KeyValue"));
          out->key_value_metadata.push_back(std::move(kv));
          return Status::OK();
        });
      case 6:
        return Get(r, t, &out->created_by);
      case 7:
        return ReadList(r, t, CType::kStruct, &n, [&](int32_t) -> Status {
          int16_t kind = 0;
          FLOE_RETURN_NOT_OK(DecodeEmptyUnion(r, &kind));
          out->column_orders.push_back(kind);
          return Status::OK();
        });
      default:
        return r.Skip(t);
    }
  }));
  FLOE_RETURN_NOT_OK(CheckRequired(
      seen, 0b11110, {{1, "version"}, {2, "schema"}, {3, "num_rows"}, {4, "row_groups"}},
      "FileMetaData"));
  if (r.remaining() != 0) {
    return Status::Corruption("thrift: " + std::to_string(r.remaining()) +
                              " stray bytes after FileMetaData");
  }
  return Status::OK();
}

Result<size_t> DecodePageHeader(std::string_view data, PageHeader* out) {
  CompactReader r(data);
  uint32_t seen = 0;
  FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType t, int16_t id) -> Status {
    switch (id) {
      case 1:
        return Get(r, t, &out->type, &seen, 1);
      case 2:
        return Get(r, t, &out->uncompressed_page_size, &seen, 2);
      case 3:
        return Get(r, t, &out->compressed_page_size, &seen, 3);
      case 4: {
        std::optional<int32_t> crc;
        FLOE_RETURN_NOT_OK(Get(r, t, &crc));
        if (crc) out->crc = static_cast<uint32_t>(*crc);
        return Status::OK();
      }
      case 5: {
        if (t != CType::kStruct) return r.Skip(t);
        auto& h = out->data_page_header.emplace();
        uint32_t hs = 0;
        FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType ft, int16_t fid) -> Status {
          switch (fid) {
            case 1:
              return Get(r, ft, &h.num_values, &hs, 1);
            case 2:
              return Get(r, ft, &h.encoding, &hs, 2);
            case 3:
              return Get(r, ft, &h.definition_level_encoding, &hs, 3);
            case 4:
              return Get(r, ft, &h.repetition_level_encoding, &hs, 4);
            default:
              return r.Skip(ft);
          }
        }));
        return CheckRequired(hs, 0b11110,
                             {{1, "num_values"},
                              {2, "encoding"},
                              {3, "definition_level_encoding"},
                              {4, "repetition_level_encoding"}},
                             "DataPageHeader");
      }
      case 7: {
        if (t != CType::kStruct) return r.Skip(t);
        auto& h = out->dictionary_page_header.emplace();
        uint32_t hs = 0;
        FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType ft, int16_t fid) -> Status {
          switch (fid) {
            case 1:
              return Get(r, ft, &h.num_values, &hs, 1);
            case 2:
              return Get(r, ft, &h.encoding, &hs, 2);
            case 3:
              return Get(r, ft, &h.is_sorted);
            default:
              return r.Skip(ft);
          }
        }));
        return CheckRequired(hs, 0b110, {{1, "num_values"}, {2, "encoding"}},
                             "DictionaryPageHeader");
      }
      case 8: {
        if (t != CType::kStruct) return r.Skip(t);
        auto& h = out->data_page_header_v2.emplace();
        uint32_t hs = 0;
        FLOE_RETURN_NOT_OK(ReadStruct(r, [&](CType ft, int16_t fid) -> Status {
          switch (fid) {
            case 1:
              return Get(r, ft, &h.num_values, &hs, 1);
            case 2:
              return Get(r, ft, &h.num_nulls, &hs, 2);
            case 3:
              return Get(r, ft, &h.num_rows, &hs, 3);
            case 4:
              return Get(r, ft, &h.encoding, &hs, 4);
            case 5:
              return Get(r, ft, &h.definition_levels_byte_length, &hs, 5);
            case 6:
              return Get(r, ft, &h.repetition_levels_byte_length, &hs, 6);
            case 7:
              return Get(r, ft, &h.is_compressed);
            default:
              return r.Skip(ft);
          }
        }));
        return CheckRequired(hs, 0b1111110,
                             {{1, "num_values"},
                              {2, "num_nulls"},
                              {3, "num_rows"},
                              {4, "encoding"},
                              {5, "definition_levels_byte_length"},
                              {6, "repetition_levels_byte_length"}},
                             "DataPageHeaderV2");
      }
      default:
        return r.Skip(t);
    }
  }));
  FLOE_RETURN_NOT_OK(CheckRequired(
      seen, 0b1110, {{1, "type"}, {2, "uncompressed_page_size"}, {3, "compressed_page_size"}},
      "PageHeader"));
  return r.position();
}

}  // namespace floe::parquet::format
