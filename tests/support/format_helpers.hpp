// Test helpers for the format layer: owning models of records and batches,
// building a batch from a model, reading a parsed batch back into a model,
// hex, an independent big-endian reader and an independent bitwise CRC-32C
// (used to check brook's table/SSE implementations, never built from them).
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/compression/compression_codec.hpp>
#include <brook/format/bytes.hpp>
#include <brook/format/record.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>

namespace brook::test {

using bytes = std::vector<std::byte>;
using opt_string = std::optional<std::string>;

struct test_header {
  std::string key;
  opt_string value;
  friend bool operator==(const test_header&, const test_header&) = default;
};

struct test_record {
  timestamp_ms ts = 0;
  opt_string key;
  opt_string value;
  std::vector<test_header> headers;
  friend bool operator==(const test_record&, const test_record&) = default;
};

inline nullable_bytes to_nullable(const opt_string& s) {
  return s ? nullable_bytes(std::string_view(*s)) : nullable_bytes::null();
}
inline opt_string to_opt(const nullable_bytes& b) {
  if (b.is_null()) return std::nullopt;
  return b.to_string();
}

/// A builder at `base` holding `recs`, not yet finished.
inline record_batch_builder filled_builder(const std::vector<test_record>& recs, brook::offset base,
                                           batch_options opts) {
  record_batch_builder b(opts, 64);  // small initial capacity: exercises growth
  b.reset(base);
  std::vector<record_header> hs;
  for (const auto& r : recs) {
    hs.clear();
    for (const auto& h : r.headers) hs.push_back(record_header{h.key, to_nullable(h.value)});
    b.append(r.ts, to_nullable(r.key), to_nullable(r.value), hs);
  }
  return b;
}

/// Builds one batch of `recs` with brook's builder and returns an owning copy.
inline bytes build_batch(const std::vector<test_record>& recs, brook::offset base = brook::offset{0},
                         batch_options opts = {}) {
  auto b = filled_builder(recs, base, opts);
  auto s = b.finish();
  return bytes(s.begin(), s.end());
}

/// Builds one batch of `recs` compressed with `codec` at its default level.
inline bytes build_batch(const std::vector<test_record>& recs, const compression_codec& codec,
                         brook::offset base = brook::offset{0}, batch_options opts = {}) {
  auto b = filled_builder(recs, base, opts);
  auto s = b.finish(codec, codec.default_level());
  REQUIRE(s.has_value());
  return bytes(s->begin(), s->end());
}

/// The header of `batch` (its attributes' codec bits set to `codec`) followed by `payload`
/// as the records, with batchLength and the CRC made to match: a compressed batch whose
/// payload says whatever a test wants.
inline bytes with_payload(const bytes& batch, compression_type codec, std::span<const std::byte> payload) {
  bytes out(batch_layout::header_size + payload.size());
  std::memcpy(out.data(), batch.data(), batch_layout::header_size);
  if (!payload.empty()) std::memcpy(out.data() + batch_layout::header_size, payload.data(), payload.size());
  const auto attrs = static_cast<std::uint16_t>(detail::load_be16(out.data() + batch_layout::attributes));
  detail::store_be16(out.data() + batch_layout::attributes,
                     static_cast<std::int16_t>((attrs & ~0x7) | static_cast<int>(codec)));
  detail::store_be32(out.data() + batch_layout::batch_length,
                     static_cast<std::int32_t>(out.size() - batch_layout::log_overhead));
  update_batch_crc(std::span<std::byte>(out));
  return out;
}

/// The records of a parsed batch, as owning models (timestamps as the view reports them).
inline std::vector<test_record> read_records(const record_batch_view& v) {
  std::vector<test_record> out;
  for (const auto& r : v) {
    test_record t;
    t.ts = r.timestamp();
    t.key = to_opt(r.key());
    t.value = to_opt(r.value());
    for (const auto& h : r.headers()) t.headers.push_back(test_header{std::string(h.key), to_opt(h.value)});
    out.push_back(std::move(t));
  }
  return out;
}

/// Offsets of a parsed batch's records, in iteration order.
inline std::vector<std::int64_t> read_offsets(const record_batch_view& v) {
  std::vector<std::int64_t> out;
  for (const auto& r : v) out.push_back(r.offset().value());
  return out;
}

inline std::span<const std::byte> cspan(const bytes& b) { return {b.data(), b.size()}; }
inline std::span<std::byte> mspan(bytes& b) { return {b.data(), b.size()}; }

inline bytes from_hex(std::string_view h) {
  bytes out;
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  int hi = -1;
  for (char c : h) {
    int n = nib(c);
    if (n < 0) continue;  // spaces and separators are allowed
    if (hi < 0) {
      hi = n;
    } else {
      out.push_back(static_cast<std::byte>(hi * 16 + n));
      hi = -1;
    }
  }
  return out;
}

inline std::string to_hex(std::span<const std::byte> b) {
  std::string s;
  s.reserve(b.size() * 2);
  for (auto x : b) s += fmt::format("{:02x}", static_cast<unsigned>(x));
  return s;
}

/// Big-endian reads written out with shifts, independent of brook's Boost.Endian helpers.
inline std::uint64_t be_read(const bytes& b, std::size_t pos, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<std::uint8_t>(b.at(pos + i));
  return v;
}
inline void be_write(bytes& b, std::size_t pos, std::size_t n, std::uint64_t v) {
  for (std::size_t i = 0; i < n; ++i) b.at(pos + n - 1 - i) = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

/// Bit-at-a-time CRC-32C (reflected polynomial 0x82F63B78), the textbook definition.
inline std::uint32_t crc32c_bitwise(std::span<const std::byte> d) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (auto x : d) {
    c ^= static_cast<std::uint8_t>(x);
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : (c >> 1);
  }
  return ~c;
}

/// Recomputes the CRC of a whole one-batch buffer with the independent bitwise CRC.
inline void restamp_crc(bytes& b) {
  be_write(b, batch_layout::crc, 4, crc32c_bitwise(cspan(b).subspan(batch_layout::crc_begin)));
}

/// Copy into a heap buffer of exactly n bytes, so ASan reports any read past its end.
inline std::unique_ptr<std::byte[]> exact_copy(std::span<const std::byte> b) {
  auto p = std::make_unique<std::byte[]>(b.size());
  if (!b.empty()) std::memcpy(p.get(), b.data(), b.size());
  return p;
}

/// Random byte strings of varied shapes: null, empty, short, longer; header keys with multi-byte UTF-8.
class record_gen {
 public:
  explicit record_gen(std::uint64_t seed) : rng_(seed) {}

  std::uint64_t u(std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng_);
  }
  std::int64_t s(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_); }
  bool chance(int percent) { return u(0, 99) < static_cast<std::uint64_t>(percent); }

  std::string blob(std::size_t max_len) {
    std::string s(u(0, max_len), '\0');
    for (auto& c : s) c = static_cast<char>(u(0, 255));
    return s;
  }
  opt_string nullable_blob(std::size_t max_len) {
    auto k = u(0, 9);
    if (k == 0) return std::nullopt;
    if (k == 1) return std::string();
    return blob(max_len);
  }
  std::string header_key() {
    static const char* const keys[] = {"a",
                                       "trace-id",
                                       "schl\xC3\xBCssel",
                                       "\xE9\x8D\xB5",
                                       "\xF0\x9F\x94\x91-key",
                                       "",
                                       "content-type",
                                       "\xD0\xBA\xD0\xBB\xD1\x8E\xD1\x87"};
    return keys[u(0, std::size(keys) - 1)];
  }
  std::vector<test_header> headers() {
    std::vector<test_header> hs(u(0, 4));
    for (auto& h : hs) {
      h.key = header_key();  // few distinct keys: repeats are common
      h.value = nullable_blob(12);
    }
    return hs;
  }
  test_record record(timestamp_ms base) {
    test_record r;
    switch (u(0, 4)) {
      case 0: r.ts = base; break;
      case 1: r.ts = base + s(-1000, 1000); break;
      case 2: r.ts = base + s(-(std::int64_t{1} << 40), std::int64_t{1} << 40); break;
      default: r.ts = base + s(0, 100000); break;
    }
    r.key = nullable_blob(16);
    r.value = nullable_blob(64);
    r.headers = headers();
    return r;
  }
  std::vector<test_record> records(std::size_t max_n) {
    timestamp_ms base = s(std::int64_t{1} << 41, std::int64_t{1} << 42);
    std::vector<test_record> rs(u(1, max_n));
    for (auto& r : rs) r = record(base);
    return rs;
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace brook::test
