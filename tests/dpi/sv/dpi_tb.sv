// End-to-end test of uscope_pkg under Verilator (tests/dpi/sim_main.cpp).
// +mode=sv    the schema is built here with uscope_sv_schema_* and a cpu
//             protocol scope; sim_main begins and ends each frame;
// +mode=json  the schema comes from +json=<file>; sim_main frames;
// +mode=cycle as sv, but this module frames with uscope_sv_cycle and
//             sim_main never calls begin/end.
// Every hook counts failing calls into `errors`; sim_main reads the trace back.
module dpi_tb (
    input  logic clk,
    output int   errors
);
  import uscope_pkg::*;

  string  mode, trace_path, json_path;
  chandle w, schema, cpu;
  int     rob, regs, ev_stage, ev_done;
  int unsigned cyc;
  uscope_payload_t pl;
  int unsigned off;

  function automatic void check(input int status, input string what);
    if (status < 0) begin
      errors = errors + 1;
      $display("dpi_tb: %s failed: %0d %s | %s", what, status, uscope_dpi_last_error(),
               uscope_writer_error(w));
    end
  endfunction

  function automatic int need(input int id, input string what);
    check(id, what);
    return id;
  endfunction

  initial begin
    errors = 0;
    cyc = 0;
    if (!$value$plusargs("mode=%s", mode)) mode = "sv";
    if (!$value$plusargs("trace=%s", trace_path)) trace_path = "dpi_tb.uscope";
    if (mode == "json") begin
      if (!$value$plusargs("json=%s", json_path)) json_path = "example_schema.json";
      w = uscope_open_json(trace_path, json_path);
    end else begin
      // The schema of tests/dpi/data/example_schema.json, call for call, plus a cpu.
      schema = uscope_sv_schema_create();
      check(uscope_sv_schema_dut_property(schema, "dut_name", "demo_core"), "dut");
      check(uscope_sv_schema_dut_property(schema, "cpu.isa", "RV32I"), "dut");
      check(uscope_sv_schema_dut_property(schema, "cpu.fetch_width", "1"), "dut");
      void'(need(uscope_sv_schema_clock(schema, "core_clk", 1000), "clock"));
      void'(need(uscope_sv_schema_clock(schema, "npu_clk", 1250), "clock"));
      void'(need(uscope_sv_schema_scope(schema, "root", USCOPE_SV_ROOT, "", USCOPE_SV_INHERIT), "root"));
      void'(need(uscope_sv_schema_scope(schema, "core0", 0, "cpu", 0), "core0"));
      void'(need(uscope_sv_schema_scope(schema, "npu0", 0, "", 1), "npu0"));
      void'(need(uscope_sv_schema_enum(schema, "pipeline_stage", "IF,ID,EX,MEM,WB"), "enum"));
      void'(need(uscope_sv_schema_enum(schema, "npu_op", "DMA_IN,DMA_OUT,MATMUL,SOFTMAX"), "enum"));
      void'(need(uscope_sv_schema_storage(schema, "rob", 1, 16, USCOPE_SF_SPARSE | USCOPE_SF_BUFFER,
          "entity_id:u32,pc:u64,stage:enum(pipeline_stage),done:bool",
          "head:u16:head_ptr(0),tail:u16:tail_ptr(0),count:u16"), "rob"));
      void'(need(uscope_sv_schema_storage(schema, "regs", 1, 32, 0, "value:u32,last_writer:i32", ""),
                 "regs"));
      void'(need(uscope_sv_schema_storage(schema, "npu_queue", 2, 4, USCOPE_SF_SPARSE,
          "op:enum(npu_op),token:u32,text:string", "depth:u8"), "npu_queue"));
      void'(need(uscope_sv_schema_event(schema, "stage_transition", 1,
          "entity_id:u32,stage:enum(pipeline_stage)"), "event"));
      void'(need(uscope_sv_schema_event(schema, "npu_done", 2, "token:u32,cycles:u16,ok:bool"), "event"));
      void'(need(uscope_sv_schema_event(schema, "tick", 0, ""), "event"));
      void'(need(uscope_sv_schema_summary(schema, "ipc_x1000", "u32", 1), "summary"));
      // Named arguments and the defaults of the optional ones.
      cpu = uscope_sv_cpu_declare(.schema(schema), .scope_name("cpu0"), .parent(0), .clock(0),
                                  .isa("RV32I"), .stages("IF,ID,EX,MEM,WB"), .max_entities(8),
                                  .buffers("rob:4"), .vendor("tb"));
      if (cpu == null) check(-1, "uscope_sv_cpu_declare");
      w = uscope_open_opts(trace_path, schema, "checkpoint_interval_ps=100000");
      check(uscope_sv_schema_free(schema), "schema_free");
      uscope_dpi_register("cpu0", cpu);
    end
    if (w == null) check(uscope_dpi_last_status(), {"open ", trace_path});
    uscope_dpi_register("writer", w);
    // In the sv mode the cpu0 protocol declares a "rob" and a "stage_transition" of its own, so
    // the plain names are ambiguous (uscope_sv_find returns USCOPE_ERR_AMBIGUOUS): qualify them.
    if (mode != "json" && uscope_sv_find(w, "event", "stage_transition") != USCOPE_ERR_AMBIGUOUS)
      check(-1, "find stage_transition: expected USCOPE_ERR_AMBIGUOUS (core0 and cpu0 have one)");
    rob = need(uscope_sv_find(w, "storage", "core0.rob"), "find rob");
    regs = need(uscope_sv_find(w, "storage", "regs"), "find regs");
    ev_stage = need(uscope_sv_find(w, "event", "core0.stage_transition"), "find stage_transition");
    ev_done = need(uscope_sv_find(w, "event", "npu_done"), "find npu_done");
  end

  always_ff @(posedge clk) begin
    if (w != null) begin
      if (mode == "cycle") check(uscope_sv_cycle(w, 64'(cyc) * 1000), "sv_cycle");
      check(uscope_slot_set(w, 16'(rob), 16'(cyc % 16), 0, 64'(cyc)), "slot_set");
      check(uscope_slot_set(w, 16'(rob), 16'(cyc % 16), 1, 64'h1000 + 64'(cyc) * 4), "slot_set");
      check(uscope_slot_set(w, 16'(rob), 16'(cyc % 16), 2, 64'(cyc % 5)), "slot_set");
      check(uscope_prop_set(w, 16'(rob), 0, 64'(cyc % 16)), "prop_set");
      check(uscope_slot_add(w, 16'(regs), 16'(cyc % 32), 0, 3), "slot_add");
      off = uscope_put(pl, 0, 64'(cyc), 4);
      off = uscope_put(pl, off, 64'(cyc % 5), 1);
      check(uscope_event_raw(w, 16'(ev_stage), pl, off), "event stage_transition");
      if (cyc % 4 == 0) begin
        off = uscope_put(pl, 0, 64'(cyc / 4), 4);
        off = uscope_put(pl, off, 64'(cyc), 2);
        off = uscope_put(pl, off, 1, 1);
        check(uscope_event_raw(w, 16'(ev_done), pl, off), "event npu_done");
      end
      if (cpu != null) begin
        check(uscope_cpu_fetch(w, cpu, cyc % 8, 64'h8000_0000 + 64'(cyc) * 4, 32'h13), "cpu_fetch");
        check(uscope_cpu_buffer_insert(w, cpu, 0, 16'(cyc % 4), cyc % 8), "cpu_buffer_insert");
        if (cyc >= 1) check(uscope_cpu_stage_transition(w, cpu, (cyc - 1) % 8, 8'd2), "cpu_stage");
        if (cyc >= 3) check(uscope_cpu_retire(w, cpu, (cyc - 3) % 8), "cpu_retire");
      end
    end
    cyc <= cyc + 1;
  end

  final begin
    if (w != null) check(uscope_close(w), "uscope_close");
    if (cpu != null) uscope_cpu_free(cpu);
  end
endmodule
