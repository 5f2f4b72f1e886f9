// The uscope command line itself, run as a separate program: every numeric
// option goes through one checked parser (usage errors, exit 2), ranges and
// times are checked against the trace (from > to is an error, past the end a
// warning and the end), --version, and --help on every command.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_run.hpp"
#include "support/test_util.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::kCorpusDir;
using uscope::test::TempDir;

// uscope <args>, with stdout and stderr kept apart.
using Split = uscope::test::CliSplit;
Split run(const std::string &args) {
  TempDir d("cli_args");
  return uscope::test::run_cli_split(args, d.path());
}

const std::string kTiny = kCorpusDir + "01_tiny.uscope";  // frames at 0, 1000, 2000 ps; clock 0: 1000 ps

// Each numeric option of each command, with whatever else the command needs.
struct NumericOption {
  std::string before, option, after;
};
const std::vector<NumericOption> kNumericOptions = {
    {"state " + kTiny, "--time", ""},
    {"state " + kTiny, "--cycle", ""},
    {"events " + kTiny, "--from-cycle", " --to-cycle 5"},
    {"events " + kTiny + " --from-cycle 0", "--to-cycle", ""},
    {"timeline " + kTiny, "--entity", ""},
    {"timeline " + kTiny + " --entity 0", "--cycle", ""},
    {"counters " + kTiny, "--window", ""},
    {"counters " + kTiny, "--buckets", ""},
    {"buffers " + kTiny, "--cycle", ""},
    {"events " + kTiny, "--from", " --to 5"},
    {"events " + kTiny + " --from 0", "--to", ""},
    {"npu-report x.jsonl", "--period-ps", ""},
    {"npu-report x.jsonl", "--max-line-bytes", ""},
    {"npu-report x.jsonl", "--reorder-window", ""},
    {"convert x.jsonl -o y.uscope", "--num-te", ""},
    {"convert x.jsonl -o y.uscope", "--queue-depth", ""},
    {"convert x.jsonl -o y.uscope", "--sram-banks", ""},
};

TEST(CliArgs, BadNumbersAreUsageErrorsThatSayWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"-5", "(negative)"},
      {"12abc", "(\"abc\" after the number)"},
      {"''", "got an empty value"},
      {"abc", "(not a decimal number)"},
      {"0x10", "(\"x10\" after the number)"},
      {"' 5'", "(not a decimal number)"},
      {"18446744073709551616", "(too large)"},  // 2^64
      {"99999999999999999999999", "(too large)"},
  };
  for (const auto &o : kNumericOptions) {
    for (const auto &[value, why] : bad) {
      const std::string args = o.before + " " + o.option + " " + value + o.after;
      const Split r = run(args);
      EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
      EXPECT_NE(r.err.find(o.option + ": expected a whole number from 0 to "), std::string::npos) << args << "\n" << r.err;
      EXPECT_NE(r.err.find(why), std::string::npos) << args << "\n" << r.err;
      EXPECT_NE(r.err.find("uscope: "), std::string::npos) << args << "\n" << r.err;
      EXPECT_EQ(r.out, "") << args;
    }
  }
}

TEST(CliArgs, LargestValueIsAcceptedAndNarrowOptionsRefuseWhatTheyCannotHold) {
  // 2^64-1 ps is a valid time (past the end: a warning, exit 0).
  EXPECT_EQ(run("state " + kTiny + " --time 18446744073709551615").exit_code, 0);
  // --num-te is 32 bits: 2^32 does not fit; refused, not wrapped to 0.
  const Split r = run("convert x.jsonl -o y.uscope --num-te 4294967296");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--num-te"), std::string::npos) << r.err;
}

TEST(CliArgs, FromAfterToIsAUsageError) {
  const Split r = run("events " + kTiny + " --from 2000 --to 1000");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--from 2000 ps is after --to 1000 ps"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  // A usage error, found before the file is opened.
  const Split missing = run("events /nonexistent/x.uscope --from 2 --to 1");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--from 2 ps is after --to 1 ps"), std::string::npos) << missing.err;
  // from == to is a one-instant range.
  const Split one = run("events " + kTiny + " --from 2000 --to 2000 --json");
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, "[{\"time_ps\":2000,\"type\":\"ping\",\"fields\":{\"x\":2}}]\n");
}

TEST(CliArgs, StatePastTheEndWarnsAndShowsTheEnd) {
  const Split at_end = run("state " + kTiny + " --time 2000 --json");
  ASSERT_EQ(at_end.exit_code, 0) << at_end.err;
  EXPECT_EQ(at_end.err, "");
  for (const std::string &opt : {std::string("--time 2001"), std::string("--time 18446744073709551615"),
                                 std::string("--cycle 3"),
                                 // cycle x period does not fit in 64 bits: past any end, not wrapped
                                 std::string("--cycle 18446744073709551615")}) {
    const Split r = run("state " + kTiny + " " + opt + " --json");
    EXPECT_EQ(r.exit_code, 0) << opt << r.err;
    EXPECT_NE(r.err.find("warning: state " + opt + " "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("is past the end of the trace (last frame at 2000 ps); showing the state at 2000 ps"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, at_end.out) << opt;  // the state at the end, time_ps 2000
  }
  EXPECT_NE(at_end.out.find("\"time_ps\":2000"), std::string::npos) << at_end.out;
}

TEST(CliArgs, EventsPastTheEndAreClippedWithAWarning) {
  const Split whole = run("events " + kTiny + " --from 1 --to 2000 --json");
  ASSERT_EQ(whole.exit_code, 0);
  EXPECT_EQ(whole.err, "");
  const Split r = run("events " + kTiny + " --from 1 --to 99999999 --json");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, whole.out);
  EXPECT_NE(r.err.find("warning: events --to 99999999 ps is past the end of the trace (last frame at 2000 ps); "
                       "showing 1..2000 ps"),
            std::string::npos)
      << r.err;
  const Split after = run("events " + kTiny + " --from 2001 --to 3000 --json");
  EXPECT_EQ(after.exit_code, 0);
  EXPECT_EQ(after.out, "[]\n");
  EXPECT_NE(after.err.find("warning: events --from 2001 ps is past the end of the trace"), std::string::npos)
      << after.err;
}

TEST(CliArgs, StateWithoutATimeIsAUsageError) {
  const Split r = run("state " + kTiny);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give --time PS or --cycle N"), std::string::npos) << r.err;
}

TEST(CliArgs, VersionNamesTheCliAndTheLibrary) {
  const Split r = run("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string cli = "uscope " + std::to_string(USCOPE_VERSION_MAJOR) + "." +
                          std::to_string(USCOPE_VERSION_MINOR) + "." + std::to_string(USCOPE_VERSION_PATCH) + "\n";
  EXPECT_EQ(r.out.rfind(cli, 0), 0u) << r.out;
  EXPECT_NE(r.out.find(std::string("libuscope ") + uscope_version_string()), std::string::npos) << r.out;
}

// The options each command's --help must name. Every command `uscope --help`
// lists must be here: a new command fails this test until it is added, with
// its help.
const std::map<std::string, std::vector<std::string>> kCommandOptions = {
    {"info", {"file", "--json", "--strict"}},
    {"dump", {"file", "--json", "--strict"}},
    {"state", {"file", "--time", "--cycle", "--json", "--strict"}},
    {"events", {"file", "--from", "--to", "--from-cycle", "--to-cycle", "--json", "--format", "--strict"}},
    {"timeline", {"file", "--entity", "--range", "--cycle", "--elf", "--json", "--format", "--strict"}},
    {"counters", {"file", "--counter", "--range", "--window", "--buckets", "--json", "--format", "--strict"}},
    {"buffers", {"file", "--cycle", "--buffer", "--json", "--format", "--strict"}},
    {"analyze", {"file", "--range", "--json", "--format", "--strict"}},
    {"summary", {"file", "--json", "--strict"}},
    {"check", {"file", "--json", "--strict", "--no-progress"}},
    {"convert", {"input", "--output", "--strict", "--no-progress", "--period-ps", "--num-te"}},
    {"npu-report", {"file", "--json", "--strict", "--period-ps"}},
    {"noc-latency", {"file", "--range", "--json", "--format", "--strict"}},
    {"mcp", {"--trace", "--log"}},
    {"export", {"input", "--to", "--output", "--range", "--time-unit", "--chrome-style", "--elf", "--scope", "--no-progress"}},
    {"import-konata", {"input", "--output", "--clock-period-ps", "--dut-name", "--strict", "--no-progress"}},
    {"view", {"file", "--output", "--range", "--serve", "--port", "--strict"}},
};

TEST(CliArgs, EveryCommandHasHelp) {
  const Split top = run("--help");
  ASSERT_EQ(top.exit_code, 0);
  // The "Subcommands:" section: "  name   description" lines.
  std::set<std::string> listed;
  std::istringstream in(top.out.substr(top.out.find("Subcommands:")));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line) && line.rfind("  ", 0) == 0) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    listed.insert(name);
  }
  ASSERT_FALSE(listed.empty()) << top.out;
  for (const std::string &cmd : listed) {
    auto known = kCommandOptions.find(cmd);
    ASSERT_NE(known, kCommandOptions.end()) << "command " << cmd << " has no entry in kCommandOptions";
    const Split h = run(cmd + " --help");
    EXPECT_EQ(h.exit_code, 0) << cmd;
    EXPECT_NE(h.out.find("Usage: uscope " + cmd), std::string::npos) << h.out;
    for (const std::string &opt : known->second)
      EXPECT_NE(h.out.find(opt), std::string::npos) << cmd << " --help does not name " << opt << "\n" << h.out;
  }
  EXPECT_EQ(listed.size(), kCommandOptions.size());
}

}  // namespace
