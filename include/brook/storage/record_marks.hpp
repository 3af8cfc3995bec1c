// Record marks: where every 16th record of a batch starts, kept in memory beside a
// segment, so that a read starting inside a batch steps over at most 15 records
// instead of every record before its offset. Kafka's format has no index inside a
// batch: its offset index names batches, and a reader finds a record by stepping over
// the lengths of the records before it (about 74 of them, half a 16 KiB batch of
// 100-byte records, for a random offset).
//
// The marks of a batch are made the first time a read with read_options::hint starts
// inside it (a walk over all its record lengths) and kept for the segment's life.
// Only an uncompressed batch whose records fill every offset (not compacted) and hold
// more than `stride` records, and which starts where an offset-index entry points, gets
// marks; they are kept by that entry's number. Kafka's rule gives an entry to every batch
// but a segment's first when batches are larger than index.interval.bytes (4 KiB).
// Nothing is written to disk: the files stay Kafka's, byte for byte.
//
// Marks are a hint, checked before use: a slot's marks name the batch's position, base
// offset, CRC and record count, and apply only to a batch whose header still says the same.
// A truncation reopens the segment (log_truncation.hpp), so its table starts empty; an
// append undone on a full disk can leave an entry's number to another batch at the same
// place (a read cannot reach the undone batch, so this is defence in depth), and a damaged
// index may name any place: neither matches. Then record_batch_view::seek(o, hint) checks
// that it lands on o. A slot once filled stays (readers hold no lock): one whose batch was
// replaced serves nothing until a reopen.
//
// Memory: nothing until a read starts inside a batch; then a directory of 8 KiB, a 32 KiB
// chunk of slots for each 4,096 index entries that were read inside, and for each batch
// read inside two allocations: 48 bytes, and 4 bytes every 16 records. For 16 KiB batches
// of 100-byte records that is about 110 bytes a batch with the allocator's share, 0.7% of
// the bytes of the batches read inside. At most max_slots (4 Mi) index entries get marks.
// (One allocation with the marks after the batch's identity made lookups slower here:
// 0.74 against 1.0 M/s, BM_LogLookup over 256 MiB; not explained.)
//
// Thread-safety: any number of threads may call marks_for and make at once; marks are
// published with a compare-exchange and never freed before the table.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <brook/core/assert.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record.hpp>
#include <brook/format/record_batch.hpp>

namespace brook {

class record_marks {
 public:
  static constexpr std::int32_t stride = 16;
  static constexpr std::size_t chunk_slots = 4096;
  static constexpr std::size_t max_chunks = 1024;
  static constexpr std::size_t max_slots = chunk_slots * max_chunks;

  /// The marks of one batch: record k * stride begins at byte start(k) of its records.
  /// Immutable once published.
  struct batch_marks {
    file_pos position;
    offset base_offset;
    std::uint32_t crc = 0;
    std::int32_t records_count = 0;
    std::vector<std::uint32_t> starts;  ///< ceil(records_count / stride) of them

    std::size_t size() const noexcept { return starts.size(); }
    std::uint32_t start(std::size_t k) const noexcept { return starts[k]; }
    /// Whether these marks describe the batch `h` at `pos`.
    bool describe(file_pos pos, const batch_header& h) const noexcept {
      return position == pos && base_offset == h.base_offset && crc == h.crc && records_count == h.records_count;
    }
    /// The last mark at or before offset o. REQUIRES: o in a batch these marks describe().
    record_position at_or_before(offset o) const noexcept {
      const auto k = static_cast<std::size_t>((o - base_offset) / stride);
      BROOK_ASSERT(k < size(), "mark {} of {} for offset {}", k, size(), o);
      return {start(k), static_cast<std::int32_t>(k) * stride};
    }
  };

  record_marks() = default;
  record_marks(const record_marks&) = delete;
  record_marks& operator=(const record_marks&) = delete;
  ~record_marks() {
    auto* dir = dir_.load(std::memory_order_acquire);
    if (dir == nullptr) return;
    for (std::size_t c = 0; c < max_chunks; ++c) {
      auto* chunk = dir[c].load(std::memory_order_acquire);
      if (chunk == nullptr) continue;
      for (std::size_t i = 0; i < chunk_slots; ++i) delete chunk[i].load(std::memory_order_acquire);
      delete[] chunk;
    }
    delete[] dir;
  }

  /// Whether a batch with header h at pos would get marks.
  static bool wanted(file_pos pos, const batch_header& h) noexcept {
    return h.compression() == compression_type::none && h.records_count > stride &&
           std::int64_t{h.records_count} == std::int64_t{h.last_offset_delta} + 1 && pos.value() >= 0 &&
           pos.value() <= std::numeric_limits<std::uint32_t>::max();
  }

  /// The marks in slot i, whatever batch they describe; nullptr when it has none.
  const batch_marks* marks_for(std::size_t slot) const noexcept {
    if (slot >= max_slots) return nullptr;
    auto* dir = dir_.load(std::memory_order_acquire);
    if (dir == nullptr) return nullptr;
    auto* chunk = dir[slot / chunk_slots].load(std::memory_order_acquire);
    return chunk ? chunk[slot % chunk_slots].load(std::memory_order_acquire) : nullptr;
  }

  /// Walks the records of the batch h at pos (`records`: the bytes after its header) and
  /// keeps their marks in slot i, unless the slot already holds some (those are returned).
  /// nullptr when the batch is not wanted(), the slot is past max_slots, or its records do
  /// not fit its bytes (damage: the read that follows reports it; a damaged count never
  /// sizes an allocation beyond the batch's bytes).
  const batch_marks* make(std::size_t slot, file_pos pos, const batch_header& h, std::span<const std::byte> records) {
    if (slot >= max_slots || !wanted(pos, h)) return nullptr;
    if (const batch_marks* m = marks_for(slot)) return m;
    const auto count = static_cast<std::uint64_t>(h.records_count);  // > stride: wanted()
    if (count > records.size() / 2) return nullptr;                  // a record takes 2 bytes at least
    auto m = std::make_unique<batch_marks>(batch_marks{pos, h.base_offset, h.crc, h.records_count, {}});
    m->starts.reserve(static_cast<std::size_t>((count + stride - 1) / stride));
    const std::byte* p = records.data();
    const std::byte* end = p + records.size();
    const std::byte* body = nullptr;
    for (std::int32_t i = 0; i < h.records_count; ++i) {
      if (i % stride == 0) m->starts.push_back(static_cast<std::uint32_t>(p - records.data()));
      if ((p = detail::skip_record(p, end, body)) == nullptr) return nullptr;
    }
    auto& cell = chunk(slot / chunk_slots)[slot % chunk_slots];
    const batch_marks* expected = nullptr;
    if (cell.compare_exchange_strong(expected, m.get(), std::memory_order_acq_rel)) return m.release();
    return expected;  // another reader filled it first
  }

 private:
  using slot_t = std::atomic<const batch_marks*>;

  slot_t* chunk(std::size_t c) {
    auto* dir = dir_.load(std::memory_order_acquire);
    if (dir == nullptr) {
      auto* fresh = new std::atomic<slot_t*>[max_chunks]();
      if (dir_.compare_exchange_strong(dir, fresh, std::memory_order_acq_rel))
        dir = fresh;
      else
        delete[] fresh;
    }
    slot_t* ch = dir[c].load(std::memory_order_acquire);
    if (ch == nullptr) {
      auto* fresh = new slot_t[chunk_slots]();
      if (dir[c].compare_exchange_strong(ch, fresh, std::memory_order_acq_rel))
        ch = fresh;
      else
        delete[] fresh;
    }
    return ch;
  }

  std::atomic<std::atomic<slot_t*>*> dir_{nullptr};
};

}  // namespace brook
