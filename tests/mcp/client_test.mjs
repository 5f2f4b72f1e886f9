// The official MCP TypeScript SDK's client against the uscope MCP server, as an
// assistant would run it: spawned over stdio (`uscope mcp --trace FILE`, and
// the installed `uscope-mcp --trace FILE`), initialized, its tools listed,
// every tool called, and each answer compared field by field with what the C
// API says for the same question (expect_main.cpp prints that).
//
//   node client_test.mjs USCOPE USCOPE_MCP EXPECTED.json README.md
//
// The second server is started from the README's own mcpServers entry (its
// "Use it from an AI assistant" section), with the built program for
// "uscope-mcp" and the test's trace for /path/to/trace.uscope, so that the
// snippet users copy is the one tested.
//
// Prints "mcp sdk client: OK" when every check passed; exits 1 on the first
// failure, with what differed.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [uscope, uscopeMcp, expectedPath, readmePath] = process.argv.slice(2);
if (!uscope || !uscopeMcp || !expectedPath || !readmePath) {
  console.error("usage: node client_test.mjs USCOPE USCOPE_MCP EXPECTED.json README.md");
  process.exit(2);
}
const want = JSON.parse(readFileSync(expectedPath, "utf8"));
let checks = 0;
const eq = (got, expected, what) => {
  assert.deepStrictEqual(got, expected, what);
  ++checks;
};

async function connect(command, args) {
  const client = new Client({ name: "uscope-mcp-sdk-test", version: "1.0.0" });
  const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
  await client.connect(transport);  // initialize + notifications/initialized
  return client;
}

// A successful tool call: its answer, which is both the text and structuredContent.
async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${JSON.stringify(r.content)}`);
  assert.equal(r.content.length, 1);
  assert.equal(r.content[0].type, "text");
  const answer = JSON.parse(r.content[0].text);
  eq(r.structuredContent, answer, `${name}: structuredContent is the text's object`);
  return answer;
}
async function callFails(client, name, args, says) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} should fail`);
  assert.match(r.content[0].text, says, `${name} ${JSON.stringify(args)}`);
  ++checks;
}

const pick = (o, keys) => Object.fromEntries(keys.map((k) => [k, o[k]]));

async function main() {
  // ── uscope mcp --trace cpu.uscope ──
  const client = await connect(uscope, ["mcp", "--trace", want.cpu_trace]);
  const info = client.getServerVersion();
  eq(info.name, "uscope-mcp", "serverInfo.name");
  assert.match(info.version, /^\d+\.\d+\.\d+/);
  assert.ok(client.getServerCapabilities().tools, "capabilities.tools");
  await client.ping();

  const { tools } = await client.listTools();
  eq(tools.map((t) => t.name).sort(),
     ["analyze_performance", "buffer_occupancy", "counter_values", "entity_timeline", "events_in_range",
      "file_info", "find_stalls", "noc_latency", "npu_summary", "state_at_cycle"], "tools/list names");
  for (const t of tools) {
    eq(t.inputSchema.type, "object", `${t.name} inputSchema`);
    for (const r of t.inputSchema.required ?? [])
      assert.ok(t.inputSchema.properties[r], `${t.name}: required ${r} is described`);
    assert.ok(t.description.length > 20, `${t.name} description`);
  }

  // file_info
  const fi = await call(client, "file_info", {});
  const wfi = want.file_info;
  eq(pick(fi, ["version", "segment_count", "total_instructions", "max_cycle", "period_ps", "stage_names",
               "counter_names"]),
     pick(wfi, ["version", "segment_count", "total_instructions", "max_cycle", "period_ps", "stage_names",
                "counter_names"]), "file_info");
  eq(fi.buffers.map((b) => pick(b, ["name", "capacity", "storage_id"])), wfi.buffers, "file_info.buffers");
  eq(fi.metadata.length, wfi.num_metadata, "file_info.metadata");
  eq(fi.segments.length, wfi.segment_count, "file_info.segments");
  assert.ok(wfi.segment_count > 1, "the trace has several segments");

  // state_at_cycle and buffer_occupancy
  const slotsOf = (b) => b.slots.map((s) => pick(s, ["slot", "fields"]));
  for (const [tool, args] of [["state_at_cycle", { cycle: want.state_at_cycle.cycle }],
                              ["buffer_occupancy", { buffer: "rob", cycle: want.buffer_occupancy.cycle }]]) {
    const got = await call(client, tool, args);
    const w = want[tool];
    eq(got.cycle, w.cycle, `${tool}.cycle`);
    eq(got.buffers.length, w.buffers.length, `${tool}.buffers`);
    got.buffers.forEach((b, i) => {
      eq(pick(b, ["name", "capacity", "occupied", "fill_percent"]),
         pick(w.buffers[i], ["name", "capacity", "occupied", "fill_percent"]), `${tool} ${b.name}`);
      eq(slotsOf(b), w.buffers[i].slots, `${tool} ${b.name} slots`);
    });
  }

  // entity_timeline
  const et = await call(client, "entity_timeline", { entity_id: want.entity_timeline.entity_id });
  eq(et.entity_id, want.entity_timeline.entity_id, "entity_timeline.entity_id");
  eq(et.results.length, want.entity_timeline.results.length, "entity_timeline.results");
  eq(et.truncated, want.entity_timeline.total > 100, "entity_timeline.truncated");
  et.results.forEach((r, i) => {
    const w = want.entity_timeline.results[i];
    eq(pick(r, ["entity_id", "sim_id", "pc", "disasm", "first_cycle", "last_cycle", "retire_status", "tooltip"]),
       pick(w, ["entity_id", "sim_id", "pc", "disasm", "first_cycle", "last_cycle", "retire_status", "tooltip"]),
       `entity_timeline[${i}]`);
    eq(r.total_latency, w.last_cycle - w.first_cycle, `entity_timeline[${i}].total_latency`);
    eq(r.stages.map((s) => pick(s, ["name", "start_cycle", "end_cycle"])), w.stages, `entity_timeline[${i}].stages`);
    r.stages.forEach((s) => eq(s.duration, s.end_cycle - s.start_cycle, "stage duration"));
  });
  await callFails(client, "entity_timeline", { entity_id: 1 << 30 }, /entity/);

  // counter_values: 501 cycles, every one sampled (the step is 1 up to 1000 cycles)
  const wc = want.counter_values;
  const cv = await call(client, "counter_values",
                        { counter: wc.counter, start_cycle: wc.start_cycle, end_cycle: wc.end_cycle });
  eq(cv.counters.length, 1, "counter_values: the exact name only");
  const c0 = cv.counters[0];
  eq(c0.name, wc.counter, "counter_values.name");
  eq(c0.values.map((v) => v.cycle), wc.values.map((_, i) => wc.start_cycle + i), "counter_values cycles");
  eq(c0.values.map((v) => v.value), wc.values, "counter_values values");
  eq(c0.start_value, wc.values[0], "counter_values.start_value");
  eq(c0.end_value, wc.values.at(-1), "counter_values.end_value");
  eq(c0.delta, wc.values.at(-1) - wc.values[0], "counter_values.delta");
  assert.ok(c0.delta > 0, "instructions retired in the range");
  await callFails(client, "counter_values", { counter: "nope", start_cycle: 0, end_cycle: 5 }, /Available: .*committed_insns/);

  // analyze_performance
  const wa = want.analyze_performance;
  const ap = await call(client, "analyze_performance", { start_cycle: wa.start_cycle, end_cycle: wa.end_cycle });
  eq(pick(ap, ["start_cycle", "end_cycle", "range_cycles", "ipc", "commit_ipc"]),
     pick(wa, ["start_cycle", "end_cycle", "range_cycles", "ipc", "commit_ipc"]), "analyze_performance");
  eq(ap.instructions, pick(wa, ["total", "retired", "flushed", "in_flight", "flush_rate", "retired_in_range"]),
     "analyze_performance.instructions");
  eq(ap.counter_summaries.map((c) => c.delta), wa.counter_deltas, "analyze_performance.counter_summaries");
  eq(ap.buffer_snapshots.map((b) => b.samples.map((s) => s.occupied)), wa.buffer_occupied,
     "analyze_performance.buffer_snapshots");
  eq(ap.stage_latencies, wa.stage_latencies, "analyze_performance.stage_latencies");
  assert.ok(ap.instructions.flushed > 0 && ap.instructions.retired > 0, "the range has retired and flushed instructions");
  await callFails(client, "analyze_performance", { start_cycle: 9, end_cycle: 9 }, /less than/);

  // events_in_range: the first `limit` events, by name; truncated since there are more
  const we = want.events_in_range;
  const ev = await call(client, "events_in_range",
                        { start_cycle: we.start_cycle, end_cycle: we.end_cycle, limit: we.limit });
  eq(ev.events.map((e) => ({ cycle: e.cycle, ...e.event })), we.events, "events_in_range.events");
  eq(ev.truncated, we.total > we.limit, "events_in_range.truncated");
  if (ev.truncated) {
    eq(ev.next_offset, we.limit, "events_in_range.next_offset");
    const rest = await call(client, "events_in_range",
                            { start_cycle: we.start_cycle, end_cycle: we.end_cycle, limit: 100000, offset: ev.next_offset });
    eq(rest.events.length, we.total - we.limit, "events_in_range: the next page has the rest");
    eq(rest.truncated, false, "events_in_range: the last page");
  }

  // find_stalls
  const ws = want.find_stalls;
  const fs = await call(client, "find_stalls", { start_cycle: ws.start_cycle, end_cycle: ws.end_cycle });
  eq(fs.stall_reasons.map((r) => pick(r, ["name", "count"])), ws.stall_reasons, "find_stalls.stall_reasons");
  eq(fs.stall_events, ws.stall_reasons.reduce((a, r) => a + r.count, 0), "find_stalls.stall_events");
  eq(Object.fromEntries(fs.full_buffers.map((b) => [b.name, b.full_cycles])), ws.full_cycles, "find_stalls.full_buffers");
  eq(fs.truncated, false, "find_stalls: the whole range scanned");
  for (const b of fs.full_buffers) {
    eq(b.intervals.reduce((a, r) => a + r.length, 0), b.full_cycles, `find_stalls ${b.name}: runs add up`);
    b.intervals.forEach((r) => eq(r.length, r.end_cycle - r.start_cycle + 1, "find_stalls run length"));
  }
  assert.ok(Object.keys(ws.full_cycles).length > 0, "the ROB fills up in the range");

  // npu_summary on a cpu trace, an unknown tool: tool errors, not protocol errors
  await callFails(client, "npu_summary", {}, /this trace has no npu protocol scope/);
  await callFails(client, "noc_latency", {}, /this trace has no noc protocol scope/);
  await callFails(client, "no_such_tool", {}, /unknown tool/);
  await client.close();

  // ── uscope-mcp --trace npu.uscope: the installed program, as the README registers it ──
  const readme = readFileSync(readmePath, "utf8");
  const section = readme.split("## Use it from an AI assistant")[1]?.split("\n## ")[0];
  assert.ok(section, "README.md has the section \"Use it from an AI assistant\"");
  const snippet = /```json\n([\s\S]*?)\n```/.exec(section);
  assert.ok(snippet, "the section has a ```json block");
  const entry = JSON.parse(snippet[1]).mcpServers?.uscope;
  eq(entry, { command: "uscope-mcp", args: ["--trace", "/path/to/trace.uscope"] }, "README mcpServers entry");
  const npu = await connect(uscopeMcp, entry.args.map((a) => (a === "/path/to/trace.uscope" ? want.npu_trace : a)));
  eq(npu.getServerVersion().name, "uscope-mcp", "uscope-mcp serverInfo.name");
  const ns = await call(npu, "npu_summary", {});
  // npu-report's keys as it has them, then the analysis's range, engines and command latency.
  eq(pick(ns, Object.keys(want.npu_summary)), want.npu_summary, "npu_summary is the npu report");
  const npuFigures = (got, w, what) => {
    eq(got.range.start_cycle, w.range.start_cycle, `${what}.range.start_cycle`);
    eq(got.range.end_cycle, w.range.end_cycle, `${what}.range.end_cycle`);
    eq(got.range.range_cycles, w.range.range_cycles, `${what}.range.range_cycles`);
    eq(got.engines.map((e) => pick(e, ["name", "jobs", "busy_cycles", "utilization"])), w.engines, `${what}.engines`);
    eq(got.command_latency, w.command_latency, `${what}.command_latency`);
    eq(pick(got, Object.keys(w.report)), w.report, `${what}: the report's keys over the range`);
  };
  npuFigures(ns, want.npu_analysis, "npu_summary");
  assert.ok(ns.command_latency.count > 0, "the npu trace has commands");
  const wr = want.npu_range;
  const nr = await call(npu, "npu_summary", { start_cycle: wr.start_cycle, end_cycle: wr.end_cycle });
  npuFigures(nr, wr.analysis, "npu_summary over a range");
  assert.ok(nr.command_latency.count < ns.command_latency.count, "the range has fewer commands");
  await callFails(npu, "noc_latency", {}, /this trace has no noc protocol scope/);
  await callFails(npu, "state_at_cycle", { cycle: 0 }, /this trace has no cpu protocol scope/);
  const nfi = await call(npu, "file_info", {});
  eq(nfi.has_cpu_scope, false, "file_info on a trace without a cpu scope");
  await npu.close();

  // ── uscope-mcp --trace noc.uscope: noc_latency ──
  const noc = await connect(uscopeMcp, ["--trace", want.noc_trace]);
  const nocFigures = (got, w, what) => {
    eq(pick(got, ["start_cycle", "end_cycle", "max_cycle"]), pick(w, ["start_cycle", "end_cycle", "max_cycle"]), what);
    eq(pick(got.counts, ["completed", "unknown_issue", "retries", "timeouts", "credit_stalls", "in_flight"]),
       pick(w, ["completed", "unknown_issue", "retries", "timeouts", "credit_stalls", "in_flight"]), `${what}.counts`);
    eq(Object.values(got.retries_by_reason), w.retries_by_reason.slice(0, Object.keys(got.retries_by_reason).length),
       `${what}.retries_by_reason`);
    eq(got.hop_latency, w.hop_latency, `${what}.hop_latency`);
    eq(got.end_to_end_latency, w.end_to_end_latency, `${what}.end_to_end_latency`);
    eq(got.ports.map((p) => pick(p, ["port", "grants", "consumes", "credits_granted", "credits_consumed"])), w.ports,
       `${what}.ports`);
    eq(got.total_pairs, w.pairs.length, `${what}.total_pairs`);
  };
  const pairRow = (p) => ({ ...pick(p, ["src_port", "dst_port", "completed", "retries"]), latency: p.latency });
  const wn = want.noc_latency;
  const nl = await call(noc, "noc_latency", {});
  nocFigures(nl, wn, "noc_latency");
  eq(nl.pairs.map(pairRow), wn.pairs, "noc_latency.pairs");
  eq(nl.truncated, false, "noc_latency: every pair");
  assert.ok(wn.completed > 100 && wn.pairs.length > 3 && wn.retries > 0 && wn.timeouts > 0, "the noc trace is busy");
  // The pair table a page at a time.
  const pages = [];
  for (let offset = 0; ; ) {
    const pg = await call(noc, "noc_latency", { limit: 5, offset });
    pages.push(...pg.pairs.map(pairRow));
    if (!pg.truncated) break;
    eq(pg.next_offset, offset + 5, "noc_latency.next_offset");
    offset = pg.next_offset;
  }
  eq(pages, wn.pairs, "noc_latency pages");
  const wnr = want.noc_range;
  const nlr = await call(noc, "noc_latency", { start_cycle: wnr.start_cycle, end_cycle: wnr.end_cycle });
  nocFigures(nlr, wnr.analysis, "noc_latency over a range");
  eq(nlr.pairs.map(pairRow), wnr.analysis.pairs, "noc_latency over a range: pairs");
  await callFails(noc, "npu_summary", {}, /this trace has no npu protocol scope/);
  await callFails(noc, "noc_latency", { start_cycle: 9, end_cycle: 3 }, /at most/);
  await noc.close();

  console.log(`mcp sdk client: ${checks} checks passed`);
  console.log("mcp sdk client: OK");
}

main().catch((e) => {
  console.error("mcp sdk client: FAILED:", e?.stack ?? e);
  process.exit(1);
});
