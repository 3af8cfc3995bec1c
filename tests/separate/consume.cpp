#include <chrono>

#include "parts.hpp"

std::string separate::consume_all(brook::node& n) {
  auto c =
      n.make_group_consumer({.group_id = "separate", .consumer = {.auto_offset_reset = brook::offset_reset::earliest}});
  if (auto s = c->subscribe({topic}); !s) return "subscribe: " + s.error().to_string();
  int seen = 0;
  for (int polls = 0; seen < record_count && polls < 300; ++polls) {
    auto records = c->poll(std::chrono::milliseconds(100));
    if (!records) return "poll: " + records.error().to_string();
    for (const auto& r : *records) {
      if (r.offset().value() != seen)
        return "offset " + std::to_string(r.offset().value()) + ", expected " + std::to_string(seen);
      if (r.value().to_string() != value_at(seen))
        return "value at " + std::to_string(seen) + ": " + r.value().to_string();
      ++seen;
    }
  }
  if (seen != record_count) return "read " + std::to_string(seen) + " records of " + std::to_string(record_count);
  if (auto cl = c->close(); !cl) return "close: " + cl.error().to_string();
  return "";
}
