// Kafka's "records" field, the record batches of a Produce request and of a Fetch answer.
// They travel as bytes and are never re-encoded:
//
//   classic    int32 length N | N bytes of whole RecordBatch v2 batches (format/record_batch.hpp)
//              N = -1 is null
//   flexible   uvarint N+1 | N bytes; uvarint 0 is null
//
// A records value is one of:
//   null        Kafka's null records (the default, as in Kafka's generated messages);
//   a view      bytes owned elsewhere. Decoding yields a view of the buffer the message was
//               read from, so a Produce request's batches are validated and appended as they
//               came, without a copy: the decoded message must not outlive that buffer.
//               Encoding copies a view's bytes into the message;
//   a slice     a storage::log_slice, whole batches as a range of a segment file (a Fetch
//               answer). Encoding writes only the length and marks the range as an external
//               part of the message (codec::external_part), which a server sends with
//               sendfile from the segment file or copies from the slice's mapping
//               (protocol/response.hpp). The slice keeps its segment alive.
//
// Equality compares the bytes (and nullness), whichever way they are held.
//
// Thread-safety: a value; a records that holds a view or slice is as safe to share as the
// bytes behind it (a slice's are immutable).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <variant>

#include <brook/codec/message_codec.hpp>
#include <brook/codec/schema.hpp>
#include <brook/core/result.hpp>
#include <brook/storage/log_slice.hpp>

namespace brook::protocol {

class records {
 public:
  /// Null records.
  records() = default;
  /// A view of `bytes`, which must outlive the value and every message holding it.
  static records view(std::span<const std::byte> bytes) { return records(bytes); }
  /// The batches of `slice`, sent from its segment file.
  static records of(log_slice slice) { return records(std::move(slice)); }

  bool is_null() const noexcept { return std::holds_alternative<std::monostate>(v_); }
  /// The batches' bytes: the view, or the slice's mapping; empty when null.
  std::span<const std::byte> bytes() const noexcept {
    if (const auto* s = std::get_if<log_slice>(&v_)) return s->bytes();
    if (const auto* b = std::get_if<std::span<const std::byte>>(&v_)) return *b;
    return {};
  }
  std::size_t size_bytes() const noexcept { return bytes().size(); }
  /// The slice, when the records are one; else none.
  const log_slice* slice() const noexcept { return std::get_if<log_slice>(&v_); }

  friend bool operator==(const records& a, const records& b) {
    if (a.is_null() || b.is_null()) return a.is_null() == b.is_null();
    const auto x = a.bytes(), y = b.bytes();
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
  }

  // ---- the codec's hooks (codec::self_encoding)
  static std::size_t kafka_min_size(const codec::context& c) { return c.flexible ? 1 : 4; }

  static result<void> kafka_write(codec::message_writer& w, const records& r, const codec::context& c,
                                  const codec::field_ref& f, bool nullable) {
    if (r.is_null()) {
      if (!nullable)
        return make_error(errc::invalid_request, "field '{}' is null in version {}, where it is not nullable", f,
                          c.version);
      w.null_array(c.flexible);  // bytes share the null markers of arrays
      return ok();
    }
    const std::size_t n = r.size_bytes();
    if (n >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      return make_error(errc::invalid_request, "field '{}': {} bytes of records exceed a Kafka length", f, n);
    c.flexible ? w.compact_array_length(n) : w.array_length(n);
    if (const log_slice* s = r.slice()) {
      w.external(n, s);
    } else {
      w.raw(r.bytes());
    }
    return ok();
  }

  static result<void> kafka_read(codec::message_reader& r, records& out, const codec::context& c,
                                 const codec::field_ref& f, bool nullable) {
    const std::size_t at = r.position();
    std::optional<std::span<const std::byte>> v;
    BROOK_TRY(r.nullable_bytes_view(f, c.flexible, v));
    if (!v) {
      if (!nullable) return r.fail_at(at, f, "null in a field that is not nullable in version {}", c.version);
      out = records();
      return ok();
    }
    out = records(*v);
    return ok();
  }

 private:
  explicit records(std::span<const std::byte> b) : v_(b) {}
  explicit records(log_slice s) : v_(std::move(s)) {}

  std::variant<std::monostate, std::span<const std::byte>, log_slice> v_;
};

}  // namespace brook::protocol
