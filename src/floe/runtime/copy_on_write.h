#pragma once

#include <memory>

namespace floe::runtime {

// A value shared with snapshot views until it is next written (copy-on-write), so a snapshot
// at the barrier copies pointers instead of state. Only the owner's thread calls mut() and
// share(): it alone makes new sharers, so use_count() == 1 means no view holds the value (a
// view released meanwhile on another thread at worst costs one needless copy).
template <typename T>
class CopyOnWrite {
 public:
  const T& get() const { return *p_; }
  T& mut() {
    if (p_.use_count() > 1) p_ = std::make_shared<T>(*p_);
    return *p_;
  }
  std::shared_ptr<const T> share() const { return p_; }

 private:
  std::shared_ptr<T> p_ = std::make_shared<T>();
};

}  // namespace floe::runtime
