// brook's message tables against Kafka's own definitions: every field of every message of
// protocol/messages.hpp, flattened (name, the versions it exists in, its nullable versions,
// its tag, whether it is ignorable, its default), must equal what scripts/kafka_message_fields.py prints
// from apache/kafka's message JSON files, committed as tests/protocol/kafka_fields.txt.
// A field transcribed with the wrong versions, a missing nullableVersions, a wrong tag or a
// field in the wrong place fails here, naming the line.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include <brook/protocol/messages.hpp>

using namespace brook;

namespace {

template <typename T>
struct element {
  using type = T;
};
template <typename T>
struct element<std::vector<T>> : element<T> {};
template <typename T>
struct element<std::optional<T>> : element<T> {};

std::string text(codec::versions v) {
  if (v.empty()) return "none";
  if (v.hi == std::numeric_limits<std::int16_t>::max()) return fmt::format("{}+", v.lo);
  return fmt::format("{}-{}", v.lo, v.hi);
}

codec::versions meet(codec::versions a, codec::versions b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }

template <typename T>
std::string default_text(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (requires {
                         v.value();
                         typename T::rep;
                       }) {
    return fmt::format("{}", v.value());
  } else if constexpr (std::is_enum_v<T>) {
    return fmt::format("{}", static_cast<std::int64_t>(v));
  } else if constexpr (std::is_integral_v<T>) {
    return fmt::format("{}", v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return fmt::format("\"{}\"", v);
  } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
    return v ? fmt::format("\"{}\"", *v) : "null";
  } else if constexpr (requires {
                         v.begin();
                         typename T::value_type;
                       } &&
                       !std::is_same_v<T, std::vector<std::byte>>) {
    return v.empty() ? "[]" : "(not empty)";
  } else if constexpr (requires {
                         v.has_value();
                         v->begin();
                       }) {
    return v ? default_text(*v) : "null";
  } else {
    return "-";  // bytes, records, uuids, structs
  }
}

template <typename S>
void flatten(std::vector<std::string>& out, const std::string& prefix, codec::versions parent) {
  std::apply(
      [&](const auto&... f) {
        (
            [&](const auto& fd) {
              const auto present = meet(fd.present, parent);
              static const S defaults{};
              out.push_back(fmt::format("{}{} present={} nullable={} tag={} ign={} default={}", prefix, fd.name,
                                        text(present), text(meet(fd.nullable, present)), fd.tag,
                                        fd.is_ignorable ? 1 : 0, default_text(defaults.*fd.member)));
              using E = typename element<typename std::decay_t<decltype(fd)>::member_type>::type;
              if constexpr (codec::described<E>) flatten<E>(out, fmt::format("{}{}.", prefix, fd.name), present);
            }(f),
            ...);
      },
      codec::schema_of<S>.fields);
}

template <typename M>
void message_lines(std::vector<std::string>& out) {
  constexpr auto info = codec::schema_of<M>.info;
  out.push_back(fmt::format("== {} valid={} flexible={}", info.name, text(info.valid), text(info.flexible)));
  flatten<M>(out, "", info.valid);
}

}  // namespace

TEST_CASE("every field of every message matches Kafka's definitions", "[protocol][schema]") {
  std::vector<std::string> brook_lines;
  protocol::for_each_api([&](auto api) {
    using A = decltype(api);
    message_lines<typename A::request>(brook_lines);
    message_lines<typename A::response>(brook_lines);
  });
  std::ifstream in(BROOK_KAFKA_FIELDS);
  REQUIRE(in);
  std::vector<std::string> kafka_lines;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) kafka_lines.push_back(l);
  REQUIRE(brook_lines.size() > 400);
  // Same length: every line is the same field, so report every difference. Otherwise stop
  // at the first: the rest is shifted.
  const bool aligned = brook_lines.size() == kafka_lines.size();
  for (std::size_t i = 0; i < std::max(brook_lines.size(), kafka_lines.size()); ++i) {
    const std::string b = i < brook_lines.size() ? brook_lines[i] : "(nothing)";
    const std::string k = i < kafka_lines.size() ? kafka_lines[i] : "(nothing)";
    INFO("line " << i + 1 << " of tests/protocol/kafka_fields.txt");
    CHECK(b == k);
    if (!aligned && b != k) break;
  }
}
