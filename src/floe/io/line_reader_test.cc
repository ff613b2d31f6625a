#include "floe/io/line_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "floe/io/file.h"

namespace floe::io {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string dir = ::testing::TempDir() + "floe_lines_" + std::to_string(::getpid());
  EXPECT_TRUE(CreateDirs(dir).ok());
  std::string p = JoinPath(dir, name);
  EXPECT_TRUE(WriteFileReplace(p, text).ok());
  return p;
}

TEST(LineChunkReader, ChunksEndOnLineBoundariesAndCountLines) {
  std::string text;
  for (int i = 1; i <= 1000; ++i) text += "{\"line\":" + std::to_string(i) + "}\n";
  std::string p = WriteTemp("a.jsonl", text);
  auto r = LineChunkReader::Open(p, 4096);
  ASSERT_TRUE(r.ok());
  std::string joined;
  int64_t expected_line = 1;
  uint64_t expected_offset = 0;
  LineChunkReader::Chunk c;
  while (true) {
    auto more = (*r)->Next(&c);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    EXPECT_EQ(c.first_line, expected_line);
    EXPECT_EQ(c.begin_offset, expected_offset);
    EXPECT_EQ(c.text.back(), '\n');
    EXPECT_EQ(c.text.substr(0, 9), "{\"line\":" + std::to_string(expected_line).substr(0, 1));
    expected_line += std::count(c.text.begin(), c.text.end(), '\n');
    expected_offset = c.end_offset;
    joined.append(c.text);
  }
  EXPECT_EQ(joined, text);
  EXPECT_EQ(expected_line, 1001);
}

TEST(LineChunkReader, ChunksArePaddedForInPlaceParsing) {
  std::string text;
  for (int i = 1; i <= 300; ++i) text += "{\"n\":" + std::to_string(i) + "}\n";
  text += "{\"last\":true}";  // no final newline
  std::string p = WriteTemp("pad.jsonl", text);
  auto r = LineChunkReader::Open(p, 4096);
  ASSERT_TRUE(r.ok());
  std::string joined;
  LineChunkReader::Chunk c;
  while (true) {
    auto more = (*r)->Next(&c);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    EXPECT_GE(c.padding, LineChunkReader::kPadding);
    // The padding is readable (sanitizers would flag it otherwise).
    size_t sum = 0;
    for (size_t i = 0; i < c.padding; ++i)
      sum += static_cast<unsigned char>(c.text.data()[c.text.size() + i]);
    EXPECT_GT(sum, 0u);
    joined += c.text;
  }
  EXPECT_EQ(joined, text);
}

TEST(LineChunkReader, LongLineAndMissingFinalNewline) {
  std::string long_line(10000, 'x');
  std::string text = "a\n" + long_line + "\nlast";
  std::string p = WriteTemp("b.jsonl", text);
  auto r = LineChunkReader::Open(p, 4096);
  ASSERT_TRUE(r.ok());
  std::string joined;
  LineChunkReader::Chunk c;
  while (*(*r)->Next(&c)) joined.append(c.text);
  EXPECT_EQ(joined, text);
}

TEST(LineChunkReader, ResumesAtOffset) {
  std::string p = WriteTemp("c.jsonl", "one\ntwo\nthree\n");
  auto r = LineChunkReader::Open(p, 4096, 4, 2);
  ASSERT_TRUE(r.ok());
  LineChunkReader::Chunk c;
  ASSERT_TRUE(*(*r)->Next(&c));
  EXPECT_EQ(c.text, "two\nthree\n");
  EXPECT_EQ(c.first_line, 2);
  EXPECT_EQ(c.end_offset, 14u);
  EXPECT_FALSE(*(*r)->Next(&c));
}

// Byte ranges of one file read by several readers, each from the first line that starts in its
// range to the end of the last one: every line once, whatever the range size (a line longer
// than the range, one ending exactly at a range's end, no final newline).
TEST(LineChunkReader, ByteRangesHandOutEveryLineOnce) {
  std::string text;
  for (int i = 1; i <= 400; ++i) text += std::string(static_cast<size_t>(i % 37), 'x') + "\n";
  text += std::string(10000, 'y') + "\n\nlast";
  std::string p = WriteTemp("ranges.jsonl", text);
  for (uint64_t range : std::initializer_list<uint64_t>{3, 37, 100, 4097, 20000}) {
    std::string joined;
    for (uint64_t begin = 0; begin < text.size(); begin += range) {
      uint64_t end = std::min<uint64_t>(begin + range, text.size());
      Result<uint64_t> from = NextLineStart(p, begin);
      ASSERT_TRUE(from.ok()) << from.status().ToString();
      EXPECT_TRUE(*from == 0 || text[*from - 1] == '\n' || *from == text.size());
      auto r = LineChunkReader::Open(p, 4096, *from, 1, end);
      ASSERT_TRUE(r.ok());
      LineChunkReader::Chunk c;
      while (true) {
        Result<bool> more = (*r)->Next(&c);
        ASSERT_TRUE(more.ok());
        if (!*more) break;
        EXPECT_LT(c.begin_offset, end);
        joined.append(c.text);
      }
    }
    EXPECT_EQ(joined, text) << "ranges of " << range << " bytes";
  }
  for (uint64_t size : std::initializer_list<uint64_t>{0, 1, 40, 5000, text.size()}) {
    Result<int64_t> n = CountNewlinesBefore(p, size);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, std::count(text.begin(), text.begin() + static_cast<int64_t>(size), '\n'));
  }
}

}  // namespace
}  // namespace floe::io
