#include "floe/io/line_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace floe::io {

namespace {

// Number of '\n' bytes in [p, p + n).
int64_t CountNewlines(const char* p, size_t n) {
  int64_t count = 0;
#if defined(__SSE2__) && defined(__x86_64__)
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  while (n >= 16) {
    // Per-byte counters (cmpeq gives -1 per match) summed before they can overflow.
    size_t blocks = std::min<size_t>(n / 16, 255);
    __m128i acc = zero;
    for (size_t b = 0; b < blocks; ++b) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
      p += 16;
    }
    n -= blocks * 16;
    __m128i sums = _mm_sad_epu8(acc, zero);
    count += _mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
  }
#endif
  for (; n > 0; --n) count += *p++ == '\n';
  return count;
}

Result<int> OpenForReading(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::string msg = "cannot open '" + path + "': " + std::strerror(errno);
    return errno == ENOENT ? Status::NotFound(msg) : Status::IOError(msg);
  }
  return fd;
}

// Calls `visit(data, size)` on the bytes of `path` from `offset` on, a block at a time, until it
// returns false or the file ends.
template <typename Visit>
Status ReadBlocks(const std::string& path, uint64_t offset, Visit visit) {
  FLOE_ASSIGN_OR_RAISE(int fd, OpenForReading(path));
  std::unique_ptr<char[]> block = std::make_unique_for_overwrite<char[]>(1 << 16);
  Status st;
  while (true) {
    ssize_t n = ::pread(fd, block.get(), 1 << 16, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) st = Status::IOError("cannot read '" + path + "': " + std::strerror(errno));
    if (n <= 0 || !visit(block.get(), static_cast<size_t>(n))) break;
    offset += static_cast<uint64_t>(n);
  }
  ::close(fd);
  return st;
}

}  // namespace

Result<uint64_t> NextLineStart(const std::string& path, uint64_t offset) {
  if (offset == 0) return 0;
  uint64_t at = offset - 1;  // the byte before: a '\n' there makes `offset` a line start
  bool found = false;
  FLOE_RETURN_NOT_OK(ReadBlocks(path, at, [&](const char* data, size_t n) {
    const void* nl = std::memchr(data, '\n', n);
    if (nl == nullptr) {
      at += n;
      return true;
    }
    at += static_cast<uint64_t>(static_cast<const char*>(nl) - data);
    found = true;
    return false;
  }));
  return found ? at + 1 : at;  // at is the file's size when no '\n' follows
}

Result<int64_t> CountNewlinesBefore(const std::string& path, uint64_t size) {
  int64_t count = 0;
  uint64_t left = size;
  FLOE_RETURN_NOT_OK(ReadBlocks(path, 0, [&](const char* data, size_t n) {
    size_t take = static_cast<size_t>(std::min<uint64_t>(n, left));
    count += CountNewlines(data, take);
    left -= take;
    return left > 0;
  }));
  return count;
}

LineChunkReader::~LineChunkReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<LineChunkReader>> LineChunkReader::Open(const std::string& path,
                                                               size_t chunk_bytes, uint64_t offset,
                                                               int64_t first_line, uint64_t stop) {
  FLOE_ASSIGN_OR_RAISE(int fd, OpenForReading(path));
  if (offset != 0 && ::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0) {
    std::string msg = "cannot seek in '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return Status::IOError(msg);
  }
  return std::unique_ptr<LineChunkReader>(
      new LineChunkReader(path, fd, std::max<size_t>(chunk_bytes, 4096), offset, first_line, stop));
}

void LineChunkReader::Grow(size_t size) {
  auto grown = std::make_unique_for_overwrite<char[]>(size + kPadding);
  if (end_ > begin_) std::memcpy(grown.get(), buffer_.get() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
  buffer_ = std::move(grown);
  capacity_ = size;
}

Result<bool> LineChunkReader::Next(Chunk* chunk) {
  // Drop what the previous call handed out, keep the partial line after it.
  if (consumed_ != 0) {
    line_ += CountNewlines(buffer_.get() + begin_, consumed_);
    offset_ += consumed_;
    begin_ += consumed_;
    consumed_ = 0;
  }
  if (offset_ >= stop_) return false;
  // A little past the stop finishes the last line most of the time; a longer one grows below.
  const uint64_t left = stop_ - offset_;
  size_t want = left >= chunk_bytes_
                    ? chunk_bytes_
                    : static_cast<size_t>(std::min<uint64_t>(chunk_bytes_, left + 256));
  while (true) {
    if (!eof_ && end_ - begin_ < want) {
      if (want > capacity_) {
        Grow(want);
      } else if (begin_ + want > capacity_) {
        // Move the partial line (short) to the front rather than the other way round.
        std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
        end_ -= begin_;
        begin_ = 0;
      }
      while (!eof_ && end_ - begin_ < want) {
        ssize_t n = ::read(fd_, buffer_.get() + end_, begin_ + want - end_);
        if (n < 0) {
          if (errno == EINTR) continue;
          return Status::IOError("cannot read '" + path_ + "': " + std::strerror(errno));
        }
        end_ += static_cast<size_t>(n);
        if (n == 0) eof_ = true;
      }
      // Initialized padding after the data (readers may look past the end of a chunk).
      std::memset(buffer_.get() + end_, ' ', kPadding);
    }
    if (end_ == begin_) return false;
    const char* data = buffer_.get() + begin_;
    size_t size = end_ - begin_;
    size_t end;
    if (eof_) {
      end = size;
    } else {
      size_t nl = size;
      while (nl > 0 && data[nl - 1] != '\n') --nl;
      if (nl == 0) {
        want *= 2;  // one line longer than the chunk: grow and read on
        continue;
      }
      end = nl;
    }
    if (offset_ + end > stop_) {
      // End with the line holding the byte before the stop.
      const void* nl = std::memchr(data + (stop_ - offset_ - 1), '\n', end - (stop_ - offset_ - 1));
      if (nl != nullptr) end = static_cast<size_t>(static_cast<const char*>(nl) - data) + 1;
    }
    consumed_ = end;
    chunk->text = std::string_view(data, end);
    chunk->first_line = line_;
    chunk->begin_offset = offset_;
    chunk->end_offset = offset_ + end;
    chunk->padding = size - end + kPadding;
    return true;
  }
}

}  // namespace floe::io
