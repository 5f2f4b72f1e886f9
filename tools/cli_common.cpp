// The helpers of cli_common.hpp that are not inline.
#include "cli_common.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>

namespace uscope_cli {

namespace {
constexpr uint64_t kMaxPrinted = 50;  // then only counted: a bad file must not flood the terminal
}  // namespace

// ── field values ──

const char *table_string(const Trace &t, uint64_t index) {
  const char *s = nullptr;
  if (index >= uscope_reader_string_count(t.r())) return nullptr;
  return uscope_reader_string(t.r(), &s, nullptr, static_cast<uint32_t>(index)) == USCOPE_OK ? s : nullptr;
}

void json_value(Json &j, const Trace &t, const uscope_field_info_t &f, uint64_t raw) {
  if (f.type == USCOPE_FT_ENUM) {
    if (const char *n = t.enum_value(f.enum_id, raw)) return j.str(n);
  } else if (f.type == USCOPE_FT_STRING_REF) {
    const char *s = nullptr;
    uint32_t len = 0;  // the text whole, NULs included
    if (raw <= UINT32_MAX && uscope_reader_string(t.r(), &s, &len, static_cast<uint32_t>(raw)) == USCOPE_OK)
      return j.str(std::string(s, len));
  }
  if (is_signed(f.type)) j.snum(sign_extend(raw, f.size));
  else j.num(raw);
}
std::string text_value(const Trace &t, const uscope_field_info_t &f, uint64_t raw) {
  if (f.type == USCOPE_FT_ENUM) {
    if (const char *n = t.enum_value(f.enum_id, raw)) return n;
  } else if (f.type == USCOPE_FT_STRING_REF) {
    if (const char *s = table_string(t, raw)) return std::string("\"") + s + "\"";
  }
  char b[64];
  // A counter (table::kCounterField) and an identifier (entity_id, src_id, cmd_id, ...) are
  // numbers people count with: decimal. Other wide fields are addresses and bits: hex.
  const size_t n = std::strlen(f.name);
  const bool decimal = std::strcmp(f.name, "count") == 0 || std::strcmp(f.name, "id") == 0 ||
                       (n > 3 && std::strcmp(f.name + n - 3, "_id") == 0);
  if (is_signed(f.type)) std::snprintf(b, sizeof b, "%" PRId64, sign_extend(raw, f.size));
  else if ((f.type == USCOPE_FT_U64 || f.type == USCOPE_FT_U32) && !decimal) std::snprintf(b, sizeof b, "0x%" PRIx64, raw);
  else std::snprintf(b, sizeof b, "%" PRIu64, raw);
  return b;
}

// Values are by name everywhere now (issue 13): the MCP server's named_value is json_value.
void named_value(Json &j, const Trace &t, const uscope_field_info_t &f, uint64_t raw) { json_value(j, t, f, raw); }

void event_json(Json &j, const Trace &t, uint64_t time, uint16_t id, const uint8_t *payload, bool by_name,
                const char *record) {
  const auto et = t.event_type(id);
  j.begin_object();
  if (record) j.field("record", record);
  j.field("time_ps", time);
  j.field("type", et.name);
  j.key("fields");
  j.begin_object();
  for (uint16_t k = 0; k < et.num_fields; ++k) {
    const auto f = t.event_field(id, k);
    j.key(f.name);
    json_value(j, t, f, payload_field(payload, f));
  }
  j.end_object();
  j.end_object();
}

// ── tolerant reading and --strict ──

std::string defect_place(const Trace &t, const uscope_defect_t &d) {
  char b[160];
  if (d.segment == UINT32_MAX)
    std::snprintf(b, sizeof b, "the file at offset %" PRIu64, d.offset);
  else
    std::snprintf(b, sizeof b, "segment %u at offset %" PRIu64 ", %" PRIu64 " ps", d.segment, d.offset, d.time_ps);
  std::string s = b;
  // What the item names, where the kind says which it is (an op's storage,
  // an event's type); an id the schema does not have is given as a number.
  const auto c = t.counts();
  if (d.kind == USCOPE_DEFECT_SLOT_OUT_OF_RANGE || d.kind == USCOPE_DEFECT_FIELD_OUT_OF_RANGE ||
      d.kind == USCOPE_DEFECT_UNKNOWN_STORAGE) {
    if (d.subject < c.storages) s += std::string(", storage '") + t.storage(static_cast<uint16_t>(d.subject)).name + "'";
    else if (d.subject != UINT32_MAX) s += ", storage id " + std::to_string(d.subject);
  } else if (d.kind == USCOPE_DEFECT_UNKNOWN_EVENT_TYPE || d.kind == USCOPE_DEFECT_EVENT_PAYLOAD_SIZE) {
    if (d.subject < c.event_types) s += std::string(", event '") + t.event_type(static_cast<uint16_t>(d.subject)).name + "'";
    else if (d.subject != UINT32_MAX) s += ", event type id " + std::to_string(d.subject);
  }
  return s;
}

void warn_defects(const Trace &t, const std::string &path) {
  for (const auto &d : t.defects())
    std::fprintf(stderr, "uscope: warning: %s: %s x%" PRIu64 ": %s (first: %s)\n", path.c_str(),
                 uscope_defect_name(d.kind), d.count, uscope_defect_description(d.kind), defect_place(t, d).c_str());
}

uint64_t cycle_period(const Trace &t, uint64_t clock_period_ps) {
  const auto defects = t.defects();
  const bool off = std::any_of(defects.begin(), defects.end(),
                               [](const uscope_defect_t &d) { return d.kind == USCOPE_DEFECT_OFF_CLOCK_GRID; });
  const uint64_t grid = t.info().time_grid_ps;
  if (!off || !grid || !clock_period_ps || grid == clock_period_ps) return clock_period_ps;
  static bool warned = false;
  if (!warned)
    std::fprintf(stderr, "uscope: warning: timestamps follow a %" PRIu64 " ps step, not the clock's %" PRIu64
                 " ps (COMPAT 29): cycles are counted in %" PRIu64 " ps steps\n", grid, clock_period_ps, grid);
  warned = true;
  return grid;
}

void strict_check(const Trace &t, const std::string &path) {
  check(uscope_reader_check(t.r(), nullptr, nullptr), (path + ": --strict").c_str());
}

bool has_protocol(const Trace &t, const char *protocol) {
  const auto c = t.counts();
  for (uint32_t k = 0; k < c.scopes; ++k) {
    uscope_scope_info_t sc{};
    check(uscope_reader_scope(t.r(), &sc, k), "scope");
    if (sc.protocol && std::strcmp(sc.protocol, protocol) == 0) return true;
  }
  return false;
}

std::string file_magic(const std::string &path) {
  // Non-blocking, and regular files only: reading a FIFO's first bytes would
  // wait forever. Anything else goes to the reader, whose error names what
  // the path is.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";
  struct stat st {};
  char m[4] = {};
  const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::pread(fd, m, 4, 0) == 4;
  ::close(fd);
  return ok ? std::string(m, 4) : "";
}

// ── the JSONL ingest (convert, npu-report) ──

void print_issue(void *user, uint64_t line, const char *reason) {
  auto *p = static_cast<IssuePrinter *>(user);
  if (line == 0)  // about the input as a whole (a .uscope trace's defects), not a line
    std::fprintf(stderr, "uscope: warning: %s: %s\n", p->file, reason);
  else if (p->printed < kMaxPrinted)
    std::fprintf(stderr, "%s:%" PRIu64 ": %s\n", p->file, line, reason);
  else if (p->printed == kMaxPrinted)
    std::fprintf(stderr, "%s: further malformed lines are counted, not printed\n", p->file);
  if (line) ++p->printed;
}

void add_ingest_options(CLI::App *sub, uscope_convert_options_t *o) {
  uscope_convert_options_init(o);
  sub->add_option("--period-ps", o->period_ps,
                  "npu clock period: time_ps = t_cycle x period (default: the trace's TRACE_META period_ps, else 1000)");
  sub->add_option("--max-line-bytes", o->max_line_bytes, "longest JSONL line accepted (default 64 MiB)");
  sub->add_option("--reorder-window", o->reorder_window, "lines held to sort out-of-order t_cycle (default 65536)");
}

uint64_t peak_rss_kib() {
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %llu kB", &kib) == 1) break;
  std::fclose(f);
  return kib;
}

}  // namespace uscope_cli
