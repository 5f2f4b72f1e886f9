// uscope import-konata LOG[.gz] -o OUT.uscope [--clock-period-ps P] [--dut-name N] [--strict]:
// a Kanata log (Konata's format, v0004) as a µScope trace with the cpu
// protocol (export.h uscope_import_konata, docs/export.md). Malformed lines
// go to stderr with their numbers and are skipped; --strict stops at the first.
#include <uscope/export.h>

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_command.hpp"

namespace uscope_cli {

namespace {

class ImportKonata final : public Command {
 public:
  ImportKonata() : Command("import-konata", "import a Kanata (Konata) pipeline log as a µScope trace") {}
  int run() override;

 private:
  void add_options(CLI::App &sub) override {
    sub.add_option("input", in, "Kanata log (plain or .gz)")->required();
    sub.add_option("-o,--output", out, "output trace (.uscope)")->required();
    add_number(&sub, "--clock-period-ps", &period_ps, "clock period in picoseconds (default 1000)");
    sub.add_option("--dut-name", dut, "DUT name (default konata)");
    sub.add_flag("--strict", strict, "stop at the first malformed line");
    sub.add_flag("--no-progress", no_progress, "no progress bar (shown only when stderr is a terminal)");
  }
  std::string in, out, dut;
  uint64_t period_ps = 0;
  bool strict = false, no_progress = false;
};

int ImportKonata::run() {
  uscope_konata_import_options_t o;
  uscope_konata_import_options_init(&o);
  if (period_ps) o.clock_period_ps = period_ps;
  if (!dut.empty()) o.dut_name = dut.c_str();
  o.strict = strict ? 1 : 0;
  o.progress = no_progress ? 0 : 1;
  IssuePrinter printer{in.c_str()};
  o.on_issue = print_issue;
  o.user = &printer;
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  const uscope_status_t s = uscope_import_konata(&st, in.c_str(), out.c_str(), &o);
  if (s != USCOPE_OK) {
    std::fprintf(stderr, "uscope: import-konata: %s: %s\n", uscope_status_str(s), uscope_last_error());
    return 1;
  }
  std::fprintf(stderr, "imported %" PRIu64 " instructions from %" PRIu64 " lines", st.events_out, st.lines);
  if (st.skipped) std::fprintf(stderr, "; skipped %" PRIu64 " malformed line(s), first at line %" PRIu64, st.skipped, st.first_issue_line);
  std::fprintf(stderr, "\n");
  return 0;
}

}  // namespace

std::unique_ptr<Command> import_konata_command() { return std::make_unique<ImportKonata>(); }

}  // namespace uscope_cli
