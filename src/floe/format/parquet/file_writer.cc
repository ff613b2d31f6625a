#include "floe/format/parquet/file_writer.h"

#include <algorithm>
#include <cctype>

#include "floe/format/parquet/column_writer.h"
#include "floe/format/parquet/compression.h"
#include "floe/format/parquet/encoding.h"
#include "floe/format/parquet/metadata.h"
#include "floe/format/parquet/schema.h"
#include "floe/io/file.h"

namespace floe::parquet {

namespace {
constexpr std::string_view kMagic = "PAR1";
// parquet-mr parses created_by as "<app> version <semver> (build <hash>)" to decide which
// statistics to trust, so keep that shape.
constexpr std::string_view kCreatedBy = "floe version 0.1.0 (build floe)";
}  // namespace

Result<Compression> ParseCompression(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "zstd") return Compression::kZstd;
  if (lower == "snappy") return Compression::kSnappy;
  if (lower == "uncompressed" || lower == "none") return Compression::kUncompressed;
  return Status::InvalidArgument("unknown parquet compression '" + std::string(name) +
                                 "' (choose zstd, snappy, uncompressed or none)");
}

std::string_view CompressionName(Compression c) {
  switch (c) {
    case Compression::kZstd:
      return "zstd";
    case Compression::kSnappy:
      return "snappy";
    case Compression::kUncompressed:
      return "uncompressed";
  }
  return "unknown";
}

struct FileWriter::Footer {
  std::vector<ColumnDescriptor> columns;
  std::vector<format::RowGroup> row_groups;
  std::vector<int64_t> row_group_offsets;
};

FileWriter::FileWriter(io::FileIO file_io, std::string path,
                       std::shared_ptr<const BatchSchema> schema, WriterOptions options)
    : file_io_(std::move(file_io)),
      path_(std::move(path)),
      schema_(std::move(schema)),
      options_(std::move(options)) {}

FileWriter::~FileWriter() {
  if (!done_) Abandon();
}

Result<std::unique_ptr<FileWriter>> FileWriter::Open(const io::FileIO& file_io,
                                                     const std::string& path,
                                                     std::shared_ptr<const BatchSchema> schema,
                                                     const WriterOptions& options) {
  if (schema == nullptr) return Status::InvalidArgument("parquet: null schema");
  if (options.row_group_size_bytes <= 0 || options.page_size_bytes <= 0 ||
      options.page_row_limit <= 0) {
    return Status::InvalidArgument("parquet: row group and page sizes must be positive");
  }
  auto w = std::make_unique<FileWriter>(file_io, path, schema, options);
  w->footer_ = std::make_unique<Footer>();
  FLOE_ASSIGN_OR_RAISE(w->footer_->columns, DescribeColumns(*schema));
  FLOE_ASSIGN_OR_RAISE(w->compressor_,
                       PageCompressor::Make(options.compression, options.zstd_level));
  for (const ColumnDescriptor& d : w->footer_->columns) {
    FLOE_ASSIGN_OR_RAISE(auto cw, MakeColumnWriter(d, w->options_, w->compressor_.get()));
    w->columns_.push_back(std::move(cw));
  }
  // Only now touch the filesystem, so a bad schema leaves nothing behind.
  w->done_ = true;  // nothing to abandon if Create fails
  FLOE_ASSIGN_OR_RAISE(w->file_, file_io.NewWritableFile(path, /*exclusive=*/true));
  w->done_ = false;
  FLOE_RETURN_NOT_OK(w->file_->Append(kMagic));
  return w;
}

Status FileWriter::Fail(Status st) {
  if (status_.ok()) status_ = st;
  return st;
}

int64_t FileWriter::BufferedSize() const {
  int64_t n = 0;
  for (const auto& c : columns_) n += c->EstimatedSize();
  return n;
}

int64_t FileWriter::estimated_file_size() const {
  return (file_ ? file_->size() : 0) + BufferedSize();
}

Status FileWriter::Add(const RecordBatch& batch) {
  if (!status_.ok()) return status_;
  if (done_) return Status::InvalidArgument("parquet: writer for " + path_ + " is closed");
  if (batch.schema() != schema_ &&
      (batch.schema() == nullptr || batch.schema()->fields != schema_->fields)) {
    return Fail(
        Status::InvalidArgument("parquet: batch schema differs from the schema of " + path_));
  }
  if (Status st = batch.Validate(); !st.ok()) {
    return Fail(Status::InvalidArgument("parquet: " + path_ + ": " + st.message()));
  }
  const size_t n = batch.num_rows();
  if (n == 0) return Status::OK();
  // Write in row slices so a row group closes near its size limit even for huge batches.
  size_t bytes_per_row = std::max<size_t>(1, batch.ByteSize() / n);
  size_t slice = static_cast<size_t>(std::clamp<int64_t>(
      options_.row_group_size_bytes / static_cast<int64_t>(bytes_per_row) / 4, 1, 1 << 16));
  for (size_t row = 0; row < n; row += slice) {
    size_t len = std::min(slice, n - row);
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (Status st = columns_[c]->Write(batch.column(c), row, len); !st.ok()) return Fail(st);
    }
    row_group_rows_ += static_cast<int64_t>(len);
    row_count_ += static_cast<int64_t>(len);
    if (BufferedSize() >= options_.row_group_size_bytes) {
      if (Status st = FlushRowGroup(); !st.ok()) return Fail(st);
    }
  }
  return Status::OK();
}

Status FileWriter::Flush() {
  if (!status_.ok()) return status_;
  if (done_) return Status::InvalidArgument("parquet: writer for " + path_ + " is closed");
  if (Status st = FlushRowGroup(); !st.ok()) return Fail(st);
  return Status::OK();
}

Status FileWriter::FlushRowGroup() {
  if (row_group_rows_ == 0) return Status::OK();
  format::RowGroup rg;
  rg.num_rows = row_group_rows_;
  int64_t compressed = 0;
  for (auto& c : columns_) {
    format::ColumnChunk chunk;
    FLOE_RETURN_NOT_OK(c->FinishChunk(file_.get(), &chunk));
    rg.total_byte_size += chunk.meta_data->total_uncompressed_size;
    compressed += chunk.meta_data->total_compressed_size;
    if (!rg.file_offset) rg.file_offset = chunk.file_offset;
    rg.columns.push_back(std::move(chunk));
  }
  rg.total_compressed_size = compressed;
  if (footer_->row_groups.size() <= INT16_MAX) {
    rg.ordinal = static_cast<int16_t>(footer_->row_groups.size());
  }
  footer_->row_group_offsets.push_back(*rg.file_offset);
  footer_->row_groups.push_back(std::move(rg));
  row_group_rows_ = 0;
  return Status::OK();
}

Result<WrittenFile> FileWriter::Finish() {
  if (!status_.ok()) return status_;
  if (done_) return Status::InvalidArgument("parquet: writer for " + path_ + " is closed");
  auto finish = [&]() -> Result<WrittenFile> {
    FLOE_RETURN_NOT_OK(FlushRowGroup());
    format::FileMetaData md;
    md.version = 1;
    md.schema = ToParquetSchema(footer_->columns);
    md.num_rows = row_count_;
    md.row_groups = std::move(footer_->row_groups);
    for (const auto& [k, v] : options_.key_value_metadata) md.key_value_metadata.push_back({k, v});
    md.created_by = std::string(kCreatedBy);
    md.column_orders.assign(footer_->columns.size(), 1);  // TYPE_ORDER: min_value/max_value valid
    // Parquet has no footer checksum, and a damaged footer can still parse (a flipped field
    // header drops a type annotation). floe adds one as the last key-value entry: CRC-32 of the
    // footer encoded without that entry. Other readers see an ordinary key-value pair.
    std::string footer;
    format::Encode(md, &footer);
    md.key_value_metadata.push_back(
        {std::string(format::kFooterChecksumKey), std::to_string(Crc32(footer))});
    footer.clear();
    format::Encode(md, &footer);
    AppendLE32(static_cast<uint32_t>(footer.size()), &footer);
    footer.append(kMagic);
    FLOE_RETURN_NOT_OK(file_->Append(footer));
    FLOE_RETURN_NOT_OK(file_->Sync());
    WrittenFile out;
    out.path = path_;
    out.file_size = file_->size();
    FLOE_RETURN_NOT_OK(file_->Close());
    out.row_count = row_count_;
    for (const auto& c : columns_) out.columns.push_back(c->metrics());
    out.row_group_offsets = footer_->row_group_offsets;
    return out;
  };
  Result<WrittenFile> r = finish();
  if (!r.ok()) return Fail(r.status());
  done_ = true;
  return r;
}

void FileWriter::Abandon() {
  if (done_) return;
  done_ = true;
  if (file_) {
    (void)file_->Close();
    file_.reset();
    (void)file_io_.RemoveFile(path_);
  }
}

}  // namespace floe::parquet
