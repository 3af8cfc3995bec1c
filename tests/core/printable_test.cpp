#include <catch2/catch.hpp>
#include <string>

#include <brook/core/printable.hpp>

using brook::detail::printable;

TEST_CASE("printable keeps printable ASCII and escapes everything else", "[core][printable]") {
  CHECK(printable("orders-0 t 5") == "orders-0 t 5");
  CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(printable("\x1b[2J\xff\n") == "\\x1b[2J\\xff\\x0a");
  CHECK(printable("back\\slash") == "back\\x5cslash");  // an escape cannot be forged
  CHECK(printable("") == "");
}

TEST_CASE("printable bounds what it echoes", "[core][printable]") {
  const std::string long_text(1000, 'z');
  CHECK(printable(long_text) == std::string(64, 'z') + "... (1000 bytes)");
  CHECK(printable(long_text, 3) == "zzz... (1000 bytes)");
  CHECK(printable(std::string(64, 'z')) == std::string(64, 'z'));
}
