// The bridge's pccx calls: open with a key=value options string, and thin
// forwards to libuscope's pccx writer (include/pccx/pccx.h). The event call
// only maps "" to "no api_name": it allocates nothing. Failures go to the
// bridge's one error record (bridge.cpp, record_error), which
// uscope_sv_pccx_error() reads like uscope_dpi_last_error().
#include <cctype>
#include <exception>
#include <new>
#include <string>

#include "base/parse.hpp"
#include "bridge.hpp"
#include "pccx/pccx.h"
#include "pccx_bridge.hpp"
#include "uscope/uscope_dpi.h"

namespace uscope_dpi {

namespace {

void set_err(int status, const std::string &m) noexcept { record_error(status, m); }

struct Syntax {
  std::string msg;
};

// A count option: decimal or 0x hex, through the core's checked parser.
// Before it, strtoull(base 0) read "010" as octal 8 and wrapped "-1" to
// 2^64-1 (and a 32-bit option kept the low bits of anything larger): a
// leading 0 is now refused rather than silently read as decimal 10.
uint64_t to_u64(const std::string &k, const std::string &v, uint64_t max) {
  if (v.size() > 1 && v[0] == '0' && v[1] >= '0' && v[1] <= '9')
    throw Syntax{"options: " + k + "=" + v + ": a leading 0 (octal) is not accepted; write it in decimal or 0x hex"};
  uint64_t x = 0;
  const std::string why = uscope::parse_number(v, max, &x, /*hex_ok=*/true);
  if (!why.empty()) throw Syntax{"options: " + k + "=" + v + ": " + why};
  return x;
}
uint32_t to_u32(const std::string &k, const std::string &v) {
  return static_cast<uint32_t>(to_u64(k, v, UINT32_MAX));
}

}  // namespace

void *pccx_open(const char *path, const char *options) noexcept {
  try {
    if (!path) {
      set_err(USCOPE_ERR_INVALID_ARGUMENT, "uscope_sv_pccx_open: path is null");
      return nullptr;
    }
    pccx_writer_options_t o;
    pccx_writer_options_init(&o);
    std::string lab, isa;  // keep the strings alive until open
    std::string text = options ? options : "", item;
    auto apply = [&]() {
      const std::string t = item;
      item.clear();
      if (t.empty()) return;
      const size_t eq = t.find('=');
      if (eq == std::string::npos) throw Syntax{"options: \"" + t + "\" is not key=value"};
      const std::string k = t.substr(0, eq), v = t.substr(eq + 1);
      if (k == "encoding") {
        if (v == "bincode") o.encoding = PCCX_ENCODING_BINCODE;
        else if (v == "flatbuf") o.encoding = PCCX_ENCODING_FLATBUF;
        else if (v == "raw") o.encoding = PCCX_ENCODING_RAW;
        else throw Syntax{"options: encoding=" + v + " (bincode, flatbuf or raw)"};
      } else if (k == "lab_version") {
        lab = v;
      } else if (k == "isa_version") {
        isa = v;
      } else if (k == "mac_rows") {
        o.mac_rows = to_u32(k, v);
      } else if (k == "mac_cols") {
        o.mac_cols = to_u32(k, v);
      } else if (k == "peak_tops") {
        const std::string why = uscope::parse_real(v, &o.peak_tops);
        if (!why.empty()) throw Syntax{"options: peak_tops=" + v + ": " + why};
      } else if (k == "cores") {
        o.cores = to_u32(k, v);
      } else if (k == "clock_mhz") {
        o.clock_mhz = to_u32(k, v);
      } else if (k == "queue_bytes") {
        o.queue_bytes = to_u64(k, v, UINT64_MAX);
      } else if (k == "backpressure") {
        if (v == "block") o.backpressure = PCCX_BACKPRESSURE_BLOCK;
        else if (v == "drop") o.backpressure = PCCX_BACKPRESSURE_DROP;
        else throw Syntax{"options: backpressure=" + v + " (block or drop)"};
      } else {
        throw Syntax{"options: unknown key \"" + k +
                     "\" (encoding, lab_version, isa_version, mac_rows, mac_cols, peak_tops, cores, "
                     "clock_mhz, queue_bytes, backpressure)"};
      }
    };
    for (char c : text) {
      if (c == ',' || c == ';' || std::isspace(static_cast<unsigned char>(c))) apply();
      else item += c;
    }
    apply();
    if (!lab.empty()) o.pccx_lab_version = lab.c_str();
    if (!isa.empty()) o.isa_version = isa.c_str();
    pccx_writer_t *w = nullptr;
    const uscope_status_t s = pccx_writer_open(&w, path, &o);
    if (s != USCOPE_OK) {
      set_err(s, std::string("uscope_sv_pccx_open: ") + uscope_status_str(s) + ": " + uscope_last_error());
      return nullptr;
    }
    return w;
  } catch (const Syntax &e) {
    set_err(USCOPE_DPI_ERR_SYNTAX, "uscope_sv_pccx_open: " + e.msg);
  } catch (const std::bad_alloc &) {
    set_err(USCOPE_ERR_NO_MEMORY, "uscope_sv_pccx_open: out of memory");
  } catch (const std::exception &e) {
    set_err(USCOPE_ERR_INTERNAL, std::string("uscope_sv_pccx_open: ") + e.what());
  } catch (...) {
    set_err(USCOPE_ERR_INTERNAL, "uscope_sv_pccx_open: unknown exception");
  }
  return nullptr;
}

int pccx_event(void *w, uint32_t core, uint64_t start, uint64_t duration, uint32_t type,
               const char *api_name) noexcept {
  const uscope_status_t s = pccx_writer_event(static_cast<pccx_writer_t *>(w), core, start, duration, type,
                                              api_name && *api_name ? api_name : nullptr);
  if (s != USCOPE_OK) set_err(s, std::string("uscope_sv_pccx_event: ") + uscope_last_error());
  return s;
}

int pccx_set_total_cycles(void *w, uint64_t cycles) noexcept {
  const uscope_status_t s = pccx_writer_set_total_cycles(static_cast<pccx_writer_t *>(w), cycles);
  if (s != USCOPE_OK) set_err(s, std::string("uscope_sv_pccx_set_total_cycles: ") + uscope_last_error());
  return s;
}

int pccx_close(void *w) noexcept {
  const uscope_status_t s = pccx_writer_close(static_cast<pccx_writer_t *>(w));
  if (s != USCOPE_OK) set_err(s, std::string("uscope_sv_pccx_close: ") + uscope_last_error());
  return s;
}

const char *pccx_error() noexcept { return last_error(); }

}  // namespace uscope_dpi
