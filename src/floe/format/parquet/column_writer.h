#pragma once

// Column chunk writers (internal). One per leaf column; each buffers the encoded, compressed
// pages of the current row group's chunk and writes them out when the row group closes.

#include <cstdint>
#include <memory>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/format/parquet/file_writer.h"
#include "floe/format/parquet/metadata.h"
#include "floe/format/parquet/schema.h"

namespace floe::io {
class WritableFile;
}

namespace floe::parquet {

class PageCompressor;

// Encodes values of one column into pages: PLAIN or RLE_DICTIONARY (with fallback to PLAIN when
// the dictionary outgrows its limit), definition levels RLE, data page v1. Work is done per
// slice of rows with a typed loop, never a virtual call per value. Not thread-safe.
class ColumnWriter {
 public:
  virtual ~ColumnWriter() = default;
  // Appends rows [offset, offset + length) of `column`.
  // REQUIRES: column.type() is the descriptor's type; no nulls if the field is required.
  // InvalidArgument if a decimal does not fit its physical storage.
  virtual Status Write(const Column& column, size_t offset, size_t length) = 0;
  // Encoded bytes buffered for the current chunk (closed pages compressed, the open page and
  // the dictionary as encoded).
  virtual int64_t EstimatedSize() const = 0;
  // Closes the open page, appends the chunk (dictionary page first) to `file` and fills
  // `chunk`. The writer is then ready for the next row group.
  virtual Status FinishChunk(io::WritableFile* file, format::ColumnChunk* chunk) = 0;
  // Metrics over every chunk finished so far.
  virtual const ColumnMetrics& metrics() const = 0;
};

// `compressor` must outlive the writer.
Result<std::unique_ptr<ColumnWriter>> MakeColumnWriter(const ColumnDescriptor& descriptor,
                                                       const WriterOptions& options,
                                                       PageCompressor* compressor);

}  // namespace floe::parquet
