#pragma once

// Helpers shared by the runtime tests: event latches with generous timeouts (a missed event
// fails the test instead of hanging it), batch builders, temp directories.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "floe/common/mutex.h"
#include "floe/common/record_batch.h"
#include "floe/common/testing/temp_dir.h"
#include "floe/runtime/operator.h"

namespace floe::runtime::testing {

// Generous: the machine may be loaded; these bound hangs, they never pace a test.
inline constexpr std::chrono::seconds kWaitTimeout{60};

// A count that tests wait on: Notify from any thread, WaitFor(n) blocks until it reached n.
class Counter {
 public:
  void Add(int64_t n = 1) {
    MutexLock lock(mu_);
    value_ += n;
    cv_.notify_all();
  }
  // True once value >= n; false after kWaitTimeout.
  bool WaitFor(int64_t n) {
    MutexLock lock(mu_);
    const auto deadline = std::chrono::steady_clock::now() + kWaitTimeout;
    while (value_ < n) {
      if (cv_.wait_until(lock.native(), deadline) == std::cv_status::timeout) return value_ >= n;
    }
    return true;
  }
  int64_t value() const {
    MutexLock lock(mu_);
    return value_;
  }

 private:
  mutable Mutex mu_;
  std::condition_variable cv_;
  int64_t value_ FLOE_GUARDED_BY(mu_) = 0;
};

// A one-shot event.
class Event {
 public:
  void Set() { c_.Add(); }
  bool Wait() { return c_.WaitFor(1); }
  bool IsSet() const { return c_.value() > 0; }

 private:
  Counter c_;
};

inline std::shared_ptr<const BatchSchema> Int64Schema(std::vector<std::string> names) {
  auto s = std::make_shared<BatchSchema>();
  for (auto& n : names) s->fields.push_back(Field{n, DataType::Int64(), true, 0});
  return s;
}

// One int64 column "v" holding `values`.
inline RecordBatch Int64Batch(const std::vector<int64_t>& values) {
  static const auto kSchema = Int64Schema({"v"});
  RecordBatch b(kSchema);
  for (int64_t v : values) b.mutable_column(0).Append<int64_t>(v);
  return b;
}

inline std::vector<int64_t> Int64Values(const RecordBatch& b, size_t col = 0) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < b.num_rows(); ++i) out.push_back(b.column(col).Get<int64_t>(i));
  return out;
}

// Factory helpers: Result<unique_ptr<Base>> from a concrete operator.
template <typename T, typename... Args>
Result<std::unique_ptr<SourceOperator>> Src(Args&&... args) {
  return std::unique_ptr<SourceOperator>(std::make_unique<T>(std::forward<Args>(args)...));
}
template <typename T, typename... Args>
Result<std::unique_ptr<Operator>> Op(Args&&... args) {
  return std::unique_ptr<Operator>(std::make_unique<T>(std::forward<Args>(args)...));
}

using ::floe::testing::TempDir;

}  // namespace floe::runtime::testing
