// brook's side of the kafkajs wire-protocol check (driven by kafkajs_protocol.js).
//
//   protocol_tool   stdin: one command per line, stdout: one JSON line per command
//
//   decode-request <apiKey> <version> <hex body>   codec::decode of the request body ("-" = no bytes)
//       -> {"ok":true,"body":{...}}  or  {"ok":false,"code":"CORRUPT_MESSAGE","message":"..."}
//   random-response <apiKey> <version> <seed>      a response with seeded random values, encoded
//       -> {"ok":true,"hex":"...","body":{...}}
//   parse-records <hex>                            record_batch_view::parse of each batch in turn
//       -> {"ok":true,"batches":[{"baseOffset":"0",...,"records":[{"offset":"0",...}]}]}
//       or, for a legacy message set (magic 0 or 1 at byte 16), this tool's own reading of it:
//       -> {"ok":true,"legacy":[{"offset":"0","size":..,"crc":..,"magic":1,...}]}
//
// Bodies are message_json (tests/support/message_json.hpp): Kafka's field names, the fields of
// the version only, 64-bit integers as decimal strings, bytes and records as lowercase hex.
//
// Random responses stay within what kafkajs 2.2.4 reads (kafkajs_protocol.js lists why):
//   - an "ErrorCode" is never 35 (UNSUPPORTED_VERSION): kafkajs's decode throws on it;
//   - "Records" are real RecordBatch v2 bytes (1-2 batches built with record_batch_builder),
//     empty or null; in Fetch v0-v3 they are a legacy message set instead (magic 0 for v0-v1,
//     magic 1 for v2-v3, what a broker down-converts to for those versions and all kafkajs
//     reads there), 0-3 uncompressed messages written here, never null (kafkajs's v0-v3
//     reader cannot skip null records);
//   - DescribeConfigs ResourceType and ConfigSource are, half the time, values kafkajs
//     derives isDefault / configSource from;
//   - strings are short, from [a-zA-Z0-9._-] with an occasional multi-byte UTF-8 character.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include <brook/codec/schema.hpp>
#include <brook/core/error.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/protocol/messages.hpp>

#include "../support/message_json.hpp"

namespace {

using brook::test::hex_of;
using brook::test::json_string;

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "protocol_tool: %s\n", msg.c_str());
  std::exit(2);
}

std::vector<std::byte> from_hex(std::string_view h) {
  if (h == "-") return {};
  if (h.size() % 2 != 0) die(fmt::format("odd-length hex ({} digits)", h.size()));
  auto nibble = [](char c) -> unsigned {
    if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
    die(fmt::format("bad hex digit '{}'", c));
  };
  std::vector<std::byte> out(h.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::byte>((nibble(h[2 * i]) << 4) | nibble(h[2 * i + 1]));
  return out;
}

std::string error_json(const brook::error& e) {
  return fmt::format(R"({{"ok":false,"code":"{}","message":{}}})",
                     brook::errc_name(static_cast<brook::errc>(e.code().value())), json_string(e.message()));
}

// ---------------------------------------------------------------- random responses

// The codec's own type traits.
template <typename T>
using is_vec = brook::codec::detail::is_vector<T>;
template <typename T>
using is_opt = brook::codec::detail::is_optional<T>;
template <typename T>
using is_strong = brook::codec::detail::is_strong_int<T>;

/// Fills a message with random values for one version, walking its schema (as
/// tests/support/random_message.hpp does), with the constraints in the header comment.
class response_randomizer {
 public:
  /// legacy_magic: -1 for RecordBatch v2 records, else the message-set magic (0 or 1).
  response_randomizer(std::uint64_t seed, int legacy_magic) : g_(seed), legacy_magic_(legacy_magic) {}

  template <brook::codec::described_message T>
  T make(std::int16_t version) {
    T m{};
    fill_struct(m, version);
    return m;
  }

 private:
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(g_() % n); }
  bool coin() { return below(2) == 0; }

  template <typename S>
  void fill_struct(S& obj, std::int16_t version) {
    std::apply(
        [&](const auto&... f) {
          (
              [&](const auto& fd) {
                if (!fd.present.contains(version)) return;
                fill(obj.*fd.member, fd.name, version, fd.nullable.contains(version));
              }(f),
              ...);
        },
        brook::codec::schema_of<S>.fields);
  }

  std::int64_t random_int64() {
    switch (below(4)) {
      case 0: return -1;
      case 1: return static_cast<std::int64_t>(below(1000));
      default: return static_cast<std::int64_t>(g_());
    }
  }

  std::string random_string() {
    static constexpr std::string_view plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
    static constexpr std::string_view wide[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x99\x82"};  // é € 🙂
    std::string s;
    for (std::size_t n = below(10); n > 0; --n) {
      if (below(16) == 0) {
        s += wide[below(3)];
      } else {
        s += plain[below(plain.size())];
      }
    }
    return s;
  }

  brook::protocol::records random_records(bool nullable) {
    if (legacy_magic_ >= 0) return legacy_records();
    const auto pick = below(6);
    if (pick == 0 && nullable) return brook::protocol::records();
    if (pick == 1) return brook::protocol::records::view(empty_);
    auto& out = pool_.emplace_back();
    std::int64_t base = static_cast<std::int64_t>(below(1u << 20));
    for (std::size_t nb = 1 + below(2); nb > 0; --nb) {
      brook::batch_options o;
      if (coin()) {
        o.producer_id = static_cast<std::int64_t>(below(1u << 30));
        o.producer_epoch = static_cast<std::int16_t>(below(100));
        o.base_sequence = static_cast<std::int32_t>(below(1000));
        o.transactional = coin();
      }
      o.partition_leader_epoch = static_cast<std::int32_t>(below(50)) - 1;
      brook::record_batch_builder b(o, 256);
      b.reset(brook::offset{base});
      const std::int64_t ts0 = 1'600'000'000'000 + static_cast<std::int64_t>(below(1'000'000'000));
      const std::size_t n = 1 + below(3);
      std::deque<std::string> keep;
      for (std::size_t i = 0; i < n; ++i) {
        auto bytes = [&]() -> brook::nullable_bytes {
          if (below(5) == 0) return brook::nullable_bytes::null();
          auto& s = keep.emplace_back(below(12), '\0');
          for (auto& c : s) c = static_cast<char>(below(256));
          return brook::nullable_bytes(std::string_view(s));
        };
        const auto key = bytes();
        const auto value = bytes();
        std::vector<brook::record_header> hs;
        for (std::size_t k = below(3); k > 0; --k) {
          // Header keys start with a letter: kafkajs gathers headers into an object, where
          // integer-like keys would be reordered.
          auto& hk = keep.emplace_back(1, 'h');
          hk += random_string();
          hs.push_back({hk, bytes()});
        }
        b.append(ts0 + static_cast<std::int64_t>(below(5000)), key, value, hs);
      }
      auto batch = b.finish();
      out.insert(out.end(), batch.begin(), batch.end());
      base += static_cast<std::int64_t>(n) + static_cast<std::int64_t>(below(3));
    }
    return brook::protocol::records::view(out);
  }

  static void put_be(std::vector<std::byte>& out, std::uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) out.push_back(static_cast<std::byte>(v >> (8 * i)));
  }
  // CRC-32 (IEEE, reflected 0xEDB88320), the checksum of message format v0/v1.
  static std::uint32_t crc32_ieee(std::span<const std::byte> b) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (auto x : b) {
      c ^= static_cast<std::uint32_t>(x);
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
  }
  void put_legacy_bytes(std::vector<std::byte>& m) {
    if (below(5) == 0) {
      put_be(m, 0xFFFFFFFFu, 4);  // null
      return;
    }
    const std::size_t n = below(12);
    put_be(m, n, 4);
    for (std::size_t i = 0; i < n; ++i) m.push_back(static_cast<std::byte>(g_()));
  }
  // A message set of message format v0/v1: [offset int64, size int32, crc uint32, magic int8,
  // attributes int8, (timestamp int64, magic 1), key bytes, value bytes].
  brook::protocol::records legacy_records() {
    auto& out = pool_.emplace_back();
    const std::int64_t base = static_cast<std::int64_t>(below(1u << 20));
    for (std::size_t i = 0, n = below(4); i < n; ++i) {
      std::vector<std::byte> m;  // from the magic byte on
      m.push_back(static_cast<std::byte>(legacy_magic_));
      m.push_back(std::byte{0});  // attributes: no compression
      if (legacy_magic_ == 1)
        put_be(m, static_cast<std::uint64_t>(1'600'000'000'000 + static_cast<std::int64_t>(below(1'000'000'000))), 8);
      put_legacy_bytes(m);
      put_legacy_bytes(m);
      put_be(out, static_cast<std::uint64_t>(base + static_cast<std::int64_t>(i)), 8);
      put_be(out, 4 + m.size(), 4);
      put_be(out, crc32_ieee(m), 4);
      out.insert(out.end(), m.begin(), m.end());
    }
    return brook::protocol::records::view(out);
  }

  template <typename T>
  void fill(T& v, std::string_view name, std::int16_t version, bool nullable) {
    if constexpr (std::is_same_v<T, bool>) {
      v = coin();
    } else if constexpr (is_strong<T>::value) {
      typename T::rep x{};
      fill(x, name, version, false);
      v = T(x);
    } else if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(below(2));
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      v = random_int64();
    } else if constexpr (std::is_same_v<T, std::int16_t>) {
      if (name == "ErrorCode") {
        do {
          v = below(3) == 0 ? std::int16_t{0} : static_cast<std::int16_t>(static_cast<int>(below(130)) - 1);
        } while (v == 35);
      } else {
        v = static_cast<std::int16_t>(g_());
      }
    } else if constexpr (std::is_same_v<T, std::int8_t>) {
      // Half the time a value kafkajs gives a meaning to (DescribeConfigs derives isDefault
      // and configSource from these), else any.
      if (name == "ResourceType" && coin()) {
        v = static_cast<std::int8_t>(2 * (1 + below(2)));  // TOPIC, BROKER
      } else if ((name == "ConfigSource" || name == "Source") && coin()) {
        v = static_cast<std::int8_t>(below(7));  // UNKNOWN .. DYNAMIC_BROKER_LOGGER_CONFIG
      } else {
        v = static_cast<std::int8_t>(g_());
      }
    } else if constexpr (std::is_integral_v<T>) {
      v = below(4) == 0 ? static_cast<T>(below(3)) - 1 : static_cast<T>(g_());
    } else if constexpr (std::is_same_v<T, double>) {
      v = static_cast<double>(below(100000)) / 8.0;
    } else if constexpr (std::is_same_v<T, brook::uuid>) {
      v = brook::uuid::from_parts(g_(), g_());
    } else if constexpr (std::is_same_v<T, std::string>) {
      v = random_string();
    } else if constexpr (std::is_same_v<T, std::vector<std::byte>>) {
      v.resize(below(12));
      for (auto& b : v) b = static_cast<std::byte>(g_());
    } else if constexpr (std::is_same_v<T, brook::protocol::records>) {
      v = random_records(nullable);
    } else if constexpr (is_opt<T>::value) {
      if (nullable && below(4) == 0) {
        v.reset();
        return;
      }
      v.emplace();
      fill(*v, name, version, false);
    } else if constexpr (is_vec<T>::value) {
      v.clear();
      v.resize(depth_ > 2 ? 0 : below(4));
      ++depth_;
      for (auto& e : v) fill(e, name, version, false);
      --depth_;
    } else {
      static_assert(brook::codec::described<T>);
      fill_struct(v, version);
    }
  }

  std::mt19937_64 g_;
  int legacy_magic_;
  std::deque<std::vector<std::byte>> pool_;
  std::vector<std::byte> empty_;
  int depth_ = 0;
};

// ---------------------------------------------------------------- commands

template <typename Fn>
bool with_api(int key, Fn&& fn) {
  bool found = false;
  brook::protocol::for_each_api([&](auto api) {
    using A = decltype(api);
    if (static_cast<int>(A::key) != key || found) return;
    found = true;
    fn(api);
  });
  return found;
}

std::string decode_request(int key, std::int16_t version, std::string_view hex) {
  const auto bytes = from_hex(hex);
  std::string out;
  if (!with_api(key, [&](auto api) {
        using Req = typename decltype(api)::request;
        auto r = brook::codec::decode<Req>(bytes, version);
        out = r ? fmt::format(R"({{"ok":true,"body":{}}})", brook::test::message_json(*r, version))
                : error_json(r.error());
      }))
    die(fmt::format("no API with key {}", key));
  return out;
}

std::string random_response(int key, std::int16_t version, std::uint64_t seed) {
  std::string out;
  const bool fetch = key == static_cast<int>(brook::protocol::api_key::fetch);
  const int legacy_magic = fetch && version < 2 ? 0 : fetch && version < 4 ? 1 : -1;
  if (!with_api(key, [&](auto api) {
        using Resp = typename decltype(api)::response;
        response_randomizer g(seed, legacy_magic);
        const auto m = g.template make<Resp>(version);
        auto bytes = brook::codec::encode(m, version);
        out = bytes ? fmt::format(R"({{"ok":true,"hex":"{}","body":{}}})", hex_of(*bytes),
                                  brook::test::message_json(m, version))
                    : error_json(bytes.error());
      }))
    die(fmt::format("no API with key {}", key));
  return out;
}

std::string nullable_json(const brook::nullable_bytes& b) {
  return b.is_null() ? std::string("null") : '"' + hex_of(b.span()) + '"';
}

std::uint64_t load_be(std::span<const std::byte> b, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<std::uint64_t>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

// This tool's own reading of a legacy message set it wrote (no compression); dies on anything
// else, as that would be a bug of the tool.
std::string parse_legacy(std::span<const std::byte> b) {
  std::string o = R"({"ok":true,"legacy":[)";
  std::size_t at = 0;
  auto need = [&](std::size_t n) {
    if (at + n > b.size()) die("legacy message set ends early");
  };
  auto bytes_json = [&]() {
    need(4);
    const auto len = static_cast<std::int32_t>(load_be(b, at, 4));
    at += 4;
    if (len < 0) return std::string("null");
    need(static_cast<std::size_t>(len));
    auto s = '"' + hex_of(b.subspan(at, static_cast<std::size_t>(len))) + '"';
    at += static_cast<std::size_t>(len);
    return s;
  };
  bool first = true;
  while (at < b.size()) {
    need(8 + 4 + 4 + 2);
    const auto offset = static_cast<std::int64_t>(load_be(b, at, 8));
    const auto size = static_cast<std::int32_t>(load_be(b, at + 8, 4));
    const auto crc = static_cast<std::int32_t>(load_be(b, at + 12, 4));
    const int magic = static_cast<int>(b[at + 16]);
    const int attributes = static_cast<int>(static_cast<std::int8_t>(b[at + 17]));
    at += 18;
    std::string ts;
    if (magic == 1) {
      need(8);
      ts = fmt::format(R"("timestamp":"{}",)", static_cast<std::int64_t>(load_be(b, at, 8)));
      at += 8;
    }
    const auto key = bytes_json();
    const auto value = bytes_json();
    if (!first) o += ',';
    first = false;
    o += fmt::format(R"({{"offset":"{}","size":{},"crc":{},"magic":{},"attributes":{},{}"key":{},"value":{}}})", offset,
                     size, crc, magic, attributes, ts, key, value);
  }
  return o + "]}";
}

std::string parse_records(std::string_view hex) {
  const auto bytes = from_hex(hex);
  if (bytes.size() > 16 && static_cast<int>(bytes[16]) < 2) return parse_legacy(bytes);
  std::span<const std::byte> rest(bytes);
  std::string o = R"({"ok":true,"batches":[)";
  bool first_batch = true;
  while (!rest.empty()) {
    auto r = brook::record_batch_view::parse(rest);  // CRC and every record checked
    if (!r) return error_json(r.error());
    const auto& h = r->header();
    if (!first_batch) o += ',';
    first_batch = false;
    o += fmt::format(
        R"({{"baseOffset":"{}","partitionLeaderEpoch":{},"magic":{},"attributes":{},"lastOffsetDelta":{},)"
        R"("baseTimestamp":"{}","maxTimestamp":"{}","producerId":"{}","producerEpoch":{},"baseSequence":{},)"
        R"("records":[)",
        h.base_offset.value(), h.partition_leader_epoch, int{h.magic}, h.attributes, h.last_offset_delta,
        h.base_timestamp, h.max_timestamp, h.producer_id, h.producer_epoch, h.base_sequence);
    bool first = true;
    for (const auto& rec : *r) {
      if (!first) o += ',';
      first = false;
      o += fmt::format(R"({{"offset":"{}","timestamp":"{}","key":{},"value":{},"headers":[)", rec.offset().value(),
                       rec.timestamp(), nullable_json(rec.key()), nullable_json(rec.value()));
      bool hfirst = true;
      for (const auto& hd : rec.headers()) {
        if (!hfirst) o += ',';
        hfirst = false;
        o += fmt::format(R"([{},{}])", json_string(hd.key), nullable_json(hd.value));
      }
      o += "]}";
    }
    o += "]}";
    rest = rest.subspan(r->size_bytes());
  }
  return o + "]}";
}

std::string run(const std::string& line) {
  std::istringstream in(line);
  std::string cmd;
  in >> cmd;
  if (cmd == "parse-records") {
    std::string hex;
    in >> hex;
    return parse_records(hex);
  }
  int key = -1, version = -1;
  if (!(in >> key >> version)) die("expected <apiKey> <version>: " + line);
  if (cmd == "decode-request") {
    std::string hex;
    if (!(in >> hex)) die("expected <hex body>: " + line);
    return decode_request(key, static_cast<std::int16_t>(version), hex);
  }
  if (cmd == "random-response") {
    std::uint64_t seed = 0;
    if (!(in >> seed)) die("expected <seed>: " + line);
    return random_response(key, static_cast<std::int16_t>(version), seed);
  }
  die("unknown command: " + cmd);
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::cout << run(line) << '\n';
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}
