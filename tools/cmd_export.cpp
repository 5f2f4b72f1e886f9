// uscope export TRACE --to FORMAT -o OUT [--range A:B] [--time-unit U] [--elf F] [--scope S]:
// a trace in the tools architects already use (export.h, docs/export.md):
// konata, perfetto, chrome-json, nytprof, hpctoolkit (OUT a directory), fst,
// vcd. What the format cannot hold is one warning line each, with counts;
// the output replaces OUT only on success.
#include <uscope/export.h>

#include <sys/stat.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_command.hpp"
#include "cli_cpu.hpp"

namespace uscope_cli {

namespace {

class Export final : public Command {
 public:
  Export()
      : Command("export",
                "export a trace to konata, perfetto, chrome-json, nytprof, hpctoolkit, fst or vcd") {}
  int run() override;

 private:
  void add_options(CLI::App &sub) override {
    sub.add_option("input", in, "trace (.uscope; for perfetto and chrome-json also .pccx, .jsonl[.gz])")->required();
    sub.add_option("--to", to, "konata | perfetto | chrome-json | nytprof | hpctoolkit | fst | vcd")->required();
    sub.add_option("-o,--output", out, "output file (a directory for hpctoolkit)")->required();
    sub.add_option("--range", range, "only cycles START:END (both included)");
    sub.add_option("--time-unit", unit, "perfetto, chrome-json: cycle (default for one clock) | ps | ns");
    sub.add_option("--chrome-style", style, "chrome-json: uscope | pccx-lab (default: pccx-lab for a .pccx)");
    sub.add_option("--elf", elf, "the firmware's ELF (default: the trace's cpu.elf_path)");
    sub.add_option("--scope", scope, "the scope to export (default: every one the format shows)");
    sub.add_flag("--no-progress", no_progress, "no progress bar (shown only when stderr is a terminal)");
  }
  std::string in, out, to, range, unit, elf, scope, style;
  bool no_progress = false;
};

int Export::run() {
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  try {
    o.format = uscope_export_format_from_name(to.c_str());
    if (!o.format)
      throw Usage("--to " + to + ": expected konata, perfetto, chrome-json, nytprof, hpctoolkit, fst or vcd");
    if (!range.empty()) {
      const CycleRange r = parse_range(range, "--range");
      o.range_start = r.start;
      o.range_end = r.end;
    }
    if (unit.empty())
      o.time_unit = USCOPE_TIME_AUTO;
    else if (unit == "cycle" || unit == "cycles")
      o.time_unit = USCOPE_TIME_CYCLE;
    else if (unit == "ps")
      o.time_unit = USCOPE_TIME_PS;
    else if (unit == "ns")
      o.time_unit = USCOPE_TIME_NS;
    else
      throw Usage("--time-unit " + unit + ": expected cycle, ps or ns");
    if (style.empty())
      o.chrome_style = USCOPE_CHROME_AUTO;
    else if (style == "uscope")
      o.chrome_style = USCOPE_CHROME_USCOPE;
    else if (style == "pccx-lab")
      o.chrome_style = USCOPE_CHROME_PCCX_LAB;
    else
      throw Usage("--chrome-style " + style + ": expected uscope or pccx-lab");
    if (!style.empty() && o.format != USCOPE_EXPORT_CHROME_JSON) throw Usage("--chrome-style applies to --to chrome-json only");
  } catch (const Usage &e) {
    std::fprintf(stderr, "uscope: export: %s\n", e.what());
    return 2;
  }
  if (!elf.empty()) o.elf_path = elf.c_str();
  if (!scope.empty()) o.scope = scope.c_str();
  o.progress = no_progress ? 0 : 1;  // the library shows it only on a terminal
  IssuePrinter printer{in.c_str()};
  o.on_issue = print_issue;
  o.user = &printer;
  uscope_export_stats_t st{};
  st.struct_size = sizeof st;
  const auto t0 = std::chrono::steady_clock::now();
  const uscope_status_t s = uscope_export(&st, in.c_str(), out.c_str(), &o);
  if (s != USCOPE_OK) {
    std::fprintf(stderr, "uscope: export: %s: %s\n", uscope_status_str(s), uscope_last_error());
    return 1;
  }
  // What a user sizing a long export wants to know: its rate and memory.
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  struct stat is {};
  const double in_mb = ::stat(in.c_str(), &is) == 0 ? static_cast<double>(is.st_size) / 1e6 : 0;
  // The rate is the whole file's: a --range export reads only part of it.
  char rate[64] = "";
  if (range.empty() && secs > 0) std::snprintf(rate, sizeof rate, " (%.0f MB/s of input)", in_mb / secs);
  std::fprintf(stderr,
               "exported cycles %" PRIu64 "..%" PRIu64 " to %s: %" PRIu64 " records, %" PRIu64
               " bytes in %.2f s%s, peak RSS %.1f MB\n",
               st.first_cycle, st.last_cycle, out.c_str(), st.records, st.bytes_out, secs, rate,
               static_cast<double>(peak_rss_kib()) / 1024);
  return 0;
}

}  // namespace

std::unique_ptr<Command> export_command() { return std::make_unique<Export>(); }

}  // namespace uscope_cli
