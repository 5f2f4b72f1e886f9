// libFuzzer target over the `uscope` CLI on a µScope file (fuzz_cli.hpp): the
// input is written to in.uscope, then info, dump, state, events, summary and
// npu-report run on it (text and JSON), and convert to each output it takes
// (.jsonl, .jsonl.gz; .pccx, which it refuses), and export to every format
// (export.h: konata, perfetto, chrome-json, nytprof, hpctoolkit, fst, vcd). Seeds: corpus/reader/,
// corpus/cli_uscope/ (an example-program trace, a converted NPU trace, and
// every finding) and the shared conformance/uscope files.
#include "fuzz_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_cli::Env &e = fuzz_cli::env();
  const std::string in = e.write("in.uscope", data, size);
  fuzz_cli::uscope_commands(in);
  e.run({"convert", in, "-o", e.path("out.jsonl"), "--no-progress"});
  e.run({"convert", in, "-o", e.path("out.jsonl.gz"), "--no-progress"});
  e.run({"convert", in, "-o", e.path("out.pccx"), "--no-progress"});
  for (const char *to : {"konata", "perfetto", "chrome-json", "nytprof", "hpctoolkit", "fst", "vcd"})
    e.run({"export", in, "--to", to, "-o", e.path((std::string("out.") + to).c_str()), "--no-progress"});
  e.run({"export", in, "--to", "vcd", "--range", "2:5", "-o", e.path("window.vcd"), "--no-progress"});
  return 0;
}
