// A blocking loopback client for server tests: frames out, frames in, a 10 s receive
// timeout so that a missing answer fails a test instead of hanging it.
//
// Thread-safety: one thread per client.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/codec/message_codec.hpp>
#include <brook/format/bytes.hpp>
#include <brook/protocol/messages.hpp>
#include <brook/protocol/request.hpp>
#include <brook/protocol/response_header.hpp>

namespace brook::test {

/// A blocking loopback client with a receive timeout.
class wire_client {
 public:
  explicit wire_client(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~wire_client() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void send(const std::vector<std::byte>& b) {
    REQUIRE(::send(fd_, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size()));
  }
  /// The next frame's bytes after the size; none on EOF (or a timeout).
  std::optional<std::vector<std::byte>> frame() {
    std::vector<std::byte> size(4);
    if (!exactly(size)) return std::nullopt;
    std::vector<std::byte> body(static_cast<std::size_t>(brook::detail::load_be32(size.data())));
    if (!exactly(body)) return std::nullopt;
    return body;
  }
  /// Sends `req` at `version` and returns the decoded answer (the test fails if none comes).
  template <typename Req>
  auto call(const Req& req, std::int16_t version) {
    constexpr auto key = static_cast<protocol::api_key>(codec::schema_of<Req>.info.api_key);
    using Resp = typename protocol::api_messages<key>::response;
    const std::int32_t corr = ++correlation_;
    send(*protocol::encode_request({static_cast<std::int16_t>(key), version, corr, "brook-test"}, req));
    auto f = frame();
    REQUIRE(f.has_value());
    codec::message_reader r(*f, "response");
    auto h = protocol::read_response_header(r, key, version);
    REQUIRE(h.has_value());
    REQUIRE(h->correlation_id == corr);
    Resp out{};
    auto read = codec::read(r, out, version);
    if (!read) FAIL(read.error().to_string());
    return out;
  }
  /// Whether the server closed the connection (EOF) before any byte came.
  bool closed_by_peer() {
    std::byte b;
    return ::recv(fd_, &b, 1, 0) == 0;
  }

 private:
  bool exactly(std::vector<std::byte>& out) {
    std::size_t have = 0;
    while (have < out.size()) {
      const auto n = ::recv(fd_, out.data() + have, out.size() - have, 0);
      if (n <= 0) return false;
      have += static_cast<std::size_t>(n);
    }
    return true;
  }
  int fd_;
  std::int32_t correlation_ = 0;
};

}  // namespace brook::test
