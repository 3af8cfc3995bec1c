// A kafka_broker on a node in a scratch data directory, for the tests that call a broker in
// process (support/handler_calls.hpp) or through a tcp_server (support/wire_client.hpp).
// Housekeeping is off; the broker stops before the node closes and the directory goes.
//
//   brook::test::broker_fixture f;                       // f.n: the node, f.b: its broker
//   brook::test::broker_fixture g("limits", {.max_partitions = 6});  // with a broker_config
//   REQUIRE(eventually([&] { return f.b.parked_fetches() == 1; }));
//
// A test that wraps the broker (a faulty_handler, a tcp_server) derives from the fixture or
// declares the wrappers after it, so that they die first.
//
// Thread-safety: built and destroyed on one thread; the node and the broker are as
// thread-safe as they say.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include <catch2/catch.hpp>

#include <brook/embedded.hpp>
#include <brook/server/kafka_broker.hpp>

#include "support/eventually.hpp"
#include "support/temp_dir.hpp"

namespace brook::test {

/// A node on `dir` with housekeeping off (and `codecs` for compressed batches); fails the
/// test when it does not open.
inline std::unique_ptr<node> open_test_node(const std::filesystem::path& dir,
                                            std::shared_ptr<const compression_codecs> codecs = nullptr) {
  node_options o;
  o.housekeeping_interval = std::chrono::milliseconds(0);
  o.dir.defaults.codecs = std::move(codecs);
  auto n = node::open(dir, std::move(o));
  if (!n) FAIL("node::open: " << n.error().to_string());
  return std::move(*n);
}

/// A scratch directory (named after `prefix`), a node on it and a broker with `config`.
struct broker_fixture {
  explicit broker_fixture(const std::string& prefix = "broker", server::broker_config config = {},
                          std::shared_ptr<const compression_codecs> codecs = nullptr)
      : tmp(prefix), n(open_test_node(tmp.path(), std::move(codecs))), b(*n, std::move(config)) {}
  ~broker_fixture() { b.stop(); }

  temp_dir tmp;
  std::unique_ptr<node> n;
  server::kafka_broker b;
};

}  // namespace brook::test
