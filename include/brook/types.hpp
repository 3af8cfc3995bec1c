// Strong types for the integers that must never be mixed up: offsets,
// partition ids, leader epochs, generation ids, byte positions in a file.
//
// brook::offset{5} + 3 is an offset; offset - offset is a plain count;
// an offset cannot be passed where a file_pos is expected.
//
// Thread-safety: values.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

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
  constexpr strong_int& operator+=(Rep d) noexcept { v_ += d; return *this; }
  constexpr strong_int& operator-=(Rep d) noexcept { v_ -= d; return *this; }
  constexpr strong_int& operator++() noexcept { ++v_; return *this; }
  constexpr strong_int operator++(int) noexcept { auto t = *this; ++v_; return t; }

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

/// Milliseconds since the Unix epoch, as Kafka timestamps are (int64; -1 = none).
using timestamp_ms = std::int64_t;

/// A produce request's acks (Kafka's int16 acks): 0 = none, 1 = the leader, -1 = all in-sync replicas.
enum class acks_mode : std::int8_t { none = 0, leader = 1, all = -1 };

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
