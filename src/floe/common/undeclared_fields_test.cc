#include "floe/common/undeclared_fields.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace floe {
namespace {

// Every kind of value packs and reads back with its name and type, in order, and widens into a
// wider column; a packed row cut anywhere is Corruption, never a crash.
TEST(UndeclaredFields, PackedFieldsReadBackAndEveryCutIsAnError) {
  // A value of each storage kind, the JSON kinds added directly, the others from a column.
  Column small_in(DataType::Int32()), f_in(DataType::Float()), gone_in(DataType::String()),
      price_in(DataType::Decimal(10, 2));
  small_in.Append<int32_t>(42);
  f_in.Append<float>(1.5F);
  gone_in.AppendNull();
  price_in.Append<Int128>(12345);
  UndeclaredFieldsWriter w;
  w.AddInt64("big", -7);
  w.AddFrom("small", small_in, 0);
  w.AddDouble("ratio", 0.5);
  w.AddFrom("f", f_in, 0);
  w.AddBool("ok", true);
  w.AddString("name", "ada");
  w.AddFrom("gone", gone_in, 0);
  w.AddFrom("price", price_in, 0);
  const std::string packed(w.Finish());

  UndeclaredFieldsReader r(packed);
  UndeclaredField f;
  std::vector<std::string> names;
  Column big(DataType::Int64()), small(DataType::Int64()), ratio(DataType::Double()),
      fl(DataType::Double()), ok(DataType::Boolean()), name(DataType::String()),
      gone(DataType::String()), price(DataType::Decimal(12, 2));
  std::vector<Column*> columns = {&big, &small, &ratio, &fl, &ok, &name, &gone, &price};
  for (Column* column : columns) {
    Result<bool> more = r.Next(&f);
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    ASSERT_TRUE(*more);
    names.emplace_back(f.name);
    ASSERT_TRUE(UndeclaredFitsColumn(f.type, column->type())) << f.name;
    AppendUndeclared(f, column);
  }
  Result<bool> end = r.Next(&f);
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(*end);
  EXPECT_EQ(names, (std::vector<std::string>{"big", "small", "ratio", "f", "ok", "name", "gone",
                                             "price"}));
  EXPECT_EQ(big.Get<int64_t>(0), -7);
  EXPECT_EQ(small.Get<int64_t>(0), 42);
  EXPECT_EQ(ratio.Get<double>(0), 0.5);
  EXPECT_EQ(fl.Get<double>(0), 1.5);
  EXPECT_EQ(ok.Get<uint8_t>(0), 1);
  EXPECT_EQ(name.GetBytes(0), "ada");
  EXPECT_TRUE(gone.IsNull(0));
  EXPECT_TRUE(price.Get<Int128>(0) == 12345);

  for (size_t cut = 0; cut < packed.size(); ++cut) {
    UndeclaredFieldsReader partial(std::string_view(packed).substr(0, cut));
    Status st;
    for (;;) {
      Result<bool> more = partial.Next(&f);
      if (!more.ok()) {
        st = more.status();
        break;
      }
      if (!*more) break;
    }
    EXPECT_FALSE(st.ok()) << "cut at " << cut;
  }
  EXPECT_FALSE(UndeclaredFitsColumn(DataType::Int64(), DataType::Int32()));
  EXPECT_FALSE(UndeclaredFitsColumn(DataType::Double(), DataType::Int64()));
  EXPECT_FALSE(UndeclaredFitsColumn(DataType::String(), DataType::Int64()));
}

// A row is packed from a column's value as well, and Clear starts the next row afresh.
TEST(UndeclaredFields, AddFromCopiesAColumnsValueAndClearStartsOver) {
  Column ts(DataType::Timestamp());
  ts.Append<int64_t>(1'700'000'000'000'000);
  UndeclaredFieldsWriter w;
  w.AddBool("x", false);
  w.Clear();
  EXPECT_TRUE(w.empty());
  w.AddFrom("at", ts, 0);
  const std::string packed(w.Finish());
  UndeclaredFieldsReader r(packed);
  UndeclaredField f;
  ASSERT_TRUE(*r.Next(&f));
  EXPECT_EQ(f.name, "at");
  EXPECT_EQ(f.type, DataType::Timestamp());
  Column out(DataType::Timestamp());
  AppendUndeclared(f, &out);
  EXPECT_EQ(out.Get<int64_t>(0), 1'700'000'000'000'000);
  EXPECT_FALSE(*r.Next(&f));
}

}  // namespace
}  // namespace floe
