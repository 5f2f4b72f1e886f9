// Writes an NPU JSON-Lines trace (../shared/specs/npu-trace-jsonl.md) for the browser test:
// 24 commands over four LLM phases and two layers, each with a DMA load (and its DRAM and NoC
// transfers), a TE job, a VE job, SRAM accesses with a conflict now and then, an IRQ and a token
// completion; one ERROR and one WARN. Deterministic: the same file every run.
//
//   node make_npu_jsonl.mjs OUT.jsonl
import { writeFileSync } from 'node:fs';

const phases = ['QKV_PROJ', 'ATTENTION_SCORE', 'MLP', 'LN1'];
const events = [];
const ev = (t, type, fields) => events.push({ event_type: type, t_cycle: t, ...fields });
let t = 10;
for (let c = 0; c < 24; ++c) {
  const phase = phases[c % phases.length], layer = Math.floor(c / 12), job = 1000 + c, tx = 500 + c;
  const ctx = { phase, layer_id: layer, model_name: 'llama2_7b', tenant_id: c % 2, head_id: c % 4 };
  ev(t, 'CMD_ENQUEUE', { cmd_id: c, cmd_type: 'MATMUL', source: 'ISA', token: c, desc_addr: 4096 + 64 * c,
                         block_id: layer, ...ctx });
  const s = t + 4 + (c % 3);
  ev(s, 'CMD_START', { cmd_id: c, core_id: 0 });
  const size = 16384 * (1 + (c % 4));
  ev(s + 1, 'DMA_START', { tx_id: tx, channel: c % 2, direction: 'DRAM_TO_SRAM', src_addr: 0x10000000 + size * c,
                           dst_addr: 4096, size_bytes: size, cmd_id: c, job_id: job, phase });
  ev(s + 2, 'NOC_TX_START', { tx_id: tx, link_id: c % 2, size_bytes: size, cmd_id: c });
  ev(s + 3, 'DRAM_TX_START', { tx_id: tx, channel: c % 2, size_bytes: size, cmd_id: c });
  ev(s + 15, 'DRAM_TX_END', { tx_id: tx, channel: c % 2 });
  ev(s + 16, 'NOC_TX_END', { tx_id: tx, link_id: c % 2 });
  ev(s + 17, 'DMA_END', { tx_id: tx, channel: c % 2, cmd_id: c, job_id: job });
  const te0 = s + 18, te1 = te0 + 20 + 3 * (c % 5);
  ev(te0, 'TE_START', { job_id: job, cmd_id: c, m: 128, n: 128, k: 64, tile_m: 32, tile_n: 32, tile_k: 32, phase });
  ev(te0 + 2, 'SRAM_ACCESS', { addr: 8192 + c, bank_id: c % 4, access_type: 'READ', by: 'TE', conflict: c % 5 === 0,
                               cmd_id: c, job_id: job });
  if (c % 5 === 0)
    ev(te0 + 3, 'SRAM_CONFLICT', { bank_id: c % 4, num_requests: 3, allowed: 1, stalled_clients: ['VE', 'DMA'],
                                   cmd_id: c });
  ev(te1, 'TE_END', { job_id: job, cmd_id: c, mac_count: 1048576, latency_cycles: te1 - te0 });
  const ve0 = te1 + 1, ve1 = ve0 + 8 + (c % 3);
  ev(ve0, 'VE_START', { job_id: job + 100, cmd_id: c, op_type: 'SOFTMAX', len: 4096, batch: 1, phase });
  ev(ve1, 'VE_END', { job_id: job + 100, cmd_id: c, latency_cycles: ve1 - ve0 });
  ev(ve1 + 1, 'CMD_END', { cmd_id: c, status: 'OK', core_id: 0 });
  ev(ve1 + 2, 'IRQ_EMIT', { cmd_id: c, token: c, irq_line: 3 });
  ev(ve1 + 3, 'TOKEN_COMPLETE', { token: c, cmd_id: c, status: 'OK' });
  if (c === 7) ev(ve1 + 4, 'WARN', { component: 'DMA', code: 'SLOW_TX', msg: 'transfer above its budget', cmd_id: c, job_id: job });
  if (c === 19) ev(ve1 + 4, 'ERROR', { component: 'VE', code: 'NAN', msg: 'NaN in softmax output', cmd_id: c, job_id: job + 100 });
  t += 30;  // commands overlap: the next one is queued while this one runs
}
events.sort((a, b) => a.t_cycle - b.t_cycle);
writeFileSync(process.argv[2], events.map((e) => JSON.stringify(e)).join('\n') + '\n');
