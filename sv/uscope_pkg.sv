// uscope_pkg: write µScope traces from SystemVerilog through DPI-C.
//
//   import uscope_pkg::*;
//
// Two kinds of imports live here (docs/dpi.md has the guide):
//  - the bridge, libuscope_dpi.so: calls that convert SV types (strings, CSV
//    field lists, JSON files, the fixed-size payload array) and the handle
//    registry: uscope_open*, uscope_close, uscope_event_raw, uscope_sv_*,
//    uscope_handle, uscope_dpi_*;
//  - libuscope.so itself: every per-cycle call, whose C signature is already
//    DPI-compatible (uscope_begin_cycle, uscope_slot_set, uscope_cpu_fetch, ...).
// Link both libraries (pkg-config --libs uscope_dpi gives -luscope_dpi -luscope).
//
// Types: chandle = void *, string = const char *, int = int32_t, int unsigned
// = uint32_t, shortint unsigned = uint16_t, byte unsigned = uint8_t, longint
// unsigned = uint64_t. Every call returns a status (0 = OK, negative = error,
// message in uscope_dpi_last_error() / uscope_writer_error(w)) or a handle that
// is null on failure. None blocks, none calls $fatal. tests/dpi compiles the C
// side against the header Verilator generates from this file, so the C and
// SV signatures cannot drift apart: change both together.
//
// Lint: clean under verilator --lint-only -Wall.
package uscope_pkg;

  // ── Constants (mirroring include/uscope/uscope.h and uscope_dpi.h) ──
  /* verilator lint_off UNUSEDPARAM */

  localparam int USCOPE_OK                       = 0;
  localparam int USCOPE_ERR_INVALID_ARGUMENT     = -1;
  localparam int USCOPE_ERR_NO_MEMORY            = -2;
  localparam int USCOPE_ERR_IO                   = -3;
  localparam int USCOPE_ERR_SCHEMA               = -4;
  localparam int USCOPE_ERR_LIMIT                = -5;
  localparam int USCOPE_ERR_BAD_STATE            = -6;
  localparam int USCOPE_ERR_TIME_BACKWARDS       = -7;
  localparam int USCOPE_ERR_UNKNOWN_STORAGE      = -8;
  localparam int USCOPE_ERR_UNKNOWN_SLOT         = -9;
  localparam int USCOPE_ERR_UNKNOWN_FIELD        = -10;
  localparam int USCOPE_ERR_UNKNOWN_PROPERTY     = -11;
  localparam int USCOPE_ERR_UNKNOWN_EVENT        = -12;
  localparam int USCOPE_ERR_PAYLOAD_SIZE         = -13;
  localparam int USCOPE_ERR_VALUE_RANGE          = -14;
  localparam int USCOPE_ERR_DATA_DROPPED         = -15;
  localparam int USCOPE_ERR_INTERNAL             = -16;
  localparam int USCOPE_ERR_UNSUPPORTED          = -17;
  localparam int USCOPE_ERR_NOT_FOUND            = -23;
  localparam int USCOPE_ERR_DUPLICATE            = -27;  // schema calls: a name repeated within its scope
  localparam int USCOPE_ERR_AMBIGUOUS            = -28;  // uscope_sv_find: a plain name declared in several scopes
  localparam int USCOPE_DPI_ERR_SYNTAX           = -100;
  localparam int USCOPE_DPI_ERR_JSON             = -101;
  localparam int USCOPE_DPI_ERR_JSON_SCHEMA      = -102;
  localparam int USCOPE_DPI_ERR_BAD_HANDLE       = -103;

  // Parent / scope / clock sentinels of the uscope_sv_schema_* calls.
  localparam int USCOPE_SV_ROOT    = -1;  // parent of the root scope; scope of root-level items
  localparam int USCOPE_SV_INHERIT = -1;  // scope clock: inherit the parent's

  // Storage flags.
  localparam int unsigned USCOPE_SF_SPARSE = 1;
  localparam int unsigned USCOPE_SF_BUFFER = 2;

  // Event payloads: fields packed little-endian in schema order, no padding.
  localparam int unsigned USCOPE_PAYLOAD_BYTES = 256;
  typedef byte unsigned uscope_payload_t[USCOPE_PAYLOAD_BYTES];
  /* verilator lint_on UNUSEDPARAM */

  // ── Bridge (libuscope_dpi.so) ──

  import "DPI-C" function string  uscope_dpi_version();
  import "DPI-C" function string  uscope_dpi_last_error();
  import "DPI-C" function int     uscope_dpi_last_status();
  import "DPI-C" function string  uscope_dpi_status_str(int status);

  // Handle registry: the C++ harness registers, SV fetches (null when absent).
  import "DPI-C" function void    uscope_dpi_register(string name, chandle handle);
  import "DPI-C" function chandle uscope_handle(string name);

  // Schema building. Each add returns the new id (>= 0) or a negative status.
  import "DPI-C" function chandle uscope_sv_schema_create();
  import "DPI-C" function chandle uscope_sv_schema_from_json(string json_path);
  import "DPI-C" function int     uscope_sv_schema_free(chandle schema);
  import "DPI-C" function int     uscope_sv_schema_clock(chandle schema, string name,
                                                         int unsigned period_ps);
  import "DPI-C" function int     uscope_sv_schema_scope(chandle schema, string name, int parent,
                                                         string protocol, int clock);
  import "DPI-C" function int     uscope_sv_schema_enum(chandle schema, string name,
                                                        string values_csv);
  import "DPI-C" function int     uscope_sv_schema_storage(chandle schema, string name, int scope,
                                                           int unsigned num_slots, int unsigned flags,
                                                           string fields, string properties);
  import "DPI-C" function int     uscope_sv_schema_event(chandle schema, string name, int scope,
                                                         string fields);
  import "DPI-C" function int     uscope_sv_schema_summary(chandle schema, string name, string field_type,
                                                           int scope);
  import "DPI-C" function int     uscope_sv_schema_dut_property(chandle schema, string key,
                                                                string value);
  import "DPI-C" function int     uscope_sv_find(chandle handle, string kind, string name);

  // Writers. The chandle returned is libuscope's uscope_writer_t *.
  import "DPI-C" function chandle uscope_open(string path, chandle schema);
  import "DPI-C" function chandle uscope_open_opts(string path, chandle schema, string options);
  import "DPI-C" function chandle uscope_open_json(string path, string schema_json_path);
  import "DPI-C" function int     uscope_close(chandle w);
  // A producer of w for another simulation thread (uscope_writer_add_producer):
  // its own handle, merged by time. docs/dpi.md, "Several threads".
  import "DPI-C" function chandle uscope_sv_add_producer(chandle w);
  // Frames from SV (no harness around the clock edges): makes the frame at
  // time_ps the open one, ending the previous one. docs/dpi.md, "Frames".
  import "DPI-C" function int     uscope_sv_cycle(chandle w, longint unsigned time_ps);
  import "DPI-C" function int     uscope_event_raw(chandle w, shortint unsigned event_type_id,
                                                   input byte unsigned payload[USCOPE_PAYLOAD_BYTES],
                                                   int unsigned len);

  // pccx-lab .pccx traces (docs/pccx.md, docs/dpi.md "pccx"): a streaming
  // writer beside the µScope one. api_name "" = none. Type ids below.
  import "DPI-C" function chandle uscope_sv_pccx_open(string path, string options);
  import "DPI-C" function int     uscope_sv_pccx_event(chandle w, int unsigned core_id,
                                                       longint unsigned start_cycle,
                                                       longint unsigned duration,
                                                       int unsigned type_id, string api_name);
  import "DPI-C" function int     uscope_sv_pccx_set_total_cycles(chandle w, longint unsigned cycles);
  import "DPI-C" function int     uscope_sv_pccx_close(chandle w);
  import "DPI-C" function string  uscope_sv_pccx_error();
  /* verilator lint_off UNUSEDPARAM */
  localparam int unsigned PCCX_UNKNOWN = 0, PCCX_MAC_COMPUTE = 1, PCCX_DMA_READ = 2,
                          PCCX_DMA_WRITE = 3, PCCX_SYSTOLIC_STALL = 4, PCCX_BARRIER_SYNC = 5,
                          PCCX_API_CALL = 6;
  /* verilator lint_on UNUSEDPARAM */

  // Protocol declarations (include/uscope/protocols.h): each returns the
  // protocol handle the uscope_cpu_* / uscope_noc_* / uscope_npu_* calls take,
  // or null. Lists are CSV; "" and 0 mean omitted. Buffers: "rob:64(pc:u64),iq:16".
  import "DPI-C" function chandle uscope_sv_cpu_declare(
      chandle schema, string scope_name, int parent, int clock, string isa, string stages,
      int unsigned max_entities, string buffers = "", string counters = "",
      string stall_reasons = "", int unsigned fetch_width = 0, int unsigned commit_width = 0,
      string elf_path = "", string vendor = "", string dut_name = "", string entity_fields = "");
  import "DPI-C" function chandle uscope_sv_noc_declare(
      chandle schema, string scope_name, int parent, int clock, string bus_protocol,
      string topology, string stages, int unsigned max_txns, string opcodes = "",
      string buffers = "", string counters = "", int unsigned data_width = 0,
      int unsigned addr_width = 0, int unsigned num_ports = 0, int unsigned dim_x = 0,
      int unsigned dim_y = 0, int unsigned num_vcs = 0, string routing = "",
      string txn_fields = "");
  import "DPI-C" function chandle uscope_sv_npu_declare(
      chandle schema, string scope_name, int parent, int clock, int unsigned queue_depth,
      int unsigned num_te, int unsigned num_ve, int unsigned num_dma_channels,
      int unsigned num_contexts = 0, int unsigned num_sram_banks = 0,
      int unsigned num_dram_channels = 0, int unsigned num_noc_links = 0,
      int unsigned te_rows = 0, int unsigned te_cols = 0, string counters = "",
      string dut_name = "", string vendor = "", string sim_id = "", string trace_version = "",
      string sim_version = "", string sim_config_json = "");

  // ── libuscope.so: versions, errors ──

  import "DPI-C" function string       uscope_version_string();
  import "DPI-C" function int unsigned uscope_version_number();
  import "DPI-C" function string       uscope_status_str(int status);
  import "DPI-C" function string       uscope_last_error();
  import "DPI-C" function string       uscope_writer_error(chandle w);

  // ── libuscope.so: per-cycle calls ──
  // In Verilator the C++ harness calls begin/end_cycle around eval(); on an
  // event-driven simulator a dedicated block does (docs/dpi.md).

  import "DPI-C" function int uscope_begin_cycle(chandle w, longint unsigned time_ps);
  import "DPI-C" function int uscope_end_cycle(chandle w);
  import "DPI-C" function int uscope_slot_set(chandle w, shortint unsigned storage_id,
                                              shortint unsigned slot, shortint unsigned field,
                                              longint unsigned value);
  import "DPI-C" function int uscope_slot_clear(chandle w, shortint unsigned storage_id,
                                                shortint unsigned slot);
  import "DPI-C" function int uscope_slot_add(chandle w, shortint unsigned storage_id,
                                              shortint unsigned slot, shortint unsigned field,
                                              longint unsigned value);
  import "DPI-C" function int uscope_prop_set(chandle w, shortint unsigned storage_id,
                                              shortint unsigned prop_index, longint unsigned value);
  import "DPI-C" function int uscope_writer_flush(chandle w);
  import "DPI-C" function int uscope_string_insert(chandle w, output int unsigned out_index,
                                                   input string str);

  // ── libuscope.so: protocol handles and per-cycle protocol calls ──
  // (include/uscope/protocols.h; enum arguments are byte unsigned indices).

  import "DPI-C" function void uscope_cpu_free(chandle cpu);
  import "DPI-C" function void uscope_noc_free(chandle noc);
  import "DPI-C" function void uscope_npu_free(chandle npu);

  // cpu
  import "DPI-C" function int uscope_cpu_fetch(chandle w, chandle cpu, int unsigned entity_id,
                                               longint unsigned pc, int unsigned inst_bits);
  import "DPI-C" function int uscope_cpu_stage_transition(chandle w, chandle cpu,
                                                          int unsigned entity_id,
                                                          byte unsigned stage);
  import "DPI-C" function int uscope_cpu_retire(chandle w, chandle cpu, int unsigned entity_id);
  import "DPI-C" function int uscope_cpu_flush(chandle w, chandle cpu, int unsigned entity_id,
                                               byte unsigned reason);
  import "DPI-C" function int uscope_cpu_annotate(chandle w, chandle cpu, int unsigned entity_id,
                                                  string text);
  import "DPI-C" function int uscope_cpu_dependency(chandle w, chandle cpu, int unsigned src_id,
                                                    int unsigned dst_id, byte unsigned dep_type);
  import "DPI-C" function int uscope_cpu_stall(chandle w, chandle cpu, byte unsigned reason);
  import "DPI-C" function int uscope_cpu_counter_add(chandle w, chandle cpu,
                                                     shortint unsigned counter,
                                                     longint unsigned delta);
  import "DPI-C" function int uscope_cpu_buffer_insert(chandle w, chandle cpu,
                                                       shortint unsigned buffer,
                                                       shortint unsigned slot,
                                                       int unsigned entity_id);
  import "DPI-C" function int uscope_cpu_buffer_set(chandle w, chandle cpu,
                                                    shortint unsigned buffer,
                                                    shortint unsigned slot,
                                                    shortint unsigned field,
                                                    longint unsigned value);
  import "DPI-C" function int uscope_cpu_buffer_remove(chandle w, chandle cpu,
                                                       shortint unsigned buffer,
                                                       shortint unsigned slot);
  import "DPI-C" function int uscope_cpu_entity_set(chandle w, chandle cpu, int unsigned entity_id,
                                                    shortint unsigned field,
                                                    longint unsigned value);

  // noc
  import "DPI-C" function int uscope_noc_issue(chandle w, chandle noc, int unsigned txn_id,
                                               byte unsigned opcode, longint unsigned addr,
                                               shortint unsigned len, byte unsigned size,
                                               shortint unsigned src_port,
                                               shortint unsigned dst_port);
  import "DPI-C" function int uscope_noc_stage_transition(chandle w, chandle noc,
                                                          int unsigned txn_id,
                                                          byte unsigned stage);
  import "DPI-C" function int uscope_noc_complete(chandle w, chandle noc, int unsigned txn_id);
  import "DPI-C" function int uscope_noc_beat(chandle w, chandle noc, int unsigned txn_id,
                                              shortint unsigned beat_num,
                                              shortint unsigned data_bytes);
  import "DPI-C" function int uscope_noc_retry(chandle w, chandle noc, int unsigned txn_id,
                                               byte unsigned reason);
  import "DPI-C" function int uscope_noc_timeout(chandle w, chandle noc, int unsigned txn_id,
                                                 int unsigned threshold_cycles);
  import "DPI-C" function int uscope_noc_link_credit(chandle w, chandle noc, shortint unsigned port,
                                                     byte unsigned direction,
                                                     byte unsigned credits);
  import "DPI-C" function int uscope_noc_arb_decision(chandle w, chandle noc,
                                                      int unsigned winner_txn,
                                                      shortint unsigned port,
                                                      byte unsigned num_contenders);
  import "DPI-C" function int uscope_noc_txn_handoff(chandle w, chandle noc,
                                                     shortint unsigned src_scope,
                                                     int unsigned src_txn,
                                                     shortint unsigned dst_scope,
                                                     int unsigned dst_txn);
  import "DPI-C" function int uscope_noc_annotate(chandle w, chandle noc, int unsigned txn_id,
                                                  string text);
  import "DPI-C" function int uscope_noc_buffer_insert(chandle w, chandle noc,
                                                       shortint unsigned buffer,
                                                       shortint unsigned slot,
                                                       int unsigned txn_id);
  import "DPI-C" function int uscope_noc_buffer_set(chandle w, chandle noc,
                                                    shortint unsigned buffer,
                                                    shortint unsigned slot,
                                                    shortint unsigned field,
                                                    longint unsigned value);
  import "DPI-C" function int uscope_noc_buffer_remove(chandle w, chandle noc,
                                                       shortint unsigned buffer,
                                                       shortint unsigned slot);
  import "DPI-C" function int uscope_noc_counter_add(chandle w, chandle noc,
                                                     shortint unsigned counter,
                                                     longint unsigned delta);
  import "DPI-C" function int uscope_noc_txn_set(chandle w, chandle noc, int unsigned txn_id,
                                                 shortint unsigned field, longint unsigned value);

  // npu (one call per JSON-Lines event type; ctx = a contexts slot or 16'hFFFF)
  import "DPI-C" function int uscope_npu_context(chandle w, chandle npu, shortint unsigned ctx,
                                                 shortint unsigned core_id,
                                                 shortint unsigned npu_id, int unsigned tenant_id,
                                                 int unsigned layer_id, int unsigned block_id,
                                                 int unsigned head_id, int unsigned token_idx,
                                                 int unsigned seq_len, string phase);
  import "DPI-C" function int uscope_npu_context_ext(chandle w, chandle npu, shortint unsigned ctx,
                                                     int unsigned thread_id, string model_name,
                                                     string precision);
  import "DPI-C" function int uscope_npu_context_clear(chandle w, chandle npu,
                                                       shortint unsigned ctx);
  import "DPI-C" function int uscope_npu_cmd_enqueue(chandle w, chandle npu, shortint unsigned slot,
                                                     shortint unsigned ctx, int unsigned cmd_id,
                                                     string cmd_type, byte unsigned source,
                                                     int unsigned token, longint unsigned desc_addr,
                                                     int unsigned layer_id, int unsigned block_id,
                                                     string phase);
  import "DPI-C" function int uscope_npu_cmd_start(chandle w, chandle npu, shortint unsigned slot,
                                                   shortint unsigned ctx, int unsigned cmd_id);
  import "DPI-C" function int uscope_npu_cmd_end(chandle w, chandle npu, shortint unsigned slot,
                                                 shortint unsigned ctx, int unsigned cmd_id,
                                                 string status);
  import "DPI-C" function int uscope_npu_job_issue(chandle w, chandle npu, shortint unsigned ctx,
                                                   int unsigned job_id, int unsigned cmd_id,
                                                   string job_type, int unsigned tile_id,
                                                   int unsigned vec_chunk_id);
  import "DPI-C" function int uscope_npu_job_done(chandle w, chandle npu, shortint unsigned ctx,
                                                  int unsigned job_id, int unsigned cmd_id,
                                                  string job_type, int unsigned latency_cycles);
  import "DPI-C" function int uscope_npu_dma_start(chandle w, chandle npu, shortint unsigned ctx,
                                                   int unsigned tx_id, shortint unsigned channel,
                                                   string direction, longint unsigned src_addr,
                                                   longint unsigned dst_addr,
                                                   longint unsigned size_bytes,
                                                   int unsigned cmd_id, int unsigned job_id);
  import "DPI-C" function int uscope_npu_dma_end(chandle w, chandle npu, shortint unsigned ctx,
                                                 int unsigned tx_id, shortint unsigned channel,
                                                 int unsigned cmd_id, int unsigned job_id,
                                                 longint unsigned size_bytes);
  import "DPI-C" function int uscope_npu_te_start(chandle w, chandle npu, shortint unsigned engine,
                                                  shortint unsigned ctx, int unsigned job_id,
                                                  int unsigned cmd_id, int unsigned m,
                                                  int unsigned n, int unsigned k,
                                                  int unsigned tile_m, int unsigned tile_n,
                                                  int unsigned tile_k);
  import "DPI-C" function int uscope_npu_te_end(chandle w, chandle npu, shortint unsigned engine,
                                                shortint unsigned ctx, int unsigned job_id,
                                                int unsigned cmd_id, longint unsigned mac_count,
                                                int unsigned latency_cycles);
  import "DPI-C" function int uscope_npu_ve_start(chandle w, chandle npu, shortint unsigned engine,
                                                  shortint unsigned ctx, int unsigned job_id,
                                                  int unsigned cmd_id, string op_type,
                                                  int unsigned len, int unsigned batch);
  import "DPI-C" function int uscope_npu_ve_end(chandle w, chandle npu, shortint unsigned engine,
                                                shortint unsigned ctx, int unsigned job_id,
                                                int unsigned cmd_id, int unsigned latency_cycles);
  import "DPI-C" function int uscope_npu_sram_access(chandle w, chandle npu, shortint unsigned ctx,
                                                     longint unsigned addr,
                                                     shortint unsigned bank_id,
                                                     byte unsigned access_type, string by,
                                                     byte unsigned conflict, int unsigned cmd_id,
                                                     int unsigned job_id);
  import "DPI-C" function int uscope_npu_sram_conflict(chandle w, chandle npu,
                                                       shortint unsigned ctx,
                                                       shortint unsigned bank_id,
                                                       int unsigned num_requests,
                                                       int unsigned allowed,
                                                       string stalled_clients,
                                                       int unsigned cmd_id);
  import "DPI-C" function int uscope_npu_dram_tx_start(chandle w, chandle npu,
                                                       shortint unsigned ctx, int unsigned tx_id,
                                                       shortint unsigned channel,
                                                       longint unsigned size_bytes,
                                                       int unsigned cmd_id);
  import "DPI-C" function int uscope_npu_dram_tx_end(chandle w, chandle npu, shortint unsigned ctx,
                                                     int unsigned tx_id, shortint unsigned channel,
                                                     longint unsigned size_bytes);
  import "DPI-C" function int uscope_npu_noc_tx_start(chandle w, chandle npu,
                                                      shortint unsigned ctx, int unsigned tx_id,
                                                      shortint unsigned link_id,
                                                      longint unsigned size_bytes,
                                                      int unsigned cmd_id);
  import "DPI-C" function int uscope_npu_noc_tx_end(chandle w, chandle npu, shortint unsigned ctx,
                                                    int unsigned tx_id, shortint unsigned link_id,
                                                    longint unsigned size_bytes);
  import "DPI-C" function int uscope_npu_irq_emit(chandle w, chandle npu, shortint unsigned ctx,
                                                  int unsigned cmd_id, int unsigned token,
                                                  int unsigned irq_line);
  import "DPI-C" function int uscope_npu_token_complete(chandle w, chandle npu,
                                                        shortint unsigned ctx, int unsigned token,
                                                        int unsigned cmd_id, string status);
  import "DPI-C" function int uscope_npu_error(chandle w, chandle npu, shortint unsigned ctx,
                                               string component, string code, string msg,
                                               int unsigned cmd_id, int unsigned job_id);
  import "DPI-C" function int uscope_npu_warn(chandle w, chandle npu, shortint unsigned ctx,
                                              string component, string code, string msg,
                                              int unsigned cmd_id, int unsigned job_id);
  import "DPI-C" function int uscope_npu_counter_add(chandle w, chandle npu,
                                                     shortint unsigned counter,
                                                     longint unsigned delta);

  // ── Payload helpers (pure SV) ──

  // Store the low nbytes bytes of value at payload[offset], little-endian.
  // Returns offset + nbytes, so that calls chain field after field.
  function automatic int unsigned uscope_put(inout uscope_payload_t payload,
                                             input int unsigned offset,
                                             input longint unsigned value,
                                             input int unsigned nbytes);
    for (int unsigned i = 0; i < 8; i++) begin
      /* verilator lint_off BLKSEQ */
      if (i < nbytes && offset + i < USCOPE_PAYLOAD_BYTES) payload[offset + i] = value[8*i +: 8];
      /* verilator lint_on BLKSEQ */
    end
    return offset + nbytes;
  endfunction

endpackage
