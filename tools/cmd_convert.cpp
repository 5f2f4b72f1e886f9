// uscope convert IN -o OUT [--strict] [...]: between any two of NPU JSONL
// (.jsonl, .jsonl.gz), .uscope and .pccx (docs/conversions.md). The formats
// come from the file names. Events the output cannot place (malformed lines,
// ids beyond the unit counts) go to stderr with their line or event numbers;
// the number skipped is printed at the end (exit 0), more than 10 and
// --max-skipped percent of the input fail (exit 1, no output), and --strict
// stops at the first one (exit 1). What a format cannot hold is one warning
// line each, with counts. The library refuses an output that is the input
// and replaces the output only on success (convert.h): exit 1, old output kept.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_command.hpp"

namespace uscope_cli {

namespace {

class Convert final : public Command {
 public:
  Convert()
      : Command("convert", "convert NPU traces between any two of .jsonl[.gz], .uscope and .pccx") {}
  int run() override;  // opens its own files (JSONL, .uscope or .pccx)

 private:
  void add_options(CLI::App &sub) override {
    sub.add_option("input", in, "input file (.jsonl, .jsonl.gz, .uscope, .pccx)")->required();
    sub.add_option("-o,--output", out, "output file (.uscope, .pccx, .jsonl, .jsonl.gz)")->required();
    sub.add_flag("--strict", strict, "stop at the first malformed line or event the output cannot place");
    sub.add_option("--max-skipped", max_skipped,
                   "fail (no output) when more than 10 events and more than this percentage of the input "
                   "cannot be placed (default 1; 100: never)")
        ->check(CLI::Range(0.0001, 100.0));
    sub.add_flag("--no-progress", no_progress, "no progress bar (shown only when stderr is a terminal)");
    add_ingest_options(&sub, &opts);
    sub.add_option("--queue-depth", opts.queue_depth, ".uscope: commands in flight (default 1024)");
    sub.add_option("--contexts", opts.num_contexts, ".uscope: meta/LLM contexts live at once (default 256)");
    sub.add_option("--num-te", opts.num_te, ".uscope: TE jobs running at once (default 64)");
    sub.add_option("--num-ve", opts.num_ve, ".uscope: VE jobs running at once (default 64)");
    sub.add_option("--dma-channels", opts.num_dma_channels, ".uscope: DMA channel count (default 64)");
    sub.add_option("--dram-channels", opts.num_dram_channels, ".uscope: DRAM channel count (default 64)");
    sub.add_option("--noc-links", opts.num_noc_links, ".uscope: NoC link count (default 64)");
    sub.add_option("--sram-banks", opts.num_sram_banks, ".uscope: SRAM bank count (default 1024)");
  }
  std::string in, out;
  bool strict = false, no_progress = false;
  double max_skipped = 1.0;
  uscope_convert_options_t opts{};
};

int Convert::run() {
  IssuePrinter printer{in.c_str()};
  opts.strict = strict ? 1 : 0;
  opts.max_skipped_ppm = static_cast<uint32_t>(max_skipped * 10000.0 + 0.5);
  opts.progress = no_progress ? 0 : 1;  // the library shows it only on a terminal
  opts.on_issue = print_issue;
  opts.user = &printer;
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  const uscope_status_t s = uscope_convert(&st, in.c_str(), USCOPE_CONVERT_AUTO, out.c_str(), USCOPE_CONVERT_AUTO, &opts);
  if (s != USCOPE_OK) {
    std::fprintf(stderr, "uscope: convert: %s: %s\n", uscope_status_str(s), uscope_last_error());
    if (st.skipped) std::fprintf(stderr, "uscope: convert: %" PRIu64 " event(s) or line(s) skipped\n", st.skipped);
    return 1;
  }
  const bool jsonl_in = uscope_convert_format_of(in.c_str()) == USCOPE_CONVERT_JSONL;
  std::fprintf(stderr, "converted %" PRIu64 " events in, %" PRIu64 " out", st.events_in, st.events_out);
  if (st.lines) std::fprintf(stderr, " (%" PRIu64 " JSONL lines read)", st.lines);
  if (st.skipped)
    std::fprintf(stderr, "; skipped %" PRIu64 " %s, first at %s %" PRIu64, st.skipped,
                 jsonl_in ? "malformed line(s) or event(s) the output cannot place" : "event(s) the output cannot place",
                 jsonl_in ? "line" : "event", st.first_issue_line);
  std::fprintf(stderr, "\n");
  return 0;
}

}  // namespace

std::unique_ptr<Command> convert_command() { return std::make_unique<Convert>(); }

}  // namespace uscope_cli
