// Random values for any message the codec describes, walking its schema (codec/schema.hpp),
// and the two facts a version's table implies about any value:
//
//   random_message<T>(g, v)     every field version v has gets a random value (null only where
//                               v allows it); fields v lacks keep their defaults
//   project(m, v)               m with every field v lacks reset to its default: what a decode
//                               of m's encoding at v must give back
//   expected_write_error(m, v)  the error code encoding m at v must give (unsupported_version for
//                               a non-ignorable field v lacks that holds a non-default value,
//                               invalid_request for a null v does not allow), found in the
//                               order the writer visits fields; none when it must succeed
//
// This walker is written apart from the codec's reader and writer on purpose: the tests
// compare what the codec does with what the table says.
//
// Thread-safety: single-threaded values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <brook/codec/schema.hpp>
#include <brook/core/error.hpp>
#include <brook/protocol/records.hpp>

namespace brook::test {

namespace detail {
// The codec's own type traits.
template <typename T>
using is_vec = codec::detail::is_vector<T>;
template <typename T>
using is_opt = codec::detail::is_optional<T>;
template <typename T>
using is_strong = codec::detail::is_strong_int<T>;
}  // namespace detail

/// Fills messages with random values. Owns the bytes the records views it makes point to.
class message_randomizer {
 public:
  explicit message_randomizer(std::uint64_t seed) : g_(seed) {}

  template <codec::described_message T>
  T make(std::int16_t version) {
    T m{};
    fill_struct(m, context_of<T>(version));
    return m;
  }

  template <codec::described_message T>
  static codec::context context_of(std::int16_t version) {
    return {version, codec::schema_of<T>.info.flexible.contains(version)};
  }

 private:
  bool coin() { return g_() % 2 == 0; }
  std::size_t small(std::size_t n) { return static_cast<std::size_t>(g_() % n); }

  template <typename S>
  void fill_struct(S& obj, const codec::context& c) {
    std::apply(
        [&](const auto&... f) {
          (
              [&](const auto& fd) {
                if (!fd.present.contains(c.version)) return;
                fill(obj.*fd.member, c, fd.nullable.contains(c.version));
              }(f),
              ...);
        },
        codec::schema_of<S>.fields);
  }

  template <typename T>
  void fill(T& v, const codec::context& c, bool nullable) {
    if constexpr (std::is_same_v<T, bool>) {
      v = coin();
    } else if constexpr (detail::is_strong<T>::value) {
      v = T(static_cast<typename T::rep>(g_()));
    } else if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(small(2));
    } else if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(g_());
    } else if constexpr (std::is_same_v<T, double>) {
      v = static_cast<double>(g_() % 100000) / 8.0;
    } else if constexpr (std::is_same_v<T, uuid>) {
      v = uuid::from_parts(g_(), g_());
    } else if constexpr (std::is_same_v<T, std::string>) {
      v.assign(small(9), 'a');
      for (auto& ch : v) ch = static_cast<char>('a' + small(26));
    } else if constexpr (std::is_same_v<T, std::vector<std::byte>>) {
      v.resize(small(9));
      for (auto& b : v) b = static_cast<std::byte>(g_());
    } else if constexpr (std::is_same_v<T, protocol::records>) {
      if (nullable && small(4) == 0) {
        v = protocol::records();
        return;
      }
      auto& b = pool_.emplace_back(small(40));
      for (auto& x : b) x = static_cast<std::byte>(g_());
      v = protocol::records::view(b);
    } else if constexpr (detail::is_opt<T>::value) {
      if (nullable && small(4) == 0) {
        v.reset();
        return;
      }
      v.emplace();
      fill(*v, c, false);
    } else if constexpr (detail::is_vec<T>::value) {
      v.clear();
      v.resize(depth_ > 2 ? 0 : small(3));
      ++depth_;
      for (auto& e : v) fill(e, c, false);
      --depth_;
    } else {
      static_assert(codec::described<T>);
      fill_struct(v, c);
    }
  }

  std::mt19937_64 g_;
  std::deque<std::vector<std::byte>> pool_;
  int depth_ = 0;
};

namespace detail {

template <typename T>
void project_value(T& v, std::int16_t version);

template <typename S>
void project_struct(S& obj, std::int16_t version) {
  static const S defaults{};
  std::apply(
      [&](const auto&... f) {
        (
            [&](const auto& fd) {
              if (!fd.present.contains(version)) {
                obj.*fd.member = defaults.*fd.member;
              } else {
                project_value(obj.*fd.member, version);
              }
            }(f),
            ...);
      },
      codec::schema_of<S>.fields);
}

template <typename T>
void project_value(T& v, std::int16_t version) {
  if constexpr (is_opt<T>::value) {
    if (v) project_value(*v, version);
  } else if constexpr (is_vec<T>::value) {
    for (auto& e : v) project_value(e, version);
  } else if constexpr (codec::described<T>) {
    project_struct(v, version);
  }
}

template <typename T>
std::optional<errc> write_error_of(const T& v, std::int16_t version);

template <typename S>
std::optional<errc> struct_write_error(const S& obj, std::int16_t version) {
  static const S defaults{};
  std::optional<errc> out;
  std::apply(
      [&](const auto&... f) {
        (
            [&](const auto& fd) {
              if (out) return;
              const auto& v = obj.*fd.member;
              if (!fd.present.contains(version)) {
                if (!fd.is_ignorable && !(v == defaults.*fd.member)) out = errc::unsupported_version;
                return;
              }
              using M = std::decay_t<decltype(v)>;
              bool null = false;
              if constexpr (is_opt<M>::value) null = !v.has_value();
              if constexpr (std::is_same_v<M, protocol::records>) null = v.is_null();
              if (null && !fd.nullable.contains(version)) {
                out = errc::invalid_request;
                return;
              }
              out = write_error_of(v, version);
            }(f),
            ...);
      },
      codec::schema_of<S>.fields);
  return out;
}

template <typename T>
std::optional<errc> write_error_of(const T& v, std::int16_t version) {
  if constexpr (is_opt<T>::value) {
    return v ? write_error_of(*v, version) : std::nullopt;
  } else if constexpr (is_vec<T>::value) {
    for (const auto& e : v)
      if (auto e2 = write_error_of(e, version)) return e2;
    return std::nullopt;
  } else if constexpr (codec::described<T>) {
    return struct_write_error(v, version);
  } else {
    return std::nullopt;
  }
}

}  // namespace detail

/// m with every field version v lacks reset to its default.
template <codec::described_message T>
T project(T m, std::int16_t version) {
  detail::project_struct(m, version);
  return m;
}

/// The error encoding m at version v must give; none when it must succeed.
template <codec::described_message T>
std::optional<errc> expected_write_error(const T& m, std::int16_t version) {
  return detail::struct_write_error(m, version);
}

}  // namespace brook::test
