// Helpers that build batches and read logs back for storage tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/partition_log.hpp>

namespace brook::test {

/// A record as a test remembers it.
struct plain_record {
  std::int64_t offset = -1;
  std::int64_t timestamp = -1;
  std::string key;
  bool key_null = false;
  std::string value;
  bool value_null = false;

  friend bool operator==(const plain_record&, const plain_record&) = default;
};

/// Builds one batch of `n` records with values "v<seed>-<i>" and timestamps ts, ts+1, ...
inline std::vector<std::byte> make_batch(int n, std::int64_t ts = 1'000, const std::string& tag = "v",
                                         std::size_t value_size = 0) {
  record_batch_builder b;
  for (int i = 0; i < n; ++i) {
    std::string v = tag;  // appended piecewise: `tag + "-" + ...` trips GCC 12's false -Wrestrict
    v += '-';
    v += std::to_string(i);
    if (v.size() < value_size) v.resize(value_size, 'x');
    std::string k = "k";
    k += std::to_string(i);
    b.append(ts + i, k, v);
  }
  auto s = b.finish();
  return {s.begin(), s.end()};
}

/// The bytes of every batch in [from, log end) (from the log start by default): what
/// byte-identical replicas must share.
inline std::vector<std::byte> log_bytes(const partition_log& log, offset from = offset(-1)) {
  std::vector<std::byte> out;
  offset at = from.value() < 0 ? log.log_start_offset() : from;
  while (at < log.log_end_offset()) {
    auto s = log.read(at);
    if (!s) throw std::runtime_error(s.error().to_string());
    if (s->empty()) break;
    out.insert(out.end(), s->bytes().begin(), s->bytes().end());
    at = s->next_offset();
  }
  return out;
}

/// Every record in [from, log end), read through the public API with CRC checks.
inline std::vector<plain_record> read_all(const partition_log& log, offset from = offset(-1),
                                          batch_decompressor* d = nullptr) {
  std::vector<plain_record> out;
  offset at = from.value() < 0 ? log.log_start_offset() : from;
  while (at < log.log_end_offset()) {
    auto s = log.read(at);
    if (!s) throw std::runtime_error(s.error().to_string());
    if (s->empty()) break;
    auto r = s->for_each_record(
        [&](const record_view& rv) {
          plain_record p;
          p.offset = rv.offset().value();
          p.timestamp = rv.timestamp();
          p.key_null = rv.key().is_null();
          p.key = rv.key().to_string();
          p.value_null = rv.value().is_null();
          p.value = rv.value().to_string();
          out.push_back(std::move(p));
        },
        batch_check{}, d);
    if (!r) throw std::runtime_error(r.error().to_string());
    at = s->next_offset();
  }
  return out;
}

/// Segments built directly in a directory (no partition_log): each `spec` is one segment of
/// `batches` batches of `records` records, timestamps from `ts`; the last one stays active.
/// 64 KiB segments with 4 KiB indexes: small preallocated files for tests of segments.
inline log_config small_segment_config() {
  log_config c;
  c.segment_bytes = 1 << 16;
  c.segment_index_bytes = 4096;
  return c;
}

struct segment_spec {
  int batches = 1;
  int records = 1;
  std::int64_t ts = 1'000;
  std::size_t value_size = 0;
};

inline std::vector<std::shared_ptr<segment>> make_segments(const fs::path& dir, const log_config& cfg,
                                                           const std::vector<segment_spec>& specs,
                                                           offset first = offset(0)) {
  std::vector<std::shared_ptr<segment>> out;
  recovery_report report;
  offset next = first;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    segment::open_args a;
    a.dir = dir;
    a.base = next;
    a.config = &cfg;
    a.kind = segment::open_kind::create;
    a.active = true;
    auto s = segment::open(a, report);
    if (!s) throw std::runtime_error(s.error().to_string());
    for (int b = 0; b < specs[i].batches; ++b) {
      auto batch = make_batch(specs[i].records, specs[i].ts + b, "v", specs[i].value_size);
      set_batch_base_offset(batch, next);
      if (auto r = (*s)->append(batch); !r) throw std::runtime_error(r.error().to_string());
      next = next + specs[i].records;
    }
    if (i + 1 < specs.size())
      if (auto r = (*s)->seal(); !r) throw std::runtime_error(r.error().to_string());
    out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace brook::test
