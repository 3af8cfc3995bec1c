// `brook serve`'s settings: Kafka's broker configs (server.properties names and values)
// mapped onto brook's option structs: node_options (the data directory's log defaults,
// the group coordinator, housekeeping), server::broker_config and server::server_options.
//
// serve starts from Kafka's defaults except where brook documents otherwise (the table in
// README.md, "brook serve", and `brook serve --help` list every key, its default and
// where it goes).
//
// Thread-safety: values and pure functions.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <brook/embedded/node.hpp>
#include <brook/server/kafka_broker.hpp>
#include <brook/server/tcp_server.hpp>

namespace brook::cli {

/// Kafka config name -> value, as --config and --config-file give them.
using config_map = std::map<std::string, std::string, std::less<>>;

struct serve_settings {
  node_options node{};
  server::broker_config broker{};
  server::server_options server{};
};

/// serve's defaults with `configs` applied. Throws usage_error naming the key for an
/// unknown key or a bad value.
serve_settings make_serve_settings(const config_map& configs);

/// The keys make_serve_settings knows, each with what it sets, for --help.
std::string serve_config_help();

/// `--config key=value` pairs into `into` (overriding what a file gave). Throws
/// usage_error for a pair without '=' or a key given twice.
void add_config_pairs(config_map& into, const std::vector<std::string>& pairs);

/// Reads a server.properties file: `key=value` lines (spaces around both trimmed), blank
/// lines, and comment lines starting with '#' or '!'; a later line wins, as in Java's
/// Properties. Throws usage_error naming the file and line for anything else.
config_map read_config_file(const std::filesystem::path& file);

}  // namespace brook::cli
