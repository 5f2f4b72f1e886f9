// TraceCommand: the flow every trace-reading command shares (cli_command.hpp).
#include "cli_command.hpp"

#include <cstdio>
#include <string>

namespace uscope_cli {

void TraceCommand::add_options(CLI::App &sub) {
  sub.add_option("file", file_, file_help_)->required();
  add_trace_options(sub);
  sub.add_flag("--strict", strict_, "fail on the first defect of the file (validated first) instead of skipping it");
}

int TraceCommand::run() {
  try {
    if (before_open()) return 0;
    Trace t(file_, strict_ ? USCOPE_READ_STRICT : 0);
    if (strict_) strict_check(t, file_);
    read(t);
    std::fflush(stdout);
    warn_defects(t, file_);
  } catch (const Failure &e) {
    std::fflush(stdout);
    const bool usage = dynamic_cast<const Usage *>(&e) != nullptr;
    // Every error about the file names it (the reader's open message does already).
    const std::string what = e.what();
    const bool named = usage || what.find(file_) != std::string::npos;
    std::fprintf(stderr, "uscope: %s%s%s%s\n", named ? "" : file_.c_str(), named ? "" : ": ", what.c_str(),
                 error_hint().c_str());
    return usage ? 2 : 1;
  }
  return 0;
}

}  // namespace uscope_cli
