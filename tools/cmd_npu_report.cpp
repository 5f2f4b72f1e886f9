// uscope npu-report FILE [--json]: the metrics of npu-trace-jsonl.md §7 —
// TE/VE utilization, DMA bandwidth, DRAM channel utilization, SRAM bank
// conflict rate, per-phase command latency, per-layer TE/VE/DMA breakdown —
// from a .jsonl(.gz), a .uscope (npu scope) or a .pccx file. The same data
// gives the same numbers in every format; what a .pccx file cannot hold is
// reported as unavailable (docs/convert.md).
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_command.hpp"

namespace uscope_cli {

namespace {

class NpuReport final : public Command {
 public:
  NpuReport() : Command("npu-report", "NPU metrics (JSONL spec §7) of a .jsonl[.gz], .uscope or .pccx file") {}
  int run() override;  // opens its own file (JSONL, .uscope or .pccx)

 private:
  void add_options(CLI::App &sub) override {
    sub.add_option("file", in, "trace file")->required();
    sub.add_flag("--json", json, "JSON output");
    sub.add_flag("--strict", strict, "JSONL: stop at the first malformed line");
    add_ingest_options(&sub, &opts);
  }
  std::string in;
  bool json = false, strict = false;
  uscope_convert_options_t opts{};
};

int NpuReport::run() {
  // The kind comes from the name; say which names are read rather than the
  // library's terse "unknown format".
  if (uscope_convert_format_of(in.c_str()) == USCOPE_CONVERT_AUTO) {
    std::fprintf(stderr,
                 "uscope: npu-report: %s: unknown kind of file: expected a name ending in .jsonl, .jsonl.gz, .json or "
                 ".json.gz (NPU JSON-Lines), .uscope (a µScope trace with an npu scope) or .pccx (a pccx-lab "
                 "container)\n",
                 in.c_str());
    return 1;
  }
  IssuePrinter printer{in.c_str()};
  opts.strict = strict ? 1 : 0;
  opts.on_issue = print_issue;
  opts.user = &printer;
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  char *text = nullptr;
  const uscope_status_t s = uscope_convert_npu_report(&text, &st, in.c_str(), USCOPE_CONVERT_AUTO, &opts, json ? 1 : 0);
  if (s != USCOPE_OK) {
    // The library's message names the file; keep it whole.
    std::fprintf(stderr, "uscope: npu-report: %s: %s\n", uscope_status_str(s), uscope_last_error());
    return 1;
  }
  std::fputs(text, stdout);
  uscope_convert_free(text);
  if (st.skipped)
    std::fprintf(stderr, "uscope: npu-report: skipped %" PRIu64 " malformed line(s), first at line %" PRIu64 "\n",
                 st.skipped, st.first_issue_line);
  return 0;
}

}  // namespace

std::unique_ptr<Command> npu_report_command() { return std::make_unique<NpuReport>(); }

}  // namespace uscope_cli
