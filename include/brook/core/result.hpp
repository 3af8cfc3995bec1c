// result<T>: a value or a brook::error, shaped like std::expected<T, brook::error>.
//
// Fallible operations return a [[nodiscard]] result<T>. Besides has_value()/value()/
// error() it has the monadic helpers of std::expected (value_or, and_then, transform)
// and compares against an errc: `r == errc::timeout` is true when r failed with that
// code, `r == errc::none` when it holds a value.
//
// Temporaries: value() and operator* on an rvalue result return the value itself (moved
// out), not a reference into the dying result. So
//   for (const auto& tp : *data_dir.list_topics())   // or *f().value()
// iterates a value whose lifetime the range-for extends, where a std::expected (whose
// operator* && returns T&&) would dangle. Holding a reference into a result you keep
// (`auto r = f(); auto& v = *r;`) is fine as long as r lives.
//
// Propagation inside functions that return a result:
//   BROOK_TRY(expr);                       // returns expr's error, discards its value
//   BROOK_TRY_ASSIGN(auto log, open(...)); // declares `auto log = <value>` or returns the error
//
// Thread-safety: values; distinct objects may be used from distinct threads, one object
// is not synchronised.
#pragma once

#include <functional>
#include <type_traits>
#include <utility>
#include <variant>

#include <brook/core/assert.hpp>
#include <brook/core/error.hpp>

namespace brook {

/// Tag for constructing a failed result: `return unexpected(make_error(...))`.
struct unexpected {
  explicit unexpected(error e) : err(std::move(e)) {}
  error err;
};

template <typename T>
class result;

namespace detail {
template <typename R>
struct is_result : std::false_type {};
template <typename U>
struct is_result<result<U>> : std::true_type {};
}  // namespace detail

/// A value or an error, shaped like std::expected<T, brook::error>.
template <typename T>
class [[nodiscard]] result {
 public:
  using value_type = T;
  template <typename U = T, typename = std::enable_if_t<std::is_constructible_v<T, U&&>>>
  result(U&& v) : v_(std::in_place_index<0>, std::forward<U>(v)) {}       // NOLINT: implicit like expected
  result(unexpected u) : v_(std::in_place_index<1>, std::move(u.err)) {}  // NOLINT
  result(brook::error e) : v_(std::in_place_index<1>, std::move(e)) {}    // NOLINT

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    check();
    return std::get<0>(v_);
  }
  const T& value() const& {
    check();
    return std::get<0>(v_);
  }
  /// The value moved out (not a reference: see "Temporaries" above).
  T value() && {
    check();
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// REQUIRES: !has_value().
  const brook::error& error() const& {
    BROOK_ASSERT(!has_value(), "result::error() on a value");
    return std::get<1>(v_);
  }
  brook::error error() && {
    BROOK_ASSERT(!has_value(), "result::error() on a value");
    return std::get<1>(std::move(v_));
  }

  /// The value, or `fallback` converted to T when this holds an error.
  template <typename U>
  T value_or(U&& fallback) const& {
    return has_value() ? std::get<0>(v_) : static_cast<T>(std::forward<U>(fallback));
  }
  template <typename U>
  T value_or(U&& fallback) && {
    return has_value() ? std::get<0>(std::move(v_)) : static_cast<T>(std::forward<U>(fallback));
  }

  /// f(value) when this holds a value (f returns some result<U>), else this error as a result<U>.
  template <typename F>
  auto and_then(F&& f) const& {
    using R = std::remove_cvref_t<std::invoke_result_t<F, const T&>>;
    static_assert(detail::is_result<R>::value, "and_then: f must return a brook::result");
    if (has_value()) return std::invoke(std::forward<F>(f), std::get<0>(v_));
    return R(std::get<1>(v_));
  }
  template <typename F>
  auto and_then(F&& f) && {
    using R = std::remove_cvref_t<std::invoke_result_t<F, T&&>>;
    static_assert(detail::is_result<R>::value, "and_then: f must return a brook::result");
    if (has_value()) return std::invoke(std::forward<F>(f), std::get<0>(std::move(v_)));
    return R(std::get<1>(std::move(v_)));
  }

  /// result<U> holding f(value) when this holds a value, else this error.
  template <typename F>
  auto transform(F&& f) const& {
    using U = std::remove_cvref_t<std::invoke_result_t<F, const T&>>;
    if (!has_value()) return result<U>(std::get<1>(v_));
    if constexpr (std::is_void_v<U>) {
      std::invoke(std::forward<F>(f), std::get<0>(v_));
      return result<U>();
    } else {
      return result<U>(std::invoke(std::forward<F>(f), std::get<0>(v_)));
    }
  }
  template <typename F>
  auto transform(F&& f) && {
    using U = std::remove_cvref_t<std::invoke_result_t<F, T&&>>;
    if (!has_value()) return result<U>(std::get<1>(std::move(v_)));
    if constexpr (std::is_void_v<U>) {
      std::invoke(std::forward<F>(f), std::get<0>(std::move(v_)));
      return result<U>();
    } else {
      return result<U>(std::invoke(std::forward<F>(f), std::get<0>(std::move(v_))));
    }
  }

  /// errc::none: holds a value; any other code: failed with that code (error::operator==).
  friend bool operator==(const result& r, errc c) noexcept {
    return r.has_value() ? c == errc::none : std::get<1>(r.v_) == c;
  }

 private:
  void check() const { BROOK_ASSERT(has_value(), "result::value() on an error: {}", std::get<1>(v_).to_string()); }
  std::variant<T, brook::error> v_;
};

/// result<void>: success or an error.
template <>
class [[nodiscard]] result<void> {
 public:
  using value_type = void;
  result() = default;
  result(unexpected u) : err_(std::move(u.err)), ok_(false) {}  // NOLINT
  result(brook::error e) : err_(std::move(e)), ok_(false) {}    // NOLINT

  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  void value() const { BROOK_ASSERT(ok_, "result<void>::value() on an error: {}", err_.to_string()); }
  /// REQUIRES: !has_value().
  const brook::error& error() const& {
    BROOK_ASSERT(!ok_, "result::error() on a value");
    return err_;
  }
  brook::error error() && {
    BROOK_ASSERT(!ok_, "result::error() on a value");
    return std::move(err_);
  }

  /// f() when this succeeded (f returns some result<U>), else this error as a result<U>.
  template <typename F>
  auto and_then(F&& f) const {
    using R = std::remove_cvref_t<std::invoke_result_t<F>>;
    static_assert(detail::is_result<R>::value, "and_then: f must return a brook::result");
    if (ok_) return std::invoke(std::forward<F>(f));
    return R(err_);
  }
  /// result<U> holding f() when this succeeded, else this error.
  template <typename F>
  auto transform(F&& f) const {
    using U = std::remove_cvref_t<std::invoke_result_t<F>>;
    if (!ok_) return result<U>(err_);
    if constexpr (std::is_void_v<U>) {
      std::invoke(std::forward<F>(f));
      return result<U>();
    } else {
      return result<U>(std::invoke(std::forward<F>(f)));
    }
  }

  /// errc::none: succeeded; any other code: failed with that code (error::operator==).
  friend bool operator==(const result& r, errc c) noexcept { return r.ok_ ? c == errc::none : r.err_ == c; }

 private:
  brook::error err_;
  bool ok_ = true;
};

/// Success for result<void>.
inline result<void> ok() { return {}; }

}  // namespace brook

/// Evaluates a result-returning expression; returns its error from the enclosing function.
#define BROOK_TRY(expr)                                            \
  do {                                                             \
    if (auto brook_try_r_ = (expr); !brook_try_r_.has_value())     \
      return ::brook::unexpected(std::move(brook_try_r_).error()); \
  } while (0)

#define BROOK_DETAIL_CONCAT_INNER(a, b) a##b
#define BROOK_DETAIL_CONCAT(a, b) BROOK_DETAIL_CONCAT_INNER(a, b)
#define BROOK_DETAIL_TRY_ASSIGN(tmp, lhs, expr)                             \
  auto tmp = (expr);                                                        \
  if (!tmp.has_value()) return ::brook::unexpected(std::move(tmp).error()); \
  lhs = std::move(tmp).value()

/// `BROOK_TRY_ASSIGN(auto x, f());` declares x holding f()'s value, or returns f()'s error
/// from the enclosing function. `lhs` may also be an existing variable. One statement:
/// not inside an unbraced if/else.
#define BROOK_TRY_ASSIGN(lhs, expr) BROOK_DETAIL_TRY_ASSIGN(BROOK_DETAIL_CONCAT(brook_try_, __LINE__), lhs, expr)
