#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <zlib.h>

#include <brook/codecs/gzip.hpp>
#include <support/codec_checks.hpp>
#include <support/temp_dir.hpp>

using namespace brook::test;

namespace {

std::uint32_t le32(const brook::byte_buffer& b, std::size_t at) {
  return static_cast<std::uint32_t>(b[at]) | static_cast<std::uint32_t>(b[at + 1]) << 8 |
         static_cast<std::uint32_t>(b[at + 2]) << 16 | static_cast<std::uint32_t>(b[at + 3]) << 24;
}

// `n` zeros gzip-compressed by zlib directly, fed 1 MiB at a time (no n-byte buffer).
brook::byte_buffer gzip_zeros(std::size_t n) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::vector<Bytef> zeros(1 << 20);
  brook::byte_buffer out(1 << 20);
  std::size_t fed = 0, produced = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    const std::size_t now = std::min(zeros.size(), n - fed);
    zs.next_in = zeros.data();
    zs.avail_in = static_cast<uInt>(now);
    do {
      if (out.size() - produced < 65536) out.resize(out.size() * 2);
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
      zs.avail_out = static_cast<uInt>(out.size() - produced);
      rc = deflate(&zs, fed + now == n ? Z_FINISH : Z_NO_FLUSH);
      produced = out.size() - zs.avail_out;
    } while (zs.avail_in != 0 || (fed + now == n && rc != Z_STREAM_END));
    fed += now;
  }
  deflateEnd(&zs);
  out.resize(produced);
  return out;
}

void write_file(const std::filesystem::path& p, const brook::byte_buffer& bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

brook::byte_buffer read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  const std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return to_bytes(s);
}

}  // namespace

TEST_CASE("gzip has Kafka's levels", "[codecs][gzip]") {
  const brook::codecs::gzip_codec gzip;
  CHECK(gzip.type() == brook::compression_type::gzip);
  CHECK(gzip.default_level() == -1);
  for (int level : {-1, 1, 5, 9}) CHECK(gzip.valid_level(level));
  for (int level : {-2, 0, 10}) CHECK_FALSE(gzip.valid_level(level));
  brook::byte_buffer out;
  CHECK(gzip.compress(to_bytes("x"), 10, out) == brook::errc::invalid_config);
  CHECK(out.empty());
}

TEST_CASE("gzip round trips at several levels", "[codecs][gzip]") {
  check_round_trips(brook::codecs::gzip_codec{}, {-1, 1, 6, 9});
}

TEST_CASE("gzip finishes a stream given less room than deflateBound", "[codecs][gzip]") {
  // As on a zlib build whose deflateBound falls short: the stream goes on in more room, and
  // the bytes before it in `out` stay.
  const brook::codecs::gzip_codec gzip;
  for (const auto& in : {json_like(3, 200 * 1024), random_bytes(4, 150 * 1024)}) {
    for (std::size_t room : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
      z_stream zs{};
      REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
      zs.avail_in = static_cast<uInt>(in.size());
      brook::byte_buffer out = to_bytes("kept");
      const auto r = brook::codecs::gzip_codec::deflate_to_end(zs, room, out);
      deflateEnd(&zs);
      REQUIRE(r);
      REQUIRE(out.size() > 4 + 18);
      CHECK(brook::byte_buffer(out.begin(), out.begin() + 4) == to_bytes("kept"));
      brook::byte_buffer back;
      REQUIRE(gzip.decompress(std::span<const std::byte>(out).subspan(4), in.size(), back));
      CHECK(back == in);
    }
  }
}

TEST_CASE("gzip leaves the output as it was when deflate fails", "[codecs][gzip]") {
  z_stream never_initialised{};  // deflate refuses it: Z_STREAM_ERROR
  brook::byte_buffer out = to_bytes("kept");
  const auto r = brook::codecs::gzip_codec::deflate_to_end(never_initialised, 64, out);
  REQUIRE_FALSE(r);
  CHECK(r.error() == brook::errc::unknown_server_error);
  CHECK(out == to_bytes("kept"));
}

TEST_CASE("gzip refuses an input one zlib call cannot take before allocating", "[codecs][gzip]") {
  // Address space only (MAP_NORESERVE, never touched): compress must refuse on the size.
  const std::size_t n = brook::codecs::gzip_codec::max_input_bytes + 1;
  void* p = mmap(nullptr, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    WARN("no " << n << " bytes of address space: skipped");
    return;
  }
  brook::byte_buffer out = to_bytes("kept");
  const auto r =
      brook::codecs::gzip_codec{}.compress(std::span<const std::byte>(static_cast<const std::byte*>(p), n), -1, out);
  munmap(p, n);
  REQUIRE_FALSE(r);
  CHECK(r.error() == brook::errc::record_too_large);
  CHECK(out == to_bytes("kept"));
}

TEST_CASE("gzip writes one RFC 1952 member", "[codecs][gzip]") {
  const brook::codecs::gzip_codec gzip;
  const auto in = json_like(11, 5000);
  brook::byte_buffer out;
  REQUIRE(gzip.compress(in, -1, out));
  REQUIRE(out.size() > 18);
  // ID1 ID2 CM=8 (deflate) FLG=0 (no name, extra, comment, header CRC) MTIME=0.
  const brook::byte_buffer header(out.begin(), out.begin() + 8);
  CHECK(header == brook::byte_buffer{std::byte{0x1f}, std::byte{0x8b}, std::byte{8}, std::byte{0}, std::byte{0},
                                     std::byte{0}, std::byte{0}, std::byte{0}});
  // The trailer: CRC-32 of the input, then its size mod 2^32, little-endian.
  const auto crc = crc32(0, reinterpret_cast<const Bytef*>(in.data()), static_cast<uInt>(in.size()));
  CHECK(le32(out, out.size() - 8) == crc);
  CHECK(le32(out, out.size() - 4) == in.size());
}

TEST_CASE("gzip reads concatenated members", "[codecs][gzip]") {
  const brook::codecs::gzip_codec gzip;
  const auto a = json_like(1, 3000), b = random_bytes(2, 500);
  brook::byte_buffer both;
  REQUIRE(gzip.compress(a, 1, both));
  REQUIRE(gzip.compress(b, 9, both));
  brook::byte_buffer out;
  REQUIRE(gzip.decompress(both, a.size() + b.size(), out));
  auto want = a;
  want.insert(want.end(), b.begin(), b.end());
  CHECK(out == want);
  CHECK(gzip.decompress(both, a.size() + b.size() - 1, out) == brook::errc::record_too_large);
}

TEST_CASE("gzip refuses hostile payloads", "[codecs][gzip]") {
  const brook::codecs::gzip_codec gzip;
  check_hostile_inputs(gzip);
  // A damaged CRC-32 in the trailer.
  brook::byte_buffer out;
  REQUIRE(gzip.compress(json_like(5, 1000), -1, out));
  out[out.size() - 6] ^= std::byte{0x01};
  check_refused(gzip, out, brook::errc::corrupt_message);
}

TEST_CASE("gzip stops a bomb at the limit", "[codecs][gzip]") {
  const auto bomb = gzip_zeros(std::size_t{256} << 20);
  CHECK(bomb.size() < 512 * 1024);
  check_bomb(brook::codecs::gzip_codec{}, bomb);
}

TEST_CASE("gzip is enabled by adding it", "[codecs][gzip]") {
  check_enabling(std::make_shared<brook::codecs::gzip_codec>());
}

TEST_CASE("gzip agrees with Python's gzip module both ways", "[codecs][gzip]") {
  // An independent reader and writer (CPython's gzip module, over its own zlib binding), when
  // python3 is installed; no network.
  if (std::system("python3 -c 'import gzip' >/dev/null 2>&1") != 0) {
    WARN("python3 with its gzip module is not installed: cross-check skipped");
    return;
  }
  const brook::codecs::gzip_codec gzip;
  brook::test::temp_dir dir("brook-gzip");
  const auto plain = json_like(61, 300'000);
  brook::byte_buffer ours;
  REQUIRE(gzip.compress(plain, 9, ours));
  write_file(dir.path() / "plain", plain);
  write_file(dir.path() / "ours.gz", ours);
  const std::string script =
      "import gzip,sys; d=sys.argv[1]; p=open(d+'/plain','rb').read(); "
      "ok = gzip.decompress(open(d+'/ours.gz','rb').read()) == p; "
      "open(d+'/theirs.gz','wb').write(gzip.compress(p, 6) + gzip.compress(b'tail', 1)); sys.exit(0 if ok else 3)";
  const std::string command = "python3 -c \"" + script + "\" '" + dir.path().string() + "'";
  REQUIRE(std::system(command.c_str()) == 0);  // Python read brook's member
  const auto theirs = read_file(dir.path() / "theirs.gz");
  brook::byte_buffer back;
  REQUIRE(gzip.decompress(theirs, plain.size() + 4, back));
  auto want = plain;
  const auto tail = to_bytes("tail");
  want.insert(want.end(), tail.begin(), tail.end());
  CHECK(back == want);  // brook read Python's two members
}
