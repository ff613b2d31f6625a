#include "floe/format/parquet/column_reader.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "floe/format/parquet/compression.h"
#include "floe/format/parquet/encoding.h"

namespace floe::parquet {

namespace {

using format::Encoding;
using format::PageType;
using format::Type;

// No page floe reads may decompress to more than this; bounds memory for hostile headers.
constexpr int32_t kMaxPageSize = 1 << 30;

Status Corrupt(std::string msg) { return Status::Corruption(std::move(msg)); }

std::string EncodingName(Encoding e) {
  switch (e) {
    case Encoding::kPlain:
      return "PLAIN";
    case Encoding::kPlainDictionary:
      return "PLAIN_DICTIONARY";
    case Encoding::kRle:
      return "RLE";
    case Encoding::kBitPacked:
      return "BIT_PACKED";
    case Encoding::kDeltaBinaryPacked:
      return "DELTA_BINARY_PACKED";
    case Encoding::kDeltaLengthByteArray:
      return "DELTA_LENGTH_BYTE_ARRAY";
    case Encoding::kDeltaByteArray:
      return "DELTA_BYTE_ARRAY";
    case Encoding::kRleDictionary:
      return "RLE_DICTIONARY";
    case Encoding::kByteStreamSplit:
      return "BYTE_STREAM_SPLIT";
  }
  return "encoding " + std::to_string(static_cast<int>(e));
}

bool IsDictEncoding(Encoding e) {
  return e == Encoding::kPlainDictionary || e == Encoding::kRleDictionary;
}

bool IsKnownEncoding(Encoding e) {
  int v = static_cast<int>(e);
  return v == 0 || (v >= 2 && v <= 9);
}

Status UnsupportedEncoding(Encoding e, std::string_view what) {
  if (!IsKnownEncoding(e)) return Corrupt("unknown encoding " + EncodingName(e));
  return Status::NotImplemented(EncodingName(e) + " encoding of " + std::string(what) +
                                " is not supported");
}

class ChunkReader {
 public:
  ChunkReader(const ColumnDescriptor& d, const format::ColumnMetaData& m, PageDecompressor* dec,
              Column* out)
      : desc_(d), meta_(m), decompressor_(dec), out_(out) {}

  Status Run(std::string_view chunk, int64_t chunk_start) {
    size_t pos = 0;
    bool seen_data = false;
    while (pos < chunk.size()) {
      const size_t page_start = pos;
      format::PageHeader h;
      auto header_len = format::DecodePageHeader(chunk.substr(pos), &h);
      if (!header_len.ok()) {
        return header_len.status().WithContext("page header at offset " +
                                               std::to_string(chunk_start + pos));
      }
      pos += *header_len;
      if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0) {
        return Corrupt("negative page size");
      }
      if (static_cast<size_t>(h.compressed_page_size) > chunk.size() - pos) {
        return Corrupt("page at offset " + std::to_string(chunk_start + page_start) + " of " +
                       std::to_string(h.compressed_page_size) +
                       " bytes runs past the end of the column chunk");
      }
      if (h.uncompressed_page_size > kMaxPageSize) {
        return Corrupt("page of " + std::to_string(h.uncompressed_page_size) +
                       " bytes exceeds the 1 GiB limit");
      }
      std::string_view page = chunk.substr(pos, static_cast<size_t>(h.compressed_page_size));
      pos += page.size();
      if (h.crc && Crc32(page) != *h.crc) {
        return Corrupt("page checksum mismatch at offset " +
                       std::to_string(chunk_start + page_start));
      }
      Status st;
      switch (h.type) {
        case PageType::kDictionaryPage:
          if (seen_data || have_dict_) return Corrupt("dictionary page after other pages");
          st = ReadDictionaryPage(h, page);
          break;
        case PageType::kDataPage:
        case PageType::kDataPageV2:
          if (!seen_data &&
              chunk_start + static_cast<int64_t>(page_start) != meta_.data_page_offset) {
            return Corrupt("first data page is at offset " +
                           std::to_string(chunk_start + page_start) + ", column metadata says " +
                           std::to_string(meta_.data_page_offset));
          }
          seen_data = true;
          st = h.type == PageType::kDataPage ? ReadDataPageV1(h, page) : ReadDataPageV2(h, page);
          break;
        case PageType::kIndexPage:
          break;
        default:
          return Corrupt("unknown page type " + std::to_string(static_cast<int>(h.type)));
      }
      if (!st.ok()) {
        return st.WithContext("page at offset " + std::to_string(chunk_start + page_start));
      }
    }
    if (values_read_ != meta_.num_values) {
      return Corrupt("column chunk holds " + std::to_string(values_read_) +
                     " values, its metadata says " + std::to_string(meta_.num_values));
    }
    if (meta_.statistics && meta_.statistics->null_count &&
        *meta_.statistics->null_count != nulls_read_) {
      return Corrupt("column chunk holds " + std::to_string(nulls_read_) +
                     " nulls, its statistics say " + std::to_string(*meta_.statistics->null_count));
    }
    return Status::OK();
  }

 private:
  // ---- pages ---------------------------------------------------------------------------------

  Status ReadDictionaryPage(const format::PageHeader& h, std::string_view page) {
    if (!h.dictionary_page_header) return Corrupt("dictionary page without its header");
    const auto& dh = *h.dictionary_page_header;
    if (dh.encoding != Encoding::kPlain && dh.encoding != Encoding::kPlainDictionary) {
      return UnsupportedEncoding(dh.encoding, "a dictionary page");
    }
    if (dh.num_values < 0) return Corrupt("negative dictionary size");
    if (desc_.physical_type == Type::kBoolean) return Corrupt("dictionary page for booleans");
    FLOE_RETURN_NOT_OK(decompressor_->Decompress(
        meta_.codec, page, static_cast<size_t>(h.uncompressed_page_size), &dict_buf_));
    size_t n = static_cast<size_t>(dh.num_values);
    FLOE_RETURN_NOT_OK(DecodePlain(dict_buf_, n, /*into_dict=*/true));
    have_dict_ = true;
    dict_size_ = n;
    return Status::OK();
  }

  Status CheckValueCount(int64_t n) {
    if (n < 0 || n > meta_.num_values - values_read_) {
      return Corrupt("page claims " + std::to_string(n) + " values, only " +
                     std::to_string(meta_.num_values - values_read_) + " remain in the chunk");
    }
    return Status::OK();
  }

  Status ReadDataPageV1(const format::PageHeader& h, std::string_view page) {
    if (!h.data_page_header) return Corrupt("data page without its header");
    const auto& dp = *h.data_page_header;
    FLOE_RETURN_NOT_OK(CheckValueCount(dp.num_values));
    FLOE_RETURN_NOT_OK(decompressor_->Decompress(
        meta_.codec, page, static_cast<size_t>(h.uncompressed_page_size), &page_buf_));
    std::string_view data = page_buf_;
    size_t n = static_cast<size_t>(dp.num_values);
    // Repetition levels come first; flat columns have none.
    if (desc_.max_definition_level > 0) {
      if (dp.definition_level_encoding != Encoding::kRle) {
        return UnsupportedEncoding(dp.definition_level_encoding, "definition levels");
      }
      if (data.size() < 4) return Corrupt("definition levels truncated");
      uint32_t len;
      std::memcpy(&len, data.data(), 4);
      data.remove_prefix(4);
      if (len > data.size()) return Corrupt("definition levels run past the end of the page");
      FLOE_RETURN_NOT_OK(DecodeLevels(data.substr(0, len), n));
      data.remove_prefix(len);
    }
    return DecodeValuesAndAppend(dp.encoding, data, n);
  }

  Status ReadDataPageV2(const format::PageHeader& h, std::string_view page) {
    if (!h.data_page_header_v2) return Corrupt("data page v2 without its header");
    const auto& dp = *h.data_page_header_v2;
    FLOE_RETURN_NOT_OK(CheckValueCount(dp.num_values));
    if (dp.num_rows != dp.num_values) return Corrupt("num_rows differs from num_values");
    if (dp.repetition_levels_byte_length != 0) {
      return Corrupt("repetition levels in a flat column");
    }
    if (dp.definition_levels_byte_length < 0 ||
        static_cast<size_t>(dp.definition_levels_byte_length) > page.size() ||
        dp.definition_levels_byte_length > h.uncompressed_page_size) {
      return Corrupt("bad definition levels length");
    }
    size_t def_len = static_cast<size_t>(dp.definition_levels_byte_length);
    size_t n = static_cast<size_t>(dp.num_values);
    if (desc_.max_definition_level > 0) {
      FLOE_RETURN_NOT_OK(DecodeLevels(page.substr(0, def_len), n));
    } else if (def_len != 0) {
      return Corrupt("definition levels in a required column");
    } else {
      non_null_ = static_cast<int64_t>(n);
    }
    if (static_cast<int64_t>(n) - non_null_ != dp.num_nulls) {
      return Corrupt("page has " + std::to_string(n - non_null_) + " nulls, its header says " +
                     std::to_string(dp.num_nulls));
    }
    std::string_view values = page.substr(def_len);
    size_t values_size = static_cast<size_t>(h.uncompressed_page_size) - def_len;
    if (dp.is_compressed) {
      FLOE_RETURN_NOT_OK(decompressor_->Decompress(meta_.codec, values, values_size, &page_buf_));
    } else {
      if (values.size() != values_size) return Corrupt("page sizes disagree");
      page_buf_.assign(values);
    }
    return DecodeValuesAndAppend(dp.encoding, page_buf_, n);
  }

  Status DecodeLevels(std::string_view data, size_t n) {
    defs_.resize(n);
    RleHybridDecoder dec(data, BitWidth(static_cast<uint64_t>(desc_.max_definition_level)));
    FLOE_RETURN_NOT_OK(dec.Decode(defs_.data(), n).WithContext("definition levels"));
    if (!dec.AtEnd()) return Corrupt("stray bytes after the definition levels");
    int64_t non_null = 0;
    const uint8_t max = static_cast<uint8_t>(desc_.max_definition_level);
    for (size_t i = 0; i < n; ++i) {
      if (defs_[i] > max) return Corrupt("definition level above the maximum");
      non_null += defs_[i] == max;
    }
    non_null_ = non_null;
    has_levels_ = true;
    return Status::OK();
  }

  // ---- values --------------------------------------------------------------------------------

  Status DecodeValuesAndAppend(Encoding encoding, std::string_view data, size_t n) {
    if (!has_levels_) non_null_ = static_cast<int64_t>(n);
    size_t k = static_cast<size_t>(non_null_);
    if (encoding == Encoding::kPlain) {
      FLOE_RETURN_NOT_OK(DecodePlain(data, k, /*into_dict=*/false));
    } else if (IsDictEncoding(encoding)) {
      FLOE_RETURN_NOT_OK(DecodeDictIndices(data, k));
    } else if (encoding == Encoding::kRle && desc_.physical_type == Type::kBoolean) {
      FLOE_RETURN_NOT_OK(DecodeRleBooleans(data, k));
    } else {
      return UnsupportedEncoding(encoding, "values");
    }
    FLOE_RETURN_NOT_OK(Append(n));
    values_read_ += static_cast<int64_t>(n);
    nulls_read_ += static_cast<int64_t>(n) - non_null_;
    has_levels_ = false;
    return Status::OK();
  }

  template <typename T>
  Status PlainFixed(std::string_view data, size_t k, std::vector<T>* out) {
    if (data.size() / sizeof(T) < k || (data.size() != k * sizeof(T))) {
      return Corrupt("PLAIN data of " + std::to_string(data.size()) + " bytes for " +
                     std::to_string(k) + " values of " + std::to_string(sizeof(T)) + " bytes");
    }
    out->resize(k);
    if (k > 0) std::memcpy(out->data(), data.data(), k * sizeof(T));
    return Status::OK();
  }

  // Decodes k PLAIN values into the page buffers, or into the dictionary.
  Status DecodePlain(std::string_view data, size_t k, bool into_dict) {
    switch (desc_.physical_type) {
      case Type::kBoolean: {
        if (data.size() != (k + 7) / 8) return Corrupt("PLAIN boolean data has the wrong size");
        bools_.resize(k);
        const auto* p = reinterpret_cast<const uint8_t*>(data.data());
        for (size_t i = 0; i < k; ++i) bools_[i] = (p[i / 8] >> (i % 8)) & 1;
        return Status::OK();
      }
      case Type::kInt32:
        return PlainFixed(data, k, into_dict ? &dict_i32_ : &i32_);
      case Type::kInt64:
        return PlainFixed(data, k, into_dict ? &dict_i64_ : &i64_);
      case Type::kFloat:
        return PlainFixed(data, k, into_dict ? &dict_f32_ : &f32_);
      case Type::kDouble:
        return PlainFixed(data, k, into_dict ? &dict_f64_ : &f64_);
      case Type::kByteArray: {
        auto* out = into_dict ? &dict_views_ : &views_;
        // Each value takes at least its 4-byte length, which bounds k before reserving.
        if (k > data.size() / 4) return Corrupt("too many BYTE_ARRAY values for the page");
        out->resize(k);
        size_t pos = 0;
        for (size_t i = 0; i < k; ++i) {
          if (data.size() - pos < 4) return Corrupt("BYTE_ARRAY length truncated");
          uint32_t len;
          std::memcpy(&len, data.data() + pos, 4);
          pos += 4;
          if (len > data.size() - pos) return Corrupt("BYTE_ARRAY value runs past the page");
          (*out)[i] = data.substr(pos, len);
          pos += len;
        }
        if (pos != data.size()) return Corrupt("stray bytes after PLAIN values");
        return Status::OK();
      }
      case Type::kFixedLenByteArray: {
        auto* out = into_dict ? &dict_views_ : &views_;
        size_t w = static_cast<size_t>(desc_.type_length);
        if (data.size() / w < k || data.size() != k * w) {
          return Corrupt("FIXED_LEN_BYTE_ARRAY data has the wrong size");
        }
        out->resize(k);
        for (size_t i = 0; i < k; ++i) (*out)[i] = data.substr(i * w, w);
        return Status::OK();
      }
      default:
        return Status::NotImplemented("physical type not supported");
    }
  }

  Status DecodeRleBooleans(std::string_view data, size_t k) {
    if (data.size() < 4) return Corrupt("RLE boolean data truncated");
    uint32_t len;
    std::memcpy(&len, data.data(), 4);
    if (len > data.size() - 4) return Corrupt("RLE boolean data runs past the page");
    bools_.resize(k);
    RleHybridDecoder dec(data.substr(4, len), 1);
    FLOE_RETURN_NOT_OK(dec.Decode(bools_.data(), k));
    if (!dec.AtEnd() || len != data.size() - 4) return Corrupt("stray bytes after RLE booleans");
    return Status::OK();
  }

  template <typename T>
  Status Gather(const std::vector<T>& dict, std::vector<T>* out, size_t k) {
    out->resize(k);
    for (size_t i = 0; i < k; ++i) (*out)[i] = dict[indices_[i]];
    return Status::OK();
  }

  Status DecodeDictIndices(std::string_view data, size_t k) {
    if (!have_dict_) return Corrupt("dictionary-encoded page without a dictionary page");
    if (k == 0) return Status::OK();
    if (data.empty()) return Corrupt("dictionary indices missing");
    int bw = static_cast<uint8_t>(data[0]);
    if (bw > 32) return Corrupt("dictionary index bit width " + std::to_string(bw));
    indices_.resize(k);
    RleHybridDecoder dec(data.substr(1), bw);
    FLOE_RETURN_NOT_OK(dec.Decode(indices_.data(), k).WithContext("dictionary indices"));
    if (!dec.AtEnd()) return Corrupt("stray bytes after the dictionary indices");
    for (size_t i = 0; i < k; ++i) {
      if (indices_[i] >= dict_size_) {
        return Corrupt("dictionary index " + std::to_string(indices_[i]) + " out of range (" +
                       std::to_string(dict_size_) + " entries)");
      }
    }
    switch (desc_.physical_type) {
      case Type::kInt32:
        return Gather(dict_i32_, &i32_, k);
      case Type::kInt64:
        return Gather(dict_i64_, &i64_, k);
      case Type::kFloat:
        return Gather(dict_f32_, &f32_, k);
      case Type::kDouble:
        return Gather(dict_f64_, &f64_, k);
      case Type::kByteArray:
      case Type::kFixedLenByteArray:
        return Gather(dict_views_, &views_, k);
      default:
        return Corrupt("dictionary encoding for this type");
    }
  }

  // ---- appending to the column ---------------------------------------------------------------

  // Appends n rows, taking non-null values in order from `values` through `convert`, which
  // returns false for a value floe cannot represent.
  template <typename T, typename Convert>
  Status AppendT(size_t n, const std::vector<T>& values, Convert convert) {
    const uint8_t* defs = has_levels_ ? defs_.data() : nullptr;
    const uint8_t max = static_cast<uint8_t>(desc_.max_definition_level);
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
      if (defs != nullptr && defs[i] != max) {
        out_->AppendNull();
        continue;
      }
      if (!convert(values[k++]))
        return Corrupt("value out of range for " + out_->type().ToString());
    }
    return Status::OK();
  }

  static Int128 BigEndianToInt128(std::string_view b) {
    // Sign-extend from the first byte. REQUIRES: b.size() <= 16.
    Int128 v = b.empty() ? 0 : (static_cast<int8_t>(b[0]) < 0 ? -1 : 0);
    for (char c : b)
      v = static_cast<Int128>((static_cast<unsigned __int128>(v) << 8) | static_cast<uint8_t>(c));
    return v;
  }

  Status Append(size_t n) {
    Column* out = out_;
    const Conversion conv = desc_.conversion;
    switch (desc_.physical_type) {
      case Type::kBoolean:
        return AppendT(n, bools_, [out](uint8_t v) { return out->Append<uint8_t>(v), true; });
      case Type::kInt32:
        if (conv == Conversion::kDecimal) {
          return AppendT(n, i32_, [out](int32_t v) { return out->Append<Int128>(v), true; });
        }
        if (conv == Conversion::kUnsigned32) {
          return AppendT(n, i32_, [out](int32_t v) {
            return out->Append<int64_t>(static_cast<uint32_t>(v)), true;
          });
        }
        return AppendT(n, i32_, [out](int32_t v) { return out->Append<int32_t>(v), true; });
      case Type::kInt64:
        if (conv == Conversion::kDecimal) {
          return AppendT(n, i64_, [out](int64_t v) { return out->Append<Int128>(v), true; });
        }
        if (conv == Conversion::kMillisToMicros) {
          return AppendT(n, i64_, [out](int64_t v) {
            int64_t r;
            if (__builtin_mul_overflow(v, 1000, &r)) return false;
            out->Append<int64_t>(r);
            return true;
          });
        }
        if (conv == Conversion::kNanosToMicros) {
          return AppendT(n, i64_, [out](int64_t v) {
            int64_t q = v / 1000;
            if (v % 1000 < 0) --q;  // floor, so instants before 1970 round down
            out->Append<int64_t>(q);
            return true;
          });
        }
        return AppendT(n, i64_, [out](int64_t v) { return out->Append<int64_t>(v), true; });
      case Type::kFloat:
        return AppendT(n, f32_, [out](float v) { return out->Append<float>(v), true; });
      case Type::kDouble:
        return AppendT(n, f64_, [out](double v) { return out->Append<double>(v), true; });
      case Type::kByteArray:
      case Type::kFixedLenByteArray:
        if (conv == Conversion::kDecimal) {
          return AppendT(n, views_, [out](std::string_view v) {
            if (v.size() > 16) return false;
            out->Append<Int128>(BigEndianToInt128(v));
            return true;
          });
        }
        return AppendT(n, views_, [out](std::string_view v) {
          // Column offsets are 32-bit.
          if (out->bytes().size() + v.size() > std::numeric_limits<uint32_t>::max()) return false;
          out->AppendBytes(v);
          return true;
        });
      default:
        return Status::NotImplemented("physical type not supported");
    }
  }

  const ColumnDescriptor& desc_;
  const format::ColumnMetaData& meta_;
  PageDecompressor* decompressor_;
  Column* out_;

  int64_t values_read_ = 0;
  int64_t nulls_read_ = 0;
  std::string page_buf_;
  std::vector<uint8_t> defs_;
  bool has_levels_ = false;
  int64_t non_null_ = 0;
  std::vector<uint32_t> indices_;

  // Decoded values of the current page.
  std::vector<uint8_t> bools_;
  std::vector<int32_t> i32_;
  std::vector<int64_t> i64_;
  std::vector<float> f32_;
  std::vector<double> f64_;
  std::vector<std::string_view> views_;  // into page_buf_ or dict_buf_

  // Dictionary.
  bool have_dict_ = false;
  size_t dict_size_ = 0;
  std::string dict_buf_;
  std::vector<int32_t> dict_i32_;
  std::vector<int64_t> dict_i64_;
  std::vector<float> dict_f32_;
  std::vector<double> dict_f64_;
  std::vector<std::string_view> dict_views_;  // into dict_buf_
};

}  // namespace

Status ReadColumnChunk(std::string_view chunk, int64_t chunk_start, const ColumnDescriptor& desc,
                       const format::ColumnMetaData& meta, PageDecompressor* decompressor,
                       Column* out) {
  ChunkReader reader(desc, meta, decompressor, out);
  return reader.Run(chunk, chunk_start);
}

Status ReadPageHeaders(std::string_view chunk, int64_t chunk_start,
                       std::vector<PageHeaderInfo>* out) {
  size_t pos = 0;
  while (pos < chunk.size()) {
    PageHeaderInfo info;
    info.offset = chunk_start + static_cast<int64_t>(pos);
    FLOE_ASSIGN_OR_RAISE(size_t len, format::DecodePageHeader(chunk.substr(pos), &info.header));
    pos += len;
    if (info.header.compressed_page_size < 0 ||
        static_cast<size_t>(info.header.compressed_page_size) > chunk.size() - pos) {
      return Corrupt("page runs past the end of the column chunk");
    }
    pos += static_cast<size_t>(info.header.compressed_page_size);
    out->push_back(std::move(info));
  }
  return Status::OK();
}

}  // namespace floe::parquet
