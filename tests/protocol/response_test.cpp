#include <catch2/catch.hpp>

#include <unistd.h>

#include <brook/protocol/response.hpp>

#include <brook/protocol/api_versions.hpp>
#include <brook/protocol/fetch.hpp>
#include <brook/storage/partition_log.hpp>

#include "support/checks.hpp"
#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::encoded;
using brook::test::make_batch;
using brook::test::temp_dir;

namespace {
std::unique_ptr<partition_log> log_with_batches(const temp_dir& t, int batches) {
  auto log = partition_log::open(t / "t-0");
  REQUIRE_OK(log);
  for (int i = 0; i < batches; ++i) {
    auto b = make_batch(3, 1'000 + i);
    REQUIRE_OK((*log)->append(b));
  }
  return std::move(*log);
}

fetch_response answer_with(std::vector<records> parts) {
  fetch_response r;
  r.responses.push_back({"t", uuid{}, {}});
  for (std::size_t i = 0; i < parts.size(); ++i) {
    fetch_response_partition p;
    p.partition_index = partition_id{static_cast<std::int32_t>(i)};
    p.records = parts[i];
    r.responses[0].partitions.push_back(p);
  }
  return r;
}
}  // namespace

TEST_CASE("A response frame is the size then the header then the body", "[protocol][response]") {
  api_versions_response r;
  r.api_keys = {{18, 0, 4}};
  for (const std::int16_t v : {std::int16_t{0}, std::int16_t{3}}) {
    auto f = encode_response(7, r, v);
    REQUIRE_OK(f);
    CHECK(f->slices().empty());
    auto body = encoded(r, v);
    std::vector<std::byte> want = bytes_of({0, 0, 0, static_cast<int>(4 + body.size()), 0, 0, 0, 7});
    want.insert(want.end(), body.begin(), body.end());  // ApiVersions: response header v0 always
    CHECK(f->bytes() == want);
    CHECK(f->flatten() == want);
    CHECK(f->size_bytes() == want.size());
  }
  fetch_response empty;
  auto flexible = encode_response(9, empty, 12);
  REQUIRE_OK(flexible);
  // Response header v1 (tags), then throttle, error, session, no topics, tags.
  CHECK(flexible->bytes() == bytes_of({0, 0, 0, 17, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}));
}

TEST_CASE("A fetch answer leaves log slices out of its bytes and flatten puts them back", "[protocol][response]") {
  temp_dir t;
  auto log = log_with_batches(t, 4);
  auto first = log->read(offset{0}, {.max_bytes = 1});  // one batch (KIP-74: always one)
  auto rest = log->read(offset{3});
  REQUIRE_OK(first);
  REQUIRE_OK(rest);
  REQUIRE(first->size_bytes() > 0);
  REQUIRE(rest->size_bytes() > first->size_bytes());
  const auto memory = bytes_of({9, 9});

  for (const std::int16_t v : {std::int16_t{4}, std::int16_t{12}}) {
    INFO("v" << v);
    auto slices = answer_with({records::of(*first), records::view(memory), records(), records::of(*rest)});
    auto copies =
        answer_with({records::view(first->bytes()), records::view(memory), records(), records::view(rest->bytes())});
    auto f = encode_response(1, slices, v);
    auto c = encode_response(1, copies, v);
    REQUIRE_OK(f);
    REQUIRE_OK(c);
    REQUIRE(f->slices().size() == 2);
    CHECK(c->slices().empty());
    // The same frame either way; only the slices' bytes are missing from the in-memory part.
    CHECK(f->flatten() == c->bytes());
    CHECK(f->size_bytes() == c->bytes().size());
    CHECK(f->bytes().size() == c->bytes().size() - first->size_bytes() - rest->size_bytes());
    CHECK(f->slices()[0].at < f->slices()[1].at);
    // And a client reads the flattened frame back to the same records.
    const auto whole = f->flatten();
    codec::message_reader r(std::span<const std::byte>(whole).subspan(4), "response");
    auto h = read_response_header(r, api_key::fetch, v);
    REQUIRE_OK(h);
    CHECK(h->correlation_id == 1);
    fetch_response back;
    REQUIRE_OK(codec::read(r, back, v));
    CHECK(back == copies);
  }
}

TEST_CASE("A slice in a response is sent from its segment file with sendfile", "[protocol][response]") {
  temp_dir t;
  auto log = log_with_batches(t, 2);
  auto s = log->read(offset{0});
  REQUIRE_OK(s);
  auto f = encode_response(5, answer_with({records::of(*s)}), 12);
  REQUIRE_OK(f);
  REQUIRE(f->slices().size() == 1);
  // Write the frame the way a server does: memory, slice (sendfile), memory.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const auto& part = f->slices()[0];
  REQUIRE(::write(fds[1], f->bytes().data(), part.at) == static_cast<ssize_t>(part.at));
  auto sent = part.slice.send_to(fds[1]);
  REQUIRE_OK(sent);
  const auto tail = f->bytes().size() - part.at;
  REQUIRE(::write(fds[1], f->bytes().data() + part.at, tail) == static_cast<ssize_t>(tail));
  ::close(fds[1]);
  std::vector<std::byte> got(f->size_bytes() + 1);
  std::size_t have = 0;
  for (ssize_t n = 0; (n = ::read(fds[0], got.data() + have, got.size() - have)) > 0;)
    have += static_cast<std::size_t>(n);
  ::close(fds[0]);
  got.resize(have);
  CHECK(got == f->flatten());
}
