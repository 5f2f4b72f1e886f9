// uscope: inspect µScope traces from the command line. Built only on the
// public C API of libuscope, like any user's tool.
//
//   uscope info   FILE [--json]     (a .pccx container too; cmd_info.cpp)
//   uscope dump   FILE --json       (cmd_dump.cpp)
//   uscope state  FILE (--time PS | --cycle N) [--json]   (past the end: the end, with a warning; cmd_state.cpp)
//   uscope events FILE --from PS --to PS [--json]   (from <= to; clipped to the end, with a warning; cmd_events.cpp)
//   uscope timeline FILE --entity N [--range A:B | --cycle C] [--json]   (cmd_timeline.cpp)
//   uscope counters FILE [--counter NAME] [--range A:B] [--buckets N] [--json]   (cmd_counters.cpp)
//   uscope buffers FILE --cycle N [--buffer NAME] [--json]   (cmd_buffers.cpp)
//   uscope analyze FILE [--range A:B] [--json]   (cpu / noc / npu scopes; cmd_analyze.cpp)
//   uscope summary FILE [--json]     (cpu / npu / noc scopes; cmd_summary.cpp)
//   uscope check FILE [--json] [--strict]   (validate a trace; cmd_check.cpp)
//   uscope convert IN -o OUT [--strict]   (NPU JSONL <-> .uscope / .pccx; cmd_convert.cpp)
//   uscope npu-report FILE [--json]  (NPU metrics of .jsonl / .uscope / .pccx; cmd_npu_report.cpp)
//   uscope export FILE --to F -o OUT (konata, perfetto, chrome-json, nytprof, hpctoolkit, fst, vcd; cmd_export.cpp)
//   uscope import-konata LOG -o OUT  (a Kanata log as a µScope trace; cmd_import_konata.cpp)
//   uscope view FILE [-o OUT.html] [--range A:B] [--serve [--port P]]  (web viewer; cmd_view.cpp)
//   uscope mcp --trace FILE          (MCP server over stdio; cmd_mcp.cpp, mcp_server.cpp)
//
// Each command is a Command (cli_command.hpp), listed once below; this file
// only parses the command line and runs the command it names.
//
// Tolerant reading: what a trace holds that does not fit its schema (ops on
// slots past a storage's size, segments that no longer decode, ...) is
// skipped by the library and counted; each command that read such a file
// prints one warning line per kind on stderr after its (whole) output and
// exits 0. --strict validates the whole file first and fails on the first
// defect, before printing anything.
//
// Output is deterministic. Errors go to stderr with exit code 1 (2 for usage:
// every numeric option is a plain decimal number, parse_number in
// cli_common.hpp). uscope --version; uscope <command> --help.
#include <CLI/CLI.hpp>
#include <uscope/uscope.h>

#include <memory>
#include <string>

#include "cli_command.hpp"
#include "cli_main.hpp"

namespace uscope_cli {
namespace {

// "uscope --version": the CLI's version (the headers it was built with) and
// the library's (the one loaded now; they differ after a library upgrade).
std::string version_text() {
  const uint32_t f = uscope_format_version();
  return "uscope " + std::to_string(USCOPE_VERSION_MAJOR) + "." + std::to_string(USCOPE_VERSION_MINOR) + "." +
         std::to_string(USCOPE_VERSION_PATCH) + "\nlibuscope " + uscope_version_string() + " (writes µScope format " +
         std::to_string(f >> 16) + "." + std::to_string(f & 0xFFFF) + ")";
}

}  // namespace
}  // namespace uscope_cli

using namespace uscope_cli;

int uscope_cli_main(int argc, char **argv) {
  CLI::App app{"Inspect µScope traces (libuscope " + std::string(uscope_version_string()) + ")", "uscope"};
  app.require_subcommand(1);
  app.failure_message([](const CLI::App *, const CLI::Error &e) {
    return std::string("uscope: ") + e.what() + "\nRun with --help for more information.\n";
  });
  app.set_version_flag("--version", version_text(), "print the uscope and libuscope versions and exit");
  // Every command, in the order `uscope --help` lists them.
  const std::unique_ptr<Command> commands[] = {
      info_command(),     dump_command(),     state_command(),    events_command(),  timeline_command(),
      counters_command(), buffers_command(),  analyze_command(),  summary_command(), check_command(),
      convert_command(),  npu_report_command(), noc_latency_command(), export_command(), import_konata_command(),
      view_command(),
#ifdef USCOPE_CLI_MCP
      mcp_command(),
#endif
  };
  for (const auto &c : commands) c->add_to(app);
  check_all_numbers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  for (const auto &c : commands)
    if (c->chosen()) return c->run();
  return 2;  // not reached: the app requires one command
}
