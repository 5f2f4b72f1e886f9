// libFuzzer target over the `uscope` CLI on an NPU JSONL file (fuzz_cli.hpp):
// the input (plain, or gzip when it starts with 1f 8b) is written to
// in.jsonl; npu-report runs on it (text, JSON, --strict), convert writes each
// output kind (.uscope, .pccx, .jsonl, .jsonl.gz), and what convert wrote is
// read back by the other commands (info, dump, summary, npu-report, convert
// back to .jsonl). The last input byte's low bit picks small units and
// windows (limits reached) or the defaults. Each input runs ~15 commands, so
// this target makes ~20 inputs per second, not thousands. Seeds:
// corpus/jsonl/ and corpus/cli_jsonl/ (findings).
#include "fuzz_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_cli::Env &e = fuzz_cli::env();
  const std::string in = e.write("in.jsonl", data, size);
  const bool small = size && (data[size - 1] & 1);
  std::vector<std::string> ingest;
  if (small) ingest = {"--reorder-window", "4", "--max-line-bytes", "2048"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string> &more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  e.run(with({"npu-report", in}, ingest));
  e.run(with({"npu-report", in, "--json"}, ingest));
  e.run(with({"npu-report", in, "--strict"}, ingest));
  std::vector<std::string> units = ingest;
  if (small)
    units = with(units, {"--queue-depth", "4", "--contexts", "2", "--num-te", "2", "--num-ve", "2",
                         "--dma-channels", "2", "--dram-channels", "2", "--noc-links", "2", "--sram-banks", "4"});
  const std::string us = e.path("out.uscope"), px = e.path("out.pccx");
  const int us_rc = e.run(with({"convert", in, "-o", us, "--no-progress"}, units));
  const int px_rc = e.run(with({"convert", in, "-o", px, "--no-progress"}, ingest));
  e.run(with({"convert", in, "-o", e.path("out.jsonl"), "--no-progress"}, ingest));
  e.run(with({"convert", in, "-o", e.path("out.jsonl.gz"), "--no-progress", "--strict"}, ingest));
  // What convert wrote, read back (a few commands: fuzz_cli_uscope and
  // fuzz_cli_pccx run them all; here the inputs are NPU traces).
  if (us_rc == 0) {
    e.run({"info", us, "--json"});
    e.run({"dump", us, "--json"});
    e.run({"summary", us, "--json"});
    e.run({"npu-report", us, "--json"});
    e.run({"convert", us, "-o", e.path("back_uscope.jsonl"), "--no-progress"});
  }
  if (px_rc == 0) {
    e.run({"info", px, "--json"});
    e.run({"npu-report", px, "--json"});
    e.run({"convert", px, "-o", e.path("back_pccx.jsonl"), "--no-progress"});
  }
  return 0;
}
