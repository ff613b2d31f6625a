#include "floe/format/parquet/compression.h"

#include <snappy.h>
#include <zstd.h>

namespace floe::parquet {

format::CompressionCodec ToCodec(Compression c) {
  switch (c) {
    case Compression::kUncompressed:
      return format::CompressionCodec::kUncompressed;
    case Compression::kSnappy:
      return format::CompressionCodec::kSnappy;
    case Compression::kZstd:
      return format::CompressionCodec::kZstd;
  }
  return format::CompressionCodec::kUncompressed;
}

Result<std::unique_ptr<PageCompressor>> PageCompressor::Make(Compression compression,
                                                             int zstd_level) {
  auto c = std::make_unique<PageCompressor>(compression, zstd_level);
  if (compression == Compression::kZstd) {
    if (zstd_level < ZSTD_minCLevel() || zstd_level > ZSTD_maxCLevel()) {
      return Status::InvalidArgument("zstd level " + std::to_string(zstd_level) + " out of range");
    }
    c->zstd_ctx_ = ZSTD_createCCtx();
    if (c->zstd_ctx_ == nullptr) return Status::Internal("ZSTD_createCCtx failed");
  }
  return c;
}

PageCompressor::~PageCompressor() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_ctx_)); }

Status PageCompressor::Compress(std::string_view in, std::string* out) {
  switch (compression_) {
    case Compression::kZstd: {
      size_t bound = ZSTD_compressBound(in.size());
      out->resize(bound);
      size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_ctx_), out->data(), bound,
                                   in.data(), in.size(), level_);
      if (ZSTD_isError(n)) {
        return Status::Internal(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
      }
      out->resize(n);
      return Status::OK();
    }
    case Compression::kSnappy: {
      out->resize(snappy::MaxCompressedLength(in.size()));
      size_t n = 0;
      snappy::RawCompress(in.data(), in.size(), out->data(), &n);
      out->resize(n);
      return Status::OK();
    }
    case Compression::kUncompressed:
      out->assign(in);
      return Status::OK();
  }
  return Status::Internal("unknown compression");
}

PageDecompressor::~PageDecompressor() { ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(zstd_ctx_)); }

Status PageDecompressor::Decompress(format::CompressionCodec codec, std::string_view in,
                                    size_t uncompressed_size, std::string* out) {
  switch (codec) {
    case format::CompressionCodec::kUncompressed:
      if (in.size() != uncompressed_size) {
        return Status::Corruption("uncompressed page of " + std::to_string(in.size()) +
                                  " bytes claims " + std::to_string(uncompressed_size));
      }
      out->assign(in);
      return Status::OK();
    case format::CompressionCodec::kSnappy: {
      size_t n = 0;
      if (!snappy::GetUncompressedLength(in.data(), in.size(), &n) || n != uncompressed_size) {
        return Status::Corruption("snappy page length does not match its header");
      }
      out->resize(n);
      if (!snappy::RawUncompress(in.data(), in.size(), out->data())) {
        return Status::Corruption("bad snappy data");
      }
      return Status::OK();
    }
    case format::CompressionCodec::kZstd: {
      // The frame states its content size; check it first so a corrupt header cannot make us
      // allocate more than the page header already promised.
      unsigned long long frame = ZSTD_getFrameContentSize(in.data(), in.size());
      if (frame == ZSTD_CONTENTSIZE_ERROR) return Status::Corruption("bad zstd frame");
      if (frame != ZSTD_CONTENTSIZE_UNKNOWN && frame != uncompressed_size) {
        return Status::Corruption("zstd frame size does not match the page header");
      }
      if (zstd_ctx_ == nullptr) {
        zstd_ctx_ = ZSTD_createDCtx();
        if (zstd_ctx_ == nullptr) return Status::Internal("ZSTD_createDCtx failed");
      }
      out->resize(uncompressed_size);
      size_t n = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(zstd_ctx_), out->data(),
                                     uncompressed_size, in.data(), in.size());
      if (ZSTD_isError(n)) {
        return Status::Corruption(std::string("bad zstd data: ") + ZSTD_getErrorName(n));
      }
      if (n != uncompressed_size) return Status::Corruption("zstd page shorter than its header");
      return Status::OK();
    }
    default:
      return Status::NotImplemented("compression codec " + std::to_string(static_cast<int>(codec)) +
                                    " is not supported (floe reads zstd, snappy, uncompressed)");
  }
}

}  // namespace floe::parquet
