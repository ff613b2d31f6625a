#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "floe/common/status.h"

namespace floe::io {

// LineChunkReader reads a text file in chunks that end on line boundaries, so each chunk can
// be decoded on its own. It tracks the 1-based number of each chunk's first line and the byte
// offset where the next chunk starts (a resumable position for a file source).
// Lifecycle: Open -> Next* until it returns false. Not thread-safe.
class LineChunkReader {
 public:
  ~LineChunkReader();
  LineChunkReader(const LineChunkReader&) = delete;
  LineChunkReader& operator=(const LineChunkReader&) = delete;

  // Starts at byte `offset` (which must be the start of a line) whose line number is
  // `first_line`. Chunks hold the lines that start before `stop` (a byte range of a file that
  // several readers share): the last one is read to its end, past `stop`.
  static Result<std::unique_ptr<LineChunkReader>> Open(const std::string& path,
                                                       size_t chunk_bytes = 8 << 20,
                                                       uint64_t offset = 0, int64_t first_line = 1,
                                                       uint64_t stop = UINT64_MAX);

  struct Chunk {
    std::string_view text;  // whole lines; the last may lack its '\n' at end of file
    int64_t first_line = 0;
    uint64_t begin_offset = 0;
    uint64_t end_offset = 0;  // offset after the chunk: where the next one starts
    // Bytes after text.end() that may be read (not written) until the next call: at least
    // kPadding, so parsers that read a little past their input (simdjson) need no copy. Their
    // content is unspecified.
    size_t padding = 0;
  };
  static constexpr size_t kPadding = 64;
  // Fills `chunk` (valid until the next call) and returns true, or returns false at the end.
  // A single line longer than the chunk size grows the buffer to hold it.
  Result<bool> Next(Chunk* chunk);

 private:
  LineChunkReader(std::string path, int fd, size_t chunk_bytes, uint64_t offset, int64_t line,
                  uint64_t stop)
      : path_(std::move(path)),
        fd_(fd),
        chunk_bytes_(chunk_bytes),
        offset_(offset),
        line_(line),
        stop_(stop) {}

  std::string path_;
  int fd_;
  size_t chunk_bytes_;
  uint64_t offset_;  // file offset of buffer_[begin_]
  int64_t line_;     // line number at offset_
  uint64_t stop_;    // no line starting at or after it is handed out
  // Reserves room for `size` bytes of data (plus kPadding) in buffer_, keeping [begin_, end_).
  void Grow(size_t size);

  // buffer_ holds capacity_ + kPadding bytes; valid data is [begin_, end_). Never zero-filled.
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;
  size_t begin_ = 0;  // offset_ is the file offset of buffer_[begin_]
  size_t end_ = 0;
  size_t consumed_ = 0;  // bytes after begin_ handed out by the previous Next
  bool eof_ = false;
};

// Where the first line that starts at or after `offset` begins: `offset` itself when it is 0
// or follows a '\n', else the byte after the next '\n' (the file's size when there is none).
Result<uint64_t> NextLineStart(const std::string& path, uint64_t offset);

// The number of '\n' bytes in the first `size` bytes of `path` (the line number of a byte
// offset, minus one; for messages, so it reads the file once more).
Result<int64_t> CountNewlinesBefore(const std::string& path, uint64_t size);

}  // namespace floe::io
