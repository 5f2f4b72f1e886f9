// uscope check FILE [--json] [--strict] [--no-progress]: validate a µScope
// trace, as fsck or SQLite's integrity_check validate theirs. For people who
// write their own writers (SystemVerilog, Python, other simulators).
//
// The walk is the library's (uscope_reader_check): every structure and item
// against the format and the schema, one segment in memory at a time. This
// file only reports it:
//   text:  one line per kind of defect with its count and first place, then
//          a summary line;
//   --json {"file", "readable", "complete", "segments", "time_grid_ps",
//          "defects": [{"kind", "count", "first": {"segment", "offset",
//          "time_ps"}, "description"}], "notes": [...]}
// Exit status: 0 no defect, 1 defects but readable, 2 not readable as a
// trace (with --strict, the first defect also exits 1, before any report).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_command.hpp"

namespace uscope_cli {

namespace {

// The bar of `uscope convert`, drawn on stderr when it is a terminal.
struct Bar {
  bool on;
  std::chrono::steady_clock::time_point last{}, start = std::chrono::steady_clock::now();
  static void update(void *ctx, uint64_t done, uint64_t total) {
    auto *b = static_cast<Bar *>(ctx);
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - b->last < std::chrono::milliseconds(200)) return;
    b->last = now;
    const double f = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    const double s = std::chrono::duration<double>(now - b->start).count();
    const int w = 30, n = static_cast<int>(f * w);
    std::fprintf(stderr, "\rcheck [%.*s%*s] %3.0f%%  %.0f MB  %.0f MB/s", n, "##############################", w - n,
                 "", f * 100, static_cast<double>(done) / 1e6, static_cast<double>(done) / 1e6 / std::max(s, 1e-6));
    if (done >= total) std::fputc('\n', stderr);
  }
};

std::vector<std::string> notes(const Trace &t, const uscope_file_info_t &i) {
  std::vector<std::string> n;
  if (!i.complete)
    n.push_back("not finalized (a live or crashed writer's file): segments found through the tail_offset chain; "
                "no string table, segment table or TSUM to check");
  for (const auto &d : t.defects())
    if (d.kind == USCOPE_DEFECT_OFF_CLOCK_GRID)
      n.push_back("timestamps follow a " + std::to_string(i.time_grid_ps) +
                  " ps step, not their clocks' period: cycle numbers use that step");
  uscope_summary_info_t sum{};
  sum.struct_size = sizeof sum;
  if (i.complete && (uscope_reader_summary(t.r(), &sum) != USCOPE_OK || !sum.present))
    n.push_back("no trace summary (TSUM) in the file: nothing to compare");
  return n;
}

class Check final : public Command {
 public:
  Check() : Command("check", "validate a trace: every structure and item; exit 0 clean, 1 defects, 2 unreadable") {}
  int run() override;  // opens the file itself: readable or not is its answer

 private:
  void add_options(CLI::App &sub) override {
    sub.add_option("file", file, "trace file (.uscope)")->required();
    sub.add_flag("--json", json, "JSON report");
    sub.add_flag("--strict", strict, "stop at the first defect (exit 1)");
    sub.add_flag("--no-progress", no_progress, "no progress bar (shown only when stderr is a terminal)");
  }
  std::string file;
  bool json = false, strict = false, no_progress = false;
};

int Check::run() {
  Json j;
  auto unreadable = [&](const std::string &why) {
    if (json) {
      j.begin_object();
      j.field("file", file.c_str());
      j.field("readable", false);
      j.field("error", why.c_str());
      j.key("defects");
      j.begin_array();
      j.end_array();
      j.key("notes");
      j.begin_array();
      j.end_array();
      j.end_object();
      j.end();
    } else {
      std::printf("%s: not readable as a µScope trace: %s\n", file.c_str(), why.c_str());
    }
    return 2;
  };
  uscope_reader_t *r = nullptr;
  if (uscope_reader_open_ex(&r, file.c_str(), strict ? USCOPE_READ_STRICT : 0) != USCOPE_OK) {
    // A strict open refuses a file for a defect it finds at open (a bad
    // segment, end-of-segment checkpoints): readable, but defective.
    const std::string why = uscope_last_error();
    uscope_reader_t *plain = nullptr;
    if (strict && uscope_reader_open_ex(&plain, file.c_str(), 0) == USCOPE_OK) {
      uscope_reader_close(plain);
      std::fprintf(stderr, "uscope: %s: --strict: %s\n", file.c_str(), why.c_str());
      return 1;
    }
    return unreadable(why);
  }
  uscope_reader_close(r);
  Trace t(file, strict ? USCOPE_READ_STRICT : 0);
  Bar bar{!no_progress && !json && isatty(2)};
  const uscope_status_t s = uscope_reader_check(t.r(), bar.on ? &Bar::update : nullptr, &bar);
  if (s != USCOPE_OK) {
    const std::string why = uscope_reader_error(t.r());
    if (strict && s != USCOPE_ERR_IO && s != USCOPE_ERR_NO_MEMORY) {
      std::fprintf(stderr, "uscope: %s: --strict: %s\n", file.c_str(), why.c_str());
      return 1;
    }
    return unreadable(why);
  }
  const auto info = t.info();
  const auto defects = t.defects();
  const auto n = notes(t, info);
  if (json) {
    j.begin_object();
    j.field("file", file.c_str());
    j.field("readable", true);
    j.field("complete", info.complete != 0);
    j.field("segments", static_cast<uint64_t>(info.num_segments));
    j.field("time_grid_ps", info.time_grid_ps);
    j.key("defects");
    j.begin_array();
    for (const auto &d : defects) {
      j.begin_object();
      j.field("kind", uscope_defect_name(d.kind));
      j.field("count", d.count);
      j.key("first");
      j.begin_object();
      j.key("segment");
      if (d.segment == UINT32_MAX) j.null();
      else j.num(d.segment);
      j.field("offset", d.offset);
      j.field("time_ps", d.time_ps);
      j.end_object();
      j.field("description", uscope_defect_description(d.kind));
      j.end_object();
    }
    j.end_array();
    j.key("notes");
    j.begin_array();
    for (const auto &s2 : n) j.str(s2.c_str());
    j.end_array();
    j.end_object();
    j.end();
  } else {
    for (const auto &d : defects)
      std::printf("%s: %" PRIu64 " (first: %s): %s\n", uscope_defect_name(d.kind), d.count, defect_place(t, d).c_str(),
                  uscope_defect_description(d.kind));
    for (const auto &s2 : n) std::printf("note: %s\n", s2.c_str());
    std::printf("%s: %s, %u %s, %s\n", file.c_str(), info.complete ? "finalized" : "not finalized",
                info.num_segments, info.num_segments == 1 ? "segment" : "segments",
                defects.empty() ? "no defect"
                                : (std::to_string(defects.size()) + (defects.size() == 1 ? " kind" : " kinds") +
                                   " of defect, readable")
                                      .c_str());
  }
  return defects.empty() ? 0 : 1;
}

}  // namespace

std::unique_ptr<Command> check_command() { return std::make_unique<Check>(); }

}  // namespace uscope_cli
