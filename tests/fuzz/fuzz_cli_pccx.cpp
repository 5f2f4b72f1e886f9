// libFuzzer target over the `uscope` CLI on a .pccx file (fuzz_cli.hpp): the
// input is written to in.pccx, then info and npu-report run on it (text and
// JSON), convert to .jsonl and .jsonl.gz, and the .uscope-only commands
// (dump, summary), which must refuse it cleanly. Seeds: corpus/pccx/,
// corpus/cli_pccx/ (a converted NPU trace, and every finding) and the shared
// conformance/pccx file.
#include "fuzz_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_cli::Env &e = fuzz_cli::env();
  const std::string in = e.write("in.pccx", data, size);
  fuzz_cli::pccx_commands(in);
  e.run({"convert", in, "-o", e.path("out.jsonl"), "--no-progress"});
  e.run({"convert", in, "-o", e.path("out.jsonl.gz"), "--no-progress"});
  return 0;
}
