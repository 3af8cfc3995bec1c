// `brook`: the command-line tool of the brook library.
//
//   brook dump-log FILE.log [--json] [--verify-index]
//   brook produce  DIR [--key-separator S] [--batch-size N]
//   brook produce  --data-dir D --topic T [--key-separator S] [--partition P] [--batch-size N]
//   brook consume  DIR [--from-offset N] [--max-records N] [--follow] [--json] [--print-key]
//   brook consume  --data-dir D --topic T [--from-beginning | --partition P [--offset O]]
//                  [--max-records N] [--follow] [--json] [--print-key]
//   brook consume  --data-dir D --topic T --group G [--from-beginning] [--max-records N]
//                  [--follow] [--json] [--print-key]
//   brook verify   DIR [--repair]
//   brook topics   --data-dir D (--create | --list | --describe | --alter | --delete) ...
//   brook groups   --data-dir D (--list | --describe --group G | --reset-offsets --group G ...)
//   brook cluster  --data-dir D --describe [--json]
//   brook serve    --data-dir D [--listen HOST:PORT] [--advertised-listener HOST:PORT]
//                  [--config key=value]... [--config-file FILE] [--log-level LEVEL]
//
// Exit codes: 0 ok, 1 the command failed (one line on stderr, "brook: CODE: ..."),
// 2 usage error (a short usage on stderr).
#include <cstdio>
#include <exception>
#include <string_view>

#include <fmt/format.h>

#include <brook/version.hpp>

#include "commands/commands.hpp"

namespace {

using namespace brook::cli;

struct command {
  const command_spec* spec;
  int (*run)(const parsed_args&);
};

// clang-format off
const command commands[] = {
    {&dump_log_spec, run_dump_log},
    {&produce_spec, run_produce},
    {&consume_spec, run_consume},
    {&verify_spec, run_verify},
    {&topics_spec, run_topics},
    {&groups_spec, run_groups},
    {&cluster_spec, run_cluster},
    {&serve_spec, run_serve},
};
// clang-format on

void print_main_help(std::FILE* out) {
  fmt::print(out, "usage: brook <command> [options]\n\nCommands:\n");
  for (const auto& c : commands) fmt::print(out, "  {:<9} {}\n", c.spec->name, c.spec->summary);
  fmt::print(out,
             "\nRun `brook <command> --help` for a command's options.\n"
             "Exit codes: 0 ok, 1 failure (one line on stderr), 2 usage error.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_main_help(stderr);
    return exit_usage;
  }
  std::string_view name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    print_main_help(stdout);
    return exit_ok;
  }
  if (name == "--version") {
    fmt::print("brook {}.{}.{}\n", BROOK_VERSION_MAJOR, BROOK_VERSION_MINOR, BROOK_VERSION_PATCH);
    return exit_ok;
  }
  for (const auto& c : commands) {
    if (c.spec->name != name) continue;
    try {
      parsed_args args = parse_args(*c.spec, argc, argv, 2);
      if (args.help) {
        fmt::print("{}\n", help_text(*c.spec));
        return exit_ok;
      }
      return c.run(args);
    } catch (const usage_error& e) {
      std::fflush(stdout);
      fmt::print(stderr, "brook {}: {}\n{}\nRun 'brook {} --help' for details.\n", name, e.what(), usage_line(*c.spec),
                 name);
      return exit_usage;
    } catch (const std::exception& e) {
      std::fflush(stdout);
      fmt::print(stderr, "brook: internal error: {}\n", e.what());
      return exit_failure;
    }
  }
  fmt::print(stderr, "brook: unknown command '{}'\n", name);
  print_main_help(stderr);
  return exit_usage;
}
