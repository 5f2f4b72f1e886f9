// The bridge's internals, as seen from the exported entry points
// (entry.cpp). This header must not include uscope/uscope.h: entry.cpp is also
// compiled against Verilator's generated __Dpi.h, which declares the
// libuscope functions that uscope_pkg imports with DPI types (unsigned long
// long for uint64_t, void * for uscope_writer_t *), and the two sets of
// declarations cannot meet in one translation unit.
#pragma once

#include <cstdint>
#include <string>

namespace uscope_dpi {

const char *version() noexcept;
const char *last_error() noexcept;
int last_status() noexcept;
const char *status_str(int status) noexcept;
// Record a failure as this thread's last bridge error (status and message):
// the one error record of the bridge, read by uscope_dpi_last_error /
// _last_status and by uscope_sv_pccx_error.
void record_error(int status, const std::string &msg) noexcept;

void register_handle(const char *name, void *handle) noexcept;
void *lookup_handle(const char *name) noexcept;

void *schema_create() noexcept;
void *schema_from_json(const char *json_path) noexcept;
int schema_free(void *schema) noexcept;
int schema_clock(void *schema, const char *name, uint32_t period_ps) noexcept;
int schema_scope(void *schema, const char *name, int parent, const char *protocol,
                 int clock) noexcept;
int schema_enum(void *schema, const char *name, const char *values_csv) noexcept;
int schema_storage(void *schema, const char *name, int scope, uint32_t num_slots, uint32_t flags,
                   const char *fields, const char *properties) noexcept;
int schema_event(void *schema, const char *name, int scope, const char *fields) noexcept;
int schema_summary(void *schema, const char *name, const char *type, int scope) noexcept;
int schema_dut_property(void *schema, const char *key, const char *value) noexcept;
int find(void *handle, const char *kind, const char *name) noexcept;

void *open(const char *path, void *schema, const char *options) noexcept;
void *open_json(const char *path, const char *json_path) noexcept;
int close(void *writer) noexcept;
void *add_producer(void *writer) noexcept;
int cycle(void *writer, uint64_t time_ps) noexcept;
int event_raw(void *writer, uint16_t event_type_id, const unsigned char *payload,
              uint32_t len) noexcept;

// Protocol declarations: the SV arguments, as passed.
struct CpuArgs {
  const char *scope_name;
  int parent, clock;
  const char *isa, *stages;
  unsigned max_entities;
  const char *buffers, *counters, *stall_reasons;
  unsigned fetch_width, commit_width;
  const char *elf_path, *vendor, *dut_name, *entity_fields;
};
struct NocArgs {
  const char *scope_name;
  int parent, clock;
  const char *bus_protocol, *topology, *stages;
  unsigned max_txns;
  const char *opcodes, *buffers, *counters;
  unsigned data_width, addr_width, num_ports, dim_x, dim_y, num_vcs;
  const char *routing, *txn_fields;
};
struct NpuArgs {
  const char *scope_name;
  int parent, clock;
  unsigned queue_depth, num_te, num_ve, num_dma_channels, num_contexts, num_sram_banks,
      num_dram_channels, num_noc_links, te_rows, te_cols;
  const char *counters, *dut_name, *vendor, *sim_id, *trace_version, *sim_version, *sim_config_json;
};

void *cpu_declare(void *schema, const CpuArgs &args) noexcept;
void *noc_declare(void *schema, const NocArgs &args) noexcept;
void *npu_declare(void *schema, const NpuArgs &args) noexcept;

}  // namespace uscope_dpi
