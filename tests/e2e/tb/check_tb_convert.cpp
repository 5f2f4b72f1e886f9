// check_tb_convert — the testbench's traces through the conversion matrix
// (docs/conversions.md), checked for what both formats hold.
//
//   check_tb_convert <tb.uscope> <tb.pccx> <work dir>
//
//   - tb.uscope -> x.pccx -> y.uscope: the npu events of y are those of
//     tb.uscope by event type, cycle and core (JSONL of each compared as
//     multisets; a core is core_id, else npu_id, else 0, as pccx keeps it);
//     y.uscope -> z.pccx gives x.pccx's events and header again;
//   - tb.pccx (written by the simulation itself) -> .uscope -> .pccx and
//     -> .jsonl -> .pccx: every event (type, core, start, duration,
//     api_name) and every header field come back.
// Exit 0 when every check holds.
#include <pccx/pccx.h>
#include <simdjson.h>
#include <uscope/convert.h>
#include <uscope/uscope.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

int g_failures = 0;

void fail(const std::string &what) {
  std::fprintf(stderr, "check_tb_convert: FAIL: %s\n", what.c_str());
  ++g_failures;
}

bool conv(const std::string &in, const std::string &out) {
  uscope_convert_options_t o;
  uscope_convert_options_init(&o);
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  if (uscope_convert(&st, in.c_str(), USCOPE_CONVERT_AUTO, out.c_str(), USCOPE_CONVERT_AUTO, &o) != USCOPE_OK) {
    fail(in + " -> " + out + ": " + uscope_last_error());
    return false;
  }
  if (st.skipped) fail(in + " -> " + out + ": " + std::to_string(st.skipped) + " events skipped");
  std::printf("%s -> %s: %" PRIu64 " events in, %" PRIu64 " out\n", in.c_str(), out.c_str(), st.events_in,
              st.events_out);
  return true;
}

using Skeleton = std::vector<std::tuple<std::string, uint64_t, uint64_t>>;

Skeleton skeleton(const std::string &path) {
  Skeleton out;
  std::ifstream f(path);
  simdjson::ondemand::parser parser;
  for (std::string line; std::getline(f, line);) {
    simdjson::padded_string p(line);
    simdjson::ondemand::document doc;
    std::string_view type;
    uint64_t t = 0, core = 0;
    if (parser.iterate(p).get(doc) || doc["event_type"].get_string().get(type)) {
      fail(path + ": not a JSONL event line: " + line.substr(0, 80));
      continue;
    }
    if (type == "TRACE_META") continue;
    if (doc["t_cycle"].get_uint64().get(t)) fail(path + ": no t_cycle: " + line.substr(0, 80));
    // Fields are looked up by name, in any order (On-Demand rewinds the object).
    if (doc["core_id"].get_uint64().get(core) && doc["npu_id"].get_uint64().get(core)) core = 0;
    out.emplace_back(std::string(type), t, core);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Pccx {
  std::string header;
  std::vector<std::tuple<uint32_t, uint64_t, uint64_t, uint32_t, std::string>> events;
};

Pccx read_pccx(const std::string &path) {
  Pccx f;
  pccx_reader_t *r = nullptr;
  if (pccx_reader_open(&r, path.c_str(), PCCX_OPEN_STRICT_CHECKSUM) != USCOPE_OK) {
    fail(path + ": " + uscope_last_error());
    return f;
  }
  pccx_header_t h{};
  h.struct_size = sizeof h;
  if (pccx_reader_header(r, &h) != USCOPE_OK) fail(path + ": header: " + uscope_last_error());
  std::ostringstream hs;
  hs << (h.pccx_lab_version ? h.pccx_lab_version : "-") << " isa " << (h.isa_version ? h.isa_version : "-")
     << " mac " << h.mac_rows << "x" << h.mac_cols << " peak " << h.peak_tops << " cores " << h.cores << " cycles "
     << h.cycles << " clock " << h.clock_mhz << " " << (h.encoding_name ? h.encoding_name : "-");
  f.header = hs.str();
  for (uint64_t i = 0; i < pccx_reader_event_count(r); ++i) {
    pccx_event_t e{};
    if (pccx_reader_event(r, &e, i) != USCOPE_OK) fail(path + ": event: " + uscope_last_error());
    f.events.emplace_back(e.core_id, e.start_cycle, e.duration, e.type_id, e.api_name ? e.api_name : "(none)");
  }
  std::sort(f.events.begin(), f.events.end());
  pccx_reader_close(r);
  return f;
}

void same_pccx(const std::string &a, const std::string &b) {
  const Pccx x = read_pccx(a), y = read_pccx(b);
  if (x.header != y.header) fail(a + " vs " + b + ": header " + x.header + " vs " + y.header);
  if (x.events != y.events)
    fail(a + " vs " + b + ": " + std::to_string(x.events.size()) + " vs " + std::to_string(y.events.size()) +
         " events, or different ones");
  std::printf("%s = %s: %zu events, %s\n", a.c_str(), b.c_str(), x.events.size(), x.header.c_str());
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: check_tb_convert <tb.uscope> <tb.pccx> <work dir>\n");
    return 2;
  }
  const std::string tb = argv[1], tbp = argv[2], dir = argv[3];
  const std::string a = dir + "/conv_a.jsonl", x = dir + "/conv_x.pccx", y = dir + "/conv_y.uscope",
                    b = dir + "/conv_b.jsonl", z = dir + "/conv_z.pccx";
  if (conv(tb, a) && conv(tb, x) && conv(x, y) && conv(y, b) && conv(y, z)) {
    const Skeleton sa = skeleton(a), sb = skeleton(b);
    if (sa.size() < 1000) fail(a + ": only " + std::to_string(sa.size()) + " npu events");
    if (sa != sb)
      fail(tb + " -> pccx -> uscope: " + std::to_string(sa.size()) + " vs " + std::to_string(sb.size()) +
           " events by (type, cycle, core), or different ones");
    std::printf("%s -> pccx -> uscope: %zu npu events kept by type, cycle and core\n", tb.c_str(), sa.size());
    same_pccx(x, z);
  }
  const std::string pu = dir + "/conv_p.uscope", pp = dir + "/conv_p.pccx", pj = dir + "/conv_p.jsonl",
                    pj2 = dir + "/conv_pj.pccx";
  if (conv(tbp, pu) && conv(pu, pp)) same_pccx(tbp, pp);
  if (conv(tbp, pj) && conv(pj, pj2)) same_pccx(tbp, pj2);
  if (g_failures) return 1;
  std::printf("check_tb_convert: OK\n");
  return 0;
}
