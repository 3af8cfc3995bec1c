// Checks every codec test runs (tests/codecs/): seeded inputs, round trips at several levels,
// and hostile payloads (empty, garbage, every truncation, trailing bytes, a bomb).
//
// Thread-safety: functions of their arguments; call from any thread.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <brook/compression/compression_codec.hpp>
#include <brook/core/byte_buffer.hpp>
#include <support/seeds.hpp>

namespace brook::test {

inline byte_buffer to_bytes(std::string_view s) {
  byte_buffer out(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) out[i] = static_cast<std::byte>(s[i]);
  return out;
}

/// `n` bytes from a seeded generator: incompressible.
inline byte_buffer random_bytes(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  byte_buffer out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng() & 0xff);
  return out;
}

/// About `n` bytes of JSON-like events with repeated keys, what Kafka batches often hold.
inline byte_buffer json_like(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  static constexpr std::string_view kinds[] = {"signup", "login", "purchase", "logout"};
  std::string s;
  while (s.size() < n) {
    s += R"({"user_id":)" + std::to_string(rng() % 100000) + R"(,"event":")" + std::string(kinds[rng() % 4]) +
         R"(","ts":)" + std::to_string(1'700'000'000'000 + rng() % 1'000'000) + R"(,"amount":)" +
         std::to_string(rng() % 10000) + "}\n";
  }
  s.resize(n);
  return to_bytes(s);
}

/// Compresses and decompresses `in` at `level`; the output is appended after a prefix that
/// must survive, and decompression must give back exactly `in`.
inline byte_buffer check_round_trip(const compression_codec& codec, const byte_buffer& in, int level) {
  byte_buffer compressed = to_bytes("prefix");
  auto c = codec.compress(in, level, compressed);
  REQUIRE(c);
  REQUIRE(compressed.size() >= 6);
  CHECK(byte_buffer(compressed.begin(), compressed.begin() + 6) == to_bytes("prefix"));
  compressed.erase(compressed.begin(), compressed.begin() + 6);
  byte_buffer back = to_bytes("xy");
  auto d = codec.decompress(compressed, in.size(), back);
  INFO("level " << level << ", " << in.size() << " bytes");
  REQUIRE(d);
  REQUIRE(back.size() == in.size() + 2);
  CHECK(std::equal(in.begin(), in.end(), back.begin() + 2));
  if (!in.empty()) {  // one byte less than the content is too much
    byte_buffer capped;
    CHECK(codec.decompress(compressed, in.size() - 1, capped) == errc::record_too_large);
    CHECK(capped.empty());
  }
  return compressed;
}

/// A buffer of `capacity` bytes' room, every byte of it once set to `fill`, now empty: what
/// a codec leaves unwritten in it shows as `fill`.
inline byte_buffer stale_buffer(std::size_t capacity, std::byte fill) {
  byte_buffer b(capacity, fill);
  b.clear();
  return b;
}

/// Compressing and decompressing `in` into buffers whose spare room holds stale 0x00 bytes
/// or stale 0xff bytes gives the same bytes: no output byte is one the codec did not write
/// (byte_buffer's growth leaves bytes as they were).
inline void check_no_stale_bytes(const compression_codec& codec, const byte_buffer& in, int level) {
  const std::size_t room = 2 * in.size() + (1 << 16);
  auto zeros = stale_buffer(room, std::byte{0x00}), ones = stale_buffer(room, std::byte{0xff});
  REQUIRE(codec.compress(in, level, zeros));
  REQUIRE(codec.compress(in, level, ones));
  CHECK(zeros == ones);
  auto back_zeros = stale_buffer(room, std::byte{0x00}), back_ones = stale_buffer(room, std::byte{0xff});
  REQUIRE(codec.decompress(zeros, in.size(), back_zeros));
  REQUIRE(codec.decompress(zeros, in.size(), back_ones));
  CHECK(back_zeros == in);
  CHECK(back_ones == in);
}

/// Round trips of seeded random and JSON-like inputs of several sizes at each level.
inline void check_round_trips(const compression_codec& codec, const std::vector<int>& levels) {
  const std::uint64_t seed = property_seed(static_cast<std::uint64_t>(codec.type()) * 1000);
  INFO("seed " << seed << " (replay: " << seed_base_hint() << "this test)");
  for (const int level : levels) {
    REQUIRE(codec.valid_level(level));
    for (const std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{100}, std::size_t{70'000}, std::size_t{300'000}}) {
      check_round_trip(codec, random_bytes(seed + n, n), level);
      auto json = json_like(seed + n + 1, n);
      auto compressed = check_round_trip(codec, json, level);
      if (n >= 70'000) CHECK(compressed.size() < n / 2);  // JSON-like events do compress
      check_no_stale_bytes(codec, json, level);
    }
  }
}

/// The decompression of `payload` must fail with `code`, leave `out` as it was, and name the
/// codec in its message.
inline void check_refused(const compression_codec& codec, const byte_buffer& payload, errc code,
                          std::size_t max_bytes = 1 << 20) {
  byte_buffer out = to_bytes("kept");
  auto r = codec.decompress(payload, max_bytes, out);
  REQUIRE_FALSE(r);
  INFO(r.error().to_string());
  CHECK(r == code);
  CHECK(r.error().message().find(std::string(compression_name(codec.type()))) != std::string::npos);
  CHECK(out == to_bytes("kept"));
}

/// Empty, garbage, every truncation of a small valid payload, trailing garbage: all
/// corrupt_message, never a crash (the ASan build runs these too). A truncation to one of
/// `complete_prefixes` is itself a whole payload (xerial's header alone) and must decode.
inline void check_hostile_inputs(const compression_codec& codec,
                                 const std::vector<std::size_t>& complete_prefixes = {}) {
  check_refused(codec, {}, errc::corrupt_message);
  check_refused(codec, to_bytes("this is not a compressed payload at all, just text"), errc::corrupt_message);
  check_refused(codec, random_bytes(7, 1000), errc::corrupt_message);

  byte_buffer valid;
  REQUIRE(codec.compress(json_like(3, 2000), codec.default_level(), valid));
  for (std::size_t n = 0; n < valid.size(); ++n) {
    INFO("truncated to " << n << " of " << valid.size() << " bytes");
    if (std::find(complete_prefixes.begin(), complete_prefixes.end(), n) != complete_prefixes.end()) {
      byte_buffer out;
      CHECK(codec.decompress(byte_buffer(valid.begin(), valid.begin() + n), 1 << 20, out));
      continue;
    }
    check_refused(codec, byte_buffer(valid.begin(), valid.begin() + n), errc::corrupt_message);
  }
  for (const std::string_view tail : {std::string_view("\0", 1), std::string_view("garbage after the payload")}) {
    auto with_tail = valid;
    const auto tail_bytes = to_bytes(tail);
    with_tail.insert(with_tail.end(), tail_bytes.begin(), tail_bytes.end());
    INFO("trailing " << tail.size() << " bytes");
    check_refused(codec, with_tail, errc::corrupt_message);
  }
}

/// A payload that decompresses to far more than 1 MiB is record_too_large with a 1 MiB
/// limit, and the output never held more than the limit plus a window.
inline void check_bomb(const compression_codec& codec, const byte_buffer& bomb) {
  constexpr std::size_t limit = 1 << 20;
  byte_buffer out;
  auto r = codec.decompress(bomb, limit, out);
  REQUIRE_FALSE(r);
  CHECK(r == errc::record_too_large);
  CHECK(r.error().message().find("1048576") != std::string::npos);
  CHECK(out.empty());
  CHECK(out.capacity() <= 4 * limit);
}

/// The set's answers for this codec: found once added, unsupported_compression_type before.
inline void check_enabling(std::shared_ptr<const compression_codec> codec) {
  compression_codecs codecs;
  const auto type = codec->type();
  auto before = codecs.get(type);
  REQUIRE_FALSE(before);
  CHECK(before == errc::unsupported_compression_type);
  CHECK(before.error().message().find(std::string(compression_name(type))) != std::string::npos);
  codecs.add(codec);
  auto after = codecs.get(type);
  REQUIRE(after);
  CHECK(*after == codec.get());
}

}  // namespace brook::test
