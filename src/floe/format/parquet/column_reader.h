#pragma once

// Column chunk decoding (internal): pages -> floe Column, with every size and count checked.

#include <cstdint>
#include <string_view>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/format/parquet/metadata.h"
#include "floe/format/parquet/schema.h"

namespace floe::parquet {

class PageDecompressor;

// Decodes the column chunk `chunk` (the bytes of the chunk, which starts at file offset
// `chunk_start`) and appends its values to `out`. Supports data page v1 and v2; PLAIN,
// PLAIN_DICTIONARY / RLE_DICTIONARY, and RLE booleans; definition levels RLE. Errors are
// Corruption (or NotImplemented for valid features floe lacks) without the file name; the
// caller adds it. `out` may hold partial data after an error.
Status ReadColumnChunk(std::string_view chunk, int64_t chunk_start, const ColumnDescriptor& desc,
                       const format::ColumnMetaData& meta, PageDecompressor* decompressor,
                       Column* out);

// Page headers of a chunk, for tests and tools.
struct PageHeaderInfo {
  format::PageHeader header;
  int64_t offset = 0;  // file offset of the header
};
Status ReadPageHeaders(std::string_view chunk, int64_t chunk_start,
                       std::vector<PageHeaderInfo>* out);

}  // namespace floe::parquet
