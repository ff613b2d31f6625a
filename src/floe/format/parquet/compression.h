#pragma once

// Page compression codecs (zstd, snappy, none) behind one small interface. Contexts are reused
// across pages because creating a zstd context per page costs more than compressing a small page.

#include <memory>
#include <string>
#include <string_view>

#include "floe/common/status.h"
#include "floe/format/parquet/file_writer.h"
#include "floe/format/parquet/metadata.h"

namespace floe::parquet {

format::CompressionCodec ToCodec(Compression c);

// Compresses pages for one writer. Not thread-safe.
class PageCompressor {
 public:
  static Result<std::unique_ptr<PageCompressor>> Make(Compression compression, int zstd_level);
  PageCompressor(Compression c, int level) : compression_(c), level_(level) {}  // use Make
  ~PageCompressor();
  PageCompressor(const PageCompressor&) = delete;
  PageCompressor& operator=(const PageCompressor&) = delete;
  // Replaces *out with the compressed form of `in`. REQUIRES: codec() is not kUncompressed.
  Status Compress(std::string_view in, std::string* out);
  Compression compression() const { return compression_; }

 private:
  Compression compression_;
  int level_;
  void* zstd_ctx_ = nullptr;  // ZSTD_CCtx*, owned
};

// Decompresses pages for one reader. Not thread-safe.
class PageDecompressor {
 public:
  PageDecompressor() = default;
  ~PageDecompressor();
  PageDecompressor(const PageDecompressor&) = delete;
  PageDecompressor& operator=(const PageDecompressor&) = delete;
  // Replaces *out with exactly `uncompressed_size` bytes decompressed from `in`; Corruption if
  // the data is malformed or of a different size, NotImplemented for codecs floe lacks.
  Status Decompress(format::CompressionCodec codec, std::string_view in, size_t uncompressed_size,
                    std::string* out);

 private:
  void* zstd_ctx_ = nullptr;  // ZSTD_DCtx*, owned
};

}  // namespace floe::parquet
