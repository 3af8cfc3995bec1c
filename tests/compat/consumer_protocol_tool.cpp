// brook's side of the kafkajs consumer-protocol check (driven by kafkajs_consumer_protocol.js).
//
//   consumer_protocol_tool   stdin: one command per line, stdout: one answer line per command
//
//   ds <hex>                        decode a subscription  -> "<version> <topics> <user> <owned> <generation>"
//   da <hex>                        decode an assignment   -> "<version> <partitions> <user>"
//   es0 <topics> <user>             encode a v0 subscription (topics in the order given)  -> hex
//   es <topics> <owned> <gen>       encode_subscription (Java's v3)                        -> hex
//   ea <partitions>                 encode_assignment (Java's v3)                          -> hex
//
// Lists: <topics> = comma-separated hex topic names; <partitions>/<owned> = comma-separated
// <hex topic>:<partition>; "-" = empty list. <user> = hex, "." for empty, "null" for null.
// Hex is lowercase. A decode error prints "error <message>".
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <brook/group/consumer_protocol.hpp>

namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "consumer_protocol_tool: %s\n", msg.c_str());
  std::exit(2);
}

std::vector<std::byte> from_hex(const std::string& h) {
  if (h == ".") return {};
  if (h.size() % 2 != 0) die("odd-length hex: " + h);
  std::vector<std::byte> out(h.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    unsigned v = 0;
    if (std::sscanf(h.c_str() + 2 * i, "%2x", &v) != 1) die("bad hex: " + h);
    out[i] = static_cast<std::byte>(v);
  }
  return out;
}
std::string to_hex(std::span<const std::byte> b) {
  std::string s;
  for (auto x : b) s += fmt::format("{:02x}", static_cast<unsigned>(x));
  return s;
}
std::string str_from_hex(const std::string& h) {
  auto b = from_hex(h);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}
std::string hex_of(std::string_view s) { return to_hex(brook::as_bytes(s)); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  if (s == "-") return out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

std::vector<std::string> topics_of(const std::string& s) {
  std::vector<std::string> out;
  for (const auto& h : split(s, ',')) out.push_back(str_from_hex(h == "" ? "." : h));
  return out;
}
std::vector<brook::topic_partition> partitions_of(const std::string& s) {
  std::vector<brook::topic_partition> out;
  for (const auto& item : split(s, ',')) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) die("expected <hex topic>:<partition>: " + item);
    const auto topic = item.substr(0, colon);
    out.push_back({str_from_hex(topic.empty() ? "." : topic),
                   brook::partition_id{static_cast<std::int32_t>(std::stol(item.substr(colon + 1)))}});
  }
  return out;
}

std::string show_topics(const std::vector<std::string>& ts) {
  if (ts.empty()) return "-";
  std::string out;
  for (const auto& t : ts) {
    if (!out.empty()) out += ',';
    out += hex_of(t);
  }
  return out;
}
std::string show_partitions(const std::vector<brook::topic_partition>& ps) {
  if (ps.empty()) return "-";
  std::string out;
  for (const auto& p : ps) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}:{}", hex_of(p.topic), p.partition.value());
  }
  return out;
}
std::string show_user(const std::optional<std::vector<std::byte>>& u) {
  if (!u) return "null";
  return u->empty() ? "." : to_hex(*u);
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::istringstream in(line);
    std::string cmd, a, b, c;
    in >> cmd >> a >> b >> c;
    if (cmd == "ds") {
      const auto bytes = from_hex(a);
      auto s = brook::decode_consumer_protocol_subscription(bytes);
      if (!s) {
        std::cout << "error " << s.error().to_string() << "\n";
        continue;
      }
      std::cout << fmt::format("{} {} {} {} {}\n", s->version, show_topics(s->topics), show_user(s->user_data),
                               show_partitions(s->owned_partitions), s->generation);
    } else if (cmd == "da") {
      const auto bytes = from_hex(a);
      auto r = brook::decode_consumer_protocol_assignment(bytes);
      if (!r) {
        std::cout << "error " << r.error().to_string() << "\n";
        continue;
      }
      std::cout << fmt::format("{} {} {}\n", r->version, show_partitions(r->partitions), show_user(r->user_data));
    } else if (cmd == "es0") {
      brook::consumer_protocol_subscription s;
      s.version = 0;
      s.topics = topics_of(a);
      if (b != "null") s.user_data = from_hex(b);
      std::cout << to_hex(brook::encode(s)) << "\n";
    } else if (cmd == "es") {
      brook::member_subscription m;
      m.topics = topics_of(a);
      m.owned_partitions = partitions_of(b);
      m.generation = static_cast<std::int32_t>(std::stol(c));
      std::cout << to_hex(brook::encode_subscription(m)) << "\n";
    } else if (cmd == "ea") {
      std::cout << to_hex(brook::encode_assignment(partitions_of(a))) << "\n";
    } else {
      die("unknown command: " + line);
    }
  }
  return 0;
}
