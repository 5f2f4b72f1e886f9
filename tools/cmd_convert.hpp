// uscope convert / uscope npu-report (cmd_convert.cpp, cmd_npu_report.cpp):
// registered on the app before parsing, run after it. They open their own
// files (JSONL, .uscope or .pccx), so main calls them before opening a Trace.
#pragma once

#include <CLI/CLI.hpp>
#include <uscope/convert.h>

#include <memory>
#include <string>

namespace uscope_cli {

struct ConvertCmd {
  CLI::App *app = nullptr;
  std::string in, out;
  bool strict = false, no_progress = false;
  uscope_convert_options_t opts{};
  int run();
};
std::unique_ptr<ConvertCmd> add_convert(CLI::App &app);

struct NpuReportCmd {
  CLI::App *app = nullptr;
  std::string in;
  bool json = false, strict = false;
  uscope_convert_options_t opts{};
  int run();
};
std::unique_ptr<NpuReportCmd> add_npu_report(CLI::App &app);

struct IssuePrinter {
  const char *file;
  uint64_t printed = 0;
};

// Shared: the options of the JSONL ingest, and an issue printer.
void add_ingest_options(CLI::App *sub, uscope_convert_options_t *o);
void print_issue(void *user, uint64_t line, const char *reason);

}  // namespace uscope_cli
