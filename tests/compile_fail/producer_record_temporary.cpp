// Compiled twice by tests/compile_fail/check_compile_fail.cmake: as it is, it must compile
// (the ways to fill a producer_record that are safe); with -DBROOK_EXPECT_ERROR it must not,
// and the compiler must name the deleted record_bytes(std::string&&) constructor.
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <brook/client/producer.hpp>

int main() {
  brook::producer_record rec;
  const std::string key = "user-1";
  rec.key = key;                             // an lvalue that outlives send()
  rec.value = "a literal";                   // static storage
  rec.key = brook::nullable_bytes::null();   // null
  rec.value = std::string_view("borrowed");  // a view: the caller's responsibility
#ifdef BROOK_EXPECT_ERROR
  rec.key = fmt::format("user-{}", 2);  // a temporary: would dangle after this line
#endif
  return rec.key.is_null() ? 0 : 1;
}
