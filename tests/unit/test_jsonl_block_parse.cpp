// The JSONL ingest's block parser (simdjson iterate_many over blocks of whole
// lines, src/convert/line_parser.cpp) against the per-line parser it falls
// back to: over inputs built to break the mapping of documents to lines (bad
// JSON mid-block, documents spanning or sharing lines, lines across block and
// window boundaries, CRLF, blank lines, no newline at the end, arrays and
// scalars, very long lines, gzip), both must give the same events, the same
// issues at the same line numbers, the same string pool in the same order
// and the same statistics. And steady-state ingest allocates nothing per line.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "convert/jsonl_ingest.hpp"
#include "convert/npu_event.hpp"

namespace uscope::test {
uint64_t thread_allocations();  // test_writer_alloc.cpp: allocations made by this thread
}  // namespace uscope::test

namespace {

using namespace uscope::convert;

struct IngestRun {
  Status status = 0;
  std::string error;
  std::vector<std::string> evs;  // in sink order, with their line numbers and raw string ids
  std::vector<std::pair<uint64_t, std::string>> issues;
  std::vector<std::string> pool;  // in id order
  std::string meta;
  IngestStats stats;
};

std::string render(const Ev &e) {
  std::string s = "line " + std::to_string(e.line) + " type " + std::to_string(e.type) + " t " +
                  std::to_string(e.t_cycle) + " mask " + std::to_string(e.mask);
  if (e.has_t_ns) {
    uint64_t bits;
    std::memcpy(&bits, &e.t_ns, 8);
    s += " t_ns " + std::to_string(bits);
  }
  if (e.has_sim_id) s += " sim " + std::to_string(e.sim_id);
  for (int k = 0; k < kNumKeys; ++k)
    if (e.has(static_cast<Key>(k))) s += " " + std::to_string(k) + "=" + std::to_string(e.v[k]);
  return s;
}

IngestRun ingest(const std::string &input, bool block, bool strict = false, uint64_t max_line = 64ull << 20,
                 uint32_t window = 65536, bool thread = true) {
  IngestRun r;
  Issues issues;
  issues.strict = strict;
  issues.on_issue = [&](uint64_t line, const std::string &why) { r.issues.emplace_back(line, why); };
  StringPool pool;
  TraceMeta meta;
  IngestOptions o;
  o.block_parse = block;
  o.parse_thread = thread;
  o.max_line_bytes = max_line;
  o.reorder_window = window;
  Ingest in(o, issues, pool, meta);
  EXPECT_EQ(in.open_memory(input.data(), input.size()), 0);
  r.status = in.run(
      [&](const Ev &e, std::string *) {
        r.evs.push_back(render(e));
        return 0;
      },
      &r.error);
  r.stats = in.stats();
  for (size_t i = 0; i < pool.size(); ++i) r.pool.emplace_back(pool.str(i));
  format_trace_meta(meta, r.meta);
  r.meta += " sim_id " + std::to_string(meta.has_sim_id) + meta.sim_id + " t_ns " + std::to_string(meta.has_t_ns) +
            " period " + std::to_string(meta.period_ps);
  return r;
}

void expect_equal(const IngestRun &a, const IngestRun &b);

// Compares the block parser's run with the per-line parser's (which parses
// on the caller's thread, as the ingest did before both), with and without
// the parse thread; returns the block run with the thread.
IngestRun expect_same(const std::string &input, bool strict = false, uint64_t max_line = 64ull << 20,
                      uint32_t window = 65536) {
  const IngestRun a = ingest(input, false, strict, max_line, window, false);
  IngestRun b = ingest(input, true, strict, max_line, window, true);
  {
    SCOPED_TRACE("block parser, parse thread");
    expect_equal(a, b);
  }
  SCOPED_TRACE("block parser, no parse thread");
  const IngestRun c = ingest(input, true, strict, max_line, window, false);
  expect_equal(a, c);
  EXPECT_EQ(b.stats.block_events, c.stats.block_events);
  return b;
}

void expect_equal(const IngestRun &a, const IngestRun &b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.issues, b.issues);
  EXPECT_EQ(a.evs.size(), b.evs.size());
  for (size_t i = 0; i < std::min(a.evs.size(), b.evs.size()); ++i) {
    EXPECT_EQ(a.evs[i], b.evs[i]) << "event " << i;
    if (a.evs[i] != b.evs[i]) break;
  }
  EXPECT_EQ(a.pool, b.pool);
  EXPECT_EQ(a.meta, b.meta);
  EXPECT_EQ(a.stats.lines, b.stats.lines);
  EXPECT_EQ(a.stats.events, b.stats.events);
  EXPECT_EQ(a.stats.meta_lines, b.stats.meta_lines);
  EXPECT_EQ(a.stats.blank_lines, b.stats.blank_lines);
  EXPECT_EQ(a.stats.bytes_in, b.stats.bytes_in);
  EXPECT_EQ(a.stats.block_events, 0u);  // the reference did not use the block parser
}

std::string good(uint64_t t, unsigned i) {
  switch (i % 6) {
    case 0:
      return R"({"event_type":"CMD_START","t_cycle":)" + std::to_string(t) + R"(,"sim_id":"run_1","cmd_id":)" +
             std::to_string(i) + "}";
    case 1:
      return R"({"event_type":"SRAM_ACCESS","t_cycle":)" + std::to_string(t) + R"(,"sim_id":"run_1","addr":)" +
             std::to_string(i * 64) + R"(,"bank_id":3,"access_type":"READ","by":"TE","conflict":false})";
    case 2:
      return R"({"event_type":"SRAM_CONFLICT","t_cycle":)" + std::to_string(t) +
             R"(,"sim_id":"run_1","bank_id":2,"num_requests":2,"allowed":1,"stalled_clients":["VE","DMA"]})";
    case 3:  // escaped strings take the unescaping path
      return R"({"event_type":"JOB_ISSUE","t_cycle":)" + std::to_string(t) +
             R"(,"sim_id":"run_1","job_id":7,"cmd_id":1,"job_type":"TE_\u0047EMM","model_name":"ll\"ama\"","phase":"MLP"})";
    case 4:  // spaces inside and around the object
      return "  \t" R"({ "event_type" : "WARN", "t_cycle" : )" + std::to_string(t) +
             R"( , "sim_id":"run_1", "component":"TE","code":"LOW_UTIL","msg":"a } { ] [ , : message" }  )";
    default:
      return R"({"event_type":"CMD_END","t_cycle":)" + std::to_string(t) + R"(,"sim_id":"run_1","cmd_id":)" +
             std::to_string(i) + R"(,"status":"OK"})";
  }
}

// Lines that are not one event each, in every way the stream could take
// them differently from the per-line parser.
const std::vector<std::string> kBad = {
    R"({"event_type":"CMD_START","t_cycle":5,)",                                  // unclosed: the stream's document spans lines
    R"({"event_type":"CMD_START","t_cycle":"x","cmd_id":1})",                     // wrong type, well-formed JSON
    R"({"event_type":"CMD_START","t_cycle":1,"cmd_id":1,"msg":"unterminated})",   // odd quote: stage 1 fails for the block
    R"({"event_type":"CMD_START","t_cycle":1,"cmd_id":1} {"event_type":"CMD_END","t_cycle":1,"cmd_id":1})",  // two documents
    R"({"event_type":"CMD_START","t_cycle":1,"cmd_id":1} x)",                     // trailing content
    R"({"event_type":"CMD_START","t_cycle":1,"cmd_id":1}})",                      // a stray brace
    "[1,2,3]",
    "42",
    R"("a string")",
    "null",
    "{\"event_type\":\"CMD_START\",\"t_cycle\":1,\"model_name\":\"\xff\xfe\"}",  // not UTF-8
    "{\"event_type\":\"CMD_START\",\"t_cycle\":1,\"model_name\":\"a\tb\"}",      // a raw control character in a string
    R"({"event_type":"CMD_START","t_cycle":1,"cmd_id":1,"nope":2})",             // unknown key
    R"({"event_type":"NOT_AN_EVENT","t_cycle":1})",
    R"({"event_type":"CMD_START","t_cycle":1,"cmd_id":1,"cmd_id":2})",           // duplicate key
    R"({"event_type":"CMD_START","t_cycle":1,"cmd_id":{"a":1}})",
    R"({"event_type":"CMD_START","t_cycle":1,"stalled_clients":["a,b"]})",
    R"({"event_type":"TRACE_META","version":"1.0"})",                            // a second TRACE_META
    "\r ",                                                                         // whitespace, but not blank to the parser
    " \r {\"event_type\":\"CMD_START\",\"t_cycle\":1,\"cmd_id\":1}",
    "{\"event_type\":\"CMD_START\",\n\"t_cycle\":7,\n\"cmd_id\":3}",              // one object over three lines
    "{}",
    "}",
};

// A few MiB of lines: more than one reader window (1 MiB) and many blocks
// (256 KiB), so lines cross both boundaries; bad lines, blank lines, CRLF and
// leading/trailing whitespace in between.
std::string tricky_input(unsigned lines, bool crlf_some = true) {
  std::string s = R"({"event_type":"TRACE_META","version":"1.0","sim_config":{"a":[1,2]},"period_ps":1000})" "\n";
  uint64_t t = 0;
  for (unsigned i = 0; i < lines; ++i) {
    if (i % 7 == 3) ++t;
    if (i % 211 == 17) {
      // The bad lines that fail stage 1 for their whole block (an odd
      // quote, bad UTF-8, a raw control character) only in the last quarter,
      // so that the stream meets the others.
      size_t k = (i / 211) % kBad.size();
      if ((k == 2 || k == 10 || k == 11) && i < lines / 4 * 3) k = 0;
      s += kBad[k];
    } else if (i % 97 == 5) {
      s += (i % 2) ? "" : "  \t ";
    } else {
      s += good(t, i);
    }
    s += crlf_some && i % 5 == 1 ? "\r\n" : "\n";
  }
  return s;
}

TEST(JsonlBlockParse, SameEventsAndIssuesAsPerLineOverTrickyInput) {
  const std::string in = tricky_input(40000);
  ASSERT_GT(in.size(), 4u << 20);
  const IngestRun b = expect_same(in);
  EXPECT_EQ(b.status, 0);
  EXPECT_GT(b.issues.size(), 150u);
  // A bad line ends its block's stream (the rest of the block goes per
  // line), and a block with a stage-1 error (an odd quote, bad UTF-8) is
  // parsed per line whole; still, the stream took some lines.
  EXPECT_GT(b.stats.block_events, 0u);
}

// Blank lines, CRLF and leading/trailing whitespace keep the stream going:
// only the line at each window refill is parsed per line.
std::string clean_input(unsigned lines) {
  std::string s;
  for (unsigned i = 0; i < lines; ++i) {
    s += i % 97 == 5 ? std::string(i % 2 ? "" : "  \t ") : good(i, i);
    s += i % 5 == 1 ? "\r\n" : "\n";
  }
  return s;
}

TEST(JsonlBlockParse, TheStreamTakesAlmostEveryLineOfCleanInput) {
  const IngestRun b = expect_same(clean_input(40000));
  EXPECT_EQ(b.status, 0);
  EXPECT_TRUE(b.issues.empty());
  EXPECT_GT(b.stats.block_events, b.stats.events * 99 / 100);
}

// Clean lines damaged at random places with the characters that move
// document and line boundaries (a fixed seed: the same inputs every run).
TEST(JsonlBlockParse, SameOverRandomlyDamagedInput) {
  const char kChars[] = {'{', '}', '[', ']', '"', '\\', ',', ':', '\n', '\r', ' ', '\t', 'x', '0', '\0', '\x80'};
  std::mt19937 rng(12345);
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::string in = clean_input(6000);
    const int edits = 1 + round * round * 3;  // from one to a few hundred
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % in.size();
      const char c = kChars[rng() % sizeof kChars];
      switch (rng() % 3) {
        case 0: in.insert(in.begin() + static_cast<long>(at), c); break;
        case 1: in.erase(at, 1); break;
        default: in[at] = c; break;
      }
    }
    expect_same(in);
    expect_same(in, true);
  }
}

TEST(JsonlBlockParse, SameFirstIssueWhenStrict) {
  const std::string in = tricky_input(40000);
  const IngestRun b = expect_same(in, true);
  EXPECT_NE(b.status, 0);
  ASSERT_EQ(b.issues.size(), 1u);
  EXPECT_EQ(b.issues[0].first, 19u);  // TRACE_META is line 1, line i + 2 is lines[i]; lines[17] is bad
}

TEST(JsonlBlockParse, SameWithLinesLongerThanTheMaximumInsideBlocks) {
  const IngestRun b = expect_same(tricky_input(6000), false, 120);  // most good lines are longer than 120 bytes
  EXPECT_GT(b.issues.size(), 1000u);
}

TEST(JsonlBlockParse, SameWithASmallReorderWindow) {
  std::string in;
  for (unsigned i = 0; i < 5000; ++i) in += good(i % 3 == 0 ? i + 50 : i, i) + "\n";  // out of order by 50
  const IngestRun b = expect_same(in, false, 64ull << 20, 16);
  EXPECT_GT(b.issues.size(), 100u);  // older than the window: issues with their lines
}

TEST(JsonlBlockParse, EachBadLineIsReportedAtItsLineAndTheNextLinesParse) {
  for (size_t k = 0; k < kBad.size(); ++k) {
    SCOPED_TRACE("bad line " + std::to_string(k));
    std::string in;
    for (unsigned i = 0; i < 200; ++i) in += good(i, i) + "\n";
    in += kBad[k] + "\n";  // line 201
    for (unsigned i = 200; i < 400; ++i) in += good(i, i) + "\n";
    const IngestRun b = expect_same(in);
    const size_t extra = static_cast<size_t>(std::count(kBad[k].begin(), kBad[k].end(), '\n'));
    // Two of them are valid to the per-line parser: the first TRACE_META of
    // the trace, and an event after " \r " (JSON whitespace). The stream does
    // not take them (their documents do not start where the line's first
    // non-blank does) and the per-line parser accepts them.
    const bool valid = kBad[k].find("TRACE_META") != std::string::npos || kBad[k].rfind(" \r {", 0) == 0;
    if (valid) {
      EXPECT_TRUE(b.issues.empty());
    } else {
      ASSERT_FALSE(b.issues.empty());
      EXPECT_EQ(b.issues.front().first, 201u);
      EXPECT_LE(b.issues.back().first, 201u + extra);
    }
    EXPECT_EQ(b.stats.lines, 401u + extra);
    // The lines before it came from the stream (but the first, read before
    // the window held a block), unless stage 1 fails for the whole block:
    // an odd quote, bad UTF-8, a raw control character in a string.
    if (k != 2 && k != 10 && k != 11) {
      EXPECT_GE(b.stats.block_events, 199u);
    }
  }
}

TEST(JsonlBlockParse, SameOnSmallAndEdgeInputs) {
  const std::string ev = good(1, 0), ev2 = good(2, 5);
  const std::vector<std::string> inputs = {
      "",
      "\n",
      "\r\n",
      "  \t\n\n \n",
      ev,                               // no newline at the end
      ev + "\r",                        // CR, no newline
      ev + "\n" + ev2,                  // last line without newline
      ev + "\r\n" + ev2 + "\r\n",       // CRLF throughout
      ev + "\n\n\n" + ev2 + "\n   \n",  // blank lines
      "[" + ev + "]\n",                 // an array, not an object
      "[1]\n[2]\n",
      ev + "\n" + kBad[0],              // an unclosed object as the last line, no newline
      ev + "\n" + kBad[0] + "\n",
      std::string("\x1f\x8b not really gzip"),
      std::string("\x00\x01\x02\x03\n\x04\n", 7),
      "hello world\nthis is prose\n",
      R"({"event_type":"TRACE_META","pccx":{"cores":2,"mac_dims":[4,4]},"period_ps":2000})" "\n" + ev + "\n",
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE("input " + std::to_string(i));
    expect_same(inputs[i]);
    expect_same(inputs[i], true);
  }
}

TEST(JsonlBlockParse, SameWithVeryLongLines) {
  std::string in;
  for (unsigned i = 0; i < 3000; ++i) in += good(i, i) + "\n";
  // Longer than a block (256 KiB): the block ends before it and it is read
  // per line; then longer than the reader's window (1 MiB): the window grows.
  const std::string msg1(300u << 10, 'x'), msg2(1536u << 10, 'y');
  in += R"({"event_type":"WARN","t_cycle":3000,"component":"TE","code":"C","msg":")" + msg1 + "\"}\n";
  for (unsigned i = 3001; i < 6000; ++i) in += good(i, i) + "\n";
  in += R"({"event_type":"WARN","t_cycle":6000,"component":"TE","code":"C","msg":")" + msg2 + "\"}\n";
  for (unsigned i = 6001; i < 9000; ++i) in += good(i, i) + "\n";
  const IngestRun b = expect_same(in);
  EXPECT_EQ(b.status, 0);
  EXPECT_TRUE(b.issues.empty());
  EXPECT_EQ(b.stats.events, 9000u);
  // And over the maximum: reported as too long, at their lines.
  const IngestRun c = expect_same(in, false, 1u << 20);
  ASSERT_EQ(c.issues.size(), 1u);
  EXPECT_EQ(c.issues[0].first, 6001u);
}

std::string gzip(const std::string &in) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, in.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef *>(&out[0]);
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(JsonlBlockParse, SameFromGzip) {
  for (const std::string &plain : {tricky_input(20000), clean_input(20000)}) {
    const IngestRun p = ingest(plain, true);
    const IngestRun g = expect_same(gzip(plain));
    EXPECT_EQ(p.evs, g.evs);
    EXPECT_EQ(p.issues, g.issues);
    EXPECT_EQ(p.pool, g.pool);
  }
  // gzip fills the window in other steps (so other lines fall at block
  // ends), but the stream still takes almost every line.
  const IngestRun g = ingest(gzip(clean_input(20000)), true);
  EXPECT_GT(g.stats.block_events, g.stats.events * 99 / 100);
}

// Steady state: a longer input of the same lines costs no more allocations
// than its extra blocks (simdjson's document_stream makes one object per
// stream), not one per line. The sink allocates nothing.
uint64_t allocations_to_ingest(const std::string &input, bool thread, uint64_t *events) {
  Issues issues;
  StringPool pool;
  TraceMeta meta;
  IngestOptions o;
  o.reorder_window = 1024;
  o.parse_thread = thread;
  Ingest in(o, issues, pool, meta);
  EXPECT_EQ(in.open_memory(input.data(), input.size()), 0);
  uint64_t n = 0;
  std::string error;
  const uint64_t before = uscope::test::thread_allocations();
  const Status s = in.run(
      [&](const Ev &e, std::string *) {
        n += e.t_cycle != ~uint64_t{0};
        return 0;
      },
      &error);
  const uint64_t after = uscope::test::thread_allocations();
  EXPECT_EQ(s, 0) << error;
  EXPECT_EQ(issues.count, 0u);
  *events = n;
  return after - before;
}

TEST(JsonlBlockParse, SteadyStateIngestAllocatesNothingPerLine) {
  std::string small, big;
  for (unsigned i = 0; i < 20000; ++i) small += good(i, i) + "\n";
  big = small;
  for (unsigned i = 20000; i < 120000; ++i) big += good(i, i) + "\n";
  // Without the parse thread every allocation of the ingest is on this
  // thread; with it, this thread's (the reorder window and the sink's side)
  // must not grow with the lines either.
  for (const bool thread : {false, true}) {
    SCOPED_TRACE(thread ? "parse thread" : "no parse thread");
    uint64_t n_small = 0, n_big = 0;
    const uint64_t a_small = allocations_to_ingest(small, thread, &n_small);
    const uint64_t a_big = allocations_to_ingest(big, thread, &n_big);
    ASSERT_EQ(n_small, 20000u);
    ASSERT_EQ(n_big, 120000u);
    const uint64_t extra_blocks = (big.size() - small.size()) / (256u << 10) + 2;
    EXPECT_LE(a_big - std::min(a_big, a_small), 2 * extra_blocks)
        << a_small << " allocations for 20,000 lines, " << a_big << " for 120,000";
  }
}

}  // namespace
