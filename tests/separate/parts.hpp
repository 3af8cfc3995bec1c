// What the TUs of the separate-compilation test share: each is compiled with
// BROOK_SEPARATE_COMPILATION, so it sees brook's heavy classes as declarations only.
#pragma once

#include <string>

#include <brook/embedded.hpp>

namespace separate {

inline constexpr int record_count = 100;
inline constexpr const char* topic = "separate";

/// The value produce_all() sends at offset `i` (one partition: offsets are 0, 1, ...).
inline std::string value_at(long long i) { return "value-" + std::to_string(i); }

/// produce.cpp: sends record_count records and flushes. Returns an error text or "".
std::string produce_all(brook::node& n);
/// consume.cpp: reads them back through a consumer group and checks each value against
/// its offset. Returns an error text or "".
std::string consume_all(brook::node& n);

}  // namespace separate
