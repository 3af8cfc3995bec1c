// Kafka messages described declaratively: a struct lists its fields once, with
// the versions each field exists in, and one generic reader and writer encode
// every version of it, flexible or not. This mirrors Kafka's message JSON
// (clients/src/main/resources/common/message/*.json) and its generator: the
// field table is the JSON, transcribed; nothing is written per version by hand.
//
//   struct topic_record {
//     std::string name{};
//     uuid topic_id{};
//     static constexpr auto schema() {
//       using namespace brook::codec;
//       return message<topic_record>({.name = "TopicRecord", .valid = only(0), .flexible = since(0)},
//                                    field("Name", &topic_record::name),
//                                    field("TopicId", &topic_record::topic_id));
//     }
//   };
//   auto bytes = codec::encode(rec, 0);          // result<std::vector<std::byte>>
//   auto back = codec::decode<topic_record>(bytes, 0);
//
// JSON to table:
//   "versions": "2+"                  field(...).in(since(2))          (default: every version)
//   "versions": "1-3"                 field(...).in(between(1, 3))
//   "nullableVersions": "1+"          field(...).nullable_in(since(1)) (default for std::optional
//                                                                      members: nullable wherever present)
//   "taggedVersions": "2+", "tag": 1  field(...).tagged(1, since(2))
//   "ignorable": true                 field(...).ignorable()
//   "default": X                      the member's default initializer
//   "flexibleVersions": "4+"          message info .flexible = since(4)
//
// A nested struct (an array element or a struct field) lists its fields with
// structure<T>(fields...) and takes versions and flexibility from the message.
//
// C++ member type -> Kafka type (classic / flexible encoding chosen per version; a type
// that is none of these may encode itself, see self_encoding):
//   bool int8_t int16_t uint16_t int32_t uint32_t int64_t double uuid    as named
//   strong_int<Tag, Rep> (offset, partition_id, ...)                     as Rep
//   an enum (protocol::isolation_level, ...)                            as its underlying type,
//                                                                        any value read as is
//   std::string / std::optional<std::string>                             string / nullable string
//   std::vector<std::byte> / std::optional<std::vector<std::byte>>       bytes / nullable bytes
//   std::vector<E> / std::optional<std::vector<E>>                       [E] / nullable [E]
//   a struct with schema()                                               struct (fields, then tagged
//                                                                        fields when flexible)
//
// Writing follows Kafka's generated code: a field absent from the version is
// skipped if it holds its default or is ignorable, and is otherwise
// errc::unsupported_version naming it; null in a version where the field is
// not nullable is errc::invalid_request; a tagged field is written only when
// it differs from its default, in ascending tag order. Reading fills only the
// fields of the version (the others keep their defaults), reads known tags of
// the version, skips unknown ones, and reports corruption as
// errc::corrupt_message naming the field path and byte (message_codec.hpp).
//
// Thread-safety: the tables are constexpr values; every function is reentrant.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <brook/codec/message_codec.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>

namespace brook::codec {

/// An inclusive range of versions; lo > hi is empty (Kafka's "none").
struct versions {
  std::int16_t lo = 0;
  std::int16_t hi = std::numeric_limits<std::int16_t>::max();
  constexpr bool contains(std::int16_t v) const noexcept { return v >= lo && v <= hi; }
  constexpr bool empty() const noexcept { return lo > hi; }
};
/// Kafka's "v+".
constexpr versions since(std::int16_t v) noexcept { return {v, std::numeric_limits<std::int16_t>::max()}; }
/// Kafka's "lo-hi".
constexpr versions between(std::int16_t lo, std::int16_t hi) noexcept { return {lo, hi}; }
/// Kafka's "v".
constexpr versions only(std::int16_t v) noexcept { return {v, v}; }
/// Kafka's "none".
inline constexpr versions no_versions{1, 0};

namespace detail {
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <typename T>
struct is_optional_vector : std::false_type {};
template <typename T>
struct is_optional_vector<std::optional<std::vector<T>>> : std::true_type {};
template <typename T>
struct is_strong_int : std::false_type {};
template <typename Tag, typename Rep>
struct is_strong_int<strong_int<Tag, Rep>> : std::true_type {};
}  // namespace detail

/// One field of a struct: the member it fills and the versions it exists in.
template <typename Owner, typename Member>
struct field_def {
  using owner_type = Owner;
  using member_type = Member;

  Member Owner::*member;
  std::string_view name;
  versions present = since(0);
  versions nullable = no_versions;
  std::int32_t tag = -1;  ///< >= 0: a tagged field
  bool is_ignorable = false;

  constexpr field_def in(versions v) const noexcept {
    auto c = *this;
    c.present = v;
    return c;
  }
  constexpr field_def nullable_in(versions v) const noexcept {
    auto c = *this;
    c.nullable = v;
    return c;
  }
  constexpr field_def tagged(std::uint32_t t, versions v) const noexcept {
    auto c = in(v);
    c.tag = static_cast<std::int32_t>(t);
    return c;
  }
  constexpr field_def ignorable() const noexcept {
    auto c = *this;
    c.is_ignorable = true;
    return c;
  }
  constexpr bool is_tagged() const noexcept { return tag >= 0; }
};

/// A field filling `member`; nullable wherever present when the member is a std::optional.
template <typename Owner, typename Member>
constexpr field_def<Owner, Member> field(std::string_view name, Member Owner::*member) noexcept {
  field_def<Owner, Member> f{member, name};
  if constexpr (detail::is_optional<Member>::value) f.nullable = since(0);
  return f;
}

/// A nested struct's fields.
template <typename T, typename... Fields>
struct struct_def {
  std::tuple<Fields...> fields;
};
template <typename T, typename... Fields>
constexpr struct_def<T, Fields...> structure(Fields... fields) noexcept {
  return {std::tuple<Fields...>(fields...)};
}

/// What a top-level message declares besides its fields.
struct message_info {
  std::string_view name;            ///< Kafka's name ("TopicRecord"), used in errors
  versions valid = only(0);         ///< "validVersions"
  versions flexible = no_versions;  ///< "flexibleVersions"
  std::int16_t api_key = -1;        ///< "apiKey", -1 when the message has none
};

/// A top-level message: its info and fields.
template <typename T, typename... Fields>
struct message_def {
  message_info info;
  std::tuple<Fields...> fields;
};
template <typename T, typename... Fields>
constexpr message_def<T, Fields...> message(message_info info, Fields... fields) noexcept {
  return {info, std::tuple<Fields...>(fields...)};
}

/// A type that lists its fields (structure or message).
template <typename T>
concept described = requires {
  T::schema();
};
/// A type that is a top-level message.
template <typename T>
concept described_message = described<T> && requires {
  T::schema().info;
};

/// The version and its encoding, shared by a message and every struct inside it.
struct context {
  std::int16_t version = 0;
  bool flexible = false;
};

/// A member type that encodes itself: a Kafka type beyond the primitives above, such as the
/// "records" of Produce and Fetch (protocol/records.hpp). It declares
///   static result<void> kafka_write(message_writer&, const T&, const context&, const field_ref&,
///                                   bool nullable);
///   static result<void> kafka_read(message_reader&, T&, const context&, const field_ref&,
///                                  bool nullable);
///   static std::size_t kafka_min_size(const context&);   // its smallest encoding
template <typename T>
concept self_encoding = requires(const context& c) {
  { T::kafka_min_size(c) } -> std::same_as<std::size_t>;
};

/// T's table, evaluated once at compile time.
template <described T>
inline constexpr auto schema_of = T::schema();

namespace detail {

template <typename T>
const T& default_instance() {
  static const T d{};
  return d;
}

template <typename T>
constexpr bool is_scalar_v =
    std::is_same_v<T, bool> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int16_t> ||
    std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, double> || std::is_same_v<T, uuid> ||
    is_strong_int<T>::value || std::is_enum_v<T>;

template <typename T>
constexpr std::size_t scalar_size() noexcept {
  if constexpr (is_strong_int<T>::value) {
    return sizeof(typename T::rep);
  } else if constexpr (std::is_enum_v<T>) {
    return sizeof(std::underlying_type_t<T>);
  } else if constexpr (std::is_same_v<T, uuid>) {
    return 16;
  } else {
    return sizeof(T);
  }
}

// ---- smallest encoding of a value, for bounding array counts before allocating

template <typename T>
std::size_t min_size(const context& c);

template <typename T, typename Fields>
std::size_t min_struct_size(const Fields& fields, const context& c) {
  std::size_t n = c.flexible ? 1 : 0;  // the tagged-field count
  std::apply(
      [&](const auto&... f) {
        ((n += (!f.is_tagged() && f.present.contains(c.version))
                   ? min_size<typename std::decay_t<decltype(f)>::member_type>(c)
                   : 0),
         ...);
      },
      fields);
  return n;
}

template <typename T>
std::size_t min_size(const context& c) {
  if constexpr (is_scalar_v<T>) {
    return scalar_size<T>();
  } else if constexpr (self_encoding<T>) {
    return T::kafka_min_size(c);
  } else if constexpr (is_optional<T>::value || std::is_same_v<T, std::string> || is_vector<T>::value) {
    return c.flexible ? 1 : (std::is_same_v<T, std::string> || std::is_same_v<T, std::optional<std::string>> ? 2 : 4);
  } else {
    static_assert(described<T>, "a field's type must be a Kafka type (see codec/schema.hpp)");
    return min_struct_size<T>(schema_of<T>.fields, c);
  }
}

// ---- writing

template <typename T>
result<void> write_value(message_writer& w, const T& v, const context& c, const field_ref& f);

template <typename T, typename Fields>
result<void> write_fields(message_writer& w, const T& obj, const Fields& fields, const context& c,
                          const field_ref* parent);

template <typename T>
result<void> write_struct(message_writer& w, const T& obj, const context& c, const field_ref* parent) {
  return write_fields(w, obj, schema_of<T>.fields, c, parent);
}

inline result<void> check_string(std::string_view s, const field_ref& f) {
  if (s.size() > max_string_size)
    return make_error(errc::invalid_request, "field '{}': string of {} bytes exceeds {}", f, s.size(), max_string_size);
  return ok();
}

template <typename T>
result<void> write_value(message_writer& w, const T& v, const context& c, const field_ref& f) {
  if constexpr (is_strong_int<T>::value) {
    return write_value(w, v.value(), c, f);
  } else if constexpr (self_encoding<T>) {
    return T::kafka_write(w, v, c, f, false);
  } else if constexpr (std::is_enum_v<T>) {
    return write_value(w, static_cast<std::underlying_type_t<T>>(v), c, f);
  } else if constexpr (std::is_same_v<T, bool>) {
    w.boolean(v);
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    w.int8(v);
  } else if constexpr (std::is_same_v<T, std::int16_t>) {
    w.int16(v);
  } else if constexpr (std::is_same_v<T, std::uint16_t>) {
    w.uint16(v);
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    w.int32(v);
  } else if constexpr (std::is_same_v<T, std::uint32_t>) {
    w.uint32(v);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    w.int64(v);
  } else if constexpr (std::is_same_v<T, double>) {
    w.float64(v);
  } else if constexpr (std::is_same_v<T, uuid>) {
    w.id(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    BROOK_TRY(check_string(v, f));
    c.flexible ? w.compact_string(v) : w.string(v);
  } else if constexpr (std::is_same_v<T, std::vector<std::byte>>) {
    c.flexible ? w.compact_bytes(v) : w.bytes(v);
  } else if constexpr (is_optional<T>::value) {
    if (!v) {
      if constexpr (std::is_same_v<T, std::optional<std::string>>) {
        c.flexible ? w.uvarint(0) : w.int16(-1);
      } else {
        w.null_array(c.flexible);  // bytes and arrays share the null markers
      }
      return ok();
    }
    return write_value(w, *v, c, f);
  } else if constexpr (is_vector<T>::value) {
    c.flexible ? w.compact_array_length(v.size()) : w.array_length(v.size());
    for (const auto& e : v) BROOK_TRY(write_value(w, e, c, f));
  } else {
    static_assert(described<T>, "a field's type must be a Kafka type (see codec/schema.hpp)");
    return write_struct(w, v, c, &f);
  }
  return ok();
}

template <typename F>
result<void> check_field(const F& fd, const typename F::member_type& v, const context& c, const field_ref& ref) {
  using M = typename F::member_type;
  if (!fd.present.contains(c.version)) {
    if (fd.is_ignorable || v == default_instance<typename F::owner_type>().*fd.member) return ok();
    return make_error(errc::unsupported_version,
                      "field '{}' does not exist in version {} and holds a non-default value", ref, c.version);
  }
  if constexpr (is_optional<M>::value) {
    if (!v && !fd.nullable.contains(c.version))
      return make_error(errc::invalid_request, "field '{}' is null in version {}, where it is not nullable", ref,
                        c.version);
  }
  return ok();
}

template <typename T, typename Fields>
result<void> write_fields(message_writer& w, const T& obj, const Fields& fields, const context& c,
                          const field_ref* parent) {
  result<void> res = ok();
  tagged_section tags;
  auto one = [&](const auto& fd) {
    if (!res) return;
    const auto& v = obj.*fd.member;
    const field_ref ref(fd.name, parent);
    res = check_field(fd, v, c, ref);
    if (!res || !fd.present.contains(c.version)) return;
    if (!fd.is_tagged()) {
      if constexpr (self_encoding<std::decay_t<decltype(v)>>)
        res = std::decay_t<decltype(v)>::kafka_write(w, v, c, ref, fd.nullable.contains(c.version));
      else
        res = write_value(w, v, c, ref);
      return;
    }
    if (!c.flexible) {
      res = make_error(errc::unsupported_version, "tagged field '{}' in non-flexible version {}", ref, c.version);
      return;
    }
    if (v == default_instance<T>().*fd.member) return;
    tags.add(static_cast<std::uint32_t>(fd.tag), [&](message_writer& t) { res = write_value(t, v, c, ref); });
  };
  std::apply([&](const auto&... fd) { (one(fd), ...); }, fields);
  if (!res) return res;
  if (c.flexible) tags.write(w);
  return ok();
}

// ---- reading

template <typename T>
result<void> read_value(message_reader& r, T& v, const context& c, const field_ref& f, bool nullable);

template <typename T, typename Fields>
result<void> read_fields(message_reader& r, T& obj, const Fields& fields, const context& c, const field_ref* parent);

template <typename T>
result<void> read_struct(message_reader& r, T& obj, const context& c, const field_ref* parent) {
  return read_fields(r, obj, schema_of<T>.fields, c, parent);
}

template <typename E>
result<void> read_elements(message_reader& r, std::vector<E>& out, std::size_t n, const context& c,
                           const field_ref& f) {
  out.clear();
  out.resize(n);
  for (auto& e : out) BROOK_TRY(read_value(r, e, c, f, false));
  return ok();
}

template <typename T>
result<void> read_value(message_reader& r, T& v, const context& c, const field_ref& f, bool nullable) {
  if constexpr (self_encoding<T>) {
    return T::kafka_read(r, v, c, f, nullable);
  } else if constexpr (is_strong_int<T>::value) {
    typename T::rep x{};
    BROOK_TRY(read_value(r, x, c, f, false));
    v = T(x);
    return ok();
  } else if constexpr (std::is_enum_v<T>) {
    std::underlying_type_t<T> x{};
    BROOK_TRY(read_value(r, x, c, f, false));
    v = static_cast<T>(x);  // any value: whoever acts on it checks it
    return ok();
  } else if constexpr (std::is_same_v<T, bool>) {
    return r.boolean(f, v);
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    return r.int8(f, v);
  } else if constexpr (std::is_same_v<T, std::int16_t>) {
    return r.int16(f, v);
  } else if constexpr (std::is_same_v<T, std::uint16_t>) {
    return r.uint16(f, v);
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return r.int32(f, v);
  } else if constexpr (std::is_same_v<T, std::uint32_t>) {
    return r.uint32(f, v);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return r.int64(f, v);
  } else if constexpr (std::is_same_v<T, double>) {
    return r.float64(f, v);
  } else if constexpr (std::is_same_v<T, uuid>) {
    return r.id(f, v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return c.flexible ? r.compact_string(f, v) : r.string(f, v);
  } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
    const std::size_t at = r.position();
    BROOK_TRY(c.flexible ? r.compact_nullable_string(f, v) : r.nullable_string(f, v));
    if (!v && !nullable) return r.fail_at(at, f, "null in a field that is not nullable in version {}", c.version);
    return ok();
  } else if constexpr (std::is_same_v<T, std::vector<std::byte>>) {
    return c.flexible ? r.compact_bytes(f, v) : r.bytes(f, v);
  } else if constexpr (std::is_same_v<T, std::optional<std::vector<std::byte>>>) {
    const std::size_t at = r.position();
    BROOK_TRY(c.flexible ? r.compact_nullable_bytes(f, v) : r.nullable_bytes(f, v));
    if (!v && !nullable) return r.fail_at(at, f, "null in a field that is not nullable in version {}", c.version);
    return ok();
  } else if constexpr (is_vector<T>::value) {
    std::size_t n = 0;
    const std::size_t min = min_size<typename T::value_type>(c);
    BROOK_TRY(c.flexible ? r.compact_array_length(f, min, n) : r.array_length(f, min, n));
    return read_elements(r, v, n, c, f);
  } else if constexpr (is_optional_vector<T>::value) {
    const std::size_t at = r.position();
    std::optional<std::size_t> n;
    BROOK_TRY(r.nullable_array_length(f, c.flexible, min_size<typename T::value_type::value_type>(c), n));
    if (!n) {
      if (!nullable) return r.fail_at(at, f, "null in a field that is not nullable in version {}", c.version);
      v.reset();
      return ok();
    }
    v.emplace();
    return read_elements(r, *v, *n, c, f);
  } else {
    static_assert(described<T>, "a field's type must be a Kafka type (see codec/schema.hpp)");
    return read_struct(r, v, c, &f);
  }
}

template <typename T, typename Fields>
result<void> read_fields(message_reader& r, T& obj, const Fields& fields, const context& c, const field_ref* parent) {
  result<void> res = ok();
  auto one = [&](const auto& fd) {
    if (!res || fd.is_tagged() || !fd.present.contains(c.version)) return;
    res = read_value(r, obj.*fd.member, c, field_ref(fd.name, parent), fd.nullable.contains(c.version));
  };
  std::apply([&](const auto&... fd) { (one(fd), ...); }, fields);
  if (!res || !c.flexible) return res;
  const field_ref section("_tagged_fields", parent);
  return r.tagged_fields(section, [&](std::uint32_t tag) -> result<bool> {
    bool known = false;
    result<void> got = ok();
    auto match = [&](const auto& fd) {
      if (known || !fd.is_tagged() || static_cast<std::uint32_t>(fd.tag) != tag || !fd.present.contains(c.version))
        return;
      known = true;
      got = read_value(r, obj.*fd.member, c, field_ref(fd.name, parent), fd.nullable.contains(c.version));
    };
    std::apply([&](const auto&... fd) { (match(fd), ...); }, fields);
    if (!got) return got.error();
    return known;
  });
}

template <typename T>
context context_for(std::int16_t version) {
  return context{version, schema_of<T>.info.flexible.contains(version)};
}

template <typename T>
result<void> check_version(std::int16_t version) {
  constexpr auto info = schema_of<T>.info;
  if (!info.valid.contains(version))
    return make_error(errc::unsupported_version, "{} has no version {} (brook knows {}-{})", info.name, version,
                      info.valid.lo, info.valid.hi);
  return ok();
}

}  // namespace detail

/// Writes msg's fields at `version` (no framing). Errors: unsupported_version (a version
/// the message lacks, or a non-ignorable field set that the version lacks), invalid_request
/// (null where not nullable, a string over 32767 bytes).
template <described_message T>
result<void> write(message_writer& w, const T& msg, std::int16_t version) {
  BROOK_TRY(detail::check_version<T>(version));
  return detail::write_struct(w, msg, detail::context_for<T>(version), nullptr);
}

/// msg's bytes at `version`; errors as write().
template <described_message T>
result<std::vector<std::byte>> encode(const T& msg, std::int16_t version) {
  message_writer w;
  BROOK_TRY(write(w, msg, version));
  return std::move(w).finish();
}

/// An int16 prefix, then msg at `version`: Kafka's MessageUtil.toVersionPrefixedBytes when the
/// prefix is the version, and the key layout of __consumer_offsets when it is a record type.
/// For brook's own records, whose fields are set by construction. REQUIRES: write() succeeds
/// (a valid version, fields the version lacks at their defaults, strings <= 32767 bytes).
template <described_message T>
std::vector<std::byte> encode_prefixed(std::int16_t prefix, const T& msg, std::int16_t version) {
  message_writer w;
  w.int16(prefix);
  auto written = write(w, msg, version);
  BROOK_ASSERT(written.has_value(), "{}", written.error());
  return std::move(w).finish();
}

/// Reads a T at `version` from r's position. Errors: unsupported_version for a version the
/// message lacks; corrupt_message naming the field and byte.
template <described_message T>
result<void> read(message_reader& r, T& out, std::int16_t version) {
  BROOK_TRY(detail::check_version<T>(version));
  return detail::read_struct(r, out, detail::context_for<T>(version), nullptr);
}

/// Decodes exactly `bytes` as a T at `version`; trailing bytes are corrupt_message.
template <described_message T>
result<T> decode(std::span<const std::byte> bytes, std::int16_t version) {
  message_reader r(bytes, fmt::format("{} v{}", schema_of<T>.info.name, version));
  T out{};
  BROOK_TRY(read(r, out, version));
  BROOK_TRY(r.expect_end());
  return out;
}

}  // namespace brook::codec
