#include "floe/format/parquet/file_reader.h"

#include <cstring>
#include <functional>

#include "floe/format/parquet/column_reader.h"
#include "floe/format/parquet/compression.h"
#include "floe/format/parquet/encoding.h"
#include "floe/format/parquet/metadata.h"
#include "floe/format/parquet/schema.h"

namespace floe::parquet {

namespace {

constexpr std::string_view kMagic = "PAR1";

std::string TypeName(format::Type t) {
  switch (t) {
    case format::Type::kBoolean:
      return "BOOLEAN";
    case format::Type::kInt32:
      return "INT32";
    case format::Type::kInt64:
      return "INT64";
    case format::Type::kInt96:
      return "INT96";
    case format::Type::kFloat:
      return "FLOAT";
    case format::Type::kDouble:
      return "DOUBLE";
    case format::Type::kByteArray:
      return "BYTE_ARRAY";
    case format::Type::kFixedLenByteArray:
      return "FIXED_LEN_BYTE_ARRAY";
  }
  return "type " + std::to_string(static_cast<int>(t));
}

std::string EncodingName(format::Encoding e) {
  switch (e) {
    case format::Encoding::kPlain:
      return "PLAIN";
    case format::Encoding::kPlainDictionary:
      return "PLAIN_DICTIONARY";
    case format::Encoding::kRle:
      return "RLE";
    case format::Encoding::kBitPacked:
      return "BIT_PACKED";
    case format::Encoding::kDeltaBinaryPacked:
      return "DELTA_BINARY_PACKED";
    case format::Encoding::kDeltaLengthByteArray:
      return "DELTA_LENGTH_BYTE_ARRAY";
    case format::Encoding::kDeltaByteArray:
      return "DELTA_BYTE_ARRAY";
    case format::Encoding::kRleDictionary:
      return "RLE_DICTIONARY";
    case format::Encoding::kByteStreamSplit:
      return "BYTE_STREAM_SPLIT";
  }
  return "encoding " + std::to_string(static_cast<int>(e));
}

std::string CodecName(format::CompressionCodec c) {
  switch (c) {
    case format::CompressionCodec::kUncompressed:
      return "uncompressed";
    case format::CompressionCodec::kSnappy:
      return "snappy";
    case format::CompressionCodec::kZstd:
      return "zstd";
    default:
      return "codec " + std::to_string(static_cast<int>(c));
  }
}

}  // namespace

struct FileReader::Impl {
  io::FileIO file_io;
  std::string name;
  bool in_memory = false;
  std::string contents;  // whole file when in_memory
  int64_t file_size = 0;
  int64_t data_end = 0;  // first byte of the footer
  format::FileMetaData metadata;
  std::shared_ptr<const BatchSchema> schema;
  std::vector<ColumnDescriptor> columns;
  std::vector<std::pair<std::string, std::string>> key_value_metadata;
  std::string created_by;
  std::vector<int64_t> chunk_starts;  // per row group * column
  PageDecompressor decompressor;
  std::string scratch;  // chunk bytes read from disk

  Status Corrupt(const std::string& what) const {
    return Status::Corruption("parquet file '" + name + "': " + what);
  }

  // floe's own files carry a CRC-32 of the footer encoded without the checksum entry; the
  // encoding is canonical, so re-encoding what was decoded must reproduce it.
  Status VerifyFooterChecksum() const {
    const auto& kvs = metadata.key_value_metadata;
    if (kvs.empty() || kvs.back().key != format::kFooterChecksumKey) return Status::OK();
    format::FileMetaData copy = metadata;
    copy.key_value_metadata.pop_back();
    std::string bytes;
    format::Encode(copy, &bytes);
    if (kvs.back().value != std::to_string(Crc32(bytes))) {
      return Corrupt("footer checksum mismatch");
    }
    return Status::OK();
  }

  // Parses and validates the footer: everything ReadRowGroup relies on is checked here.
  Status Init(std::string_view head, std::string_view tail8,
              const std::function<Result<std::string>(uint64_t, uint64_t)>& read) {
    if (file_size < 12)
      return Corrupt("file of " + std::to_string(file_size) + " bytes is too short");
    if (head != kMagic) return Corrupt("bad magic at the start of the file");
    if (tail8.substr(4) != kMagic) return Corrupt("bad magic at the end of the file");
    uint32_t footer_len;
    std::memcpy(&footer_len, tail8.data(), 4);
    if (footer_len > static_cast<uint64_t>(file_size) - 12) {
      return Corrupt("footer length " + std::to_string(footer_len) + " exceeds the file");
    }
    data_end = file_size - 8 - footer_len;
    FLOE_ASSIGN_OR_RAISE(std::string footer, read(static_cast<uint64_t>(data_end), footer_len));
    if (Status st = format::Decode(footer, &metadata); !st.ok()) {
      return Corrupt("bad footer: " + st.message());
    }
    FLOE_RETURN_NOT_OK(VerifyFooterChecksum());
    BatchSchema s;
    if (Status st = FromParquetSchema(metadata.schema, &s, &columns); !st.ok()) {
      return Status(st.code(), "parquet file '" + name + "': " + st.message());
    }
    schema = std::make_shared<const BatchSchema>(std::move(s));
    for (const auto& kv : metadata.key_value_metadata) {
      if (kv.key == format::kFooterChecksumKey) continue;
      key_value_metadata.emplace_back(kv.key, kv.value.value_or(""));
    }
    created_by = metadata.created_by.value_or("");
    if (metadata.num_rows < 0) return Corrupt("negative row count");
    int64_t total = 0;
    for (size_t g = 0; g < metadata.row_groups.size(); ++g) {
      const format::RowGroup& rg = metadata.row_groups[g];
      std::string where = "row group " + std::to_string(g);
      if (rg.num_rows < 0 || __builtin_add_overflow(total, rg.num_rows, &total)) {
        return Corrupt(where + ": bad row count");
      }
      if (rg.columns.size() != columns.size()) {
        return Corrupt(where + " has " + std::to_string(rg.columns.size()) +
                       " columns, schema has " + std::to_string(columns.size()));
      }
      for (size_t c = 0; c < columns.size(); ++c) {
        const format::ColumnChunk& cc = rg.columns[c];
        std::string cwhere = where + ", column '" + columns[c].field.name + "'";
        if (cc.file_path)
          return Status::NotImplemented(Corrupt(cwhere + ": external column chunk").message());
        if (!cc.meta_data) return Corrupt(cwhere + ": missing column metadata");
        const format::ColumnMetaData& m = *cc.meta_data;
        if (m.type != columns[c].physical_type) {
          return Corrupt(cwhere + ": physical type " + TypeName(m.type) +
                         " differs from the schema's " + TypeName(columns[c].physical_type));
        }
        if (m.path_in_schema != columns[c].path)
          return Corrupt(cwhere + ": path_in_schema differs");
        if (m.num_values != rg.num_rows) {
          return Corrupt(cwhere + ": " + std::to_string(m.num_values) + " values for " +
                         std::to_string(rg.num_rows) + " rows");
        }
        int64_t start = m.data_page_offset;
        if (m.dictionary_page_offset && *m.dictionary_page_offset > 0) {
          if (*m.dictionary_page_offset > m.data_page_offset) {
            return Corrupt(cwhere + ": dictionary page after the data pages");
          }
          start = *m.dictionary_page_offset;
        }
        if (start < 4 || m.total_compressed_size < 0 || m.total_compressed_size > data_end ||
            start > data_end - m.total_compressed_size) {
          return Corrupt(cwhere + ": column chunk [" + std::to_string(start) + ", +" +
                         std::to_string(m.total_compressed_size) + ") lies outside the data");
        }
        chunk_starts.push_back(start);
      }
    }
    if (total != metadata.num_rows) {
      return Corrupt("row groups hold " + std::to_string(total) + " rows, the footer says " +
                     std::to_string(metadata.num_rows));
    }
    return Status::OK();
  }
};

FileReader::FileReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FileReader::~FileReader() = default;

Result<std::unique_ptr<FileReader>> FileReader::Open(const io::FileIO& file_io,
                                                     const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->file_io = file_io;
  impl->name = path;
  FLOE_ASSIGN_OR_RAISE(uint64_t size, file_io.FileSize(path));
  impl->file_size = static_cast<int64_t>(size);
  if (size < 12) return impl->Corrupt("file of " + std::to_string(size) + " bytes is too short");
  FLOE_ASSIGN_OR_RAISE(std::string head, file_io.ReadFileRange(path, 0, 4));
  FLOE_ASSIGN_OR_RAISE(std::string tail, file_io.ReadFileRange(path, size - 8, 8));
  auto read = [&](uint64_t off, uint64_t len) { return file_io.ReadFileRange(path, off, len); };
  FLOE_RETURN_NOT_OK(impl->Init(head, tail, read));
  return std::make_unique<FileReader>(std::move(impl));
}

Result<std::unique_ptr<FileReader>> FileReader::OpenBuffer(std::string contents, std::string name) {
  auto impl = std::make_unique<Impl>();
  impl->name = std::move(name);
  impl->in_memory = true;
  impl->contents = std::move(contents);
  impl->file_size = static_cast<int64_t>(impl->contents.size());
  if (impl->contents.size() < 12) {
    return impl->Corrupt("file of " + std::to_string(impl->contents.size()) +
                         " bytes is too short");
  }
  std::string_view all = impl->contents;
  auto read = [&](uint64_t off, uint64_t len) -> Result<std::string> {
    return std::string(all.substr(off, len));
  };
  FLOE_RETURN_NOT_OK(impl->Init(all.substr(0, 4), all.substr(all.size() - 8), read));
  return std::make_unique<FileReader>(std::move(impl));
}

const std::shared_ptr<const BatchSchema>& FileReader::schema() const { return impl_->schema; }
int64_t FileReader::num_rows() const { return impl_->metadata.num_rows; }
int FileReader::num_row_groups() const {
  return static_cast<int>(impl_->metadata.row_groups.size());
}
int64_t FileReader::row_group_num_rows(int index) const {
  return impl_->metadata.row_groups[static_cast<size_t>(index)].num_rows;
}
const std::vector<std::pair<std::string, std::string>>& FileReader::key_value_metadata() const {
  return impl_->key_value_metadata;
}
const std::string& FileReader::created_by() const { return impl_->created_by; }
int64_t FileReader::file_size() const { return impl_->file_size; }

Status FileReader::Error(const Status& st) const {
  if (st.ok()) return st;
  const std::string prefix = "parquet file '" + impl_->name + "'";
  if (st.message().rfind(prefix, 0) == 0) return st;
  return Status(st.code(), prefix + ": " + st.message());
}

Result<std::string_view> FileReader::ReadChunkBytes(int row_group, int column, int64_t* start) {
  if (row_group < 0 || row_group >= num_row_groups() || column < 0 ||
      column >= static_cast<int>(impl_->columns.size())) {
    return Status::InvalidArgument("no column chunk " + std::to_string(row_group) + "/" +
                                   std::to_string(column) + " in " + impl_->name);
  }
  const auto& m = *impl_->metadata.row_groups[static_cast<size_t>(row_group)]
                       .columns[static_cast<size_t>(column)]
                       .meta_data;
  *start = impl_->chunk_starts[static_cast<size_t>(row_group) * impl_->columns.size() +
                               static_cast<size_t>(column)];
  // Init checked that [start, start + total_compressed_size) lies within the data section.
  uint64_t len = static_cast<uint64_t>(m.total_compressed_size);
  if (impl_->in_memory) return std::string_view(impl_->contents).substr(*start, len);
  FLOE_ASSIGN_OR_RAISE(impl_->scratch, impl_->file_io.ReadFileRange(
                                           impl_->name, static_cast<uint64_t>(*start), len));
  return std::string_view(impl_->scratch);
}

Status FileReader::ReadChunkInto(int row_group, int column, Column* out) {
  int64_t start = 0;
  FLOE_ASSIGN_OR_RAISE(std::string_view bytes, ReadChunkBytes(row_group, column, &start));
  const auto& m = *impl_->metadata.row_groups[static_cast<size_t>(row_group)]
                       .columns[static_cast<size_t>(column)]
                       .meta_data;
  Status st = ReadColumnChunk(bytes, start, impl_->columns[static_cast<size_t>(column)], m,
                              &impl_->decompressor, out);
  if (!st.ok()) {
    return Error(st.WithContext("row group " + std::to_string(row_group) + ", column '" +
                                impl_->columns[static_cast<size_t>(column)].field.name + "'"));
  }
  return Status::OK();
}

Result<RecordBatch> FileReader::ReadRowGroup(int index) {
  if (index < 0 || index >= num_row_groups()) {
    return Status::InvalidArgument("no row group " + std::to_string(index) + " in " + impl_->name);
  }
  RecordBatch batch(impl_->schema);
  for (size_t c = 0; c < impl_->columns.size(); ++c) {
    FLOE_RETURN_NOT_OK(ReadChunkInto(index, static_cast<int>(c), &batch.mutable_column(c)));
  }
  return batch;
}

Result<RecordBatch> FileReader::ReadAll() {
  RecordBatch batch(impl_->schema);
  for (int g = 0; g < num_row_groups(); ++g) {
    for (size_t c = 0; c < impl_->columns.size(); ++c) {
      FLOE_RETURN_NOT_OK(ReadChunkInto(g, static_cast<int>(c), &batch.mutable_column(c)));
    }
  }
  return batch;
}

Result<ColumnChunkInfo> FileReader::column_chunk(int row_group, int column) const {
  if (row_group < 0 || row_group >= num_row_groups() || column < 0 ||
      column >= static_cast<int>(impl_->columns.size())) {
    return Status::InvalidArgument("no column chunk " + std::to_string(row_group) + "/" +
                                   std::to_string(column) + " in " + impl_->name);
  }
  const auto& cc = impl_->metadata.row_groups[static_cast<size_t>(row_group)]
                       .columns[static_cast<size_t>(column)];
  const auto& m = *cc.meta_data;
  ColumnChunkInfo info;
  info.physical_type = TypeName(m.type);
  info.codec = CodecName(m.codec);
  for (auto e : m.encodings) info.encodings.push_back(EncodingName(e));
  info.num_values = m.num_values;
  info.total_compressed_size = m.total_compressed_size;
  info.total_uncompressed_size = m.total_uncompressed_size;
  info.file_offset = cc.file_offset;
  info.data_page_offset = m.data_page_offset;
  info.dictionary_page_offset = m.dictionary_page_offset;
  if (m.statistics) {
    info.null_count = m.statistics->null_count;
    info.nan_count = m.statistics->nan_count;
    info.min_value = m.statistics->min_value;
    info.max_value = m.statistics->max_value;
  }
  return info;
}

Result<std::vector<PageInfo>> FileReader::ReadPageInfos(int row_group, int column) {
  int64_t start = 0;
  FLOE_ASSIGN_OR_RAISE(std::string_view bytes, ReadChunkBytes(row_group, column, &start));
  std::vector<PageHeaderInfo> headers;
  FLOE_RETURN_NOT_OK(Error(ReadPageHeaders(bytes, start, &headers)));
  std::vector<PageInfo> out;
  for (const auto& h : headers) {
    PageInfo p;
    p.num_values = 0;
    p.compressed_size = h.header.compressed_page_size;
    p.uncompressed_size = h.header.uncompressed_page_size;
    p.has_crc = h.header.crc.has_value();
    switch (h.header.type) {
      case format::PageType::kDataPage:
        p.type = "DATA_PAGE";
        if (h.header.data_page_header) {
          p.encoding = EncodingName(h.header.data_page_header->encoding);
          p.num_values = h.header.data_page_header->num_values;
        }
        break;
      case format::PageType::kDataPageV2:
        p.type = "DATA_PAGE_V2";
        if (h.header.data_page_header_v2) {
          p.encoding = EncodingName(h.header.data_page_header_v2->encoding);
          p.num_values = h.header.data_page_header_v2->num_values;
        }
        break;
      case format::PageType::kDictionaryPage:
        p.type = "DICTIONARY_PAGE";
        if (h.header.dictionary_page_header) {
          p.encoding = EncodingName(h.header.dictionary_page_header->encoding);
          p.num_values = h.header.dictionary_page_header->num_values;
        }
        break;
      default:
        p.type = "INDEX_PAGE";
        break;
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace floe::parquet
