// The partition directory's file names: the paths of a segment's files, base-offset
// parsing, and the classification opening a log relies on to keep, remove or refuse
// every directory entry.
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include <brook/storage/partition_files.hpp>

using namespace brook;
using kind = partition_file_kind;

TEST_CASE("segment file paths carry the 20-digit base offset", "[storage][partition_files]") {
  const std::filesystem::path d = "/data/t-0";
  CHECK(partition_files::base_name(offset(42)) == "00000000000000000042");
  CHECK(partition_files::log(d, offset(0)) == "/data/t-0/00000000000000000000.log");
  CHECK(partition_files::index(d, offset(7)) == "/data/t-0/00000000000000000007.index");
  CHECK(partition_files::time_index(d, offset(7)) == "/data/t-0/00000000000000000007.timeindex");
  CHECK(partition_files::with_suffix(partition_files::log(d, offset(7)), partition_files::cleaned_suffix) ==
        "/data/t-0/00000000000000000007.log.cleaned");
}

TEST_CASE("base offsets parse only from exactly 20 digits that fit an int64", "[storage][partition_files]") {
  CHECK(partition_files::parse_base("00000000000000000042") == offset(42));
  CHECK(partition_files::parse_base("09223372036854775807") == offset(INT64_MAX));
  CHECK_FALSE(partition_files::parse_base("09223372036854775808"));  // one past int64
  CHECK_FALSE(partition_files::parse_base("99999999999999999999"));
  CHECK_FALSE(partition_files::parse_base("0000000000000000042"));    // 19 digits
  CHECK_FALSE(partition_files::parse_base("000000000000000000042"));  // 21 digits
  CHECK_FALSE(partition_files::parse_base("0000000000000000004a"));
  CHECK_FALSE(partition_files::parse_base("-0000000000000000042"));
  CHECK_FALSE(partition_files::parse_base(""));
}

TEST_CASE("every name a partition directory holds is classified", "[storage][partition_files]") {
  auto is = [](const std::string& name, kind k) {
    INFO(name);
    CHECK(partition_files::classify(name).kind == k);
  };
  const std::string b = "00000000000000000100";
  CHECK(partition_files::classify(b + ".log").base == offset(100));
  is(b + ".log", kind::segment_log);
  is(b + ".index", kind::segment_index);
  is(b + ".timeindex", kind::segment_time_index);
  is(b + ".txnindex", kind::kafka_only);
  is(b + ".snapshot", kind::kafka_only);
  is("partition.metadata", kind::checkpoint);
  is("partition.metadata.tmp", kind::checkpoint_tmp);
  CHECK(partition_files::classify(b + ".log.swap").base == offset(100));
  is(b + ".log.swap", kind::log_swap);
  is(b + ".index.swap", kind::leftover);
  is(b + ".log.cleaned", kind::leftover);
  is(b + ".timeindex.cleaned", kind::leftover);
  is(b + ".log.deleted", kind::leftover);
  is("junk.swap", kind::leftover);
  for (auto c : partition_files::checkpoints) {
    is(std::string(c), kind::checkpoint);
    is(std::string(c) + ".tmp", kind::checkpoint_tmp);
  }
  is("recovery-point-offset-checkpoint.tmp.tmp", kind::foreign);
  is("some-other-checkpoint.tmp", kind::foreign);
  is(b + ".log.tmp", kind::foreign);
  is(b + ".LOG", kind::foreign);
  is(b, kind::foreign);
  is("0000000000000000010.log", kind::foreign);  // 19 digits
  is(b + ".foo.index", kind::foreign);
  is("notes.txt", kind::foreign);
  is("", kind::foreign);
}
