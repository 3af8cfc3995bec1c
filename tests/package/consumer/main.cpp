// A program outside brook that builds one RecordBatch and parses it back, to
// prove that brook is usable as a library, installed (find_package) or
// vendored (add_subdirectory): headers found, fmt/Boost/threads propagated,
// C++20 on. Exits 0 on success. Built and run by tests/package/run_package_test.cmake.
#include <cstdio>

#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/version.hpp>

int main() {
  brook::record_batch_builder builder;
  builder.reset(brook::offset{42});
  builder.append(1'700'000'000'000, "key", "value");
  builder.append(1'700'000'000'005, brook::nullable_bytes::null(), "second");
  auto bytes = builder.finish();

  auto batch = brook::record_batch_view::parse(bytes);
  if (!batch) {
    std::fprintf(stderr, "parse failed: %s\n", batch.error().to_string().c_str());
    return 1;
  }
  int n = 0;
  for (const auto& r : *batch) {
    if (r.offset() != brook::offset{42 + n}) {
      std::fprintf(stderr, "record %d has offset %lld, expected %d\n", n, static_cast<long long>(r.offset().value()),
                   42 + n);
      return 1;
    }
    ++n;
  }
  const auto first = *batch->begin();
  if (n != 2 || first.key().as_string_view() != "key" || first.value().as_string_view() != "value") {
    std::fprintf(stderr, "unexpected batch: %d records, first key '%.*s'\n", n, static_cast<int>(first.key().size()),
                 first.key().as_string_view().data());
    return 1;
  }
  std::printf("brook %d.%d.%d: built and parsed a %zu-byte batch of %d records\n", BROOK_VERSION_MAJOR,
              BROOK_VERSION_MINOR, BROOK_VERSION_PATCH, batch->size_bytes(), n);
  return 0;
}
