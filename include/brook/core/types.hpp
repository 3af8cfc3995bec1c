// The vocabulary every layer shares: strong types for the integers that must never be
// mixed up (offsets, partition ids, leader epochs, generation ids, broker ids, byte
// positions in a file), timestamps, acks, a topic-partition and Kafka's Uuid.
//
// brook::offset{5} + 3 is an offset; offset - offset is a plain count;
// an offset cannot be passed where a file_pos is expected.
//
// Thread-safety: values.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace brook {

/// A tagged integer. Tag distinguishes otherwise identical representations.
template <typename Tag, typename Rep>
class strong_int {
 public:
  using rep = Rep;
  constexpr strong_int() = default;
  constexpr explicit strong_int(Rep v) noexcept : v_(v) {}
  constexpr Rep value() const noexcept { return v_; }
  constexpr explicit operator Rep() const noexcept { return v_; }

  friend constexpr auto operator<=>(strong_int, strong_int) = default;
  friend constexpr strong_int operator+(strong_int a, Rep d) noexcept { return strong_int(a.v_ + d); }
  friend constexpr strong_int operator-(strong_int a, Rep d) noexcept { return strong_int(a.v_ - d); }
  friend constexpr Rep operator-(strong_int a, strong_int b) noexcept { return a.v_ - b.v_; }
  constexpr strong_int& operator+=(Rep d) noexcept {
    v_ += d;
    return *this;
  }
  constexpr strong_int& operator-=(Rep d) noexcept {
    v_ -= d;
    return *this;
  }
  constexpr strong_int& operator++() noexcept {
    ++v_;
    return *this;
  }
  constexpr strong_int operator++(int) noexcept {
    auto t = *this;
    ++v_;
    return t;
  }

  /// Streams the number to any std::basic_ostream (declared in <iosfwd>; the stream's
  /// own header defines the operator this calls).
  template <typename C, typename T>
  friend std::basic_ostream<C, T>& operator<<(std::basic_ostream<C, T>& os, strong_int v) {
    return os << v.v_;
  }

 private:
  Rep v_{};
};

/// Offset of a record in a partition (Kafka int64 offset).
using offset = strong_int<struct offset_tag, std::int64_t>;
/// Partition number within a topic (Kafka int32).
using partition_id = strong_int<struct partition_tag, std::int32_t>;
/// Leader epoch stamped in a batch's partitionLeaderEpoch (Kafka int32; -1 = none).
using leader_epoch = strong_int<struct leader_epoch_tag, std::int32_t>;
/// Consumer group generation (Kafka int32).
using generation_id = strong_int<struct generation_tag, std::int32_t>;
/// Byte position inside one segment file.
using file_pos = strong_int<struct file_pos_tag, std::int64_t>;
/// A broker's node id (Kafka's int32 broker.id / node.id; -1 = none).
using broker_id = strong_int<struct broker_tag, std::int32_t>;

/// Milliseconds since the Unix epoch, as Kafka timestamps are (int64; -1 = none).
using timestamp_ms = std::int64_t;
/// Kafka's RecordBatch.NO_TIMESTAMP: a record or batch that carries no timestamp.
inline constexpr timestamp_ms no_timestamp = -1;

/// A produce request's acks (Kafka's int16 acks): 0 = none, 1 = the leader, -1 = all in-sync replicas.
enum class acks_mode : std::int8_t { none = 0, leader = 1, all = -1 };

/// A topic and partition number, ordered and hashable.
struct topic_partition {
  std::string topic;
  partition_id partition{0};
  friend auto operator<=>(const topic_partition&, const topic_partition&) = default;
  friend bool operator==(const topic_partition&, const topic_partition&) = default;
};

/// Kafka's Uuid (topic ids, incarnation ids): 128 bits, written most significant byte first.
struct uuid {
  std::array<std::uint8_t, 16> bytes{};

  static constexpr uuid from_parts(std::uint64_t msb, std::uint64_t lsb) noexcept {
    uuid u;
    for (int i = 0; i < 8; ++i) {
      u.bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(msb >> (56 - 8 * i));
      u.bytes[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(lsb >> (56 - 8 * i));
    }
    return u;
  }
  constexpr std::uint64_t msb() const noexcept { return part(0); }
  constexpr std::uint64_t lsb() const noexcept { return part(8); }
  constexpr bool is_zero() const noexcept { return msb() == 0 && lsb() == 0; }
  /// Kafka's reserved ids: ZERO_UUID and METADATA_TOPIC_ID (00..01).
  constexpr bool is_reserved() const noexcept { return msb() == 0 && lsb() <= 1; }

  /// A random version-4 UUID from `rng` (any 64-bit URBG such as std::mt19937_64),
  /// never reserved and never one whose text starts with '-' (as Uuid.randomUuid).
  template <typename Rng>
  static uuid random(Rng& rng) {
    for (;;) {
      std::uint64_t hi = static_cast<std::uint64_t>(rng());
      std::uint64_t lo = static_cast<std::uint64_t>(rng());
      hi = (hi & ~0xf000ULL) | 0x4000ULL;              // version 4
      lo = (lo & ~(0xc0ULL << 56)) | (0x80ULL << 56);  // IETF variant
      uuid u = from_parts(hi, lo);
      if (!u.is_reserved() && (u.bytes[0] >> 2) != 62) return u;  // base64 char 62 is '-'
    }
  }

  /// Kafka's text form (Uuid.toString): URL-safe base64 without padding, 22 characters.
  std::string to_string() const {
    std::string out;
    std::uint32_t acc = 0;
    int bits = 0;
    for (std::uint8_t b : bytes) {
      acc = (acc << 8) | b;
      bits += 8;
      while (bits >= 6) {
        bits -= 6;
        out += alphabet[(acc >> bits) & 0x3f];
      }
    }
    if (bits > 0) out += alphabet[(acc << (6 - bits)) & 0x3f];
    return out;
  }

  /// The uuid whose text form is `text` (Uuid.fromString): 22 characters of URL-safe
  /// base64, optionally followed by the padding "==" Kafka also accepts. Nothing else: no
  /// other length, no character outside the alphabet, and no set bits in the 4 bits the
  /// last character carries past the 128 (to_string never writes them), so that
  /// from_string(t)->to_string() == t for every t it accepts without padding.
  static std::optional<uuid> from_string(std::string_view text) noexcept {
    if (text.size() == 24 && text.ends_with("==")) text.remove_suffix(2);
    if (text.size() != 22) return std::nullopt;
    uuid u;
    std::uint32_t acc = 0;
    int bits = 0;
    std::size_t at = 0;
    for (char c : text) {
      const int v = alphabet_index(c);
      if (v < 0) return std::nullopt;
      acc = (acc << 6) | static_cast<std::uint32_t>(v);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        u.bytes[at++] = static_cast<std::uint8_t>(acc >> bits);
      }
    }
    // 22 characters are 132 bits: 16 bytes and 4 bits that must be zero.
    if (at != u.bytes.size() || bits != 4 || (acc & 0xf) != 0) return std::nullopt;
    return u;
  }

  friend constexpr auto operator<=>(const uuid&, const uuid&) = default;

 private:
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  static constexpr int alphabet_index(char c) noexcept {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
    if (c >= '0' && c <= '9') return 52 + (c - '0');
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
  }
  constexpr std::uint64_t part(std::size_t at) const noexcept {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i) v = (v << 8) | bytes[at + i];
    return v;
  }
};

}  // namespace brook

template <typename Tag, typename Rep>
struct std::hash<brook::strong_int<Tag, Rep>> {
  std::size_t operator()(brook::strong_int<Tag, Rep> v) const noexcept { return std::hash<Rep>{}(v.value()); }
};

template <typename Tag, typename Rep>
struct fmt::formatter<brook::strong_int<Tag, Rep>> : fmt::formatter<Rep> {
  template <typename Ctx>
  auto format(brook::strong_int<Tag, Rep> v, Ctx& ctx) const {
    return fmt::formatter<Rep>::format(v.value(), ctx);
  }
};

template <>
struct std::hash<brook::uuid> {
  std::size_t operator()(const brook::uuid& u) const noexcept {
    return std::hash<std::uint64_t>()(u.msb() ^ (u.lsb() * 0x9e3779b97f4a7c15ULL));
  }
};

template <>
struct fmt::formatter<brook::uuid> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(const brook::uuid& u, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(u.to_string(), ctx);
  }
};

template <>
struct std::hash<brook::topic_partition> {
  std::size_t operator()(const brook::topic_partition& tp) const noexcept {
    return std::hash<std::string>{}(tp.topic) * 31 + std::hash<std::int32_t>{}(tp.partition.value());
  }
};

/// `{}` prints "topic-partition", as Kafka's TopicPartition.toString does.
template <>
struct fmt::formatter<brook::topic_partition> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(const brook::topic_partition& tp, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(fmt::format("{}-{}", tp.topic, tp.partition.value()), ctx);
  }
};
