// A described message (codec/schema.hpp) printed as JSON with Kafka's field names, walking
// its schema: what another implementation's reading of the same bytes is compared with.
//
//   message_json(m, v)   {"Acks":1,"TimeoutMs":500,"TopicData":[{"Name":"t",...}]}
//
// Only the fields version v has are printed, in the table's order (tagged fields too, when v
// is flexible). Values:
//   bool                                   true / false
//   int8 int16 uint16 int32 uint32,        a JSON number
//   strong ints over 32 bits or less,
//   enums (their underlying value), double
//   int64 and strong ints over int64       a decimal string ("-1"): JSON numbers lose precision
//   string                                 a JSON string; null when an optional is empty
//   bytes, protocol::records               lowercase hex ("" when empty); null when null
//   uuid                                   32 lowercase hex digits
//   arrays / structs                       JSON arrays / objects
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include <brook/codec/schema.hpp>
#include <brook/core/types.hpp>
#include <brook/protocol/records.hpp>

namespace brook::test {

namespace json_detail {
// The codec's own type traits.
template <typename T>
using is_vec = codec::detail::is_vector<T>;
template <typename T>
using is_opt = codec::detail::is_optional<T>;
template <typename T>
using is_strong = codec::detail::is_strong_int<T>;
}  // namespace json_detail

/// Lowercase hex of `b`.
inline std::string hex_of(std::span<const std::byte> b) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (auto x : b) {
    const auto u = static_cast<unsigned>(x);
    s += digits[u >> 4];
    s += digits[u & 15];
  }
  return s;
}

/// `s` as a JSON string literal (quotes included); bytes >= 0x80 pass through (UTF-8).
inline std::string json_string(std::string_view s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20) {
      o += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

namespace json_detail {

template <typename T>
void value_json(std::string& out, const T& v, std::int16_t version);

template <typename S>
void struct_json(std::string& out, const S& obj, std::int16_t version) {
  out += '{';
  bool first = true;
  std::apply(
      [&](const auto&... f) {
        (
            [&](const auto& fd) {
              if (!fd.present.contains(version)) return;
              if (!first) out += ',';
              first = false;
              out += json_string(fd.name);
              out += ':';
              value_json(out, obj.*fd.member, version);
            }(f),
            ...);
      },
      codec::schema_of<S>.fields);
  out += '}';
}

template <typename T>
void value_json(std::string& out, const T& v, std::int16_t version) {
  if constexpr (std::is_same_v<T, bool>) {
    out += v ? "true" : "false";
  } else if constexpr (is_strong<T>::value) {
    value_json(out, v.value(), version);
  } else if constexpr (std::is_enum_v<T>) {
    value_json(out, static_cast<std::underlying_type_t<T>>(v), version);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    out += fmt::format("\"{}\"", v);
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    out += fmt::format("{}", int{v});
  } else if constexpr (std::is_integral_v<T>) {
    static_assert(sizeof(T) <= 4, "64-bit integers other than int64 are not Kafka types");
    out += fmt::format("{}", v);
  } else if constexpr (std::is_same_v<T, double>) {
    out += fmt::format("{}", v);
  } else if constexpr (std::is_same_v<T, uuid>) {
    out += fmt::format("\"{:016x}{:016x}\"", v.msb(), v.lsb());
  } else if constexpr (std::is_same_v<T, std::string>) {
    out += json_string(v);
  } else if constexpr (std::is_same_v<T, std::vector<std::byte>>) {
    out += '"' + hex_of(v) + '"';
  } else if constexpr (std::is_same_v<T, protocol::records>) {
    out += v.is_null() ? std::string("null") : '"' + hex_of(v.bytes()) + '"';
  } else if constexpr (is_opt<T>::value) {
    if (!v) {
      out += "null";
    } else {
      value_json(out, *v, version);
    }
  } else if constexpr (is_vec<T>::value) {
    out += '[';
    bool first = true;
    for (const auto& e : v) {
      if (!first) out += ',';
      first = false;
      value_json(out, e, version);
    }
    out += ']';
  } else {
    static_assert(codec::described<T>, "a field's type must be a Kafka type (see codec/schema.hpp)");
    struct_json(out, v, version);
  }
}

}  // namespace json_detail

/// m at `version` as one line of JSON with Kafka's field names (see the header comment).
template <codec::described T>
std::string message_json(const T& m, std::int16_t version) {
  std::string out;
  json_detail::struct_json(out, m, version);
  return out;
}

}  // namespace brook::test
