// group/detail/java_string_order: Java's String.compareTo (UTF-16 code units) on UTF-8,
// and the documented total order on invalid UTF-8.
#include <algorithm>
#include <compare>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/group/detail/java_string_order.hpp>

using brook::detail::java_string_compare;
using brook::detail::java_string_less;
using brook::detail::java_utf16_units;

namespace {

std::vector<std::uint32_t> units(std::string_view s) {
  std::vector<std::uint32_t> out;
  for (java_utf16_units u(s); !u.done();) out.push_back(u.next());
  return out;
}

// The order by definition: decode both strings whole, compare the units lexicographically.
std::strong_ordering reference(std::string_view a, std::string_view b) {
  const auto x = units(a), y = units(b);
  return std::lexicographical_compare_three_way(x.begin(), x.end(), y.begin(), y.end());
}

}  // namespace

TEST_CASE("java_string_order: decodes UTF-8 to UTF-16 code units", "[group][java_string_order]") {
  CHECK(units("") == std::vector<std::uint32_t>{});
  CHECK(units("a-1") == std::vector<std::uint32_t>{'a', '-', '1'});
  CHECK(units("\u00e9") == std::vector<std::uint32_t>{0xE9});
  CHECK(units("\uFF71") == std::vector<std::uint32_t>{0xFF71});
  CHECK(units("\U0001F600") == std::vector<std::uint32_t>{0xD83D, 0xDE00});
  CHECK(units("\U00010000\U0010FFFF") == std::vector<std::uint32_t>{0xD800, 0xDC00, 0xDBFF, 0xDFFF});
}

TEST_CASE("java_string_order: BMP and non-BMP as Java orders them", "[group][java_string_order]") {
  // Java: "\uD83D\uDE00".compareTo("\uFF71") < 0 (0xD83D < 0xFF71); bytes say the opposite.
  CHECK(std::string("\U0001F600") > std::string("\uFF71"));
  CHECK(java_string_less("\U0001F600", "\uFF71"));
  CHECK_FALSE(java_string_less("\uFF71", "\U0001F600"));
  // Below U+D800 both orders agree.
  CHECK(java_string_less("\u4E00", "\U0001F600"));
  CHECK(java_string_less("z", "\u00e9"));
  // The supplementary character against every part of the BMP above the surrogates.
  CHECK(java_string_less("\U0001F600", "\uE000"));
  CHECK(java_string_less("\U0010FFFF", "\uFFFF"));
  CHECK(java_string_less("\U00010000", "\U0010FFFF"));
  // Equal prefixes: the order is decided after them, by code units.
  CHECK(java_string_less("client-\U0001F600-1", "client-\uFF71-0"));
  CHECK(java_string_less("client-\U0001F600", "client-\U0001F600-"));
  CHECK(java_string_less("\U0001F600", "\U0001F601"));
  // Shared leading bytes of different characters (U+1F600 and U+1F900 share F0 9F).
  CHECK(java_string_less("\U0001F600", "\U0001F900"));
  CHECK(java_string_compare("same", "same") == std::strong_ordering::equal);
  CHECK(java_string_compare("", "") == std::strong_ordering::equal);
  CHECK(java_string_less("", "\U0001F600"));
  CHECK(java_string_less("ab", "abc"));

  std::vector<std::string> ids{"\uFF71", "b", "\U0001F600", "a", "\u00e9", "\U0001F600a", "\uE000"};
  std::sort(ids.begin(), ids.end(), java_string_less);
  CHECK(ids == std::vector<std::string>{"a", "b", "\u00e9", "\U0001F600", "\U0001F600a", "\uE000", "\uFF71"});
}

TEST_CASE("java_string_order: invalid UTF-8 sorts after every code unit, byte by byte", "[group][java_string_order]") {
  const std::string stray("\x80", 1), ff("\xff", 1), truncated("\xf0\x9f\x98", 3);
  const std::string surrogate("\xed\xa0\xbd", 3), overlong("\xc0\xaf", 2), too_big("\xf4\x90\x80\x80", 4);
  CHECK(units(stray) == std::vector<std::uint32_t>{0x10080});
  CHECK(units(truncated) == std::vector<std::uint32_t>{0x100F0, 0x1009F, 0x10098});
  CHECK(units(surrogate) == std::vector<std::uint32_t>{0x100ED, 0x100A0, 0x100BD});
  CHECK(units(overlong) == std::vector<std::uint32_t>{0x100C0, 0x100AF});
  CHECK(units(too_big) == std::vector<std::uint32_t>{0x100F4, 0x10090, 0x10080, 0x10080});
  // A bad byte, then decoding goes on: "\xff" "a" is two units.
  CHECK(units(ff + "a") == std::vector<std::uint32_t>{0x100FF, 'a'});

  CHECK(java_string_less("\uFFFF", stray));
  CHECK(java_string_less("\U0010FFFF", stray));
  CHECK(java_string_less(stray, ff));
  // A truncated sequence is not its completion's prefix: its first byte is a bad unit.
  CHECK(java_string_less("\U0001F600", truncated));
  CHECK(java_string_less("\uFF71", truncated));
  // Differing only inside a sequence: "\xc3" "A" (bad, 'A') against "\xc3\xa9" (U+00E9).
  CHECK(java_string_less("\u00e9", std::string("\xc3"
                                               "A")));
  CHECK(java_string_less("\u00e9", std::string("\xc3")));
  // Equal exactly when the bytes are equal.
  CHECK(java_string_compare(truncated, truncated) == std::strong_ordering::equal);
  CHECK(java_string_compare(stray, std::string("\x81", 1)) != std::strong_ordering::equal);
}

TEST_CASE("java_string_order: a strict total order that skips shared bytes correctly", "[group][java_string_order]") {
  // Random strings over an alphabet of troublesome bytes: the fast path over shared bytes
  // agrees with decoding from the start, and the order is total and transitive.
  const std::vector<std::string> pieces{
      "a",    "\x7f", "\xc3\xa9",     "\xc3",         "\xa9", "\x80", "\xef\xbd\xb1", "\xef\xbd", "\xf0\x9f\x98\x80",
      "\xf0", "\x9f", "\xed\xa0\xbd", "\xee\x80\x80", "\xff"};
  std::mt19937 rng(0x6a617661);
  auto random_string = [&] {
    std::string s;
    const int n = std::uniform_int_distribution<int>(0, 4)(rng);
    for (int i = 0; i < n; ++i) s += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(rng)];
    return s;
  };
  std::vector<std::string> all;
  for (int i = 0; i < 400; ++i) all.push_back(random_string());
  for (const auto& a : all)
    for (const auto& b : all) {
      INFO("a=" << a << " b=" << b);
      REQUIRE(java_string_compare(a, b) == reference(a, b));
      REQUIRE((java_string_compare(a, b) == 0) == (a == b));
      REQUIRE(java_string_compare(b, a) == (0 <=> java_string_compare(a, b)));
    }
  std::sort(all.begin(), all.end(), java_string_less);
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = i + 1; j < all.size(); ++j) REQUIRE_FALSE(java_string_less(all[j], all[i]));
}
