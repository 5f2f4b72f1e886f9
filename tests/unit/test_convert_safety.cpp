// The converters on inputs that used to crash, destroy the input or "succeed"
// on nonsense (docs/convert.md "Safety"): unknown pccx type ids, an output
// naming the input, failures leaving the old output, non-JSONL input.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "format/checksum.hpp"
#include "pccx/pccx.h"
#include "support/cli_run.hpp"
#include "support/pccx_test_util.hpp"
#include "support/test_util.hpp"
#include "reader/trace_reader.hpp"
#include "uscope/convert.h"

namespace {

using uscope::test::TempDir;

using uscope::test::read_all;
using uscope::test::write_all;
void write_bytes(const std::string &path, const std::vector<uint8_t> &b) {
  write_all(path, std::string(b.begin(), b.end()));
}
uint64_t checksum(const std::string &s) { return uscope::fnv1a64(s.data(), s.size()); }
std::vector<std::string> dir_entries(const std::string &dir) {
  std::vector<std::string> v;
  for (const auto &e : std::filesystem::directory_iterator(dir)) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

struct Conv {
  uscope_status_t status;
  std::string error;
  uscope_convert_stats_t stats;
  std::vector<std::pair<uint64_t, std::string>> issues;
};
Conv convert(const std::string &in, const std::string &out, bool strict = false, uint32_t max_skipped_ppm = 0) {
  Conv r{};
  uscope_convert_options_t o;
  uscope_convert_options_init(&o);
  o.strict = strict;
  o.user = &r;
  o.on_issue = [](void *u, uint64_t line, const char *why) { static_cast<Conv *>(u)->issues.emplace_back(line, why); };
  o.max_skipped_ppm = max_skipped_ppm;
  r.stats.struct_size = sizeof r.stats;
  r.status = uscope_convert(&r.stats, in.c_str(), 0, out.c_str(), 0, &o);
  r.error = r.status ? uscope_last_error() : "";
  return r;
}

const char *const kGood[] = {
    R"({"event_type": "CMD_START", "t_cycle": 150, "cmd_id": 42})",
    R"({"event_type": "TE_START", "t_cycle": 230, "job_id": 1001, "cmd_id": 42, "m": 128, "n": 128, "k": 256, "tile_m": 64, "tile_n": 64, "tile_k": 64})",
    R"({"event_type": "TE_END", "t_cycle": 280, "job_id": 1001, "cmd_id": 42, "mac_count": 4194304, "latency_cycles": 50})",
    R"({"event_type": "CMD_END", "t_cycle": 900, "cmd_id": 42, "status": "OK"})",
};
std::string good_text() {
  std::string s;
  for (const char *l : kGood) s += std::string(l) + "\n";
  return s;
}

// ── 1. pccx event type ids past the table ──

// A flatbuf payload: records with the given type ids; v2 adds the PCC2
// api_name trailer (one name per record).
std::vector<uint8_t> flatbuf_file(const std::vector<uint32_t> &types, bool v2) {
  using namespace uscope::test;
  std::vector<uint8_t> fb;
  uint64_t t = 10;
  for (uint32_t ty : types) {
    put_u32(fb, 1); put_u64(fb, t); put_u64(fb, 5); put_u32(fb, ty);
    t += 10;
  }
  if (v2) {
    put_u32(fb, 0x32434350u);
    put_u32(fb, static_cast<uint32_t>(types.size()));
    for (uint32_t i = 0; i < types.size(); ++i) {
      put_u32(fb, i);
      put_u16(fb, 3);
      fb.insert(fb.end(), {'o', 'p', static_cast<uint8_t>('a' + i)});
    }
  }
  return pccx_file(pccx_json("flatbuf", fb.size()), fb);
}

TEST(ConvertSafety, PccxTypeIdsPastTheTableConvert) {
  TempDir d("conv");
  const std::vector<uint32_t> types = {7, 255, 0xFFFFFFFFu, PCCX_EVENT_MAC_COMPUTE};
  for (bool v2 : {false, true}) {
    SCOPED_TRACE(v2 ? "flatbuf v2" : "flatbuf v1");
    const std::string in = d.file(v2 ? "v2.pccx" : "v1.pccx"), out = d.file(v2 ? "v2.jsonl" : "v1.jsonl");
    write_bytes(in, flatbuf_file(types, v2));
    const Conv r = convert(in, out);
    ASSERT_EQ(r.status, USCOPE_OK) << r.error;
    const std::string text = read_all(out);
    for (const char *code : {"\"code\":\"UNKNOWN_7\"", "\"code\":\"UNKNOWN_255\"", "\"code\":\"UNKNOWN_4294967295\""})
      EXPECT_NE(text.find(code), std::string::npos) << code << " in\n" << text;
    if (v2) {
      EXPECT_NE(text.find("opb, 5 cycles"), std::string::npos) << text;  // the api_name is kept
    }
    EXPECT_NE(text.find("\"event_type\":\"TE_START\""), std::string::npos);
    // The CLI binary on the same file.
    const std::string out2 = d.file(v2 ? "cli2.jsonl" : "cli1.jsonl");
    const auto c = uscope::test::run_cli("convert " + in + " -o " + out2, true);
    EXPECT_EQ(c.exit_code, 0) << c.out;
    EXPECT_EQ(read_all(out2), text);
  }
}

TEST(ConvertSafety, BincodeUnknownTypeNameIsKept) {
  using namespace uscope::test;
  TempDir d("conv");
  std::vector<uint8_t> b;
  put_u64(b, 100);
  put_u64(b, 1);
  put_u32(b, 3); put_u64(b, 30); put_u64(b, 5); put_str(b, "FANCY_NEW_TYPE"); b.push_back(0);
  write_bytes(d.file("b.pccx"), pccx_file(pccx_json("bincode", b.size()), b));
  const Conv r = convert(d.file("b.pccx"), d.file("b.jsonl"));
  ASSERT_EQ(r.status, USCOPE_OK) << r.error;
  EXPECT_NE(read_all(d.file("b.jsonl")).find("\"code\":\"FANCY_NEW_TYPE\""), std::string::npos)
      << read_all(d.file("b.jsonl"));
}

// ── 2. never destroy the input ──

TEST(ConvertSafety, OutputNamingTheInputIsRefused) {
  TempDir d("conv");
  ASSERT_EQ(::mkdir(d.file("sub").c_str(), 0755), 0);
  const std::string in = d.file("f.jsonl"), text = good_text();
  write_all(in, text);
  ASSERT_EQ(::symlink(in.c_str(), d.file("link.jsonl").c_str()), 0);
  ASSERT_EQ(::link(in.c_str(), d.file("hard.jsonl").c_str()), 0);
  const uint64_t sum = checksum(text);
  const std::vector<std::string> before = dir_entries(d.path());
  // Relative spellings are relative to the test's directory; the working
  // directory is restored whatever happens.
  struct Cwd {
    std::string saved = std::filesystem::current_path().string();
    ~Cwd() { std::filesystem::current_path(saved); }
  } cwd;
  ASSERT_EQ(::chdir(d.path().c_str()), 0);
  const std::vector<std::string> spellings = {in, d.file("link.jsonl"), d.file("hard.jsonl"), "./f.jsonl",
                                              "f.jsonl", d.file("sub/../f.jsonl"), "sub/../f.jsonl"};
  for (const std::string &out : spellings) {
    SCOPED_TRACE(out);
    const Conv r = convert(in, out);
    EXPECT_EQ(r.status, USCOPE_ERR_INVALID_ARGUMENT);
    EXPECT_NE(r.error.find("is the input file"), std::string::npos) << r.error;
    EXPECT_EQ(checksum(read_all(in)), sum);
    // The other way round too: the input through the spelling, the output its target.
    const Conv r2 = convert(out, in);
    EXPECT_EQ(r2.status, USCOPE_ERR_INVALID_ARGUMENT) << r2.error;
    EXPECT_EQ(checksum(read_all(in)), sum);
  }
  // The CLI binary: exit 1, the message, the input intact.
  const auto c = uscope::test::run_cli("convert f.jsonl -o ./sub/../f.jsonl", true);
  EXPECT_EQ(c.exit_code, 1) << c.out;
  EXPECT_NE(c.out.find("is the input file"), std::string::npos) << c.out;
  EXPECT_EQ(checksum(read_all(in)), sum);
  EXPECT_EQ(dir_entries(d.path()), before);  // no temporary file left
}

// A long input whose last line is bad: --strict fails at the end, after
// most of the output was written; the old output stays byte for byte and no
// temporary file is left. Then a lenient run replaces it.
TEST(ConvertSafety, FailureLeavesTheOldOutput) {
  TempDir d("conv");
  std::string text;
  char b[256];
  for (unsigned i = 0; i < 20000; ++i) {
    std::snprintf(b, sizeof b, R"({"event_type": "CMD_START", "t_cycle": %u, "cmd_id": %u})" "\n"
                               R"({"event_type": "CMD_END", "t_cycle": %u, "cmd_id": %u, "status": "OK"})" "\n",
                  10 * i, i, 10 * i + 5, i);
    text += b;
  }
  const std::string bad = text + "{\"event_type\": \"CMD_START\", \"t_cycle\": \"late\"}\n";
  write_all(d.file("bad.jsonl"), bad);
  write_all(d.file("good.jsonl"), text);
  const std::string gz = d.file("cut.jsonl.gz");
  {
    gzFile g = gzopen(gz.c_str(), "wb");
    gzwrite(g, text.data(), static_cast<unsigned>(text.size()));
    gzclose(g);
    const std::string z = read_all(gz);
    write_all(gz, z.substr(0, z.size() - 20));  // cut inside the member
  }
  for (const char *ext : {".uscope", ".pccx", ".jsonl", ".jsonl.gz"}) {
    SCOPED_TRACE(ext);
    const std::string out = d.file(std::string("out") + ext);
    const std::string old = "the previous output, not a trace";
    write_all(out, old);
    const std::vector<std::string> before = dir_entries(d.path());
    const Conv s = convert(d.file("bad.jsonl"), out, true);
    EXPECT_EQ(s.status, USCOPE_ERR_CORRUPT);
    EXPECT_NE(s.error.find("bad.jsonl: line 40001:"), std::string::npos) << s.error;
    EXPECT_EQ(read_all(out), old);
    EXPECT_EQ(dir_entries(d.path()), before);
    const Conv t = convert(gz, out);
    EXPECT_EQ(t.status, USCOPE_ERR_TRUNCATED);
    EXPECT_NE(t.error.find("cut.jsonl.gz"), std::string::npos) << t.error;
    EXPECT_EQ(read_all(out), old);
    EXPECT_EQ(dir_entries(d.path()), before);
    // Success replaces it.
    const Conv ok = convert(d.file("good.jsonl"), out);
    ASSERT_EQ(ok.status, USCOPE_OK) << ok.error;
    EXPECT_NE(read_all(out), old);
    EXPECT_EQ(ok.stats.events_in, 40000u);
    EXPECT_EQ(dir_entries(d.path()), before);
  }
  // Writing through a symlink replaces its target and keeps the link.
  write_all(d.file("target.jsonl"), "old");
  ASSERT_EQ(::symlink(d.file("target.jsonl").c_str(), d.file("via.jsonl").c_str()), 0);
  ASSERT_EQ(convert(d.file("good.jsonl"), d.file("via.jsonl")).status, USCOPE_OK);
  struct stat st {};
  ASSERT_EQ(::lstat(d.file("via.jsonl").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_NE(read_all(d.file("target.jsonl")), "old");
}

// A write error (a full disk: /dev/full, a device, written in place) fails
// with a message that names the output.
TEST(ConvertSafety, WriteErrorNamesTheOutput) {
  TempDir d("conv");
  ASSERT_TRUE(std::filesystem::exists("/dev/full"));  // a test whose input is missing fails
  std::string text;
  for (int i = 0; i < 20000; ++i) text += good_text();  // > the 1 MiB JSONL buffer
  write_all(d.file("in.jsonl"), text);
  for (const char *name : {"full.jsonl", "full.uscope", "full.pccx"}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(::symlink("/dev/full", d.file(name).c_str()), 0);
    const Conv r = convert(d.file("in.jsonl"), d.file(name));
    EXPECT_LT(r.status, 0);
    EXPECT_NE(r.error.find(d.file(name)), std::string::npos) << r.error;
  }
}

// ── 3. never say yes to nonsense ──

TEST(ConvertSafety, InputThatIsNotJsonlFails) {
  TempDir d("conv");
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary += static_cast<char>((i * 7919) & 0xFF);
  write_all(d.file("bin.jsonl"), binary);
  std::string prose;
  for (int i = 0; i < 300; ++i) prose += "This is line " + std::to_string(i) + " of a README, not a trace.\n";
  write_all(d.file("text.jsonl"), prose);
  write_all(d.file("short.jsonl"), "hello\nworld\n");
  // A real .uscope renamed .jsonl.
  write_all(d.file("good.jsonl"), good_text());
  ASSERT_EQ(convert(d.file("good.jsonl"), d.file("t.uscope")).status, USCOPE_OK);
  write_all(d.file("renamed.jsonl"), read_all(d.file("t.uscope")));
  for (const char *name : {"bin.jsonl", "text.jsonl", "short.jsonl", "renamed.jsonl"}) {
    for (const char *ext : {".uscope", ".pccx", ".jsonl"}) {
      SCOPED_TRACE(std::string(name) + " -> " + ext);
      const std::string out = d.file(std::string("o") + ext);
      const Conv r = convert(d.file(name), out);
      EXPECT_EQ(r.status, USCOPE_ERR_CORRUPT);
      EXPECT_NE(r.error.find(std::string(name) + ": not NPU JSONL"), std::string::npos) << r.error;
      EXPECT_NE(r.error.find("the first, line 1: "), std::string::npos) << r.error;
      EXPECT_FALSE(std::filesystem::exists(out));
    }
  }
  // A text file stops after the first kSniffLines non-blank lines.
  const Conv t = convert(d.file("text.jsonl"), d.file("o.pccx"));
  EXPECT_EQ(t.stats.lines, 100u);
  EXPECT_NE(t.error.find("its first 100 non-blank lines are malformed"), std::string::npos) << t.error;
  // npu-report says no too.
  char *rep = nullptr;
  EXPECT_EQ(uscope_convert_npu_report(&rep, nullptr, d.file("text.jsonl").c_str(), 0, nullptr, 0), USCOPE_ERR_CORRUPT);
  uscope_convert_free(rep);
  // The CLI exits 1.
  const auto c = uscope::test::run_cli("convert " + d.file("bin.jsonl") + " -o " + d.file("c.pccx"), true);
  EXPECT_EQ(c.exit_code, 1) << c.out;
  EXPECT_NE(c.out.find("not NPU JSONL"), std::string::npos) << c.out;
}

TEST(ConvertSafety, EmptyJsonlIsATraceOfNoEvents) {
  TempDir d("conv");
  write_all(d.file("empty.jsonl"), "");
  write_all(d.file("blank.jsonl"), "\n  \n\n");
  for (const char *name : {"empty.jsonl", "blank.jsonl"}) {
    for (const char *ext : {".uscope", ".pccx", ".jsonl"}) {
      SCOPED_TRACE(std::string(name) + " -> " + ext);
      const Conv r = convert(d.file(name), d.file(std::string("o") + ext));
      EXPECT_EQ(r.status, USCOPE_OK) << r.error;
      EXPECT_EQ(r.stats.events_out, 0u);
    }
  }
}

TEST(ConvertSafety, OneBadLineAmongManyStillConverts) {
  TempDir d("conv");
  std::string text = good_text();
  text.insert(text.find('\n') + 1, "garbage in the middle\n");
  write_all(d.file("one.jsonl"), text);
  const Conv r = convert(d.file("one.jsonl"), d.file("o.uscope"));
  ASSERT_EQ(r.status, USCOPE_OK) << r.error;
  EXPECT_EQ(r.stats.skipped, 1u);
  EXPECT_EQ(r.stats.first_issue_line, 2u);
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_EQ(r.issues[0].first, 2u);
  EXPECT_EQ(r.stats.events_out, 4u);
  // A file whose first 99 non-blank lines are bad and the 100th is good is
  // NPU JSONL, but 99 of its 103 lines cannot be placed: above the default
  // share (convert.h max_skipped_ppm) the conversion fails and writes
  // nothing; a caller who allows it gets the 4 events.
  std::string late;
  for (int i = 0; i < 99; ++i) late += "not json\n";
  late += good_text();
  write_all(d.file("late.jsonl"), late);
  const Conv f = convert(d.file("late.jsonl"), d.file("l.pccx"));
  EXPECT_EQ(f.status, USCOPE_ERR_CORRUPT);
  EXPECT_NE(f.error.find("cannot place 99 events of 103"), std::string::npos) << f.error;
  EXPECT_NE(f.error.find("line 1: bad JSON"), std::string::npos) << f.error;
  EXPECT_FALSE(std::ifstream(d.file("l.pccx")).good());
  const Conv l = convert(d.file("late.jsonl"), d.file("l.pccx"), false, 1000000);
  EXPECT_EQ(l.status, USCOPE_OK) << l.error;
  EXPECT_EQ(l.stats.skipped, 99u);
  // Ten bad lines are allowed whatever their share (a killed run's last line).
  std::string ten;
  for (int i = 0; i < 10; ++i) ten += "not json\n";
  write_all(d.file("ten.jsonl"), ten + good_text());
  EXPECT_EQ(convert(d.file("ten.jsonl"), d.file("t.pccx")).status, USCOPE_OK);
}

// A .uscope input is read tolerantly (docs/reading.md): a segment that no
// longer decodes is skipped, and the conversion says so through on_issue
// (line 0: the trace as a whole; not counted as malformed lines). --strict
// refuses it.
TEST(ConvertSafety, DefectsOfAUscopeInputAreReported) {
  TempDir d("conv");
  write_all(d.file("good.jsonl"), good_text());
  ASSERT_EQ(convert(d.file("good.jsonl"), d.file("good.uscope")).status, USCOPE_OK);
  std::string bytes = read_all(d.file("good.uscope"));
  {
    uscope::TraceReader r(d.file("good.uscope"));
    ASSERT_EQ(r.segments().size(), 1u);
    const auto &s0 = r.segments()[0];
    // Every byte of the compressed block after its size prefix (COMPAT 2).
    const uint64_t at = s0.offset + uscope::wire::kSegmentHeaderSize + s0.header.checkpoint_size + 4;
    for (uint64_t i = at; i < at + s0.header.deltas_compressed_size - 4; ++i)
      bytes[i] = static_cast<char>(bytes[i] ^ 0xFF);
  }
  write_all(d.file("bad.uscope"), bytes);
  const Conv r = convert(d.file("bad.uscope"), d.file("bad.jsonl"));
  ASSERT_EQ(r.status, USCOPE_OK) << r.error;
  EXPECT_EQ(r.stats.events_out, 0u);  // the only segment is lost
  EXPECT_EQ(r.stats.skipped, 0u);
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_EQ(r.issues[0].first, 0u);
  EXPECT_NE(r.issues[0].second.find("trace defect segment_undecodable x1"), std::string::npos) << r.issues[0].second;
  const Conv strict = convert(d.file("bad.uscope"), d.file("strict.jsonl"), true);
  EXPECT_EQ(strict.status, USCOPE_ERR_CORRUPT) << strict.error;
  EXPECT_FALSE(std::filesystem::exists(d.file("strict.jsonl")));
  // The CLI prints it as a warning about the file, not as a line.
  const auto cli = uscope::test::run_cli("convert " + d.file("bad.uscope") + " -o " + d.file("cli.jsonl"), true);
  EXPECT_EQ(cli.exit_code, 0) << cli.out;
  EXPECT_NE(cli.out.find("uscope: warning: " + d.file("bad.uscope") + ": trace defect segment_undecodable x1"),
            std::string::npos)
      << cli.out;
}

}  // namespace
