// Damaged files: every truncation and many byte flips of valid files must read as an error or
// as exactly the original rows — never a crash, a hang or wrong data.

#include <random>

#include "floe/format/parquet/file_reader.h"
#include "floe/format/parquet/file_writer.h"
#include "floe/format/parquet/test_util.h"
#include "gtest/gtest.h"

namespace floe::parquet {
namespace {

struct Sample {
  std::string bytes;
  RecordBatch rows;
};

Sample MakeSample(Compression compression, bool dictionary) {
  auto schema = std::make_shared<const BatchSchema>(BatchSchema{{
      {"id", DataType::Int64(), false, 1},
      {"name", DataType::String(), true, 2},
      {"score", DataType::Double(), true, 3},
      {"amount", DataType::Decimal(30, 2), true, 4},
      {"flag", DataType::Boolean(), false, 5},
      {"day", DataType::Date(), true, 6},
  }});
  // Small on purpose: every byte of the file is flipped several times.
  RecordBatch rows(schema);
  const char* names[] = {"alpha", "beta", "", "gamma \xc3\xa9", "delta"};
  for (int i = 0; i < 240; ++i) {
    rows.mutable_column(0).Append<int64_t>(i * 1000003LL - 7);
    if (i % 5 == 1) {
      rows.mutable_column(1).AppendNull();
    } else if (i < 150) {
      rows.mutable_column(1).AppendBytes(names[i % 5]);
    } else {
      rows.mutable_column(1).AppendBytes("n" + std::to_string(i * 7));
    }
    if (i % 7 == 3) {
      rows.mutable_column(2).AppendNull();
    } else {
      rows.mutable_column(2).Append<double>(i * 0.25 - 3);
    }
    if (i % 3 == 0) {
      rows.mutable_column(3).AppendNull();
    } else {
      rows.mutable_column(3).Append<Int128>(static_cast<Int128>(i % 4 - 2) * 1000000000000LL);
    }
    rows.mutable_column(4).Append<uint8_t>(i % 3 == 0);
    if (i % 4 == 0) {
      rows.mutable_column(5).AppendNull();
    } else {
      rows.mutable_column(5).Append<int32_t>(19000 + i % 3);
    }
  }
  WriterOptions o;
  o.compression = compression;
  o.dictionary_enabled = dictionary;
  o.page_size_bytes = 512;
  o.row_group_size_bytes = 4096;
  o.dictionary_page_size_limit = 256;
  std::string dir = testing::MakeTempDir("corrupt_" + std::string(CompressionName(compression)) +
                                         std::to_string(dictionary));
  std::string path = dir + "/sample.parquet";
  auto w = FileWriter::Open(io::FileIO(), path, schema, o);
  EXPECT_TRUE(w.ok());
  EXPECT_TRUE((*w)->Add(rows).ok());
  EXPECT_TRUE((*w)->Finish().ok());
  testing::DumpInterop("corruption_sample_" + std::string(CompressionName(compression)) +
                           (dictionary ? "_dict" : "_plain"),
                       path, rows);
  return {testing::ReadAllBytes(path), std::move(rows)};
}

// Returns true if the read failed cleanly; fails the test if it "succeeded" with other rows.
bool ReadIsErrorOrExact(const std::string& bytes, const RecordBatch& expected,
                        const std::string& what) {
  auto r = FileReader::OpenBuffer(bytes, "damaged.parquet");
  if (!r.ok()) {
    EXPECT_NE(r.status().message().find("damaged.parquet"), std::string::npos)
        << what << ": " << r.status().ToString();
    return true;
  }
  auto all = (*r)->ReadAll();
  if (!all.ok()) {
    EXPECT_NE(all.status().message().find("damaged.parquet"), std::string::npos)
        << what << ": " << all.status().ToString();
    return true;
  }
  EXPECT_EQ(all->num_rows(), expected.num_rows()) << what;
  std::string read_schema;
  for (const auto& f : all->schema()->fields) {
    read_schema += f.name + ":" + f.type.ToString() + (f.nullable ? "?" : "") + " ";
  }
  if (all->num_rows() == expected.num_rows()) {
    for (size_t c = 0; c < expected.num_columns(); ++c) {
      EXPECT_TRUE(all->column(c).Equals(expected.column(c)))
          << what << ": column " << c << " read back different data; schema " << read_schema;
    }
  }
  return false;
}

class CorruptionTest : public ::testing::TestWithParam<std::tuple<Compression, bool>> {};

TEST_P(CorruptionTest, EveryTruncationIsAnError) {
  Sample s = MakeSample(std::get<0>(GetParam()), std::get<1>(GetParam()));
  ASSERT_FALSE(ReadIsErrorOrExact(s.bytes, s.rows, "intact"));
  for (size_t len = 0; len < s.bytes.size(); ++len) {
    EXPECT_TRUE(
        ReadIsErrorOrExact(s.bytes.substr(0, len), s.rows, "truncated to " + std::to_string(len)));
  }
}

TEST_P(CorruptionTest, ByteFlipsAreErrorsOrHarmless) {
  Sample s = MakeSample(std::get<0>(GetParam()), std::get<1>(GetParam()));
  int errors = 0, harmless = 0;
  for (size_t pos = 0; pos < s.bytes.size(); ++pos) {
    for (uint8_t mask : {0x01, 0x10, 0x80, 0xff}) {
      std::string damaged = s.bytes;
      damaged[pos] = static_cast<char>(damaged[pos] ^ mask);
      if (ReadIsErrorOrExact(damaged, s.rows,
                             "byte " + std::to_string(pos) + " ^ " + std::to_string(mask))) {
        ++errors;
      } else {
        ++harmless;
      }
    }
  }
  // Page CRCs make nearly every flip in the data detectable; the rest hit footer fields that
  // do not change the rows (names, statistics, key-value metadata).
  EXPECT_GT(errors, harmless);
  std::cout << "flips: " << errors << " errors, " << harmless << " harmless\n";
}

TEST(Corruption, RandomGarbageAfterTheMagicIsAnError) {
  std::mt19937_64 rng(5);
  Sample s = MakeSample(Compression::kZstd, true);
  for (int i = 0; i < 2000; ++i) {
    std::string bytes = s.bytes;
    // Overwrite a random span with random bytes.
    size_t at = rng() % bytes.size();
    size_t len = 1 + rng() % 32;
    for (size_t k = at; k < std::min(bytes.size(), at + len); ++k)
      bytes[k] = static_cast<char>(rng());
    ReadIsErrorOrExact(bytes, s.rows, "garbage at " + std::to_string(at));
  }
}

INSTANTIATE_TEST_SUITE_P(Files, CorruptionTest,
                         ::testing::Combine(::testing::Values(Compression::kUncompressed,
                                                              Compression::kSnappy,
                                                              Compression::kZstd),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(CompressionName(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_dict" : "_plain");
                         });

}  // namespace
}  // namespace floe::parquet
