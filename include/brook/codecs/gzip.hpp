// Kafka's gzip codec (compression type 1) over zlib. Opt-in: link brook::gzip (zlib).
//
// Writes what Kafka's Java client writes: one RFC 1952 gzip member (a 10-byte header with no
// name or extra field, raw deflate, the CRC-32 and ISIZE trailer). Reads one member or several
// back to back (Java's GZIPInputStream and Node's gunzip continue into the next member);
// anything after the last member that is not another member is corrupt_message (Kafka's
// Java reader ignores such bytes, librdkafka stops at the first member: brook refuses them so
// a batch it accepts reads the same everywhere).
//
// Levels (KIP-390 `compression.gzip.level`): -1 (zlib's default, level 6; Kafka's default)
// or 1..9.
//
// Compression is one deflate(Z_FINISH) call into deflateBound's room; more calls, in more
// room, only on a zlib build whose deflateBound falls short (deflate_to_end).
//
// Thread-safety: thread-safe: compression makes a zlib stream per call; decompression keeps
// one per thread (thread_local, reset before each call).
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <zlib.h>

#include <boost/endian/conversion.hpp>

#include <brook/codecs/detail/bounded_output.hpp>
#include <brook/compression/compression_codec.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/byte_buffer.hpp>
#include <brook/core/error.hpp>
#include <brook/core/result.hpp>

namespace brook::codecs {

class gzip_codec final : public compression_codec {
 public:
  /// zlib's windowBits for a gzip wrapper (15-bit window + 16).
  static constexpr int gzip_window_bits = 15 + 16;

  compression_type type() const noexcept override { return compression_type::gzip; }
  int default_level() const noexcept override { return -1; }
  bool valid_level(int level) const noexcept override { return level == -1 || (level >= 1 && level <= 9); }

  result<void> compress(std::span<const std::byte> in, int level, byte_buffer& out) const override {
    if (!valid_level(level)) return detail::bad_level("gzip", level, "1..9 (or -1, zlib's default 6)");
    // One zlib call takes at most 4 GiB in, and deflateBound (a uLong, 32 bits on some
    // hosts) must not wrap: refused before any allocation. A batch is far below this.
    if (in.size() > max_input_bytes) {
      return make_error(errc::record_too_large, "gzip: {} bytes are more than one zlib call compresses", in.size());
    }
    deflater d;
    // memLevel 8 and the default strategy are what librdkafka and the JDK use.
    if (deflateInit2(&d.zs, level, Z_DEFLATED, gzip_window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      return make_error(errc::unknown_server_error, "gzip: deflateInit2 failed (out of memory?)");
    }
    d.zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
    d.zs.avail_in = static_cast<uInt>(in.size());
    // zlib guarantees that one deflate(Z_FINISH) call given the whole input and
    // deflateBound's room (gzip header and trailer included) ends the stream.
    const uLong bound = deflateBound(&d.zs, static_cast<uLong>(in.size()));
    return deflate_to_end(d.zs, static_cast<std::size_t>(std::min<uLong>(bound, UINT_MAX)), out);
  }

  /// Finishes the stream `zs` (its input set) into `out`, appending; first gives it `room`
  /// bytes. Should the stream not end there (a zlib build whose deflateBound falls short),
  /// it gives it a window more at a time. On an error `out` is as it was.
  static result<void> deflate_to_end(z_stream& zs, std::size_t room, byte_buffer& out) {
    BROOK_ASSERT(room > 0 && room <= UINT_MAX, "gzip: {} bytes of room for one deflate call", room);
    constexpr std::size_t more = 64 * 1024;  // room added at a time after the first
    const std::size_t start = out.size();
    struct restore {  // also when a resize below throws bad_alloc
      byte_buffer& out;
      std::size_t size;
      bool armed = true;
      ~restore() {
        if (armed) out.resize(size);
      }
    } guard{out, start};
    std::size_t used = 0;
    for (;;) {
      resize_uninitialized(out, start + used + room);
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + start + used);
      zs.avail_out = static_cast<uInt>(room);
      const int rc = deflate(&zs, Z_FINISH);
      used += room - zs.avail_out;
      if (rc == Z_STREAM_END) break;
      // Z_OK or Z_BUF_ERROR with the room used up: more room lets it go on.
      if ((rc != Z_OK && rc != Z_BUF_ERROR) || zs.avail_out != 0) {
        return make_error(errc::unknown_server_error, "gzip: deflate failed ({})", rc);
      }
      room = more;
    }
    out.resize(start + used);
    guard.armed = false;
    return {};
  }

  /// The largest input compress() takes: one zlib call, whose avail_in is 32 bits, with
  /// stock zlib's deflateBound (the input plus about 0.03%, plus header and trailer) inside
  /// 32 bits too.
  static constexpr std::size_t max_input_bytes = UINT_MAX - (UINT_MAX >> 8);

  result<void> decompress(std::span<const std::byte> in, std::size_t max_bytes, byte_buffer& out) const override {
    if (in.empty()) return detail::corrupt("gzip", "empty");
    // One inflate stream per thread, reset before each use (inflateInit2 allocates its state
    // and window every time).
    thread_local inflater per_thread;
    if (!per_thread.ok) return make_error(errc::unknown_server_error, "gzip: inflateInit2 failed (out of memory?)");
    z_stream& zs = per_thread.zs;
    inflateReset(&zs);
    // ISIZE, the last 4 bytes: the (last) member's size mod 2^32, a hint for the output.
    const std::uint64_t isize =
        in.size() >= 18
            ? boost::endian::load_little_u32(reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4))
            : 0;
    detail::bounded_output sink(out, max_bytes, in.size(), isize);
    auto r = inflate_members(zs, in, sink);
    if (r) sink.keep();
    return r;
  }

 private:
  // A deflate stream for one compress call, ended however the call leaves.
  struct deflater {
    z_stream zs{};
    deflater() = default;
    deflater(const deflater&) = delete;
    deflater& operator=(const deflater&) = delete;
    ~deflater() { deflateEnd(&zs); }  // harmless (Z_STREAM_ERROR) when deflateInit2 failed
  };

  struct inflater {
    z_stream zs{};
    bool ok = inflateInit2(&zs, gzip_window_bits) == Z_OK;
    inflater() = default;
    inflater(const inflater&) = delete;
    inflater& operator=(const inflater&) = delete;
    ~inflater() {
      if (ok) inflateEnd(&zs);
    }
  };

  // Inflates `in`, member after member, into `sink`.
  static result<void> inflate_members(z_stream& zs, std::span<const std::byte> in, detail::bounded_output& sink) {
    std::size_t consumed = 0;
    for (;;) {
      const std::span<std::byte> window = sink.window();
      if (window.empty()) return sink.too_large("gzip");
      const std::size_t in_now = std::min<std::size_t>(in.size() - consumed, UINT_MAX);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + consumed));
      zs.avail_in = static_cast<uInt>(in_now);
      zs.next_out = reinterpret_cast<Bytef*>(window.data());
      zs.avail_out = static_cast<uInt>(window.size());
      // Z_FINISH: inflate may skip its sliding window when the stream ends in this call; when
      // it does not, inflate goes on as with Z_NO_FLUSH (zlib.h).
      const int rc = inflate(&zs, Z_FINISH);
      consumed += in_now - zs.avail_in;
      sink.commit(window.size() - zs.avail_out);
      if (sink.over()) return sink.too_large("gzip");
      if (rc == Z_STREAM_END) {
        if (consumed == in.size()) return {};
        // Another member may follow (RFC 1952 2.2); anything else is not gzip.
        const auto* next = in.data() + consumed;
        if (in.size() - consumed < 2 || next[0] != std::byte{0x1f} || next[1] != std::byte{0x8b}) {
          return detail::corrupt("gzip", fmt::format("{} bytes after the last member", in.size() - consumed));
        }
        inflateReset(&zs);
        continue;
      }
      if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
        return detail::corrupt("gzip", zs.msg != nullptr ? zs.msg : "invalid deflate data");
      }
      if (rc == Z_MEM_ERROR) return make_error(errc::unknown_server_error, "gzip: inflate ran out of memory");
      // Z_OK or Z_BUF_ERROR: no progress possible once the input is used up and room is left.
      if (consumed == in.size() && zs.avail_out != 0) return detail::corrupt("gzip", "truncated");
    }
  }
};

}  // namespace brook::codecs
