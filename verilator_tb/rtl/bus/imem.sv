// imem: the instruction RAM on the core's private fetch port (Harvard).
//
// The core presents the next PC on `addr` and registers `rdata` on the clock edge into its F
// stage, i.e. this is a synchronous-read RAM whose output register is the core's F register:
// one cycle, no wait states. Out-of-range fetches read 0, which the core decodes as illegal.
// Loaded like bus_ram, from <fw><HEX_SUFFIX>.
module imem #(
  parameter int    BYTES      = 64 * 1024,
  parameter string HEX_SUFFIX = ".imem.hex"
) (
  input  logic [31:0] addr,
  output logic [31:0] rdata
);
  localparam int WORDS = BYTES / 4;
  localparam int AW    = $clog2(WORDS);

  logic [31:0] mem [WORDS];

  `include "fw_default.svh"
  initial begin
    string fw;
    if (!$value$plusargs("fw=%s", fw)) fw = `FW_DEFAULT;
    for (int i = 0; i < WORDS; i++) mem[i] = 32'd0;
    $readmemh({fw, HEX_SUFFIX}, mem);
  end

  assign rdata = (addr < BYTES) ? mem[addr[AW+1:2]] : 32'd0;
endmodule
