// A batch record_batch_builder finished in this process, with what the builder knows of its
// records, so that a log in the same process can append it without walking the records and
// checking the CRC again (the bytes never left the process: a file, a follower or the
// network is another matter, and those are validated in full).
//
//   record_batch_builder b;
//   b.append(ts, "key", "value");
//   b.finish();
//   brook::built_batch built = b.built();   // the bytes finish() returned, and their facts
//   log.append(built);                      // validates the facts, not the records
//
// Only a builder makes one. It describes the builder's last uncompressed batch and is valid
// until the builder's next append, finish, reset or destruction. A builder hands out an
// untrusted one (trusted() false) when walking the records could tell something the builder
// cannot vouch for: a timestamp delta that wrapped (the walk calls it corrupt) or a record
// whose length does not fit its int32 varint; a log validates such a batch as it does bytes.
//
// Thread-safety: immutable; the bytes it names are the builder's (one thread's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <brook/format/record_batch.hpp>

namespace brook {

class record_batch_builder;

class built_batch {
 public:
  /// The batch as finish() returned it. A log rewrites its base offset (and maxTimestamp)
  /// in place when it appends it, as with any producer batch.
  std::span<std::byte> bytes() const noexcept { return bytes_; }
  /// The timestamps of the records, as record_batch_view::timestamps() would find them.
  const record_batch_view::record_timestamps& timestamps() const noexcept { return times_; }
  /// Index of the first record without a key, or -1 when every record has one.
  std::int32_t first_null_key() const noexcept { return first_null_key_; }
  /// False when the records must be walked after all (see the top of this header).
  bool trusted() const noexcept { return trusted_; }

 private:
  friend class record_batch_builder;
  built_batch(std::span<std::byte> bytes, const record_batch_view::record_timestamps& times,
              std::int32_t first_null_key, bool trusted) noexcept
      : bytes_(bytes), times_(times), first_null_key_(first_null_key), trusted_(trusted) {}

  std::span<std::byte> bytes_;
  record_batch_view::record_timestamps times_;
  std::int32_t first_null_key_ = -1;
  bool trusted_ = false;
};

}  // namespace brook
