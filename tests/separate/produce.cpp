#include <optional>

#include "parts.hpp"

std::string separate::produce_all(brook::node& n) {
  auto p = n.make_producer();
  std::optional<brook::error> failed;  // set on the sender thread; flush() waits for it
  for (int i = 0; i < record_count; ++i) {
    const std::string value = value_at(i);
    p->send({.topic = topic, .key = "k", .value = value}, [&](const brook::result<brook::record_metadata>& md) {
      if (!md && !failed) failed = md.error();
    });
  }
  if (auto f = p->flush(); !f) return "flush: " + f.error().to_string();
  if (failed) return "send: " + failed->to_string();
  return "";
}
