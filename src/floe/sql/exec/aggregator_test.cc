#include "floe/sql/exec/aggregator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/byte_codec.h"
#include "floe/common/record_batch.h"

namespace floe::sql::internal {
namespace {

AggregateState EveryField() {
  AggregateState acc;
  acc.key = std::string("\x01\x02\x00\x00\x00k1", 7);
  acc.rows = -3;
  acc.aggs.resize(4);
  acc.aggs[0].count = 5;  // COUNT: the rest at defaults
  AggregateState::One& sum = acc.aggs[1];
  sum.count = 2;
  sum.has = true;
  sum.integer = static_cast<Int128>(std::numeric_limits<int64_t>::max()) * 4 + 1;  // wide
  sum.floating = -0.0;
  AggregateState::One& min = acc.aggs[2];
  min.has = true;
  min.integer = -7;
  min.cell = "db";
  min.values() = {{"db", 2}, {"os", -1}};
  AggregateState::One& list = acc.aggs[3];
  list.distinct() = {{"a", 1}, {"b", 3}};
  list.list() = {"a", "b", ""};
  return acc;
}

void ExpectSame(const AggregateState& a, const AggregateState& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.aggs.size(), b.aggs.size());
  for (size_t i = 0; i < a.aggs.size(); ++i) {
    SCOPED_TRACE(i);
    const AggregateState::One &x = a.aggs[i], &y = b.aggs[i];
    EXPECT_EQ(x.count, y.count);
    EXPECT_EQ(x.has, y.has);
    EXPECT_TRUE(x.integer == y.integer);
    EXPECT_EQ(std::signbit(x.floating), std::signbit(y.floating));
    EXPECT_EQ(x.floating, y.floating);
    EXPECT_EQ(x.cell, y.cell);
    EXPECT_EQ(x.distinct(), y.distinct());
    EXPECT_EQ(x.values(), y.values());
    EXPECT_EQ(x.list(), y.list());
  }
}

// The compact layout keeps every field, and a COUNT(*) window's accumulator stays small.
// The GROUP BY key's bytes are in checkpoints (keyed state's keys, accumulators' key): KeyOf
// keeps ByteWriter's layout, a presence byte and PutString, and AppendKey reads the values back.
TEST(KeyOf, KeepsTheByteWriterLayoutAndDecodesBack) {
  auto schema = std::make_shared<BatchSchema>();
  schema->fields = {{"s", DataType::String(), true, 1},
                    {"i", DataType::Int64(), true, 2},
                    {"long", DataType::String(), true, 3}};
  RecordBatch batch(schema);
  const std::string long_text(300, 'x');  // a length with a second byte
  batch.mutable_column(0).AppendBytes("k1");
  batch.mutable_column(1).Append<int64_t>(258);
  batch.mutable_column(2).AppendBytes(long_text);
  batch.mutable_column(0).AppendNull();
  batch.mutable_column(1).AppendNull();
  batch.mutable_column(2).AppendBytes("");
  const std::vector<int> keys = {0, 1, 2};

  ByteWriter first;
  first.PutU8(1);
  first.PutString("k1");
  first.PutU8(1);
  int64_t v = 258;
  first.PutString(std::string_view(reinterpret_cast<const char*>(&v), sizeof v));
  first.PutU8(1);
  first.PutString(long_text);
  EXPECT_EQ(KeyOf(batch, 0, keys), first.Finish());
  ByteWriter second;
  second.PutU8(0);
  second.PutU8(0);
  second.PutU8(1);
  second.PutString("");
  std::string reused = "a longer string left from an earlier row";
  KeyOfInto(batch, 1, keys, &reused);
  EXPECT_EQ(reused, second.Finish());

  RecordBatch back(schema);
  ASSERT_TRUE(AppendKey(KeyOf(batch, 0, keys), 3, &back, 0).ok());
  ASSERT_TRUE(AppendKey(reused, 3, &back, 0).ok());
  EXPECT_TRUE(back.Equals(batch));
}

TEST(AggregateState, CompactLayoutRoundTripsEveryField) {
  const AggregateState acc = EveryField();
  Result<AggregateState> back = AggregateState::Decode(acc.Encode());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSame(*back, acc);

  AggregateState count;
  count.key = std::string("\x01\x07\x00\x00\x00u123456", 12);
  count.rows = 3;
  count.aggs.resize(1);
  count.aggs[0].count = 3;
  EXPECT_LE(count.Encode().size(), 24u);
  // Truncated anywhere: Corruption, never a partial accumulator.
  const std::string blob = acc.Encode();
  for (size_t n = 4; n < blob.size(); ++n) {
    Result<AggregateState> cut = AggregateState::Decode(blob.substr(0, n));
    ASSERT_FALSE(cut.ok()) << n;
    EXPECT_EQ(cut.status().code(), StatusCode::kCorruption) << n;
  }
}

// State checkpointed by earlier releases (the fixed layout with extension 2) still restores.
TEST(AggregateState, DecodesTheFixedLayoutOfEarlierReleases) {
  const AggregateState acc = EveryField();
  ByteWriter w;
  w.PutString(acc.key);
  w.PutU32(static_cast<uint32_t>(acc.aggs.size()));
  for (const AggregateState::One& a : acc.aggs) {
    w.PutI64(a.count);
    w.PutBool(a.has);
    w.PutU64(static_cast<uint64_t>(a.integer));
    w.PutU64(static_cast<uint64_t>(static_cast<unsigned __int128>(a.integer) >> 64));
    w.PutDouble(a.floating);
    w.PutString(a.cell);
    w.PutU32(static_cast<uint32_t>(a.distinct().size()));
    for (const auto& [d, n] : a.distinct()) w.PutString(d);
  }
  w.PutU8(2);
  w.PutI64(acc.rows);
  for (const AggregateState::One& a : acc.aggs) {
    for (const auto* counts : {&a.distinct(), &a.values()}) {
      w.PutU32(static_cast<uint32_t>(counts->size()));
      for (const auto& [v, n] : *counts) {
        w.PutString(v);
        w.PutI64(n);
      }
    }
    w.PutU32(static_cast<uint32_t>(a.list().size()));
    for (const std::string& v : a.list()) w.PutString(v);
  }
  Result<AggregateState> back = AggregateState::Decode(w.Finish());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSame(*back, acc);
}

}  // namespace
}  // namespace floe::sql::internal
