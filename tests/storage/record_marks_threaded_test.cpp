// record_marks from several threads: readers that make the same batch's marks at once
// publish one set, and every one of them gets it.
#include <catch2/catch.hpp>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include <brook/storage/record_marks.hpp>

#include "support/checks.hpp"
#include "support/log_builders.hpp"

using namespace brook;
using brook::test::make_batch;

TEST_CASE("record_marks: readers making the same marks at once publish one", "[storage][record_marks]") {
  auto batch = make_batch(200, 1000, "v", 10);
  auto v = record_batch_view::parse(batch, batch_check{});
  REQUIRE_OK(v);
  for (int round = 0; round < 20; ++round) {
    record_marks marks;
    std::atomic<bool> go{false};
    std::vector<const record_marks::batch_marks*> seen(4);
    std::vector<std::thread> readers;
    for (std::size_t r = 0; r < seen.size(); ++r)
      readers.emplace_back([&, r] {
        while (!go.load()) std::this_thread::yield();
        seen[r] = marks.make(static_cast<std::size_t>(round) * 1000, file_pos(0), v->header(), v->records_bytes());
      });
    go = true;
    for (auto& th : readers) th.join();
    REQUIRE(seen[0] != nullptr);
    for (const auto* m : seen) CHECK(m == seen[0]);  // the same marks, not equal copies
    CHECK(marks.marks_for(static_cast<std::size_t>(round) * 1000) == seen[0]);
  }
}
