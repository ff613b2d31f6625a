#include "floe/io/line_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace floe::io {

LineChunkReader::~LineChunkReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<LineChunkReader>> LineChunkReader::Open(const std::string& path,
                                                               size_t chunk_bytes, uint64_t offset,
                                                               int64_t first_line) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::string msg = "cannot open '" + path + "': " + std::strerror(errno);
    return errno == ENOENT ? Status::NotFound(msg) : Status::IOError(msg);
  }
  if (offset != 0 && ::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0) {
    std::string msg = "cannot seek in '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return Status::IOError(msg);
  }
  return std::unique_ptr<LineChunkReader>(
      new LineChunkReader(path, fd, std::max<size_t>(chunk_bytes, 4096), offset, first_line));
}

Result<bool> LineChunkReader::Next(Chunk* chunk) {
  // Drop what the previous call handed out, keep the partial line after it.
  if (consumed_ != 0) {
    line_ += std::count(buffer_.data(), buffer_.data() + consumed_, '\n');
    offset_ += consumed_;
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  size_t want = chunk_bytes_;
  while (true) {
    while (!eof_ && buffer_.size() < want) {
      size_t old = buffer_.size();
      buffer_.resize(want);
      ssize_t n = ::read(fd_, buffer_.data() + old, want - old);
      if (n < 0) {
        buffer_.resize(old);
        if (errno == EINTR) continue;
        return Status::IOError("cannot read '" + path_ + "': " + std::strerror(errno));
      }
      buffer_.resize(old + static_cast<size_t>(n));
      if (n == 0) eof_ = true;
    }
    if (buffer_.empty()) return false;
    size_t end;
    if (eof_) {
      end = buffer_.size();
    } else {
      size_t nl = buffer_.rfind('\n');
      if (nl == std::string::npos) {
        want *= 2;  // one line longer than the chunk: grow and read on
        continue;
      }
      end = nl + 1;
    }
    consumed_ = end;
    chunk->text = std::string_view(buffer_.data(), end);
    chunk->first_line = line_;
    chunk->begin_offset = offset_;
    chunk->end_offset = offset_ + end;
    return true;
  }
}

}  // namespace floe::io
