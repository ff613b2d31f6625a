#include "floe/common/status.h"

#include <gtest/gtest.h>

namespace floe {
namespace {

Result<int> Half(int v) {
  if (v % 2 != 0) return Status::InvalidArgument("odd value " + std::to_string(v));
  return v / 2;
}

Status Quarter(int v, int* out) {
  FLOE_ASSIGN_OR_RAISE(int h, Half(v));
  FLOE_ASSIGN_OR_RAISE(*out, Half(h));
  return Status::OK();
}

TEST(Status, OkHasNoMessage) {
  Status st;
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.ToString(), "OK");
}

TEST(Status, WithContextPrefixesMessage) {
  Status st = Status::Corruption("bad magic").WithContext("file a.parquet");
  EXPECT_TRUE(st.IsCorruption());
  EXPECT_EQ(st.message(), "file a.parquet: bad magic");
}

TEST(Result, AssignOrRaisePropagatesErrors) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status st = Quarter(6, &out);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message(), "odd value 3");
}

TEST(Result, FromOkStatusBecomesInternalError) {
  Result<int> r(Status::OK());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

// Reading a failed Result's value is a bug: it must stop the process with the error, never
// throw (an exception could be swallowed by a handler and the bug go on).
TEST(ResultDeathTest, ValueOfAnErrorAbortsWithTheError) {
  auto read = [] {
    Result<int> r = Status::NotFound("table demo.t");
    return r.value();
  };
  EXPECT_DEATH(read(), "value of a Result holding an error was read: Not found: table demo.t");
  auto deref = [] {
    Result<std::string> r = Status::IOError("disk");
    return r->size();
  };
  EXPECT_DEATH(deref(), "IO error: disk");
  auto moved = [] { return Result<std::string>(Status::Internal("x")).ValueOrDie(); };
  EXPECT_DEATH(moved(), "Internal");
}

}  // namespace
}  // namespace floe
