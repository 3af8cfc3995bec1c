// Writes the seed corpus of brook_fuzz_request: for every API brook describes
// (protocol/messages.hpp) and every version Kafka defines for it, one request frame of
// seeded random values (tests/support/random_message.hpp), size prefix included, named
// <Api>-v<N>.bin. tests/fuzz/corpus_request/ is its committed output.
//
//   brook_fuzz_make_request_corpus <dir>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <brook/protocol/request.hpp>

#include "support/random_message.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: brook_fuzz_make_request_corpus <dir>\n");
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path dir = argv[1];
  fs::create_directories(dir);
  brook::test::message_randomizer rnd(20261203);
  int written = 0, failed = 0;
  brook::protocol::for_each_api([&](auto api) {
    using A = decltype(api);
    const auto& info = brook::protocol::api(A::key);
    for (std::int16_t v = info.valid.lo; v <= info.valid.hi; ++v) {
      const auto body = rnd.make<typename A::request>(v);
      auto frame = brook::protocol::encode_request({static_cast<std::int16_t>(A::key), v, 7, "fuzz"}, body);
      if (!frame) {
        std::fprintf(stderr, "%s v%d: %s\n", std::string(info.name).c_str(), v, frame.error().to_string().c_str());
        ++failed;
        continue;
      }
      std::ofstream f(dir / (std::string(info.name) + "-v" + std::to_string(v) + ".bin"), std::ios::binary);
      f.write(reinterpret_cast<const char*>(frame->data()), static_cast<std::streamsize>(frame->size()));
      ++written;
    }
  });
  std::printf("wrote %d request frames to %s\n", written, dir.c_str());
  return failed == 0 ? 0 : 1;
}
