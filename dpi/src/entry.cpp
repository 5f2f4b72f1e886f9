// The exported entry points of libuscope_dpi.so: one line each, converting
// DPI C types into the internals of bridge.cpp.
//
// The prototypes come from USCOPE_DPI_PROTOTYPES when it is defined: the
// signature-drift test (tests/dpi/) defines it as the __Dpi.h that Verilator
// generates from sv/uscope_pkg.sv, so every definition below is checked
// against the simulator's own prototype (a mismatch is a "conflicting
// declaration" compile error). Otherwise they come from the public header.
#pragma GCC visibility push(default)
#ifdef USCOPE_DPI_PROTOTYPES
#include USCOPE_DPI_PROTOTYPES
#else
#include "uscope/uscope_dpi.h"
#endif
#pragma GCC visibility pop

#include "bridge.hpp"
#include "pccx_bridge.hpp"

namespace b = uscope_dpi;

extern "C" {

const char *uscope_dpi_version() { return b::version(); }
const char *uscope_dpi_last_error() { return b::last_error(); }
int uscope_dpi_last_status() { return b::last_status(); }
const char *uscope_dpi_status_str(int status) { return b::status_str(status); }

void uscope_dpi_register(const char *name, void *handle) { b::register_handle(name, handle); }
void *uscope_handle(const char *name) { return b::lookup_handle(name); }

void *uscope_sv_schema_create() { return b::schema_create(); }
void *uscope_sv_schema_from_json(const char *json_path) { return b::schema_from_json(json_path); }
int uscope_sv_schema_free(void *schema) { return b::schema_free(schema); }
int uscope_sv_schema_clock(void *schema, const char *name, unsigned int period_ps) {
  return b::schema_clock(schema, name, period_ps);
}
int uscope_sv_schema_scope(void *schema, const char *name, int parent, const char *protocol,
                           int clock) {
  return b::schema_scope(schema, name, parent, protocol, clock);
}
int uscope_sv_schema_enum(void *schema, const char *name, const char *values_csv) {
  return b::schema_enum(schema, name, values_csv);
}
int uscope_sv_schema_storage(void *schema, const char *name, int scope, unsigned int num_slots,
                             unsigned int flags, const char *fields, const char *properties) {
  return b::schema_storage(schema, name, scope, num_slots, flags, fields, properties);
}
int uscope_sv_schema_event(void *schema, const char *name, int scope, const char *fields) {
  return b::schema_event(schema, name, scope, fields);
}
int uscope_sv_schema_summary(void *schema, const char *name, const char *type, int scope) {
  return b::schema_summary(schema, name, type, scope);
}
int uscope_sv_schema_dut_property(void *schema, const char *key, const char *value) {
  return b::schema_dut_property(schema, key, value);
}
int uscope_sv_find(void *handle, const char *kind, const char *name) {
  return b::find(handle, kind, name);
}

void *uscope_open(const char *path, void *schema) { return b::open(path, schema, nullptr); }
void *uscope_open_opts(const char *path, void *schema, const char *options) {
  return b::open(path, schema, options);
}
void *uscope_open_json(const char *path, const char *schema_json_path) {
  return b::open_json(path, schema_json_path);
}
int uscope_close(void *writer) { return b::close(writer); }
void *uscope_sv_add_producer(void *writer) { return b::add_producer(writer); }
int uscope_sv_cycle(void *writer, unsigned long long time_ps) { return b::cycle(writer, time_ps); }

int uscope_event_raw(void *writer, unsigned short event_type_id, const unsigned char *payload,
                     unsigned int len) {
  return b::event_raw(writer, event_type_id, payload, len);
}

void *uscope_sv_cpu_declare(void *schema, const char *scope_name, int parent, int clock,
                            const char *isa, const char *stages, unsigned int max_entities,
                            const char *buffers, const char *counters, const char *stall_reasons,
                            unsigned int fetch_width, unsigned int commit_width,
                            const char *elf_path, const char *vendor, const char *dut_name,
                            const char *entity_fields) {
  return b::cpu_declare(schema, {scope_name, parent, clock, isa, stages, max_entities, buffers, counters,
                                 stall_reasons, fetch_width, commit_width, elf_path, vendor, dut_name,
                                 entity_fields});
}

void *uscope_sv_noc_declare(void *schema, const char *scope_name, int parent, int clock,
                            const char *bus_protocol, const char *topology, const char *stages,
                            unsigned int max_txns, const char *opcodes, const char *buffers,
                            const char *counters, unsigned int data_width, unsigned int addr_width,
                            unsigned int num_ports, unsigned int dim_x, unsigned int dim_y,
                            unsigned int num_vcs, const char *routing, const char *txn_fields) {
  return b::noc_declare(schema, {scope_name, parent, clock, bus_protocol, topology, stages, max_txns, opcodes,
                                 buffers, counters, data_width, addr_width, num_ports, dim_x, dim_y, num_vcs,
                                 routing, txn_fields});
}

void *uscope_sv_npu_declare(void *schema, const char *scope_name, int parent, int clock,
                            unsigned int queue_depth, unsigned int num_te, unsigned int num_ve,
                            unsigned int num_dma_channels, unsigned int num_contexts,
                            unsigned int num_sram_banks, unsigned int num_dram_channels,
                            unsigned int num_noc_links, unsigned int te_rows, unsigned int te_cols,
                            const char *counters, const char *dut_name, const char *vendor,
                            const char *sim_id, const char *trace_version, const char *sim_version,
                            const char *sim_config_json) {
  return b::npu_declare(schema, {scope_name, parent, clock, queue_depth, num_te, num_ve, num_dma_channels,
                                 num_contexts, num_sram_banks, num_dram_channels, num_noc_links, te_rows,
                                 te_cols, counters, dut_name, vendor, sim_id, trace_version, sim_version,
                                 sim_config_json});
}

void *uscope_sv_pccx_open(const char *path, const char *options) { return uscope_dpi::pccx_open(path, options); }
int uscope_sv_pccx_event(void *writer, unsigned int core_id, unsigned long long start_cycle,
                         unsigned long long duration, unsigned int type_id, const char *api_name) {
  return uscope_dpi::pccx_event(writer, core_id, start_cycle, duration, type_id, api_name);
}
int uscope_sv_pccx_set_total_cycles(void *writer, unsigned long long cycles) {
  return uscope_dpi::pccx_set_total_cycles(writer, cycles);
}
int uscope_sv_pccx_close(void *writer) { return uscope_dpi::pccx_close(writer); }
const char *uscope_sv_pccx_error() { return uscope_dpi::pccx_error(); }

}  // extern "C"
