// tb_trace_pkg: status checking for the testbench's tracing hooks (compiled into traced builds
// only, with uscope_pkg).
//
// Every per-cycle call of uscope_pkg returns a status. Argument errors of the protocol helpers
// (an entity id past the catalog, an enum value out of range) are not sticky in the writer, so
// ignoring the status would lose them silently; writer errors are sticky and also come back
// from uscope_writer_close. The hooks pass each status to check(), which hands failures to the
// harness (sim_main.cpp counts them, prints the first few with uscope_last_error(), and fails
// the run).
package tb_trace_pkg;
  import "DPI-C" function void tb_trace_error(input int status);

  function automatic void check(input int status);
    if (status != 0) tb_trace_error(status);
  endfunction
endpackage
