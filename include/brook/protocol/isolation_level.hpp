// Kafka's isolation levels (IsolationLevel.java), the int8 a Fetch (v4+) or ListOffsets
// (v2+) request reads at: read_uncommitted reads up to the high watermark, read_committed
// up to the last stable offset (the same offset until brook has transactions).
//
// Thread-safety: a value.
#pragma once

#include <cstdint>

namespace brook::protocol {

enum class isolation_level : std::int8_t { read_uncommitted = 0, read_committed = 1 };

}  // namespace brook::protocol
