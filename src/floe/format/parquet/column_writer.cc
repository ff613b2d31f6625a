#include "floe/format/parquet/column_writer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "floe/format/parquet/compression.h"
#include "floe/format/parquet/encoding.h"
#include "floe/io/file.h"

namespace floe::parquet {

namespace {

using format::Encoding;

// Hard cap on dictionary entries, whatever the byte limit: indices stay <= 20 bits wide.
constexpr size_t kMaxDictEntries = size_t{1} << 20;
constexpr size_t kMaxMiniBatchRows = 4096;

// The physical representations a column writer handles.
enum class Kind { kBool, kInt32, kInt64, kFloat, kDouble, kBytes, kFlba };

template <Kind K>
struct KindTraits;
template <>
struct KindTraits<Kind::kBool> {
  using T = uint8_t;
};
template <>
struct KindTraits<Kind::kInt32> {
  using T = int32_t;
};
template <>
struct KindTraits<Kind::kInt64> {
  using T = int64_t;
};
template <>
struct KindTraits<Kind::kFloat> {
  using T = float;
};
template <>
struct KindTraits<Kind::kDouble> {
  using T = double;
};
template <>
struct KindTraits<Kind::kBytes> {
  using T = std::string_view;
};
template <>
struct KindTraits<Kind::kFlba> {
  using T = Int128;  // decimal unscaled value, written big-endian in type_length bytes
};

inline void PutBigEndian(Int128 v, int width, char* p) {
  for (int i = width - 1; i >= 0; --i) {
    p[i] = static_cast<char>(static_cast<uint8_t>(v & 0xff));
    v >>= 8;  // arithmetic: keeps the sign for the high bytes
  }
}

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
// 64x64 -> 128 multiply folded to 64 bits (the wyhash "mum" mix).
inline uint64_t Mum(uint64_t a, uint64_t b) {
  unsigned __int128 m = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
}

// Dictionary hash of a byte string: inline, branch-light and without a variable-length
// memcpy for the short strings that dominate dictionary columns (names, codes, ids).
// Only used within one process (never persisted).
inline uint64_t HashString(const char* p, size_t n) {
  constexpr uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL,
                     k2 = 0x8ebc6af09c88c6e3ULL;
  uint64_t a, b;
  if (n <= 16) {
    if (n >= 8) {
      a = Load64(p);
      b = Load64(p + n - 8);
    } else if (n >= 4) {
      a = Load32(p);
      b = Load32(p + n - 4);
    } else if (n > 0) {
      a = (static_cast<uint64_t>(static_cast<uint8_t>(p[0])) << 16) |
          (static_cast<uint64_t>(static_cast<uint8_t>(p[n >> 1])) << 8) |
          static_cast<uint8_t>(p[n - 1]);
      b = 0;
    } else {
      a = b = 0;
    }
  } else {
    uint64_t h = k0 ^ n;
    size_t i = 0;
    for (; i + 16 < n; i += 16) h = Mum(Load64(p + i) ^ k1, Load64(p + i + 8) ^ h);
    a = Load64(p + n - 16) ^ h;
    b = Load64(p + n - 8);
  }
  return Mum(k1 ^ n, Mum(a ^ k1, b ^ k2));
}

// Byte-string equality without a memcmp call for short strings (dictionary probes).
inline bool SameBytes(std::string_view a, std::string_view b) {
  size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n >= 8 && n <= 16) {
    return ((Load64(p) ^ Load64(q)) | (Load64(p + n - 8) ^ Load64(q + n - 8))) == 0;
  }
  if (n >= 4 && n < 8) {
    return ((Load32(p) ^ Load32(q)) | (Load32(p + n - 4) ^ Load32(q + n - 4))) == 0;
  }
  if (n < 4) {
    for (size_t i = 0; i < n; ++i) {
      if (p[i] != q[i]) return false;
    }
    return true;
  }
  return std::memcmp(p, q, n) == 0;
}

template <Kind K>
class TypedColumnWriter final : public ColumnWriter {
 public:
  using T = typename KindTraits<K>::T;
  static constexpr bool kIsFloat = K == Kind::kFloat || K == Kind::kDouble;
  static constexpr bool kDictCapable = K != Kind::kBool;

  TypedColumnWriter(const ColumnDescriptor& d, const WriterOptions& o, PageCompressor* compressor)
      : desc_(d),
        options_(o),
        compressor_(compressor),
        max_def_(d.max_definition_level),
        width_(d.type_length) {
    metrics_.field_id = d.field.field_id;
    ResetChunk();
  }

  Status Write(const Column& column, size_t offset, size_t length) override {
    if (length == 0) return Status::OK();
    if (max_def_ == 0 && column.null_count() != 0) {
      for (size_t i = offset; i < offset + length; ++i) {
        if (column.IsNull(i)) {
          return Status::InvalidArgument("parquet: required column '" + desc_.field.name +
                                         "' holds a null");
        }
      }
    }
    FLOE_RETURN_NOT_OK(Load(column, offset, length));
    nulls_ = column.null_count() != 0 ? column.null_mask().data() : nullptr;
    size_t mini = MiniBatchRows(column, offset, length);
    size_t row = offset, end = offset + length;
    const auto row_limit = static_cast<size_t>(options_.page_row_limit);
    while (row < end) {
      size_t stop = std::min({end, row + mini, row + (row_limit - page_rows_)});
      size_t done = stop;
      if constexpr (kDictCapable) {
        done = dict_mode_ ? EncodeDict(row, stop) : EncodePlain(row, stop);
      } else {
        EncodePlain(row, stop);
      }
      AppendLevels(row, done);
      row = done;
      if (done < stop) {
        // The dictionary is full: this page stays dictionary-encoded, the rest of the chunk
        // is PLAIN.
        FLOE_RETURN_NOT_OK(ClosePage());
        dict_mode_ = false;
        continue;
      }
      if (PageEstimate() >= options_.page_size_bytes || page_rows_ >= row_limit) {
        FLOE_RETURN_NOT_OK(ClosePage());
      }
    }
    return Status::OK();
  }

  int64_t EstimatedSize() const override {
    return static_cast<int64_t>(chunk_bytes_) + PageEstimate() +
           (dict_used_ || dict_mode_ ? dict_bytes_ : 0);
  }

  Status FinishChunk(io::WritableFile* file, format::ColumnChunk* chunk) override {
    FLOE_RETURN_NOT_OK(ClosePage());
    const int64_t start = file->size();
    int64_t dict_page_bytes = 0, dict_uncompressed = 0;
    if (dict_used_) {
      body_.clear();
      EncodeDictionaryPage(&body_);
      format::PageHeader h;
      h.type = format::PageType::kDictionaryPage;
      h.dictionary_page_header.emplace();
      h.dictionary_page_header->num_values = static_cast<int32_t>(DictSize());
      h.dictionary_page_header->encoding = Encoding::kPlain;
      std::string page;
      FLOE_RETURN_NOT_OK(BuildPage(&h, &page, &dict_uncompressed));
      dict_page_bytes = static_cast<int64_t>(page.size());
      FLOE_RETURN_NOT_OK(file->Append(page));
    }
    for (const std::string& page : pages_) FLOE_RETURN_NOT_OK(file->Append(page));

    format::ColumnMetaData m;
    m.type = desc_.physical_type;
    // Sorted, as other writers list them; RLE is the definition-level encoding every page names.
    if (plain_used_ || dict_used_) m.encodings.push_back(Encoding::kPlain);
    m.encodings.push_back(Encoding::kRle);
    if (dict_used_) m.encodings.push_back(Encoding::kRleDictionary);
    m.path_in_schema = desc_.path;
    m.codec = ToCodec(compressor_->compression());
    m.num_values = chunk_values_;
    m.total_uncompressed_size = chunk_uncompressed_ + dict_uncompressed;
    m.total_compressed_size = static_cast<int64_t>(chunk_bytes_) + dict_page_bytes;
    m.data_page_offset = start + dict_page_bytes;
    if (dict_used_) m.dictionary_page_offset = start;
    format::Statistics& s = m.statistics.emplace();
    s.null_count = chunk_nulls_;
    if constexpr (kIsFloat) s.nan_count = chunk_nans_;
    bool has_minmax = HasMinMax();
    if (has_minmax) {
      s.min_value = EncodeStat(chunk_min_, /*is_min=*/true);
      s.max_value = EncodeStat(chunk_max_, /*is_min=*/false);
    }
    chunk->file_offset = start;
    chunk->meta_data = std::move(m);

    // Fold the chunk into the file-level metrics.
    metrics_.value_count += chunk_values_;
    metrics_.null_count += chunk_nulls_;
    metrics_.nan_count += chunk_nans_;
    metrics_.compressed_size += chunk->meta_data->total_compressed_size;
    if (has_minmax) {
      if (!file_has_minmax_ || Less(chunk_min_, file_min_)) file_min_ = chunk_min_;
      if (!file_has_minmax_ || Less(file_max_, chunk_max_)) file_max_ = chunk_max_;
      file_has_minmax_ = true;
      metrics_.min = EncodeStat(file_min_, true);
      metrics_.max = EncodeStat(file_max_, false);
    }
    ResetChunk();
    return Status::OK();
  }

  const ColumnMetrics& metrics() const override { return metrics_; }

 private:
  using StatT = std::conditional_t<K == Kind::kBytes, std::string, T>;

  // ---- input ---------------------------------------------------------------------------------

  // Points values_ at the rows to write (values_[0] is row `offset`), converting decimals.
  Status Load(const Column& column, size_t offset, size_t length) {
    offset_ = offset;
    if constexpr (K == Kind::kBytes) {
      // Byte arrays are read straight from the column's offsets (no view per row).
      offsets_ = column.offsets().data();
      bytes_ = column.bytes().data();
    } else if constexpr (K == Kind::kFlba) {
      values_ = column.values<Int128>() + offset;
      if (width_ < 16) {
        const Int128 limit = static_cast<Int128>(1) << (8 * width_ - 1);
        for (size_t i = 0; i < length; ++i) {
          if (values_[i] >= limit || values_[i] < -limit) return DecimalRange();
        }
      }
    } else if constexpr (K == Kind::kInt32 || K == Kind::kInt64) {
      if (desc_.conversion == Conversion::kDecimal) {
        const Int128* src = column.values<Int128>() + offset;
        scratch_.resize(length);
        for (size_t i = 0; i < length; ++i) {
          if (src[i] > std::numeric_limits<T>::max() || src[i] < std::numeric_limits<T>::min()) {
            return DecimalRange();
          }
          scratch_[i] = static_cast<T>(src[i]);
        }
        values_ = scratch_.data();
      } else {
        values_ = column.values<T>() + offset;
      }
    } else {
      values_ = column.values<T>() + offset;
    }
    return Status::OK();
  }

  Status DecimalRange() const {
    return Status::InvalidArgument("parquet: column '" + desc_.field.name +
                                   "' holds a decimal that does not fit " +
                                   desc_.field.type.ToString());
  }

  // Rows per encoding step: small enough that pages land near page_size_bytes.
  size_t MiniBatchRows(const Column& column, size_t offset, size_t length) const {
    int64_t per_value = 0;
    if constexpr (K == Kind::kBytes) {
      const auto& offs = column.offsets();
      per_value = 4 + static_cast<int64_t>(offs[offset + length] - offs[offset]) /
                          static_cast<int64_t>(length);
    } else if constexpr (K == Kind::kFlba) {
      per_value = width_;
    } else if constexpr (K == Kind::kBool) {
      per_value = 1;  // bits, really; pages of booleans are cheap to overshoot
    } else {
      per_value = sizeof(T);
    }
    int64_t rows = options_.page_size_bytes / std::max<int64_t>(per_value, 1);
    return static_cast<size_t>(std::clamp<int64_t>(rows, 1, kMaxMiniBatchRows));
  }

  bool IsNull(size_t row) const { return nulls_ != nullptr && nulls_[row] != 0; }

  // The value of input row `row` (an index into the column, not into the slice).
  T Value(size_t row) const {
    if constexpr (K == Kind::kBytes) {
      return std::string_view(bytes_ + offsets_[row], offsets_[row + 1] - offsets_[row]);
    } else {
      return values_[row - offset_];
    }
  }

  void AppendLevels(size_t begin, size_t end) {
    size_t n = end - begin;
    size_t nulls = 0;
    if (nulls_ != nullptr) {
      for (size_t i = begin; i < end; ++i) nulls += nulls_[i];
    }
    if (max_def_ > 0) {
      if (nulls == 0) {
        def_levels_.insert(def_levels_.end(), n, 1);
      } else {
        size_t at = def_levels_.size();
        def_levels_.resize(at + n);
        uint8_t* d = def_levels_.data() + at;
        for (size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(1 - nulls_[begin + i]);
      }
    }
    page_rows_ += n;
    chunk_nulls_ += static_cast<int64_t>(nulls);
  }

  // ---- statistics ----------------------------------------------------------------------------

  static bool Less(const T& a, const T& b) { return a < b; }
  static bool Less(const std::string& a, const std::string& b) requires(K == Kind::kBytes) {
    return std::string_view(a) < std::string_view(b);  // char_traits<char>: unsigned bytes
  }

  bool HasMinMax() const {
    if constexpr (K == Kind::kBytes) return bytes_has_minmax_;
    return chunk_values_ - chunk_nulls_ - chunk_nans_ > 0;
  }

  void ResetStats() {
    if constexpr (K == Kind::kBytes) {
      chunk_min_.clear();
      chunk_max_.clear();
      bytes_has_minmax_ = false;
    } else if constexpr (kIsFloat) {
      chunk_min_ = std::numeric_limits<T>::infinity();
      chunk_max_ = -std::numeric_limits<T>::infinity();
    } else if constexpr (K == Kind::kFlba) {
      chunk_min_ = ~(static_cast<Int128>(1) << 127);  // INT128_MAX
      chunk_max_ = static_cast<Int128>(1) << 127;     // INT128_MIN
    } else {
      chunk_min_ = std::numeric_limits<T>::max();
      chunk_max_ = std::numeric_limits<T>::lowest();
    }
  }

  // Byte-array statistics are updated one value at a time (they own copies).
  void ObserveBytes(std::string_view v) {
    // Most values lie strictly between min and max by their first byte: no compare needed.
    if (bytes_has_minmax_ && !v.empty() && !chunk_min_.empty()) {
      auto c = static_cast<uint8_t>(v[0]);
      if (c > static_cast<uint8_t>(chunk_min_[0]) && c < static_cast<uint8_t>(chunk_max_[0]))
        return;
    }
    if (!bytes_has_minmax_) {
      chunk_min_.assign(v);
      chunk_max_.assign(v);
      bytes_has_minmax_ = true;
    } else if (v < std::string_view(chunk_min_)) {
      chunk_min_.assign(v);
    } else if (std::string_view(chunk_max_) < v) {
      chunk_max_.assign(v);
    }
  }

  std::string EncodeStat(const StatT& v, bool is_min) const {
    if constexpr (K == Kind::kBytes) {
      return v;
    } else if constexpr (K == Kind::kFlba) {
      std::string out(static_cast<size_t>(width_), '\0');
      PutBigEndian(v, width_, out.data());
      return out;
    } else {
      T x = v;
      if constexpr (kIsFloat) {
        // parquet.thrift: a zero min is written as -0.0, a zero max as +0.0.
        if (x == 0) x = is_min ? -T(0) : T(0);
      }
      return std::string(reinterpret_cast<const char*>(&x), sizeof(T));
    }
  }

  // ---- PLAIN ---------------------------------------------------------------------------------

  size_t EncodePlain(size_t begin, size_t end) {
    plain_used_ = true;
    if constexpr (K == Kind::kBool) {
      const T* v = values_ - offset_;  // indexable by row
      uint8_t mn = chunk_min_, mx = chunk_max_;
      for (size_t i = begin; i < end; ++i) {
        if (IsNull(i)) continue;
        bool_values_.push_back(v[i]);
        mn = std::min(mn, v[i]);
        mx = std::max(mx, v[i]);
      }
      chunk_min_ = mn;
      chunk_max_ = mx;
    } else if constexpr (K == Kind::kBytes) {
      plain_.reserve(plain_.size() + offsets_[end] - offsets_[begin] + 4 * (end - begin));
      for (size_t i = begin; i < end; ++i) {
        if (IsNull(i)) continue;
        std::string_view x = Value(i);
        AppendLE32(static_cast<uint32_t>(x.size()), &plain_);
        plain_.append(x);
        ObserveBytes(x);
      }
    } else {
      const T* v = values_ - offset_;  // indexable by row
      constexpr size_t kW = K == Kind::kFlba ? 0 : sizeof(T);
      const size_t w = K == Kind::kFlba ? static_cast<size_t>(width_) : kW;
      size_t at = plain_.size();
      plain_.resize(at + (end - begin) * w);
      char* p = plain_.data() + at;
      T mn = chunk_min_, mx = chunk_max_;
      int64_t nans = 0;
      if (nulls_ == nullptr && K != Kind::kFlba) {
        std::memcpy(p, v + begin, (end - begin) * w);
        p += (end - begin) * w;
        for (size_t i = begin; i < end; ++i) {
          mn = std::min(mn, v[i]);  // NaN compares false, so it never becomes min or max
          mx = std::max(mx, v[i]);
          if constexpr (kIsFloat) nans += std::isnan(v[i]);
        }
      } else {
        for (size_t i = begin; i < end; ++i) {
          if (IsNull(i)) continue;
          if constexpr (K == Kind::kFlba) {
            PutBigEndian(v[i], width_, p);
          } else {
            std::memcpy(p, &v[i], kW);
          }
          p += w;
          mn = std::min(mn, v[i]);
          mx = std::max(mx, v[i]);
          if constexpr (kIsFloat) nans += std::isnan(v[i]);
        }
      }
      plain_.resize(static_cast<size_t>(p - plain_.data()));
      chunk_min_ = mn;
      chunk_max_ = mx;
      chunk_nans_ += nans;
    }
    return end;
  }

  // ---- dictionary ----------------------------------------------------------------------------

  size_t DictSize() const {
    if constexpr (K == Kind::kBytes) {
      return dict_offsets_.size() - 1;
    } else {
      return dict_values_.size();
    }
  }

  static uint64_t Hash(const T& v) {
    if constexpr (K == Kind::kBytes) {
      return HashString(v.data(), v.size());
    } else if constexpr (K == Kind::kFlba) {
      auto u = static_cast<unsigned __int128>(v);
      return HashInt(static_cast<uint64_t>(u) ^ HashInt(static_cast<uint64_t>(u >> 64)));
    } else if constexpr (K == Kind::kFloat) {
      return HashInt(std::bit_cast<uint32_t>(v));
    } else if constexpr (K == Kind::kDouble) {
      return HashInt(std::bit_cast<uint64_t>(v));
    } else {
      return HashInt(static_cast<uint64_t>(v));
    }
  }

  // Bitwise equality: -0.0 and 0.0 are distinct entries, equal NaNs share one.
  static bool Same(const T& a, const T& b) {
    if constexpr (K == Kind::kFloat) {
      return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
    } else if constexpr (K == Kind::kDouble) {
      return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
    } else if constexpr (K == Kind::kBytes) {
      return SameBytes(a, b);
    } else {
      return a == b;
    }
  }

  int64_t PlainSize(const T& v) const {
    if constexpr (K == Kind::kBytes) {
      return 4 + static_cast<int64_t>(v.size());
    } else if constexpr (K == Kind::kFlba) {
      return width_;
    } else {
      return sizeof(T);
    }
  }

  void GrowTable() {
    size_t cap = std::max<size_t>(slots_.size() * 2, 1024);
    std::vector<uint64_t> slots(cap, 0);
    size_t mask = cap - 1;
    for (uint64_t s : slots_) {
      if (s == 0) continue;
      size_t slot = static_cast<size_t>(s >> 32) & mask;
      // The high half stores 32 bits of the hash, enough to re-place the entry while capacity
      // stays <= 2^32 (kMaxDictEntries keeps it far below).
      while (slots[slot] != 0) slot = (slot + 1) & mask;
      slots[slot] = s;
    }
    slots_.swap(slots);
    mask_ = mask;
  }

  // Encodes rows [begin, end) as dictionary indices. Returns the row at which the dictionary
  // would pass its limits (that row is not encoded), or `end`.
  size_t EncodeDict(size_t begin, size_t end) {
    int64_t nans = 0;
    size_t i = begin;
    for (; i < end; ++i) {
      if (IsNull(i)) continue;
      const T x = Value(i);
      uint64_t h = Hash(x);
      uint32_t h32 = static_cast<uint32_t>(h);
      size_t slot = h32 & mask_;
      uint32_t index;
      while (true) {
        uint64_t s = slots_[slot];
        if (s == 0) {
          size_t size = DictSize();
          if ((size > 0 && dict_bytes_ + PlainSize(x) > options_.dictionary_page_size_limit) ||
              size >= kMaxDictEntries) {
            chunk_nans_ += nans;
            return i;
          }
          index = static_cast<uint32_t>(size);
          slots_[slot] = (static_cast<uint64_t>(h32) << 32) | (index + 1);
          dict_bytes_ += PlainSize(x);
          if constexpr (K == Kind::kBytes) {
            dict_arena_.append(x);
            dict_offsets_.push_back(static_cast<uint32_t>(dict_arena_.size()));
            ObserveBytes(x);
          } else {
            dict_values_.push_back(x);
            // Statistics only need the distinct values: update them on insertion.
            chunk_min_ = std::min(chunk_min_, x);
            chunk_max_ = std::max(chunk_max_, x);
          }
          if ((size + 1) * 2 > slots_.size()) GrowTable();
          break;
        }
        if (static_cast<uint32_t>(s >> 32) == h32 &&
            Same(DictAt(static_cast<uint32_t>(s) - 1), x)) {
          index = static_cast<uint32_t>(s) - 1;
          break;
        }
        slot = (slot + 1) & mask_;
      }
      if constexpr (kIsFloat) nans += std::isnan(x);
      indices_.push_back(index);
    }
    chunk_nans_ += nans;
    return end;
  }

  T DictAt(uint32_t i) const {
    if constexpr (K == Kind::kBytes) {
      return std::string_view(dict_arena_.data() + dict_offsets_[i],
                              dict_offsets_[i + 1] - dict_offsets_[i]);
    } else {
      return dict_values_[i];
    }
  }

  void EncodeDictionaryPage(std::string* out) const {
    if constexpr (K == Kind::kBytes) {
      size_t n = DictSize();
      out->reserve(dict_arena_.size() + 4 * n);
      for (size_t i = 0; i < n; ++i) {
        std::string_view s = DictAt(static_cast<uint32_t>(i));
        AppendLE32(static_cast<uint32_t>(s.size()), out);
        out->append(s);
      }
    } else if constexpr (K == Kind::kFlba) {
      size_t at = out->size();
      out->resize(at + dict_values_.size() * width_);
      for (size_t i = 0; i < dict_values_.size(); ++i) {
        PutBigEndian(dict_values_[i], width_, out->data() + at + i * width_);
      }
    } else if constexpr (kDictCapable) {
      out->append(reinterpret_cast<const char*>(dict_values_.data()),
                  dict_values_.size() * sizeof(T));
    }
  }

  // ---- pages ---------------------------------------------------------------------------------

  int64_t PageEstimate() const {
    int64_t levels = static_cast<int64_t>(def_levels_.size()) / 8;
    if (K == Kind::kBool) return levels + static_cast<int64_t>(bool_values_.size()) / 8;
    if (!indices_.empty()) {
      int bw = std::max(1, BitWidth(DictSize()));
      return levels + static_cast<int64_t>(indices_.size()) * bw / 8;
    }
    return levels + static_cast<int64_t>(plain_.size());
  }

  // Compresses body_ into a page with header `h` (sizes and CRC filled in) and writes it to
  // *out. *uncompressed gets header + uncompressed body size.
  Status BuildPage(format::PageHeader* h, std::string* out, int64_t* uncompressed) {
    if (body_.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
      return Status::InvalidArgument("parquet: page of column '" + desc_.field.name +
                                     "' exceeds 2 GiB");
    }
    std::string_view data = body_;
    if (compressor_->compression() != Compression::kUncompressed) {
      FLOE_RETURN_NOT_OK(compressor_->Compress(body_, &compressed_));
      data = compressed_;
    }
    h->uncompressed_page_size = static_cast<int32_t>(body_.size());
    h->compressed_page_size = static_cast<int32_t>(data.size());
    h->crc = Crc32(data);
    size_t at = out->size();
    format::Encode(*h, out);
    size_t header = out->size() - at;
    out->append(data);
    *uncompressed = static_cast<int64_t>(header + body_.size());
    return Status::OK();
  }

  Status ClosePage() {
    if (page_rows_ == 0) return Status::OK();
    body_.clear();
    if (max_def_ > 0) {
      levels_.clear();
      EncodeRleHybrid(def_levels_.data(), def_levels_.size(), 1, &levels_);
      AppendLE32(static_cast<uint32_t>(levels_.size()), &body_);
      body_.append(levels_);
    }
    Encoding encoding = Encoding::kPlain;
    if constexpr (K == Kind::kBool) {
      PackBits(bool_values_.data(), bool_values_.size(), &body_);
    } else {
      if (dict_mode_) {
        const size_t values_at = body_.size();
        int bw = std::max(1, BitWidth(DictSize() > 0 ? DictSize() - 1 : 0));
        body_.push_back(static_cast<char>(bw));
        EncodeRleHybrid(indices_.data(), indices_.size(), bw, &body_);
        if (chunk_values_ == 0 && !DictionaryPays(body_.size() - values_at)) {
          body_.resize(values_at);
          FallBackToPlain();
        }
      }
      if (dict_mode_) {
        encoding = Encoding::kRleDictionary;
        dict_used_ = true;
      } else {
        body_.append(plain_);
      }
    }
    format::PageHeader h;
    h.type = format::PageType::kDataPage;
    auto& dp = h.data_page_header.emplace();
    dp.num_values = static_cast<int32_t>(page_rows_);
    dp.encoding = encoding;
    dp.definition_level_encoding = Encoding::kRle;
    dp.repetition_level_encoding = Encoding::kRle;
    int64_t uncompressed = 0;
    std::string& page = pages_.emplace_back();
    FLOE_RETURN_NOT_OK(BuildPage(&h, &page, &uncompressed));
    chunk_bytes_ += page.size();
    chunk_uncompressed_ += uncompressed;
    chunk_values_ += static_cast<int64_t>(page_rows_);
    page_rows_ = 0;
    def_levels_.clear();
    plain_.clear();
    indices_.clear();
    bool_values_.clear();
    return Status::OK();
  }

  // parquet-java's rule (its FallbackValuesWriter): the chunk's first page decides whether the
  // dictionary pays. Unless its indices and the dictionary together are smaller than the
  // page's values written PLAIN, the whole chunk is PLAIN: a column of mostly distinct values
  // (a sequence, a timestamp) then never grows a dictionary it would drop at its limit.
  bool DictionaryPays(size_t encoded_indices) const {
    int64_t plain = 0;
    if constexpr (K == Kind::kBytes) {
      for (uint32_t i : indices_) plain += PlainSize(DictAt(i));
    } else {
      plain = static_cast<int64_t>(indices_.size()) * PlainSize(T{});
    }
    return static_cast<int64_t>(encoded_indices) + dict_bytes_ < plain;
  }

  // Rewrites the open page's dictionary indices as PLAIN values and drops the dictionary; the
  // chunk's statistics already hold every value the dictionary saw.
  void FallBackToPlain() {
    for (uint32_t i : indices_) {
      const T x = DictAt(i);
      if constexpr (K == Kind::kBytes) {
        AppendLE32(static_cast<uint32_t>(x.size()), &plain_);
        plain_.append(x);
      } else if constexpr (K == Kind::kFlba) {
        size_t at = plain_.size();
        plain_.resize(at + static_cast<size_t>(width_));
        PutBigEndian(x, width_, plain_.data() + at);
      } else {
        plain_.append(reinterpret_cast<const char*>(&x), sizeof(T));
      }
    }
    indices_.clear();
    dict_mode_ = false;
    plain_used_ = true;
    ClearDictionary();
  }

  // Empties the dictionary's values; the hash table is cleared with the next chunk.
  void ClearDictionary() {
    dict_bytes_ = 0;
    if constexpr (K == Kind::kBytes) {
      dict_arena_.clear();
      dict_offsets_.assign(1, 0);
    } else {
      dict_values_.clear();
    }
  }

  void ResetChunk() {
    pages_.clear();
    chunk_bytes_ = 0;
    chunk_values_ = chunk_nulls_ = chunk_nans_ = chunk_uncompressed_ = 0;
    plain_used_ = dict_used_ = false;
    ResetStats();
    dict_mode_ =
        kDictCapable && options_.dictionary_enabled && options_.dictionary_page_size_limit > 0;
    ClearDictionary();
    if (dict_mode_) {
      if (slots_.empty()) {
        GrowTable();
      } else {
        std::fill(slots_.begin(), slots_.end(), 0);
      }
    }
  }

  const ColumnDescriptor desc_;
  const WriterOptions& options_;
  PageCompressor* compressor_;
  const int max_def_;
  const int width_;  // FLBA bytes

  // Current input slice.
  const T* values_ = nullptr;
  size_t offset_ = 0;
  const uint8_t* nulls_ = nullptr;
  std::vector<T> scratch_;
  const uint32_t* offsets_ = nullptr;  // byte arrays: the column's offsets and bytes
  const char* bytes_ = nullptr;

  // Open page.
  size_t page_rows_ = 0;
  std::vector<uint8_t> def_levels_;
  std::string plain_;
  std::vector<uint8_t> bool_values_;
  std::vector<uint32_t> indices_;

  // Dictionary of the current chunk.
  bool dict_mode_ = false;
  int64_t dict_bytes_ = 0;
  std::vector<T> dict_values_;  // fixed-width kinds
  std::string dict_arena_;      // byte arrays
  std::vector<uint32_t> dict_offsets_;
  std::vector<uint64_t> slots_;  // (32 hash bits << 32) | (index + 1); 0 = empty
  size_t mask_ = 0;

  // Current chunk.
  // Closed pages, header + compressed body each: one string per page, so a growing chunk is
  // never copied to a larger buffer.
  std::vector<std::string> pages_;
  size_t chunk_bytes_ = 0;
  int64_t chunk_values_ = 0, chunk_nulls_ = 0, chunk_nans_ = 0, chunk_uncompressed_ = 0;
  bool plain_used_ = false, dict_used_ = false;
  StatT chunk_min_{}, chunk_max_{};
  bool bytes_has_minmax_ = false;

  // Scratch buffers reused across pages.
  std::string body_, levels_, compressed_;

  // File level.
  ColumnMetrics metrics_;
  StatT file_min_{}, file_max_{};
  bool file_has_minmax_ = false;
};

}  // namespace

Result<std::unique_ptr<ColumnWriter>> MakeColumnWriter(const ColumnDescriptor& d,
                                                       const WriterOptions& o,
                                                       PageCompressor* compressor) {
  switch (d.physical_type) {
    case format::Type::kBoolean:
      return std::unique_ptr<ColumnWriter>(
          std::make_unique<TypedColumnWriter<Kind::kBool>>(d, o, compressor));
    case format::Type::kInt32:
      return std::unique_ptr<ColumnWriter>(
          std::make_unique<TypedColumnWriter<Kind::kInt32>>(d, o, compressor));
    case format::Type::kInt64:
      return std::unique_ptr<ColumnWriter>(
          std::make_unique<TypedColumnWriter<Kind::kInt64>>(d, o, compressor));
    case format::Type::kFloat:
      return std::unique_ptr<ColumnWriter>(
          std::make_unique<TypedColumnWriter<Kind::kFloat>>(d, o, compressor));
    case format::Type::kDouble:
      return std::unique_ptr<ColumnWriter>(
          std::make_unique<TypedColumnWriter<Kind::kDouble>>(d, o, compressor));
    case format::Type::kByteArray:
      return std::unique_ptr<ColumnWriter>(
          std::make_unique<TypedColumnWriter<Kind::kBytes>>(d, o, compressor));
    case format::Type::kFixedLenByteArray:
      return std::unique_ptr<ColumnWriter>(
          std::make_unique<TypedColumnWriter<Kind::kFlba>>(d, o, compressor));
    default:
      return Status::InvalidArgument("parquet: cannot write physical type of column '" +
                                     d.field.name + "'");
  }
}

}  // namespace floe::parquet
