#include <catch2/catch.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <brook/compression/compression_codec.hpp>

using brook::compression_type;

namespace {

brook::byte_buffer bytes_of(std::string_view s) {
  brook::byte_buffer out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

// A stand-in codec: reverses the bytes. Enough to see the set hand it out.
class reversing_codec final : public brook::compression_codec {
 public:
  explicit reversing_codec(compression_type t) : type_(t) {}
  compression_type type() const noexcept override { return type_; }
  int default_level() const noexcept override { return 1; }
  bool valid_level(int level) const noexcept override { return level == 1; }
  brook::result<void> compress(std::span<const std::byte> in, int, brook::byte_buffer& out) const override {
    out.insert(out.end(), in.rbegin(), in.rend());
    return {};
  }
  brook::result<void> decompress(std::span<const std::byte> in, std::size_t, brook::byte_buffer& out) const override {
    out.insert(out.end(), in.rbegin(), in.rend());
    return {};
  }

 private:
  compression_type type_;
};

}  // namespace

TEST_CASE("a codec set has none and what the host added", "[compression][compression_codec]") {
  brook::compression_codecs codecs;
  REQUIRE(codecs.find(compression_type::none) != nullptr);
  CHECK(codecs.find(compression_type::none)->type() == compression_type::none);
  for (auto t : {compression_type::gzip, compression_type::snappy, compression_type::lz4, compression_type::zstd}) {
    CHECK(codecs.find(t) == nullptr);
  }
  auto lz4 = std::make_shared<reversing_codec>(compression_type::lz4);
  codecs.add(lz4);
  CHECK(codecs.find(compression_type::lz4) == lz4.get());
  auto got = codecs.get(compression_type::lz4);
  REQUIRE(got);
  CHECK(*got == lz4.get());

  auto replacement = std::make_shared<reversing_codec>(compression_type::lz4);
  codecs.add(replacement);
  CHECK(codecs.find(compression_type::lz4) == replacement.get());

  const brook::compression_codecs listed{std::make_shared<reversing_codec>(compression_type::gzip),
                                         std::make_shared<reversing_codec>(compression_type::zstd)};
  CHECK(listed.find(compression_type::gzip) != nullptr);
  CHECK(listed.find(compression_type::zstd) != nullptr);
  CHECK(listed.find(compression_type::snappy) == nullptr);
}

TEST_CASE("a codec the host did not add is unsupported_compression_type naming it",
          "[compression][compression_codec]") {
  const brook::compression_codecs codecs{std::make_shared<reversing_codec>(compression_type::gzip)};
  auto r = codecs.get(compression_type::zstd);
  REQUIRE_FALSE(r);
  CHECK(r == brook::errc::unsupported_compression_type);
  CHECK(r.error().message().find("zstd codec is not enabled") != std::string::npos);
  CHECK(r.error().message().find("<brook/codecs/zstd.hpp>") != std::string::npos);
  CHECK(r.error().message().find("brook::zstd") != std::string::npos);
  CHECK(r.error().to_string().rfind("UNSUPPORTED_COMPRESSION_TYPE: ", 0) == 0);

  auto unknown = codecs.get(static_cast<compression_type>(6));
  REQUIRE_FALSE(unknown);
  CHECK(unknown == brook::errc::unsupported_compression_type);
  CHECK(unknown.error().message().find("id 6") != std::string::npos);
  CHECK(codecs.find(static_cast<compression_type>(-3)) == nullptr);
  CHECK(codecs.get(compression_type::none));
}

TEST_CASE("the none codec copies within the limit", "[compression][compression_codec]") {
  const brook::none_codec none;
  CHECK(none.default_level() == 0);
  CHECK(none.valid_level(0));
  CHECK_FALSE(none.valid_level(1));
  const auto in = bytes_of("kafka");
  brook::byte_buffer out = bytes_of("x");
  REQUIRE(none.compress(in, 0, out));
  CHECK(out == bytes_of("xkafka"));
  CHECK(none.compress(in, 3, out) == brook::errc::invalid_config);
  CHECK(out == bytes_of("xkafka"));

  brook::byte_buffer back;
  REQUIRE(none.decompress(in, 5, back));
  CHECK(back == in);
  auto r = none.decompress(in, 4, back);
  CHECK(r == brook::errc::record_too_large);
  CHECK(back == in);  // untouched on error
}

TEST_CASE("a codec set is shared by threads that only read it", "[compression][compression_codec]") {
  const brook::compression_codecs codecs{std::make_shared<reversing_codec>(compression_type::snappy)};
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (std::size_t i = 0; i < ok.size(); ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < 1000; ++n) {
        auto c = codecs.get(compression_type::snappy);
        brook::byte_buffer out;
        if (c && (*c)->compress(bytes_of("ab"), 1, out) && out == bytes_of("ba")) ++ok[i];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int n : ok) CHECK(n == 1000);
}
