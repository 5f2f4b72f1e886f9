// The one way a uscope command is registered. Each command is a Command in
// its own file (tools/cmd_<name>.cpp) with a factory declared at the end of
// this header; uscope_cli_main (uscope_cli.cpp) keeps the list of them, adds
// each to the CLI11 app before parsing and runs the one the command line
// chose. A new command is a new file, a line here and a line in that list.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <utility>

#include "cli_common.hpp"

namespace uscope_cli {

class Command {
 public:
  Command(std::string name, std::string description) : name_(std::move(name)), description_(std::move(description)) {}
  virtual ~Command() = default;
  Command(const Command &) = delete;
  Command &operator=(const Command &) = delete;

  // Adds the subcommand, its options and their help texts to app. The
  // options' order is the order `uscope NAME --help` lists them in.
  void add_to(CLI::App &app) {
    sub_ = app.add_subcommand(name_, description_);
    add_options(*sub_);
  }
  // Whether the parsed command line named this command.
  bool chosen() const { return sub_ != nullptr && static_cast<bool>(*sub_); }
  // Runs the command once the command line is parsed. Returns the exit
  // status: 0 success, 1 error (message on stderr), 2 usage error (check
  // says more with its own).
  virtual int run() = 0;

 protected:
  virtual void add_options(CLI::App &sub) = 0;

 private:
  std::string name_, description_;
  CLI::App *sub_ = nullptr;
};

// A command that reads one µScope trace FILE (info, dump, state, events,
// summary). run() is their common flow, so that every one of them reads files
// alike:
//   1. before_open(): the usage checks CLI11 cannot make (throw Usage), or a
//      file that is no µScope trace, handled otherwise (info on a .pccx);
//   2. the trace opened, with --strict strictly and validated whole before
//      anything is printed (strict_check);
//   3. read(): the command's output, then stdout flushed;
//   4. one warning line per kind of defect the reader skipped (warn_defects),
//      after the whole output, exit 0.
// An error prints "uscope: FILE: message" (the file named once; a usage error
// names none) followed by error_hint(), with exit status 1, 2 for Usage.
class TraceCommand : public Command {
 public:
  TraceCommand(std::string name, std::string description, std::string file_help)
      : Command(std::move(name), std::move(description)), file_help_(std::move(file_help)) {}
  int run() final;

 protected:
  // The options after FILE; --strict comes after them.
  virtual void add_trace_options(CLI::App &sub) = 0;
  // True when the command is done without opening FILE as a µScope trace.
  virtual bool before_open() { return false; }
  virtual void read(const Trace &t) = 0;
  // Appended to the error message (summary: what reads this kind of file).
  virtual std::string error_hint() const { return ""; }
  const std::string &file() const { return file_; }

 private:
  void add_options(CLI::App &sub) final;
  std::string file_help_, file_;
  bool strict_ = false;
};

// The commands, one file each.
std::unique_ptr<Command> info_command();        // cmd_info.cpp (a .pccx: cmd_pccx_info.cpp)
std::unique_ptr<Command> dump_command();        // cmd_dump.cpp
std::unique_ptr<Command> state_command();       // cmd_state.cpp
std::unique_ptr<Command> events_command();      // cmd_events.cpp
std::unique_ptr<Command> summary_command();     // cmd_summary.cpp
std::unique_ptr<Command> check_command();       // cmd_check.cpp
std::unique_ptr<Command> convert_command();     // cmd_convert.cpp
std::unique_ptr<Command> npu_report_command();  // cmd_npu_report.cpp
std::unique_ptr<Command> noc_latency_command(); // cmd_noc_latency.cpp
std::unique_ptr<Command> export_command();      // cmd_export.cpp
std::unique_ptr<Command> import_konata_command(); // cmd_import_konata.cpp
std::unique_ptr<Command> view_command();        // cmd_view.cpp (the page: view_page.cpp, tools/view/)
std::unique_ptr<Command> mcp_command();         // cmd_mcp.cpp (with USCOPE_CLI_MCP: needs simdjson)
// The cpu commands, over the cpu analysis of <uscope/analysis.h> (cli_cpu.hpp).
std::unique_ptr<Command> timeline_command();    // cmd_timeline.cpp
std::unique_ptr<Command> counters_command();    // cmd_counters.cpp
std::unique_ptr<Command> buffers_command();     // cmd_buffers.cpp
std::unique_ptr<Command> analyze_command();     // cmd_analyze.cpp

}  // namespace uscope_cli
