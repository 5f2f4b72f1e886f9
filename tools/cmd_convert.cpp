// uscope convert IN -o OUT [--strict] [...]: NPU JSONL (.jsonl, .jsonl.gz)
// to .uscope or .pccx, and back (docs/convert.md). The formats come from the
// file names. Malformed lines go to stderr with their line numbers; the
// number skipped is printed at the end (exit 0), or --strict stops at the
// first one (exit 1). The library refuses an output that is the input and
// replaces the output only on success (convert.h): exit 1, old output kept.
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
      : Command("convert", "convert NPU traces: .jsonl[.gz] -> .uscope/.pccx/.jsonl, .uscope/.pccx -> .jsonl") {}
  int run() override;  // opens its own files (JSONL, .uscope or .pccx)

 private:
  void add_options(CLI::App &sub) override {
    sub.add_option("input", in, "input file (.jsonl, .jsonl.gz, .uscope, .pccx)")->required();
    sub.add_option("-o,--output", out, "output file (.uscope, .pccx, .jsonl, .jsonl.gz)")->required();
    sub.add_flag("--strict", strict, "stop at the first malformed line");
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
  uscope_convert_options_t opts{};
};

int Convert::run() {
  IssuePrinter printer{in.c_str()};
  opts.strict = strict ? 1 : 0;
  opts.progress = no_progress ? 0 : 1;  // the library shows it only on a terminal
  opts.on_issue = print_issue;
  opts.user = &printer;
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  const uscope_status_t s = uscope_convert(&st, in.c_str(), USCOPE_CONVERT_AUTO, out.c_str(), USCOPE_CONVERT_AUTO, &opts);
  if (s != USCOPE_OK) {
    std::fprintf(stderr, "uscope: convert: %s: %s\n", uscope_status_str(s), uscope_last_error());
    if (st.skipped) std::fprintf(stderr, "uscope: convert: %" PRIu64 " malformed line(s)\n", st.skipped);
    return 1;
  }
  std::fprintf(stderr, "converted %" PRIu64 " events in, %" PRIu64 " out", st.events_in, st.events_out);
  if (st.lines) std::fprintf(stderr, " (%" PRIu64 " JSONL lines read)", st.lines);
  if (st.skipped)
    std::fprintf(stderr, "; skipped %" PRIu64 " malformed line(s), first at line %" PRIu64, st.skipped,
                 st.first_issue_line);
  std::fprintf(stderr, "\n");
  return 0;
}

}  // namespace

std::unique_ptr<Command> convert_command() { return std::make_unique<Convert>(); }

}  // namespace uscope_cli
