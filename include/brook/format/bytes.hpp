// Byte-level vocabulary of the format layer: nullable byte strings (Kafka's
// keys, values and header values may be null, distinct from empty) and
// big-endian loads/stores on byte pointers through Boost.Endian (never a
// reinterpret_cast of a struct over mapped memory).
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <boost/endian/conversion.hpp>

namespace brook {

/// A borrowed byte string that may be null (Kafka length -1). Does not own its bytes:
/// valid as long as what it points into.
class nullable_bytes {
 public:
  /// Null.
  constexpr nullable_bytes() noexcept = default;
  constexpr nullable_bytes(const std::byte* p, std::size_t n) noexcept : p_(p), n_(static_cast<std::int64_t>(n)) {}
  constexpr nullable_bytes(std::span<const std::byte> s) noexcept  // NOLINT: implicit
      : p_(s.data()), n_(static_cast<std::int64_t>(s.size())) {}
  nullable_bytes(std::string_view s) noexcept  // NOLINT: implicit; a string is never null
      : p_(reinterpret_cast<const std::byte*>(s.data())), n_(static_cast<std::int64_t>(s.size())) {}
  nullable_bytes(const char* s) noexcept : nullable_bytes(std::string_view(s)) {}  // NOLINT
  /// Borrows the string's bytes, like std::string_view does.
  nullable_bytes(const std::string& s) noexcept : nullable_bytes(std::string_view(s)) {}  // NOLINT
  static constexpr nullable_bytes null() noexcept { return {}; }

  constexpr bool is_null() const noexcept { return n_ < 0; }
  constexpr const std::byte* data() const noexcept { return p_; }
  /// 0 when null.
  constexpr std::size_t size() const noexcept { return n_ < 0 ? 0 : static_cast<std::size_t>(n_); }
  /// Kafka's wire length: -1 when null.
  constexpr std::int32_t wire_length() const noexcept { return static_cast<std::int32_t>(n_); }
  std::span<const std::byte> span() const noexcept { return {p_, size()}; }
  std::string_view as_string_view() const noexcept { return {reinterpret_cast<const char*>(p_), size()}; }
  std::string to_string() const { return std::string(as_string_view()); }

  friend bool operator==(const nullable_bytes& a, const nullable_bytes& b) noexcept {
    if (a.is_null() || b.is_null()) return a.is_null() == b.is_null();
    return a.as_string_view() == b.as_string_view();
  }

 private:
  const std::byte* p_ = nullptr;
  std::int64_t n_ = -1;
};

inline std::span<const std::byte> as_bytes(std::string_view s) noexcept {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

namespace detail {
inline const unsigned char* uc(const std::byte* p) noexcept { return reinterpret_cast<const unsigned char*>(p); }
inline unsigned char* uc(std::byte* p) noexcept { return reinterpret_cast<unsigned char*>(p); }

inline std::int16_t load_be16(const std::byte* p) noexcept { return boost::endian::load_big_s16(uc(p)); }
inline std::int32_t load_be32(const std::byte* p) noexcept { return boost::endian::load_big_s32(uc(p)); }
inline std::uint32_t load_be_u32(const std::byte* p) noexcept { return boost::endian::load_big_u32(uc(p)); }
inline std::int64_t load_be64(const std::byte* p) noexcept { return boost::endian::load_big_s64(uc(p)); }
inline void store_be16(std::byte* p, std::int16_t v) noexcept { boost::endian::store_big_s16(uc(p), v); }
inline void store_be32(std::byte* p, std::int32_t v) noexcept { boost::endian::store_big_s32(uc(p), v); }
inline void store_be_u32(std::byte* p, std::uint32_t v) noexcept { boost::endian::store_big_u32(uc(p), v); }
inline void store_be64(std::byte* p, std::int64_t v) noexcept { boost::endian::store_big_s64(uc(p), v); }
}  // namespace detail

}  // namespace brook
