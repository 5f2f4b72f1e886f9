// tools/uscope, run as a separate program on corpus files.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "support/test_util.hpp"

namespace {

using uscope::test::kCorpusDir;

struct CliRun {
  int exit_code;
  std::string out;
};

// CliRun the CLI with args; stdout captured, stderr merged when asked.
CliRun cli(const std::string &args, bool merge_stderr = false) {
  const std::string cmd = std::string(USCOPE_CLI) + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  FILE *p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  CliRun r{-1, {}};
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

simdjson::dom::element parse(simdjson::dom::parser &p, const std::string &s) {
  auto r = p.parse(s);
  EXPECT_FALSE(r.error()) << "not JSON: " << s.substr(0, 200);
  return r.value();
}

TEST(Cli, InfoJsonDescribesTheFile) {
  const CliRun r = cli("info " + kCorpusDir + "04_props.uscope --json");
  ASSERT_EQ(r.exit_code, 0);
  simdjson::dom::parser p;
  auto j = parse(p, r.out);
  EXPECT_EQ(uint64_t(j["segments"]), 7u);
  EXPECT_TRUE(bool(j["complete"]));
  EXPECT_EQ(std::string_view(j["compression"]), "lz4");
  EXPECT_EQ(std::string_view(j["dut"]["dut_name"]), "props");
  auto storages = simdjson::dom::array(j["storages"]);
  ASSERT_EQ(storages.size(), 3u);
  EXPECT_EQ(std::string_view((*storages.begin())["name"]), "rob");
  EXPECT_EQ(uint64_t((*storages.begin())["properties"]), 6u);
}

TEST(Cli, InfoTextSaysLiveForAnUnfinishedFile) {
  const CliRun r = cli("info " + kCorpusDir + "10_live_incomplete.uscope");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("live (not finalized)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("segments    3"), std::string::npos) << r.out;
}

TEST(Cli, StateByCycleAndByTime) {
  // 01_tiny: slot 1 = 7 at 0 ps, slot 2 = 0x12345 at 1000 ps (cycle 1 of a 1000 ps clock).
  const CliRun by_cycle = cli("state " + kCorpusDir + "01_tiny.uscope --cycle 1");
  ASSERT_EQ(by_cycle.exit_code, 0);
  EXPECT_NE(by_cycle.out.find("[2] val=0x12345"), std::string::npos) << by_cycle.out;
  const CliRun by_time = cli("state " + kCorpusDir + "01_tiny.uscope --time 999 --json");
  ASSERT_EQ(by_time.exit_code, 0);
  simdjson::dom::parser p;
  auto j = parse(p, by_time.out);
  auto slots = simdjson::dom::array((*simdjson::dom::array(j["storages"]).begin())["slots"]);
  uint64_t slot2 = 1;
  for (auto s : slots)
    if (uint64_t(s["slot"]) == 2) slot2 = uint64_t(s["val"]);
  EXPECT_EQ(slot2, 0u);  // not yet set at 999 ps
}

TEST(Cli, EventsInAClosedRange) {
  const CliRun r = cli("events " + kCorpusDir + "01_tiny.uscope --from 0 --to 2000 --json");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "[{\"time_ps\":0,\"type\":\"ping\",\"fields\":{\"x\":1}},"
            "{\"time_ps\":2000,\"type\":\"ping\",\"fields\":{\"x\":2}}]\n");
  const CliRun none = cli("events " + kCorpusDir + "01_tiny.uscope --from 1 --to 1999 --json");
  EXPECT_EQ(none.out, "[]\n");
}

TEST(Cli, DumpIsValidJsonAndDeterministic) {
  for (const char *f : {"01_tiny", "05_events_all_types", "11_empty", "24_rust_v01_compact"}) {
    const CliRun a = cli("dump " + kCorpusDir + f + ".uscope --json");
    const CliRun b = cli("dump " + kCorpusDir + f + ".uscope --json");
    ASSERT_EQ(a.exit_code, 0) << f;
    EXPECT_EQ(a.out, b.out) << f;
    simdjson::dom::parser p;
    auto j = parse(p, a.out);
    EXPECT_TRUE(bool(j["complete"])) << f;
  }
}

TEST(Cli, ErrorsGoToStderrWithNonZeroExit) {
  const CliRun missing = cli("info /nonexistent/x.uscope", true);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("uscope: "), std::string::npos);
  EXPECT_NE(missing.out.find("No such file"), std::string::npos);
  EXPECT_EQ(cli("state " + kCorpusDir + "01_tiny.uscope").exit_code, 1);  // neither --time nor --cycle
  EXPECT_EQ(cli("frobnicate").exit_code, 2);
  EXPECT_EQ(cli("").exit_code, 2);
}

}  // namespace
