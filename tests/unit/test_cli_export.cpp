// `uscope export` and `uscope import-konata` as a user runs them: usage
// errors (exit 2, before anything is read), failures (exit 1, the library's
// message, no output left behind). What each format writes is tested with
// its exporter (test_export_*.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/cli_run.hpp"
#include "support/test_util.hpp"

namespace {

namespace fs = std::filesystem;
using uscope::test::kCorpusDir;
using uscope::test::run_cli;
using uscope::test::TempDir;

const std::string kTiny = kCorpusDir + "01_tiny.uscope";

TEST(CliExport, UsageErrorsExitTwoAndWriteNothing) {
  TempDir d("cli_export_usage");
  const std::string out = d.file("o");
  struct Case {
    std::string args, says;
  } cases[] = {
      {"export " + kTiny + " --to foo -o " + out, "--to foo: expected konata, perfetto"},
      {"export " + kTiny + " --to vcd -o " + out + " --range 5", "--range 5: expected START:END"},
      {"export " + kTiny + " --to vcd -o " + out + " --range 9:5", "START after END"},
      {"export " + kTiny + " --to vcd -o " + out + " --range -1:5", "--range"},
      {"export " + kTiny + " --to perfetto -o " + out + " --time-unit us", "--time-unit us: expected cycle, ps or ns"},
      {"export " + kTiny + " --to chrome-json -o " + out + " --chrome-style x", "--chrome-style x: expected uscope or pccx-lab"},
      {"export " + kTiny + " --to vcd -o " + out + " --chrome-style pccx-lab", "--chrome-style applies to --to chrome-json only"},
      {"export " + kTiny + " -o " + out, "--to is required"},
      {"export " + kTiny + " --to vcd", "--output is required"},
      {"import-konata x.log", "--output is required"},
      {"import-konata x.log -o " + out + " --clock-period-ps 0x10", "--clock-period-ps"},
  };
  for (const Case &c : cases) {
    const auto r = run_cli(c.args, true);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST(CliExport, FailuresExitOneWithTheLibrarysMessage) {
  TempDir d("cli_export_fail");
  const std::string out = d.file("o.log");
  auto r = run_cli("export " + d.file("missing.uscope") + " --to konata -o " + out, true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("uscope: export: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("missing.uscope: cannot open the input"), std::string::npos) << r.out;
  r = run_cli("export " + kTiny + " --to konata -o " + kTiny, true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("the output is the input"), std::string::npos) << r.out;
  r = run_cli("import-konata " + d.file("missing.log") + " -o " + d.file("o.uscope"), true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("uscope: import-konata: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("missing.log"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(d.file("o.uscope")));
}

TEST(CliExport, HelpListsEveryFormat) {
  const auto r = run_cli("export --help", true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char *f : {"konata", "perfetto", "chrome-json", "nytprof", "hpctoolkit", "fst", "vcd"})
    EXPECT_NE(r.out.find(f), std::string::npos) << f;
  const auto top = run_cli("--help", true);
  EXPECT_NE(top.out.find("export"), std::string::npos);
  EXPECT_NE(top.out.find("import-konata"), std::string::npos);
}

}  // namespace
