// Writes the seed corpus of brook_fuzz_record_batch: a few small valid batches built by
// brook's builder, one compressed with each codec (tests/fuzz/corpus/*.bin are its committed
// output).
//
//   brook_fuzz_make_corpus <dir>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>

#include "support/test_codecs.hpp"

namespace {

using bytes = std::vector<std::byte>;

void write(const std::filesystem::path& dir, const std::string& name, std::span<const std::byte> b) {
  static brook::batch_decompressor dec(brook::test::all_codecs());
  auto check = brook::record_batch_view::parse(b, dec);
  if (!check) {
    std::fprintf(stderr, "make_corpus: %s does not parse: %s\n", name.c_str(), check.error().to_string().c_str());
    std::exit(1);
  }
  std::ofstream f(dir / (name + ".bin"), std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

bytes copy(std::span<const std::byte> s) { return bytes(s.begin(), s.end()); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: brook_fuzz_make_corpus <dir>\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  using brook::nullable_bytes;
  const brook::timestamp_ms t0 = 1'700'000'000'000;

  brook::record_batch_builder b;
  b.append(t0, nullable_bytes::null(), "hi");
  write(dir, "single_record", b.finish());

  b.reset(brook::offset{1000});
  const brook::record_header h1[] = {
      {"dup", "1"}, {"\xF0\x9F\x94\x91-cl\xC3\xA9", nullable_bytes::null()}, {"dup", ""}};
  b.append(t0, "key", "value", h1);
  b.append(t0 - 5, nullable_bytes::null(), nullable_bytes::null());
  b.append(t0 + (std::int64_t{1} << 40), "", "");
  const brook::record_header h2[] = {{"", "empty key"}};
  b.append(t0 - (std::int64_t{1} << 40), std::string(70, 'K'), std::string(130, 'V'), h2);  // 2-byte lengths
  const auto mixed = copy(b.finish());
  write(dir, "mixed_records", mixed);

  brook::batch_options tx;
  tx.producer_id = 4242;
  tx.producer_epoch = 3;
  tx.base_sequence = 17;
  tx.partition_leader_epoch = 9;
  tx.transactional = true;
  brook::record_batch_builder t(tx);
  t.reset(brook::offset{77});
  t.append(t0, "k", "v");
  t.append(t0 + 1, "k", "w");
  write(dir, "transactional", t.finish());

  auto lat = mixed;
  brook::set_batch_log_append_time(lat, t0 + 999);
  write(dir, "log_append_time", lat);

  b.reset(brook::offset{5});
  for (int i = 0; i < 40; ++i) b.append(t0 + i, nullable_bytes::null(), std::to_string(i));
  write(dir, "many_records", b.finish());

  // Two batches back to back, as in a segment file.
  b.reset(brook::offset{0});
  b.append(t0, "a", "1");
  auto two = copy(b.finish());
  b.reset(brook::offset{1});
  b.append(t0, "b", "2");
  b.append(t0, "c", "3");
  auto second = b.finish();
  two.insert(two.end(), second.begin(), second.end());
  write(dir, "two_batches", two);

  // An empty batch (recordsCount 0), as log compaction can leave behind.
  b.reset(brook::offset{50});
  b.append(t0, "x", "y");
  auto full = b.finish();
  bytes empty(full.begin(), full.begin() + brook::batch_layout::header_size);
  brook::detail::store_be32(
      empty.data() + brook::batch_layout::batch_length,
      static_cast<std::int32_t>(brook::batch_layout::header_size - brook::batch_layout::log_overhead));
  brook::detail::store_be32(empty.data() + brook::batch_layout::records_count, 0);
  brook::update_batch_crc(empty);
  write(dir, "empty_batch", empty);

  // One batch of each codec (Kafka's framing), headers and all, for the fuzzer to mutate.
  const auto codecs = brook::test::all_codecs();
  for (auto type : brook::test::every_compression_type) {
    if (type == brook::compression_type::none) continue;
    const auto* codec = codecs.find(type);
    b.reset(brook::offset{200});
    b.append(t0, "key", "value", h1);
    for (int i = 0; i < 12; ++i) b.append(t0 + i, "k", R"({"event":"click","user":42})");
    auto z = b.finish(*codec, codec->default_level());
    if (!z) {
      std::fprintf(stderr, "make_corpus: %s: %s\n", std::string(brook::compression_name(type)).c_str(),
                   z.error().to_string().c_str());
      return 1;
    }
    write(dir, std::string("compressed_") + std::string(brook::compression_name(type)), *z);
  }
  return 0;
}
