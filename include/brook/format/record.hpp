// One record inside a RecordBatch v2 (Kafka's DefaultRecord), and its headers.
//
//   length          varint   bytes that follow this field
//   attributes      int8     unused, 0
//   timestampDelta  varlong  record timestamp - batch baseTimestamp
//   offsetDelta     varint   record offset - batch baseOffset
//   keyLength       varint   -1 = null key
//   key             bytes
//   valueLength     varint   -1 = null value
//   value           bytes
//   headersCount    varint
//   headers         headersCount x { keyLength varint (>= 0), key UTF-8,
//                                    valueLength varint (-1 = null), value }
//
// Example: offsetDelta 0, timestampDelta 0, key null, value "hi", no headers:
//   10 00 00 00 01 04 68 69 00     (length 8 -> zigzag 16 = 0x10)
//
// Thread-safety: record_view and record_header are values borrowing the batch
// bytes; they are valid as long as those bytes (see record_batch_view).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

#include <brook/core/linkage.hpp>
#include <brook/core/types.hpp>
#include <brook/format/bytes.hpp>
#include <brook/format/varint.hpp>

namespace brook {

/// A record header: a non-null UTF-8 key and a nullable value. Borrows its bytes.
struct record_header {
  std::string_view key;
  nullable_bytes value;
};

namespace detail {

/// Decoded positions of one record. Filled by parse_record.
struct record_fields {
  std::int64_t timestamp_delta = 0;
  std::int32_t offset_delta = 0;
  nullable_bytes key;
  nullable_bytes value;
  std::int32_t header_count = 0;
  const std::byte* headers_begin = nullptr;  // first header byte
  const std::byte* headers_end = nullptr;
};

/// Parses one header at p, never reading at or past end. Returns the next position, or nullptr if malformed.
BROOK_ALWAYS_INLINE const std::byte* parse_header(const std::byte* p, const std::byte* end, record_header& h) noexcept {
  std::int32_t klen = 0, vlen = 0;
  std::size_t n = decode_varint(p, end, klen);
  if (n == 0 || klen < 0) return nullptr;
  p += n;
  if (end - p < klen) return nullptr;
  h.key = std::string_view(reinterpret_cast<const char*>(p), static_cast<std::size_t>(klen));
  p += klen;
  n = decode_varint(p, end, vlen);
  if (n == 0 || vlen < -1) return nullptr;
  p += n;
  if (vlen >= 0) {
    if (end - p < vlen) return nullptr;
    h.value = nullable_bytes(p, static_cast<std::size_t>(vlen));
    p += vlen;
  } else {
    h.value = nullable_bytes::null();
  }
  return p;
}

/// Parses the record starting at p (its length varint), never reading at or past end.
/// With check_headers, every header is walked too. Returns the position after the
/// record, or nullptr if anything is truncated, negative where it may not be, or
/// the record's length does not match its contents.
BROOK_ALWAYS_INLINE const std::byte* parse_record(const std::byte* p, const std::byte* end, record_fields& f,
                                                  bool check_headers = true) noexcept {
  std::int32_t len = 0;
  std::size_t n = decode_varint(p, end, len);
  if (n == 0 || len < 1) return nullptr;
  p += n;
  if (end - p < len) return nullptr;
  const std::byte* rend = p + len;
  ++p;  // attributes
  n = decode_varlong(p, rend, f.timestamp_delta);
  if (n == 0) return nullptr;
  p += n;
  n = decode_varint(p, rend, f.offset_delta);
  if (n == 0) return nullptr;
  p += n;
  std::int32_t klen = 0, vlen = 0;
  n = decode_varint(p, rend, klen);
  if (n == 0 || klen < -1) return nullptr;
  p += n;
  if (klen >= 0) {
    if (rend - p < klen) return nullptr;
    f.key = nullable_bytes(p, static_cast<std::size_t>(klen));
    p += klen;
  } else {
    f.key = nullable_bytes::null();
  }
  n = decode_varint(p, rend, vlen);
  if (n == 0 || vlen < -1) return nullptr;
  p += n;
  if (vlen >= 0) {
    if (rend - p < vlen) return nullptr;
    f.value = nullable_bytes(p, static_cast<std::size_t>(vlen));
    p += vlen;
  } else {
    f.value = nullable_bytes::null();
  }
  n = decode_varint(p, rend, f.header_count);
  if (n == 0 || f.header_count < 0) return nullptr;
  p += n;
  f.headers_begin = p;
  if (check_headers) {
    record_header h;
    for (std::int32_t i = 0; i < f.header_count; ++i) {
      p = parse_header(p, rend, h);
      if (p == nullptr) return nullptr;
    }
    if (p != rend) return nullptr;  // length must match the contents exactly
  }
  f.headers_end = rend;
  return rend;
}

/// The end of the record starting at p, from its length alone: nullptr if the length is
/// malformed, below 1 or runs past end. Nothing inside the record is read or checked.
/// `body` receives where the record's body (after its length) starts.
BROOK_ALWAYS_INLINE const std::byte* skip_record(const std::byte* p, const std::byte* end,
                                                 const std::byte*& body) noexcept {
  std::int32_t len = 0;
  const std::size_t n = decode_varint(p, end, len);
  if (n == 0 || len < 1 || end - p - static_cast<std::ptrdiff_t>(n) < len) return nullptr;
  body = p + n;
  return body + len;
}

/// The offsetDelta of the record whose body (after its length) is [p, rend): false if the
/// fields before it are truncated or malformed.
BROOK_ALWAYS_INLINE bool record_offset_delta(const std::byte* p, const std::byte* rend, std::int32_t& delta) noexcept {
  ++p;  // attributes (the body holds at least this byte)
  std::int64_t ts = 0;
  std::size_t n = decode_varlong(p, rend, ts);
  if (n == 0) return false;
  return decode_varint(p + n, rend, delta) != 0;
}

}  // namespace detail

/// The headers of one record, in on-disk order. Only made from validated bytes.
class record_headers {
 public:
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = record_header;
    using difference_type = std::ptrdiff_t;
    using pointer = const record_header*;
    using reference = const record_header&;

    iterator() = default;
    iterator(const std::byte* p, const std::byte* end, std::int32_t left) : p_(p), end_(end), left_(left) { load(); }
    reference operator*() const { return cur_; }
    pointer operator->() const { return &cur_; }
    iterator& operator++() {
      p_ = next_;
      --left_;
      load();
      return *this;
    }
    iterator operator++(int) {
      auto t = *this;
      ++*this;
      return t;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.left_ == b.left_; }

   private:
    void load() {
      if (left_ > 0) {
        next_ = detail::parse_header(p_, end_, cur_);
        if (next_ == nullptr) left_ = 0;  // unreachable for validated bytes; stop rather than misread
      }
    }
    const std::byte* p_ = nullptr;
    const std::byte* end_ = nullptr;
    const std::byte* next_ = nullptr;
    std::int32_t left_ = 0;
    record_header cur_;
  };

  record_headers() = default;
  record_headers(const std::byte* b, const std::byte* e, std::int32_t count) : b_(b), e_(e), count_(count) {}
  iterator begin() const { return iterator(b_, e_, count_); }
  iterator end() const { return iterator(e_, e_, 0); }
  std::size_t size() const noexcept { return static_cast<std::size_t>(count_); }
  bool empty() const noexcept { return count_ == 0; }

 private:
  const std::byte* b_ = nullptr;
  const std::byte* e_ = nullptr;
  std::int32_t count_ = 0;
};

/// One record with its absolute offset and timestamp. Borrows the batch's bytes:
/// valid as long as the record_batch_view (and what keeps its bytes alive) it came from.
class record_view {
 public:
  record_view() = default;
  record_view(brook::offset off, timestamp_ms ts, const detail::record_fields& f)
      : offset_(off),
        timestamp_(ts),
        key_(f.key),
        value_(f.value),
        headers_(f.headers_begin, f.headers_end, f.header_count) {}

  brook::offset offset() const noexcept { return offset_; }
  /// CreateTime of the record, or the batch's append time for LogAppendTime batches.
  timestamp_ms timestamp() const noexcept { return timestamp_; }
  const nullable_bytes& key() const noexcept { return key_; }
  const nullable_bytes& value() const noexcept { return value_; }
  const record_headers& headers() const noexcept { return headers_; }

 private:
  brook::offset offset_{0};
  timestamp_ms timestamp_ = -1;
  nullable_bytes key_;
  nullable_bytes value_;
  record_headers headers_;
};

}  // namespace brook
