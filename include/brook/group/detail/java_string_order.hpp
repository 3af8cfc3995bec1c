// Java's String order (String.compareTo, TreeMap, TreeSet, Collections.sort) on UTF-8 strings.
//
// Java compares strings by UTF-16 code units. For UTF-8 bytes that is byte order except
// where a code point above U+FFFF (a surrogate pair, units 0xD800..0xDFFF) meets one in
// U+E000..U+FFFF: Java puts "\U0001F600" (0xD83D 0xDE00) before "\uFF71" (0xFF71), byte
// order after (F0 9F 98 80 > EF BD B1). Kafka's assignors order member ids and
// group.instance.ids this way, and both can be any UTF-8. Topic names need not: Kafka
// allows only [a-zA-Z0-9._-] in them (storage/topic_config.hpp), where both orders agree.
//
// Invalid UTF-8 (a byte that does not begin a well-formed sequence: a stray continuation
// byte, an overlong form, an encoded surrogate, anything above U+10FFFF, a truncated
// sequence) never reaches Kafka's assignors, whose strings come from Java's encoder.
// Decision: each such byte counts as one unit that sorts after every UTF-16 code unit,
// invalid bytes among themselves by value; decoding goes on with the next byte. The order
// is therefore total and deterministic, and two strings compare equal exactly when their
// bytes are equal. Nothing reads past either string.
//
// Thread-safety: pure functions.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace brook::detail {

/// Walks a UTF-8 string as Java's UTF-16 code units (invalid bytes as 0x10000 + byte value).
/// Thread-safety: none (a cursor over a string it does not own); distinct cursors are independent.
class java_utf16_units {
 public:
  explicit java_utf16_units(std::string_view s) noexcept : s_(s) {}

  bool done() const noexcept { return pending_ == 0 && pos_ == s_.size(); }

  /// The next unit. REQUIRES: !done().
  std::uint32_t next() noexcept {
    if (pending_ != 0) {
      const std::uint32_t u = pending_;
      pending_ = 0;
      return u;
    }
    const auto b0 = byte(pos_);
    if (b0 < 0x80) {
      ++pos_;
      return b0;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    std::uint32_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte (Unicode Table 3-7)
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      len = 2, cp = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      len = 3, cp = b0 & 0x0F;
      if (b0 == 0xE0) lo = 0xA0;  // no overlong forms
      if (b0 == 0xED) hi = 0x9F;  // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      len = 4, cp = b0 & 0x07;
      if (b0 == 0xF0) lo = 0x90;  // no overlong forms
      if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    }
    if (len == 0 || s_.size() - pos_ < len) return invalid();
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = byte(pos_ + k);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return invalid();
      cp = (cp << 6) | (b & 0x3F);
    }
    pos_ += len;
    if (cp < 0x10000) return cp;
    cp -= 0x10000;
    pending_ = 0xDC00 + (cp & 0x3FF);
    return 0xD800 + (cp >> 10);
  }

 private:
  std::uint32_t byte(std::size_t i) const noexcept { return static_cast<unsigned char>(s_[i]); }
  std::uint32_t invalid() noexcept { return 0x10000 + byte(pos_++); }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::uint32_t pending_ = 0;  // the low surrogate still to return, or 0
};

/// Java's a.compareTo(b) for UTF-8 strings, as an ordering (invalid UTF-8: see the top of this file).
inline std::strong_ordering java_string_compare(std::string_view a, std::string_view b) noexcept {
  // Skip the bytes both share, but restart decoding where a unit begins in both: at the
  // first difference if both have a byte there and neither is a continuation byte, else at
  // the last shared byte that is not one (no sequence spans such a byte), else at 0.
  const auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  std::size_t same = 0;
  while (same < a.size() && same < b.size() && a[same] == b[same]) ++same;
  if (same == a.size() && same == b.size()) return std::strong_ordering::equal;
  if (same == a.size() || same == b.size() || continuation(a[same]) || continuation(b[same]))
    while (same > 0)
      if (!continuation(a[--same])) break;
  java_utf16_units x(a.substr(same)), y(b.substr(same));
  while (!x.done() && !y.done()) {
    const auto u = x.next(), v = y.next();
    if (u != v) return u <=> v;
  }
  return x.done() == y.done() ? std::strong_ordering::equal
                              : (x.done() ? std::strong_ordering::less : std::strong_ordering::greater);
}

/// Whether Java's String.compareTo puts `a` before `b` (a strict total order on byte strings).
inline bool java_string_less(std::string_view a, std::string_view b) noexcept { return java_string_compare(a, b) < 0; }

}  // namespace brook::detail
