// The separate-compilation test's program: opens a fresh node at argv[1], produces in one TU,
// consumes through a group in another; the definitions come from definitions.cpp.
#include <cstdio>
#include <filesystem>

#include "parts.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::filesystem::remove_all(argv[1]);
  auto n = brook::node::open(argv[1]);
  if (!n) return std::fprintf(stderr, "open: %s\n", n.error().to_string().c_str()), 1;
  if (auto t = (*n)->create_topic(separate::topic, {.partitions = 1}); !t)
    return std::fprintf(stderr, "create_topic: %s\n", t.error().to_string().c_str()), 1;
  for (auto step : {separate::produce_all, separate::consume_all}) {
    if (auto e = step(**n); !e.empty()) return std::fprintf(stderr, "%s\n", e.c_str()), 1;
  }
  if (auto c = (*n)->close(); !c) return std::fprintf(stderr, "close: %s\n", c.error().to_string().c_str()), 1;
  std::printf("separate: %d records produced and consumed\n", separate::record_count);
  return 0;
}
