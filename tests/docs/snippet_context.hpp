// What the documentation's C++ snippets may use without declaring it: the whole library,
// std::chrono's literals, and the host objects and functions the prose talks about
// ("a data directory dd", "process(r)"). The snippets are compiled, never linked or run
// (tests/docs/check_snippets.cmake), so these are declarations only.
#pragma once

#include <brook/brook.hpp>
#include <brook/codecs/gzip.hpp>  // docs/compression.md: the opt-in codecs
#include <brook/codecs/lz4.hpp>
#include <brook/codecs/snappy.hpp>
#include <brook/codecs/zstd.hpp>
#include <brook/embedded.hpp>
#include <brook/testing/faulty_handler.hpp>  // docs/testing-broker.md: the opt-in testing layer

#include <chrono>
#include <memory>
#include <optional>
#include <string>

using namespace std::chrono_literals;

// The host's objects.
extern std::unique_ptr<brook::data_dir> dd;                         // an open data directory
brook::data_dir& my_data_dir();                                     // the same, as a reference
extern brook::producer& producer;                                   // a producer on it
extern brook::group_consumer& consumer;                             // a group consumer on it
extern brook::producer_record rec;                                  // a record about to be sent
extern std::string payload, value;                                  // record bytes the host owns
extern brook::result<std::vector<brook::consumer_record>> records;  // a poll's result

// The host's own code.
template <typename... Args>
void use(const Args&...);
template <typename... Args>
void process(const Args&...);
template <typename T>
std::string result_of(const T&);
struct dead_letter_queue {
  void write(const std::string& value, const std::string& why);
};
extern dead_letter_queue dead_letters;
struct my_store {
  std::optional<brook::offset> next_offset(const brook::topic_partition& tp);
  template <typename... Args>
  void apply_atomically(const Args&...);
};
extern my_store* store;

// The host's tests (docs/testing-broker.md): its test framework's check, and the code under
// test, a wrapper around the host's Kafka client.
#define REQUIRE(...) use(__VA_ARGS__)
struct order_publisher {
  explicit order_publisher(const std::string& bootstrap_servers);
  bool publish(const std::string& order);  // true once the broker acknowledged it
};
