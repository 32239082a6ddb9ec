// Status / Expected<T>: the one error type of the engine. No exceptions cross an engine API.
#pragma once

#include <cassert>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace ge {

enum class StatusCode { kOk = 0, kInvalidArgument, kNotFound, kFailedPrecondition, kUnimplemented, kInternal };

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return ok() ? StatusCode::kOk : state_->code; }
  const std::string& message() const;
  // Returns a copy whose message reads "<context>: <original message>", so errors name the
  // graph, node and op they passed through on the way out.
  Status WithContext(std::string_view context) const;
  std::string ToString() const;

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  // Null on success keeps the OK path to one pointer test and no allocation.
  std::shared_ptr<const State> state_;
};

template <typename... Args>
Status MakeStatus(StatusCode code, fmt::format_string<Args...> f, Args&&... args) {
  return Status(code, fmt::format(f, std::forward<Args>(args)...));
}
#define GE_DEFINE_STATUS_FACTORY(Name, Code)                             \
  template <typename... Args>                                            \
  Status Name(fmt::format_string<Args...> f, Args&&... args) {           \
    return MakeStatus(StatusCode::Code, f, std::forward<Args>(args)...); \
  }
GE_DEFINE_STATUS_FACTORY(InvalidArgument, kInvalidArgument)
GE_DEFINE_STATUS_FACTORY(NotFound, kNotFound)
GE_DEFINE_STATUS_FACTORY(FailedPrecondition, kFailedPrecondition)
GE_DEFINE_STATUS_FACTORY(Unimplemented, kUnimplemented)
GE_DEFINE_STATUS_FACTORY(Internal, kInternal)
#undef GE_DEFINE_STATUS_FACTORY

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Expected(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Expected built from an OK status");
  }

  bool ok() const { return v_.index() == 0; }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace ge

#define GE_CONCAT_INNER_(a, b) a##b
#define GE_CONCAT_(a, b) GE_CONCAT_INNER_(a, b)

#define GE_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::ge::Status ge_status_ = (expr);        \
    if (!ge_status_.ok()) return ge_status_; \
  } while (0)

// GE_ASSIGN_OR_RETURN(auto x, MakeX()); -- binds the value or returns the error.
#define GE_ASSIGN_OR_RETURN(lhs, expr) GE_ASSIGN_OR_RETURN_IMPL_(GE_CONCAT_(ge_expected_, __LINE__), lhs, expr)
#define GE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

// Returns InvalidArgument with the formatted message when cond is false.
#define GE_CHECK(cond, ...)                                 \
  do {                                                      \
    if (!(cond)) return ::ge::InvalidArgument(__VA_ARGS__); \
  } while (0)
