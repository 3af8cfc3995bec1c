// brook's side of the kafkajs partitioner check (driven by kafkajs_partitioner.js).
//
//   partitioner_tool   stdin: one "<key> <num_partitions>" per line
//                      stdout: one "<murmur2> <partition_for_key> <default_partitioner>" per line
//
// <key> is lowercase hex of the key bytes, "." for an empty key (null keys are not hashed).
// The second column is brook::partition_for_key, the third what brook::default_partitioner
// chooses for that key (they must agree; both are compared with kafkajs).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <brook/client/partitioner.hpp>

namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "partitioner_tool: %s\n", msg.c_str());
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

}  // namespace

int main() {
  brook::default_partitioner partitioner(1);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::istringstream in(line);
    std::string hex;
    long long n = 0;
    if (!(in >> hex >> n)) die("expected '<hex key> <num_partitions>': " + line);
    if (n < 1 || n > INT32_MAX) die("num_partitions out of range: " + line);
    const auto key = from_hex(hex);
    const auto parts = static_cast<std::int32_t>(n);
    const brook::nullable_bytes k{std::span<const std::byte>(key)};
    std::cout << fmt::format("{} {} {}\n", brook::murmur2(key), brook::partition_for_key(k, parts),
                             partitioner.partition("compat", k, brook::nullable_bytes::null(), parts));
  }
  return 0;
}
