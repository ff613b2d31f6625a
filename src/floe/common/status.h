#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace floe {

// Error domains, after Arroyo: who has to act on the error.
//   kInvalidArgument / kCorruption / kNotFound: the user's input or data (fix input, not retry)
//   kIOError / kUnavailable: the environment (may be retried)
//   kConflict: optimistic-concurrency loss (retry the operation)
//   kInternal / kNotImplemented: floe itself
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kCorruption,
  kNotFound,
  kAlreadyExists,
  kIOError,
  kUnavailable,
  kConflict,
  kNotImplemented,
  kInternal,
};

// Status is the result of an operation that can fail. It is cheap to copy when OK (no
// allocation). Messages name where the problem is (file, line, field) so a user can act.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message);

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return Status(StatusCode::kInvalidArgument, std::move(msg));
  }
  static Status Corruption(std::string msg) {
    return Status(StatusCode::kCorruption, std::move(msg));
  }
  static Status NotFound(std::string msg) { return Status(StatusCode::kNotFound, std::move(msg)); }
  static Status AlreadyExists(std::string msg) {
    return Status(StatusCode::kAlreadyExists, std::move(msg));
  }
  static Status IOError(std::string msg) { return Status(StatusCode::kIOError, std::move(msg)); }
  static Status Unavailable(std::string msg) {
    return Status(StatusCode::kUnavailable, std::move(msg));
  }
  static Status Conflict(std::string msg) { return Status(StatusCode::kConflict, std::move(msg)); }
  static Status NotImplemented(std::string msg) {
    return Status(StatusCode::kNotImplemented, std::move(msg));
  }
  static Status Internal(std::string msg) { return Status(StatusCode::kInternal, std::move(msg)); }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  const std::string& message() const;
  bool IsNotFound() const { return code() == StatusCode::kNotFound; }
  bool IsAlreadyExists() const { return code() == StatusCode::kAlreadyExists; }
  bool IsConflict() const { return code() == StatusCode::kConflict; }
  bool IsUnavailable() const { return code() == StatusCode::kUnavailable; }
  bool IsCorruption() const { return code() == StatusCode::kCorruption; }
  bool IsInvalidArgument() const { return code() == StatusCode::kInvalidArgument; }

  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(std::string_view context) const;
  std::string ToString() const;

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const State> state_;  // null when OK; immutable, so sharing is safe
};

std::string_view StatusCodeName(StatusCode code);

namespace internal {
// Reading the value of a Result that holds an error is a bug in floe: it prints the error and
// where, then aborts (never an exception that a handler could swallow).
[[noreturn]] void DieOnErrorValue(const Status& status);
}  // namespace internal

// Result<T> holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<Status>(v_).ok()) v_ = Status::Internal("Result constructed from OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const& {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  Status status() && { return ok() ? Status::OK() : std::get<Status>(std::move(v_)); }

  // The value; a Result holding an error aborts with the error (internal::DieOnErrorValue).
  const T& value() const& { return *CheckedValue(); }
  T& value() & { return *CheckedValue(); }
  T&& value() && { return std::move(*CheckedValue()); }
  T ValueOrDie() && { return std::move(*CheckedValue()); }

  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  T* CheckedValue() {
    if (T* v = std::get_if<T>(&v_)) return v;
    internal::DieOnErrorValue(std::get<Status>(v_));
  }
  const T* CheckedValue() const {
    if (const T* v = std::get_if<T>(&v_)) return v;
    internal::DieOnErrorValue(std::get<Status>(v_));
  }

  std::variant<T, Status> v_;
};

}  // namespace floe

#define FLOE_CONCAT_INNER_(a, b) a##b
#define FLOE_CONCAT_(a, b) FLOE_CONCAT_INNER_(a, b)

#define FLOE_RETURN_NOT_OK(expr)         \
  do {                                   \
    ::floe::Status _floe_st = (expr);    \
    if (!_floe_st.ok()) return _floe_st; \
  } while (false)

#define FLOE_ASSIGN_OR_RAISE_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                               \
  if (!tmp.ok()) return std::move(tmp).status();    \
  lhs = std::move(tmp).value()

#define FLOE_ASSIGN_OR_RAISE(lhs, rexpr) \
  FLOE_ASSIGN_OR_RAISE_IMPL_(FLOE_CONCAT_(_floe_res_, __LINE__), lhs, rexpr)
