// quickstart: brook embedded in a program. Opens a data directory as a brook::node, creates
// a topic, produces ten records and reads them back through a consumer group, which commits
// its position: run it twice and the second run reads only the ten new records.
//
// Usage: quickstart [DIR]   (default: /tmp/brook-quickstart, kept between runs)
#include <cstdio>
#include <optional>

#include <brook/embedded.hpp>

static int fail(const char* what, const brook::error& e) {
  std::fprintf(stderr, "quickstart: %s: %s\n", what, e.to_string().c_str());
  return 1;
}

int main(int argc, char** argv) {
  auto node = brook::node::open(argc > 1 ? argv[1] : "/tmp/brook-quickstart");
  if (!node) return fail("open", node.error());
  if (auto t = (*node)->create_topic("events", {.partitions = 3}); !t && t != brook::errc::topic_already_exists)
    return fail("create_topic", t.error());

  auto producer = (*node)->make_producer();
  std::optional<brook::error> send_error;  // set on the sender thread; flush() waits for it
  for (int i = 0; i < 10; ++i)
    producer->send({.topic = "events", .key = "user-1", .value = "signed up"}, [&](const auto& md) {
      if (!md && !send_error) send_error = md.error();
    });
  if (auto f = producer->flush(); !f) return fail("flush", f.error());
  if (send_error) return fail("send", *send_error);

  auto consumer = (*node)->make_group_consumer(
      {.group_id = "mailer", .consumer = {.auto_offset_reset = brook::offset_reset::earliest}});
  if (auto s = consumer->subscribe({"events"}); !s) return fail("subscribe", s.error());
  for (int seen = 0; seen < 10;) {
    auto records = consumer->poll(std::chrono::seconds(1));  // joins the group, fetches, commits
    if (!records) return fail("poll", records.error());
    for (const auto& r : *records) {
      std::printf("%s-%d@%lld %s: %s\n", r.topic().c_str(), int(r.partition().value()), (long long)r.offset().value(),
                  r.key().to_string().c_str(), r.value().to_string().c_str());
      ++seen;
    }
  }
  if (auto c = consumer->close(); !c) return fail("close", c.error());  // commits what it read, leaves the group
  return 0;
}
