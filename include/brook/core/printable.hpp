// Untrusted text as it may go into an error message.
//
// Thread-safety: a pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace brook::detail {

/// `text` as it may go into an error message: bytes outside printable ASCII (and the
/// backslash) as \xNN, and at most `max` bytes of it. A hostile file's or peer's junk is never
/// echoed raw into a log or a terminal.
inline std::string printable(std::string_view text, std::size_t max = 64) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\')
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (text.size() > max) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

}  // namespace brook::detail
