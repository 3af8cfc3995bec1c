// The commands of the `brook` tool. Each has a spec (grammar and help) and a
// run function that returns the process exit code (0 ok, 1 failure; usage
// errors are thrown as usage_error and become 2 in main).
#pragma once

#include <optional>
#include <string>

#include <brook/compression/compression_type.hpp>

#include "commands/cli.hpp"

namespace brook {
class compression_codec;
class consumer_record;
}  // namespace brook

namespace brook::cli {

extern const command_spec dump_log_spec;
int run_dump_log(const parsed_args& args);

extern const command_spec produce_spec;
int run_produce(const parsed_args& args);
/// produce's --compression and --compression-level, as given.
struct produce_compression_args {
  compression_type type = compression_type::none;  ///< none without --compression
  std::optional<int> level;                        ///< none without --compression-level
};
/// Throws usage_error for an unknown codec name or a level that is not a number.
produce_compression_args produce_compression(const parsed_args& args);
/// The level to compress at with `codec` (the codec --compression names): `level`, or the
/// codec's Kafka default without one. Throws usage_error for a level outside its range.
int produce_compression_level(std::optional<int> level, const compression_codec& codec);
/// The `--data-dir D --topic T` form of produce (produce_topic.cpp).
int run_produce_topic(const parsed_args& args);

extern const command_spec consume_spec;
int run_consume(const parsed_args& args);
/// The `--data-dir D --topic T` form of consume (consume_topic.cpp).
int run_consume_topic(const parsed_args& args);
/// The `--data-dir D --topic T --group G` form of consume (consume_group.cpp).
int run_consume_group(const parsed_args& args);
/// Appends the line the topic forms of consume print for `r` (newline included): the
/// --json object with "partition" first, else the value (key<TAB>value with print_key).
void append_record_line(std::string& line, const consumer_record& r, bool json, bool print_key);
/// --follow in the DIR and topic forms: once per process, at the first end reached, tells
/// stderr that everything produced from now on will be printed (scripts and tests wait
/// for this line instead of guessing how long start-up takes).
void announce_following();

extern const command_spec groups_spec;
int run_groups(const parsed_args& args);

extern const command_spec topics_spec;
int run_topics(const parsed_args& args);

extern const command_spec cluster_spec;
int run_cluster(const parsed_args& args);

extern const command_spec serve_spec;
int run_serve(const parsed_args& args);

extern const command_spec verify_spec;
int run_verify(const parsed_args& args);

}  // namespace brook::cli
