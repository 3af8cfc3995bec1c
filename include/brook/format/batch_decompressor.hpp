// Where the records of a compressed batch are decompressed to.
//
// A compressed magic-2 batch keeps its 61-byte header as it is and compresses the records
// (format/record.hpp), back to back, as one codec payload (compression/compression_codec.hpp):
//
//   0 .. 60   the batch header (format/record_batch.hpp), uncompressed; the CRC covers
//             attributes .. end, so the compressed bytes
//   61 .. end codec(record 0 | record 1 | ... | record n-1)
//
// A batch_decompressor holds the codecs a host enabled, the bound on one batch's
// decompressed records, and one buffer it reuses from batch to batch: reading many
// compressed batches allocates only while the buffer grows to the largest.
//
//   brook::batch_decompressor d(codecs);                    // at most 128 MiB a batch
//   auto v = brook::record_batch_view::parse(bytes, d);     // records in d's buffer
//
// Thread-safety: none; one per thread (the codecs it holds are shared and thread-safe).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <brook/compression/compression_codec.hpp>
#include <brook/compression/compression_type.hpp>
#include <brook/core/byte_buffer.hpp>
#include <brook/core/error.hpp>
#include <brook/core/result.hpp>

namespace brook {

/// The default bound on the decompressed records of one batch: 128 MiB. Kafka has no such
/// bound (its fetch and message limits count compressed bytes); brook's is a safety limit
/// against decompression bombs, far above Kafka's 1 MiB default max.message.bytes.
inline constexpr std::size_t default_max_decompressed_batch_bytes = std::size_t{128} << 20;

class batch_decompressor {
 public:
  /// Reads the codecs in `codecs` (`none` only by default), producing at most `max_bytes` of
  /// records per batch.
  explicit batch_decompressor(compression_codecs codecs = {},
                              std::size_t max_bytes = default_max_decompressed_batch_bytes)
      : codecs_(std::move(codecs)), max_bytes_(max_bytes) {}

  /// The records of one batch compressed with `type`: `payload` decompressed into this
  /// object's buffer, valid until the next call. Errors: unsupported_compression_type (a
  /// codec the host did not enable, naming it), corrupt_message (garbage, truncated, trailing
  /// bytes), record_too_large (more than max_bytes()); the caller adds where the batch is.
  result<std::span<const std::byte>> decompress(compression_type type, std::span<const std::byte> payload) {
    auto codec = codecs_.get(type);
    if (!codec) return codec.error();
    if (retaining_ && !buf_.empty()) retained_.push_back(std::move(buf_));
    buf_.clear();
    // A reused buffer starts with room for a whole window, which the codecs decode into
    // without growing it (liblz4 without a copy); kept buffers get only what their batch needs.
    if (!retaining_ && buf_.capacity() < decompress_window_bytes) buf_.reserve(decompress_window_bytes);
    if (auto r = (*codec)->decompress(payload, max_bytes_, buf_); !r) return r.error();
    return std::span<const std::byte>(buf_);
  }

  /// Retaining (off by default): each decompress writes to a new buffer and keeps the earlier
  /// ones, so records read from several batches stay valid together until take_retained().
  void set_retaining(bool on) noexcept { retaining_ = on; }
  /// Every buffer records were decompressed into since the last call (the current one too),
  /// for a caller that keeps the records alive beyond this object's next use.
  std::vector<byte_buffer> take_retained() {
    if (!buf_.empty()) retained_.push_back(std::move(buf_));
    buf_ = {};
    return std::exchange(retained_, {});
  }

  const compression_codecs& codecs() const noexcept { return codecs_; }
  std::size_t max_bytes() const noexcept { return max_bytes_; }

 private:
  compression_codecs codecs_;
  std::size_t max_bytes_;
  byte_buffer buf_;
  bool retaining_ = false;
  std::vector<byte_buffer> retained_;
};

}  // namespace brook
