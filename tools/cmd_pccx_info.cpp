// `uscope info FILE [--json]` for pccx-lab .pccx files, the info command's
// other half (cmd_info.cpp calls it on a file with the PCCX magic): container
// version, the JSON header's fields, the payload encoding, events per type,
// total cycles and the checksum status. Built on the public pccx C API only.
#include <pccx/pccx.h>

#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>

#include "cli_common.hpp"

namespace uscope_cli {

bool is_pccx_file(const std::string &path) { return file_magic(path) == "PCCX"; }

namespace {
const char *checksum_word(uint32_t s) {
  switch (s) {
    case PCCX_CHECKSUM_OK: return "ok";
    case PCCX_CHECKSUM_MISMATCH: return "mismatch";
    default: return "absent";
  }
}
}  // namespace

void cmd_pccx_info(const std::string &path, bool json) {
  pccx_reader_t *r = nullptr;
  check(pccx_reader_open(&r, path.c_str(), 0), "info");  // the message names the file
  pccx_header_t h{};
  h.struct_size = sizeof h;
  check(pccx_reader_header(r, &h), "header");
  // Events per type name (file order of first appearance is not kept: sorted by id, then name).
  std::map<std::pair<uint32_t, std::string>, uint64_t> by_type;
  const uint64_t n = pccx_reader_event_count(r);
  uint64_t max_end = 0;
  for (uint64_t i = 0; i < n; ++i) {
    pccx_event_t e{};
    check(pccx_reader_event(r, &e, i), "event");
    ++by_type[{e.type_id, e.type_name}];
    const uint64_t end = e.start_cycle + e.duration < e.start_cycle ? UINT64_MAX : e.start_cycle + e.duration;
    if (end > max_end) max_end = end;
  }
  if (json) {
    Json j;
    j.begin_object();
    j.field("format", "pccx");
    j.key("version");
    j.begin_object();
    j.field("major", h.major);
    j.field("minor", h.minor);
    j.field("format_minor", h.format_minor);
    j.end_object();
    j.field("pccx_lab_version", h.pccx_lab_version);
    j.key("arch");
    j.begin_object();
    j.key("mac_dims");
    j.begin_array();
    j.num(h.mac_rows);
    j.num(h.mac_cols);
    j.end_array();
    j.field("isa_version", h.isa_version);
    j.key("peak_tops");
    if (h.has_peak_tops) j.real(h.peak_tops);
    else j.null();
    j.end_object();
    j.key("trace");
    j.begin_object();
    j.field("cycles", h.cycles);
    j.field("cores", h.cores);
    j.field("clock_mhz", h.clock_mhz);
    j.end_object();
    j.key("payload");
    j.begin_object();
    j.field("encoding", h.encoding_name);
    j.field("byte_length", h.payload_bytes);
    j.key("checksum_fnv64");
    if (h.checksum_present) j.num(h.checksum);
    else j.null();
    j.field("computed_fnv64", h.computed_checksum);
    j.field("checksum_status", checksum_word(h.checksum_status));
    j.field("flatbuf_pcc2_trailer", h.flatbuf_trailer != 0);
    j.field("trailing_bytes", h.payload_trailing_bytes);
    j.end_object();
    j.field("header_bytes", h.header_bytes);
    j.field("total_cycles", h.total_cycles);
    j.field("max_end_cycle", max_end);
    j.field("num_events", n);
    j.field("num_api_names", h.num_api_names);
    j.key("events_by_type");
    j.begin_object();
    for (const auto &kv : by_type) j.field(kv.first.second.c_str(), kv.second);
    j.end_object();
    j.end_object();
    j.end();
  } else {
    std::printf("file:             %s\n", path.c_str());
    std::printf("format:           pccx %u.%u (format_minor %u)\n", h.major, h.minor, h.format_minor);
    std::printf("pccx_lab_version: %s\n", h.pccx_lab_version);
    std::printf("arch:             mac_dims [%u, %u], isa_version %s", h.mac_rows, h.mac_cols, h.isa_version);
    if (h.has_peak_tops) std::printf(", peak_tops %s", shortest(h.peak_tops).c_str());
    std::printf("\ntrace:            cycles %" PRIu64 ", cores %u, clock %u MHz\n", h.cycles, h.cores, h.clock_mhz);
    std::printf("payload:          %s, %" PRIu64 " bytes%s", h.encoding_name, h.payload_bytes,
                h.flatbuf_trailer ? ", PCC2 api_name trailer" : "");
    if (h.payload_trailing_bytes)
      std::printf(", %" PRIu64 " trailing bytes ignored (as pccx-lab does)", h.payload_trailing_bytes);
    std::printf("\n");
    if (h.checksum_present)
      std::printf("checksum:         %s (file 0x%016" PRIx64 ", payload 0x%016" PRIx64 ")\n",
                  checksum_word(h.checksum_status), h.checksum, h.computed_checksum);
    else
      std::printf("checksum:         absent (payload 0x%016" PRIx64 ")\n", h.computed_checksum);
    std::printf("total_cycles:     %" PRIu64 "\n", h.total_cycles);
    std::printf("events:           %" PRIu64 " (%" PRIu64 " with an api_name)\n", n, h.num_api_names);
    for (const auto &kv : by_type) std::printf("  %-16s %" PRIu64 "\n", kv.first.second.c_str(), kv.second);
  }
  pccx_reader_close(r);
}

}  // namespace uscope_cli
