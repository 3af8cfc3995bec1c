// A program outside brook that enables one opt-in codec (the zstd component: the header
// <brook/codecs/zstd.hpp> and the target brook::zstd, which links libzstd) and round-trips
// bytes through it, as a host would. Exits 0 on success. Built and run by
// tests/package/run_package_test.cmake when brook was built with zstd.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <brook/codecs/zstd.hpp>
#include <brook/compression/compression_codec.hpp>

int main() {
  const brook::compression_codecs codecs{std::make_shared<brook::codecs::zstd_codec>()};
  auto codec = codecs.get(brook::compression_type::zstd);
  if (!codec) return std::fprintf(stderr, "%s\n", codec.error().to_string().c_str()), 1;
  const std::string_view text = "brook brook brook brook brook brook brook brook";
  const auto in = std::as_bytes(std::span(text.data(), text.size()));
  brook::byte_buffer compressed, back;
  if (auto c = (*codec)->compress(in, (*codec)->default_level(), compressed); !c) {
    return std::fprintf(stderr, "%s\n", c.error().to_string().c_str()), 1;
  }
  if (auto d = (*codec)->decompress(compressed, in.size(), back); !d) {
    return std::fprintf(stderr, "%s\n", d.error().to_string().c_str()), 1;
  }
  if (back.size() != in.size() || !std::equal(back.begin(), back.end(), in.begin())) {
    return std::fprintf(stderr, "zstd round trip changed the bytes\n"), 1;
  }
  if (codecs.get(brook::compression_type::snappy)) return std::fprintf(stderr, "snappy was never enabled\n"), 1;
  std::printf("zstd: %zu bytes compressed to %zu and back\n", in.size(), compressed.size());
  return 0;
}
