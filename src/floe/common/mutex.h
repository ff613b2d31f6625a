#pragma once

// A mutex the compiler checks: Clang's thread-safety analysis (-Wthread-safety) knows which
// members a Mutex guards and which functions need it held, and warns at every access that does
// not hold it. scripts/thread-safety-check.sh runs the analysis; other compilers see the plain
// std::mutex and no attributes.
//
//   mutable Mutex mu_;
//   std::condition_variable cv_;
//   int pending_ FLOE_GUARDED_BY(mu_) = 0;
//   void DrainLocked() FLOE_REQUIRES(mu_);
//
//   MutexLock lock(mu_);
//   while (pending_ > 0) cv_.wait(lock.native());
//
// Wait in a loop in the function body, not with a predicate lambda: the analysis checks a
// lambda as a function of its own, which holds no lock.

#include <mutex>

#if defined(__clang__)
#define FLOE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define FLOE_THREAD_ANNOTATION(x)
#endif

#define FLOE_CAPABILITY(name) FLOE_THREAD_ANNOTATION(capability(name))
#define FLOE_SCOPED_CAPABILITY FLOE_THREAD_ANNOTATION(scoped_lockable)
// The member may be read or written only with `mu` held.
#define FLOE_GUARDED_BY(mu) FLOE_THREAD_ANNOTATION(guarded_by(mu))
// What the (smart) pointer points to may be used only with `mu` held; the pointer itself is not
// guarded.
#define FLOE_PT_GUARDED_BY(mu) FLOE_THREAD_ANNOTATION(pt_guarded_by(mu))
// Callers hold the mutexes.
#define FLOE_REQUIRES(...) FLOE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// Callers do not hold them (the function takes them).
#define FLOE_EXCLUDES(...) FLOE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define FLOE_ACQUIRE(...) FLOE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define FLOE_RELEASE(...) FLOE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// Turns the analysis off for one function; say why beside it.
#define FLOE_NO_THREAD_SAFETY_ANALYSIS FLOE_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace floe {

// std::mutex as a capability. Held only through MutexLock.
class FLOE_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex for its scope, like std::unique_lock: Unlock and Lock in between (the analysis
// follows both), and native() for std::condition_variable, which unlocks and relocks inside its
// waits where the analysis cannot see (the lock is held again when a wait returns).
class FLOE_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) FLOE_ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() FLOE_RELEASE() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() FLOE_RELEASE() { lock_.unlock(); }
  void Lock() FLOE_ACQUIRE() { lock_.lock(); }

  std::unique_lock<std::mutex>& native() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace floe
