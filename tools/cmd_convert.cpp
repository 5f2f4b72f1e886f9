// uscope convert IN -o OUT [--strict] [...]: NPU JSONL (.jsonl, .jsonl.gz)
// to .uscope or .pccx, and back (docs/convert.md). The formats come from the
// file names. Malformed lines go to stderr with their line numbers; the
// number skipped is printed at the end (exit 0), or --strict stops at the
// first one (exit 1). The library refuses an output that is the input and
// replaces the output only on success (convert.h): exit 1, old output kept.
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "cmd_convert.hpp"

namespace uscope_cli {

namespace {
constexpr uint64_t kMaxPrinted = 50;  // then only counted: a bad file must not flood the terminal
}  // namespace

void print_issue(void *user, uint64_t line, const char *reason) {
  auto *p = static_cast<IssuePrinter *>(user);
  if (line == 0)  // about the input as a whole (a .uscope trace's defects), not a line
    std::fprintf(stderr, "uscope: warning: %s: %s\n", p->file, reason);
  else if (p->printed < kMaxPrinted)
    std::fprintf(stderr, "%s:%" PRIu64 ": %s\n", p->file, line, reason);
  else if (p->printed == kMaxPrinted)
    std::fprintf(stderr, "%s: further malformed lines are counted, not printed\n", p->file);
  if (line) ++p->printed;
}

void add_ingest_options(CLI::App *sub, uscope_convert_options_t *o) {
  uscope_convert_options_init(o);
  sub->add_option("--period-ps", o->period_ps,
                  "npu clock period: time_ps = t_cycle x period (default: the trace's TRACE_META period_ps, else 1000)");
  sub->add_option("--max-line-bytes", o->max_line_bytes, "longest JSONL line accepted (default 64 MiB)");
  sub->add_option("--reorder-window", o->reorder_window, "lines held to sort out-of-order t_cycle (default 65536)");
}

std::unique_ptr<ConvertCmd> add_convert(CLI::App &app) {
  auto c = std::make_unique<ConvertCmd>();
  c->app = app.add_subcommand("convert", "convert NPU traces: .jsonl[.gz] -> .uscope/.pccx/.jsonl, .uscope/.pccx -> .jsonl");
  c->app->add_option("input", c->in, "input file (.jsonl, .jsonl.gz, .uscope, .pccx)")->required();
  c->app->add_option("-o,--output", c->out, "output file (.uscope, .pccx, .jsonl, .jsonl.gz)")->required();
  c->app->add_flag("--strict", c->strict, "stop at the first malformed line");
  c->app->add_flag("--no-progress", c->no_progress, "no progress bar (shown only when stderr is a terminal)");
  add_ingest_options(c->app, &c->opts);
  c->app->add_option("--queue-depth", c->opts.queue_depth, ".uscope: commands in flight (default 1024)");
  c->app->add_option("--contexts", c->opts.num_contexts, ".uscope: meta/LLM contexts live at once (default 256)");
  c->app->add_option("--num-te", c->opts.num_te, ".uscope: TE jobs running at once (default 64)");
  c->app->add_option("--num-ve", c->opts.num_ve, ".uscope: VE jobs running at once (default 64)");
  c->app->add_option("--dma-channels", c->opts.num_dma_channels, ".uscope: DMA channel count (default 64)");
  c->app->add_option("--dram-channels", c->opts.num_dram_channels, ".uscope: DRAM channel count (default 64)");
  c->app->add_option("--noc-links", c->opts.num_noc_links, ".uscope: NoC link count (default 64)");
  c->app->add_option("--sram-banks", c->opts.num_sram_banks, ".uscope: SRAM bank count (default 1024)");
  return c;
}

int ConvertCmd::run() {
  IssuePrinter printer{in.c_str()};
  opts.strict = strict ? 1 : 0;
  opts.progress = no_progress ? 0 : 1;  // the library shows it only on a terminal
  opts.on_issue = print_issue;
  opts.user = &printer;
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  const uscope_status_t s = uscope_convert(in.c_str(), USCOPE_CONVERT_AUTO, out.c_str(), USCOPE_CONVERT_AUTO, &opts, &st);
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

}  // namespace uscope_cli
