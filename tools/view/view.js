// uscope view: draws the page's data (the JSON of tools/view_page.cpp) on canvases.
// Vanilla JavaScript, no build step. Every time axis shares one viewport in ps, so the CPU
// and NPU views (which may run on different clocks) stay aligned; each axis is labelled in
// its own clock's cycles. Keys: + / - zoom, arrows pan, 0 resets (docs/view.md).
(function () {
  'use strict';
  const dataEl = document.getElementById('uscope-data');
  const MODE = dataEl.dataset.mode;  // "static" or "serve"
  let D = JSON.parse(dataEl.textContent);
  const OVERVIEW = D.cpu ? D.cpu.overview : null;  // the whole trace's; window answers lack it
  // What the page drew, for people and for the browser test (tests/browser/view_test.mjs).
  const stats = { views: {}, npu: {}, cpu: {} };
  const view = { x0: 0, x1: 1 };  // the viewport, ps
  const redraws = [];             // every time-axis view's draw function

  const STAGE_COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7',
                        '#9c755f', '#bab0ac'];
  const RES_COLORS = { 'cmd queue': '#bab0ac', TE: '#4e79a7', VE: '#59a14f', DMA: '#f28e2b', DRAM: '#b07aa1',
                       NoC: '#76b7b2', CMD: '#1f6fb2' };
  const MARK_COLORS = { irq_emit: '#4e79a7', token_complete: '#59a14f', error: '#d62728', warn: '#e8a33d' };

  // ── small helpers ──────────────────────────────────────────────────────
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v; else if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k != null) e.append(k);
    return e;
  }
  const fmt = (v) => typeof v === 'number' ? (Number.isInteger(v) ? v.toLocaleString('en-US')
                                                                    : v.toLocaleString('en-US', { maximumFractionDigits: 3 }))
                                           : (v == null ? '–' : String(v));
  function unit(periodPs) {
    if (periodPs % 1000000 === 0) return (periodPs / 1000000) + ' µs';
    if (periodPs % 1000 === 0) return (periodPs / 1000) + ' ns';
    return periodPs + ' ps';
  }
  function table(headers, rows) {
    const t = el('table', { class: 'data' });
    t.append(el('tr', {}, ...headers.map((h) => el('th', { text: h }))));
    for (const r of rows) t.append(el('tr', {}, ...r.map((c) => el('td', { text: fmt(c) }))));
    return t;
  }
  function legend(items) {
    return el('div', { class: 'legend' }, ...items.map(([name, color]) =>
      el('span', {}, el('i', { style: 'background:' + color }), name)));
  }
  function section(id, title, hint) {
    const s = el('section', { class: 'view', id: 'view-' + id });
    s.append(el('h2', { text: title }));
    if (hint) s.append(el('div', { class: 'hint', text: hint }));
    document.getElementById('views').append(s);
    return s;
  }
  const tip = document.getElementById('tooltip');
  function showTip(ev, text) {
    if (!text) { tip.hidden = true; return; }
    tip.textContent = text;
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 4) + 'px';
    tip.style.top = (ev.clientY + 14) + 'px';
  }

  // A canvas that fills its section's width, redrawn on resize and zoom. draw(ctx, w, h)
  // returns the number of marks it drew and may register hit boxes through hits.push.
  function canvasView(parent, name, height, draw, timeAxis) {
    const c = el('canvas', { tabindex: '0', 'data-view': name });
    parent.append(c);
    const hits = [];
    function redraw() {
      const dpr = window.devicePixelRatio || 1;
      const w = Math.max(300, c.clientWidth || parent.clientWidth || 900);
      const h = typeof height === 'function' ? height() : height;
      c.style.height = h + 'px';
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
      const ctx = c.getContext('2d');
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, w, h);
      ctx.font = '11px system-ui, sans-serif';
      hits.length = 0;
      const marks = draw(ctx, w, h, hits);
      stats.views[name] = { marks, width: w, height: h };
      c.dataset.marks = String(marks);
    }
    c.addEventListener('mousemove', (ev) => {
      const r = c.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      let found = null;
      for (let i = hits.length - 1; i >= 0; --i) {
        const b = hits[i];
        if (x >= b.x && x <= b.x + Math.max(b.w, 3) && y >= b.y && y <= b.y + b.h) { found = b; break; }
      }
      showTip(ev, found ? found.text : null);
    });
    c.addEventListener('mouseleave', () => showTip(null, null));
    if (timeAxis) redraws.push(redraw);
    else window.addEventListener('resize', redraw);
    redraw();
    return { canvas: c, redraw };
  }

  // x of a time (ps) in a plot area [left, left + width).
  const xOf = (ps, left, width) => left + (ps - view.x0) / (view.x1 - view.x0) * width;
  // A time axis at the top of a plot area, in cycles of a clock of periodPs.
  // range: the [x0, x1] in ps the plot shows (default: the shared viewport).
  function timeAxis(ctx, left, width, top, periodPs, label, range) {
    const r = range || view;
    ctx.strokeStyle = '#d5dbe0';
    ctx.fillStyle = '#5b6670';
    const name = label + ' cycles (1 cycle = ' + unit(periodPs) + ')';
    ctx.fillText(name, 4, top + 10);
    const free = 4 + ctx.measureText(name).width + 6;  // tick labels start past the name
    ctx.beginPath();
    ctx.moveTo(left, top + 16.5);
    ctx.lineTo(left + width, top + 16.5);
    ctx.stroke();
    const c0 = r.x0 / periodPs, c1 = r.x1 / periodPs, span = Math.max(1, c1 - c0);
    let step = Math.pow(10, Math.floor(Math.log10(span / 8)));
    if (span / step > 16) step *= 5; else if (span / step > 8) step *= 2;
    step = Math.max(1, step);
    for (let c = Math.ceil(c0 / step) * step; c <= c1; c += step) {
      const x = left + (c * periodPs - r.x0) / (r.x1 - r.x0) * width;
      ctx.fillRect(x, top + 12, 1, 5);
      if (x >= free) ctx.fillText(fmt(c), x + 2, top + 10);
    }
  }

  // ── header ─────────────────────────────────────────────────────────────
  function header() {
    const h = document.getElementById('header');
    h.textContent = '';
    const tr = D.trace, w = D.window;
    h.append(el('h1', { text: 'µScope view — ' + D.file }));
    h.append(el('div', { class: 'meta', text: 'format ' + tr.format + (tr.complete ? '' : ' (incomplete)') + ' · ' +
      fmt(tr.segments) + ' segments · ' + fmt(tr.file_bytes) + ' bytes · last time ' + fmt(tr.last_time_ps) +
      ' ps · scopes: ' + tr.scopes.map((s) => s.name + (s.protocol ? ' (' + s.protocol + ')' : '')).join(', ') +
      ' · clocks: ' + tr.clocks.map((c) => c.name + ' ' + unit(c.period_ps)).join(', ') + ' · ' + D.generator }));
    h.append(el('div', { class: 'meta', id: 'window-text', text: 'window: cycles ' + fmt(w.start) + ' – ' +
      fmt(w.end) + ' of ' + fmt(D.clock.max_cycle) + ' (' + D.clock.scope + ' clock, 1 cycle = ' +
      unit(D.clock.period_ps) + ')' + (w.busiest ? ', the busiest ' + fmt(w.end - w.start + 1) + ' cycles' : '') }));
    // Links that re-run the view over another range: the server answers them; a static page
    // gives the command line that makes that page.
    const size = w.end - w.start + 1, max = D.clock.max_cycle;
    const ranges = [['previous window', Math.max(0, w.start - size), Math.max(0, w.start - size) + size - 1],
                    ['next window', Math.min(max, w.end + 1), Math.min(max, w.end + size)],
                    ['first 10,000 cycles', 0, Math.min(max, 9999)]];
    const links = el('div', { class: 'controls' }, 'ranges:');
    for (const [name, a, b] of ranges) links.append(el('a', { href: '#range=' + a + ':' + b, text: name }));
    const ia = el('input', { id: 'range-a', value: String(w.start), 'aria-label': 'range start' });
    const ib = el('input', { id: 'range-b', value: String(w.end), 'aria-label': 'range end' });
    const go = el('button', { id: 'range-go', text: 'show' });
    go.addEventListener('click', () => { location.hash = 'range=' + ia.value.trim() + ':' + ib.value.trim(); });
    links.append(' cycles ', ia, ':', ib, go);
    h.append(links);
    h.append(el('div', { id: 'range-result', class: 'meta' }));
    for (const n of D.notes) h.append(el('div', { class: 'note', text: n }));
    // Metadata and schema, folded.
    if (D.cpu && D.cpu.metadata.length) {
      const d = el('details', {}, el('summary', { text: 'trace metadata' }));
      d.append(el('table', {}, ...D.cpu.metadata.map(([k, v]) => el('tr', {}, el('td', { text: k }), el('td', { text: v })))));
      h.append(d);
    }
    const s = el('details', { id: 'schema' }, el('summary', { text: 'schema: ' + D.schema.storages.length +
      ' storages, ' + D.schema.events.length + ' event types' }));
    s.append(table(['storage', 'slots', 'fields'], D.schema.storages.map((st) =>
      [st.name, st.num_slots, st.fields.map((f) => f.name + ':' + f.type).join(' ')])));
    s.append(table(['event', 'fields'], D.schema.events.map((e) =>
      [e.name, e.fields.map((f) => f.name + ':' + f.type).join(' ')])));
    h.append(s);
  }

  async function onHash() {
    const m = /^#range=(\d+):(\d+)$/.exec(location.hash);
    if (!m) return;
    const out = document.getElementById('range-result');
    if (MODE !== 'serve') {
      out.textContent = '';
      out.append('This page is static; make the page of that range with ',
                 el('code', { class: 'cmd', text: 'uscope view ' + D.file + ' --range ' + m[1] + ':' + m[2] }),
                 ' or serve the trace (uscope view ' + D.file + ' --serve) to move through it here.');
      return;
    }
    await loadRange(m[1], m[2]);
  }

  // Serve mode: the data of cycles a..b from the server, drawn in place of the current window.
  async function loadRange(a, b) {
    const out = document.getElementById('range-result');
    out.textContent = 'loading cycles ' + a + ':' + b + ' …';
    try {
      const r = await fetch('/api/view?range=' + a + ':' + b);
      const body = await r.json();
      if (!r.ok) { document.getElementById('range-result').textContent = 'the server refused: ' + body.error; return; }
      if (OVERVIEW && body.cpu) body.cpu.overview = OVERVIEW;
      D = body;
      render();
      document.getElementById('range-result').textContent = 'showing cycles ' + a + ':' + b;
    } catch (e) {
      document.getElementById('range-result').textContent = 'the server did not answer: ' + e;
    }
  }

  // Serve mode: once zooming or panning shows cycles the data lacks, fetch the cycles in view
  // (at most a million, around the view's centre) after the keys pause.
  let fetchTimer = null;
  function fetchViewSoon() {
    if (MODE !== 'serve') return;
    const P = D.clock.period_ps, max = D.clock.max_cycle;
    let a = Math.max(0, Math.floor(view.x0 / P)), b = Math.min(max, Math.ceil(view.x1 / P) - 1);
    if (a >= D.window.start && b <= D.window.end) return;
    if (b - a > 1000000) { const c = Math.floor((a + b) / 2); a = Math.max(0, c - 500000); b = Math.min(max, a + 999999); }
    if (a > b) return;
    clearTimeout(fetchTimer);
    fetchTimer = setTimeout(() => loadRange(a, b), 300);
  }

  // ── CPU views ──────────────────────────────────────────────────────────
  function cpuViews() {
    const cpu = D.cpu, P = cpu.period_ps, stages = cpu.stages;
    const insns = cpu.insns;
    stats.cpu = { rows: insns.length, flushed: insns.filter((i) => i[3] === 'flushed').length };

    // Pipeline: instructions × cycles, one colour per stage.
    const sp = section('pipeline', 'CPU pipeline — ' + cpu.scope + (cpu.isa ? ' (' + cpu.isa + ')' : ''),
      insns.length + ' instructions of the window; flushed ones are struck through in red. Hover for the ' +
      'disassembly; + / - zoom, arrows pan, 0 resets; Page Up / Down scroll the rows.');
    sp.append(legend(stages.map((s, i) => [s, STAGE_COLORS[i % STAGE_COLORS.length]]).concat([['flushed', '#d62728']])));
    const ROW = 13, LABEL = 230, TOP = 20;
    let firstRow = 0;
    const maxRows = 48;
    const pipe = canvasView(sp, 'pipeline', () => TOP + Math.min(maxRows, Math.max(insns.length, 1)) * ROW + 4,
      (ctx, w, h, hits) => {
        const width = w - LABEL - 4;
        const last = Math.min(insns.length, firstRow + maxRows);
        // The rows shown span far fewer cycles than the window: the view fits them, within the
        // shared viewport, so that their stages are readable without zooming first.
        let r0 = Infinity, r1 = -Infinity;
        for (let r = firstRow; r < last; ++r) { r0 = Math.min(r0, insns[r][4] * P); r1 = Math.max(r1, (insns[r][5] + 1) * P); }
        const range = { x0: Math.max(view.x0, r0), x1: Math.min(view.x1, r1) };
        if (!(range.x1 > range.x0)) { range.x0 = view.x0; range.x1 = view.x1; }
        stats.cpu.range = range;
        const xOf = (ps, left, wd) => left + (ps - range.x0) / (range.x1 - range.x0) * wd;
        timeAxis(ctx, LABEL, width, 0, P, 'cpu', range);
        let marks = 0;
        for (let r = firstRow; r < last; ++r) {
          const [sim, pc, dis, status, first, lastc, spans, fn] = insns[r];
          const y = TOP + (r - firstRow) * ROW;
          ctx.fillStyle = status === 'flushed' ? '#d62728' : '#1d232a';
          // The testbench's disassembly annotations start with the pc already.
          const label = pc + ' ' + dis.replace(/^0x[0-9a-f]+:?\s+/i, '');
          ctx.fillText(label.length > 36 ? label.slice(0, 35) + '…' : label, 4, y + 10);
          if (status === 'flushed') ctx.fillRect(4, y + 6, Math.min(LABEL - 8, ctx.measureText(label).width), 1);
          const text = pc + '  ' + dis + (fn ? '  <' + fn + '>' : '') + '\n' + status + ', cycles ' + first + '–' +
                       lastc + ', sim_id ' + sim + '\n' + spans.map((s) => (stages[s[0]] || 'stage_' + s[0]) +
                       ' ' + s[1] + '–' + s[2]).join('\n');
          for (const [st, a, b] of spans) {
            const x0 = Math.max(LABEL, xOf(a * P, LABEL, width)), x1 = Math.min(w, xOf((Math.max(b, a + 1)) * P, LABEL, width));
            if (x1 < LABEL || x0 > w) continue;
            ctx.fillStyle = STAGE_COLORS[st % STAGE_COLORS.length];
            ctx.fillRect(x0, y + 1, Math.max(1, x1 - x0 - 0.5), ROW - 2);
            hits.push({ x: x0, y: y, w: x1 - x0, h: ROW, text });
            ++marks;
          }
          if (status === 'flushed') {
            const x = xOf((lastc + 1) * P, LABEL, width);
            ctx.strokeStyle = '#d62728';
            ctx.beginPath();
            ctx.moveTo(x - 4, y + 2); ctx.lineTo(x + 4, y + ROW - 2);
            ctx.moveTo(x + 4, y + 2); ctx.lineTo(x - 4, y + ROW - 2);
            ctx.stroke();
          }
        }
        return marks;
      }, true);
    pipe.canvas.addEventListener('keydown', (ev) => {
      if (ev.key === 'PageDown' || ev.key === 'ArrowDown') firstRow = Math.min(Math.max(0, insns.length - maxRows), firstRow + (ev.key === 'PageDown' ? maxRows : 1));
      else if (ev.key === 'PageUp' || ev.key === 'ArrowUp') firstRow = Math.max(0, firstRow - (ev.key === 'PageUp' ? maxRows : 1));
      else return;
      ev.preventDefault();
      pipe.redraw();
    });
    pipe.canvas.addEventListener('wheel', (ev) => {
      firstRow = Math.max(0, Math.min(Math.max(0, insns.length - maxRows), firstRow + Math.sign(ev.deltaY) * 3));
      ev.preventDefault();
      pipe.redraw();
    }, { passive: false });

    // IPC: the whole trace (overview, from the TSUM) and the window.
    const committed = (list) => (list || []).find((c) => c.name === 'committed_insns') || (list || [])[0];
    const ctr = committed(cpu.counters);
    const si = section('ipc', 'IPC over time', (ctr ? ctr.name : 'no counter') + ' per cycle: the whole trace in ' +
      ((committed(OVERVIEW) || {}).start || []).length + ' buckets (the window shaded), then the window.');
    si.append(legend([['IPC (bucket mean)', '#1f6fb2'], ['peak per-cycle commits', '#f28e2b'], ['window', '#fde9c8']]));
    function series(ctx, w, h, s, x0ps, x1ps, shade, scaleX) {
      const L = 46, T = 22, W = w - L - 6, H = h - T - 16;
      if (!s || !s.start.length) { ctx.fillText('no counter in this trace', L, T + 14); return 0; }
      const ends = s.start.slice(1).concat([s.end]);
      const ipc = s.sum.map((v, i) => v / Math.max(1, ends[i] - s.start[i]));
      const ymax = Math.max(1, ...s.max);
      const X = scaleX || ((ps) => L + (ps - x0ps) / (x1ps - x0ps) * W);
      if (shade) { ctx.fillStyle = '#fde9c8'; ctx.fillRect(X(shade[0]), T, Math.max(2, X(shade[1]) - X(shade[0])), H); }
      ctx.strokeStyle = '#d5dbe0';
      ctx.strokeRect(L + 0.5, T + 0.5, W, H);
      ctx.fillStyle = '#5b6670';
      ctx.fillText(String(ymax), 4, T + 9);
      ctx.fillText('0', 4, T + H);
      ctx.save();
      ctx.beginPath(); ctx.rect(L, T, W, H); ctx.clip();
      for (const [vals, color] of [[s.max, '#f28e2b'], [ipc, '#1f6fb2']]) {
        ctx.strokeStyle = color;
        ctx.beginPath();
        vals.forEach((v, i) => {
          const x = X(s.start[i] * P), y = T + H - v / ymax * H;
          if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
          ctx.lineTo(X(ends[i] * P), y);
        });
        ctx.stroke();
      }
      ctx.restore();
      return s.start.length;
    }
    if (OVERVIEW) {
      canvasView(si, 'ipc-overview', 110, (ctx, w, h) => {
        ctx.fillStyle = '#5b6670';
        ctx.fillText('whole trace: cycles 0 – ' + fmt(cpu.max_cycle) + ' (1 cycle = ' + unit(P) + ')', 46, 12);
        return series(ctx, w, h, committed(OVERVIEW), 0, (cpu.max_cycle + 1) * P,
                      [D.window.start * P, (D.window.end + 1) * P]);
      }, false);
    }
    canvasView(si, 'ipc-window', 130, (ctx, w, h) => {
      timeAxis(ctx, 46, w - 52, 0, P, 'cpu');
      return series(ctx, w, h, committed(cpu.counters), 0, 1, null, (ps) => xOf(ps, 46, w - 52));
    }, true);

    // Buffer occupancy over the window.
    const sb = section('buffers', 'Buffer occupancy', cpu.buffers.length
      ? 'Occupied slots (the maximum of each bucket) over the window.'
      : 'The cpu scope has no buffers (storages with the buffer flag): nothing to show.');
    if (cpu.buffers.length) sb.append(legend(cpu.buffers.map((b, i) => [b.name + ' (' + b.capacity + ')', STAGE_COLORS[i % STAGE_COLORS.length]])));
    if (cpu.buffers.length) canvasView(sb, 'buffers', 140, (ctx, w, h) => {
      const L = 46, T = 22, W = w - L - 6, H = h - T - 6;
      timeAxis(ctx, L, W, 0, P, 'cpu');
      if (!cpu.buffers.length) { ctx.fillText('no buffers in this trace', L, T + 14); return 0; }
      ctx.strokeStyle = '#d5dbe0';
      ctx.strokeRect(L + 0.5, T + 0.5, W, H);
      ctx.fillStyle = '#5b6670';
      ctx.fillText('100%', 4, T + 9);
      ctx.fillText('0', 4, T + H);
      let marks = 0;
      ctx.save();
      ctx.beginPath(); ctx.rect(L, T, W, H); ctx.clip();
      cpu.buffers.forEach((b, k) => {
        ctx.strokeStyle = STAGE_COLORS[k % STAGE_COLORS.length];
        ctx.beginPath();
        b.max.forEach((v, i) => {
          const c0 = D.window.start + i * b.bucket_cycles, y = T + H - v / Math.max(1, b.capacity) * H;
          if (i === 0) ctx.moveTo(xOf(c0 * P, L, W), y); else ctx.lineTo(xOf(c0 * P, L, W), y);
          ctx.lineTo(xOf((c0 + b.bucket_cycles) * P, L, W), y);
          ++marks;
        });
        ctx.stroke();
      });
      ctx.restore();
      return marks;
    }, true);

    // analyze_performance: the table of `uscope analyze` over the window.
    const a = cpu.analyze;
    const st = section('analyze', 'analyze_performance (the window)', 'uscope analyze ' + D.file + ' --range ' +
      a.start_cycle + ':' + a.end_cycle);
    st.append(el('div', { class: 'row' },
      table(['figure', 'value'], [['cycles', a.range_cycles], ['instructions', a.instructions.total],
        ['retired', a.instructions.retired], ['flushed', a.instructions.flushed], ['in flight', a.instructions.in_flight],
        ['flush rate', a.instructions.flush_rate], ['IPC', a.ipc], ['commit IPC', a.commit_ipc]]),
      table(['stage (bottleneck first)', 'instructions', 'total cycles', 'mean latency'], a.stage_latencies.map((s) =>
        [s.name, s.instruction_count, s.total_cycles, s.avg_latency])),
      table(['stall reason', 'count'], a.stalls.map((s) => [s.reason, s.count])),
      table(['counter', 'start', 'end', 'delta', 'per cycle'], a.counter_summaries.map((c) =>
        [c.name, c.start_value, c.end_value, c.delta, c.rate_per_cycle]))));
  }

  // ── NPU views ──────────────────────────────────────────────────────────
  // Intervals from the events of the window: commands (CMD_START..CMD_END, queue wait from
  // CMD_ENQUEUE) and the resources' jobs and transfers, paired by their ids.
  function npuModel() {
    const npu = D.npu, P = npu.period_ps;
    const wStart = D.window.start_ps, wEnd = D.window.end_ps;
    const cmds = new Map(), open = new Map(), bars = [], marks = [];
    const cmdOf = (id) => { if (!cmds.has(id)) cmds.set(id, { id, fields: {} }); return cmds.get(id); };
    const kinds = { te: ['TE', 'engine', 'job_id'], ve: ['VE', 'engine', 'job_id'], dma: ['DMA', 'channel', 'tx_id'],
                    dram_tx: ['DRAM', 'channel', 'tx_id'], noc_tx: ['NoC', 'link_id', 'tx_id'] };
    for (const e of npu.events) {
      const type = e.type.toLowerCase(), f = e.fields;
      // The event's context (tenant, model, head, ...), for the filters; its own fields win.
      const ctx = f.ctx !== undefined && f.ctx !== null ? (npu.contexts || {})[f.ctx] : null;
      if (ctx) for (const [k, v] of Object.entries(ctx)) if ((f[k] === undefined || f[k] === null) && v !== null) f[k] = v;
      if (type === 'cmd_enqueue') Object.assign(cmdOf(f.cmd_id), { enq: e.time_ps, fields: Object.assign({}, f) });
      else if (type === 'cmd_start') cmdOf(f.cmd_id).start = e.time_ps;
      else if (type === 'cmd_end') Object.assign(cmdOf(f.cmd_id), { end: e.time_ps, status: f.status });
      else if (MARK_COLORS[type]) marks.push({ type, t: e.time_ps, fields: f });
      else {
        const m = /^(te|ve|dma|dram_tx|noc_tx)_(start|end)$/.exec(type);
        if (!m) continue;
        const [res, unitKey, idKey] = kinds[m[1]];
        const key = m[1] + ':' + f[idKey] + ':' + (m[1] === 'te' || m[1] === 've' ? f[unitKey] : '');
        if (m[2] === 'start') open.set(key, { res, unit: f[unitKey], t0: e.time_ps, fields: Object.assign({}, f) });
        else {
          const b = open.get(key) || { res, unit: f[unitKey], t0: wStart, clipped: true, fields: Object.assign({}, f) };
          open.delete(key);
          b.t1 = e.time_ps;
          bars.push(b);
        }
      }
    }
    for (const b of open.values()) { b.t1 = wEnd; b.clipped = true; bars.push(b); }
    // A command is shown when it ends in the window, as the analysis counts it.
    const commands = [...cmds.values()].filter((c) => c.end !== undefined).map((c) => {
      const t0 = c.start !== undefined ? c.start : (c.enq !== undefined ? c.enq : wStart);
      return Object.assign(c, { t0, t1: c.end, clipped: c.start === undefined });
    }).sort((a, b) => a.t0 - b.t0 || a.id - b.id);
    // Each job, transfer and marker inherits its command's axes, so the filters find it.
    const INHERITED = ['phase', 'layer_id', 'block_id', 'token', 'tenant_id', 'head_id', 'model_name'];
    for (const b of bars) {
      const c = cmds.get(b.fields.cmd_id);
      if (c) for (const k of INHERITED) if (b.fields[k] === undefined || b.fields[k] === null) b.fields[k] = c.fields[k];
    }
    for (const m of marks) {
      const c = cmds.get(m.fields.cmd_id);
      if (c) for (const k of INHERITED) if (m.fields[k] === undefined || m.fields[k] === null) m.fields[k] = c.fields[k];
    }
    return { P, commands, bars, marks, queued: [...cmds.values()].filter((c) => c.enq !== undefined) };
  }

  const filter = { axis: 'cmd_id', value: '' };
  function matches(item, component) {
    if (!filter.value) return true;
    if (filter.axis === 'component') return String(component).toLowerCase().includes(filter.value.toLowerCase());
    const v = item.fields ? item.fields[filter.axis] : undefined;
    return v !== undefined && v !== null && String(v) === filter.value;
  }

  function npuViews() {
    const npu = D.npu, M = npuModel(), P = M.P;
    stats.npu = { commands: npu.commands, events: npu.events.length };
    const fs = section('npu-filter', 'NPU filters', 'Show only what matches, on the axes of the trace spec; the ' +
      'Gantt, marker and heatmap views follow. An empty value shows everything.');
    const axis = el('select', { id: 'filter-axis', 'aria-label': 'filter axis' },
      ...['component', 'cmd_id', 'job_id', 'tx_id', 'layer_id', 'phase', 'head_id', 'token', 'tenant_id', 'model_name']
        .map((a) => { const o = el('option', { value: a, text: a }); if (a === filter.axis) o.selected = true; return o; }));
    const value = el('input', { id: 'filter-value', value: filter.value, 'aria-label': 'filter value' });
    const apply = () => { filter.axis = axis.value; filter.value = value.value.trim(); redrawAll(); };
    axis.addEventListener('change', apply);
    value.addEventListener('input', apply);
    fs.append(el('div', { class: 'controls' }, 'axis ', axis, ' value ', value));

    // Gantt per resource: the command queue's waits, then each engine, channel and link.
    const rows = [];
    const lanes = (items, name) => {
      const ends = [];
      for (const it of items.slice().sort((a, b) => a.t0 - b.t0)) {
        let k = ends.findIndex((e) => e <= it.t0);
        if (k < 0) { k = ends.length; ends.push(0); }
        ends[k] = it.t1;
        it.lane = name + (k ? ' #' + k : '');
      }
      return [...new Set(items.map((i) => i.lane))];
    };
    const queue = M.queued.map((c) => ({ res: 'cmd queue', t0: c.enq, t1: c.start !== undefined ? c.start : (c.end !== undefined ? c.end : D.window.end_ps), fields: c.fields }));
    for (const l of lanes(queue, 'cmd queue').slice(0, 8)) rows.push({ name: l, items: queue.filter((q) => q.lane === l) });
    const order = ['TE', 'VE', 'DMA', 'DRAM', 'NoC'];
    for (const res of order) {
      const units = [...new Set(M.bars.filter((b) => b.res === res).map((b) => b.unit))].sort((a, b) => a - b);
      for (const u of units) rows.push({ name: res + ' ' + (u === null || u === undefined ? '-' : u),
                                         items: M.bars.filter((b) => b.res === res && b.unit === u) });
    }
    const sg = section('gantt', 'NPU Gantt per resource', 'Command queue waits (CMD_ENQUEUE → CMD_START), TE and VE ' +
      'jobs, DMA, DRAM and NoC transfers of the window; a bar the window cuts ends at its edge (the hover says so).');
    sg.append(legend(Object.entries(RES_COLORS).filter(([k]) => k !== 'CMD')));
    const LABEL = 90, ROW = 16, TOP = 20;
    function bar(ctx, hits, b, y, left, width, color, text, h) {
      const x0 = Math.max(left, xOf(b.t0, left, width)), x1 = Math.min(left + width, xOf(b.t1 + P, left, width));
      if (x1 < left || x0 > left + width) return 0;
      ctx.fillStyle = color;
      ctx.fillRect(x0, y, Math.max(1.5, x1 - x0 - 0.5), h);
      hits.push({ x: x0, y, w: x1 - x0, h, text });
      return 1;
    }
    const cyc = (ps) => Math.floor(ps / P);
    const describe = (label, b) => label + '\ncycles ' + cyc(b.t0) + '–' + cyc(b.t1) + (b.clipped ? ' (cut by the window)' : '') +
      '\n' + Object.entries(b.fields).filter(([, v]) => v !== null).map(([k, v]) => k + '=' + v).join(' ');
    canvasView(sg, 'gantt-resources', () => TOP + Math.max(1, rows.length) * ROW + 4, (ctx, w, h, hits) => {
      const width = w - LABEL - 4;
      timeAxis(ctx, LABEL, width, 0, P, 'npu');
      let n = 0;
      rows.forEach((r, i) => {
        const y = TOP + i * ROW;
        ctx.fillStyle = '#1d232a';
        ctx.fillText(r.name, 4, y + 11);
        const color = RES_COLORS[r.name.split(' ')[0]] || RES_COLORS['cmd queue'];
        for (const b of r.items) if (matches(b, r.name)) n += bar(ctx, hits, b, y + 2, LABEL, width, color, describe(r.name, b), ROW - 4);
      });
      if (!rows.length) ctx.fillText('no engine or transfer activity in this window', LABEL, TOP + 12);
      return n;
    }, true);

    // Gantt per command: one row per command, its jobs and transfers inside it.
    const sc = section('commands', 'NPU commands', M.commands.length + ' commands end in the window (the analysis ' +
      'counts ' + npu.commands + '); the light part is the wait in the queue, the thin bars its jobs and transfers.');
    sc.append(legend([['command', RES_COLORS.CMD], ['queued', '#c9d7e6']].concat(order.map((r) => [r, RES_COLORS[r]]))));
    const CROW = 18, maxCmdRows = 60;
    canvasView(sc, 'gantt-commands', () => TOP + Math.max(1, Math.min(maxCmdRows, M.commands.length)) * CROW + 4,
      (ctx, w, h, hits) => {
        const width = w - LABEL - 40;
        timeAxis(ctx, LABEL + 36, width, 0, P, 'npu');
        let shown = 0, bars = 0;
        for (const c of M.commands) {
          if (!matches(c, 'CMD') || shown >= maxCmdRows) continue;
          const y = TOP + shown * CROW;
          ++shown;
          ctx.fillStyle = '#1d232a';
          ctx.fillText('cmd ' + c.id + ' ' + (c.fields.phase || ''), 4, y + 12);
          if (c.enq !== undefined && c.start !== undefined)
            bar(ctx, hits, { t0: c.enq, t1: c.start - P }, y + 2, LABEL + 36, width, '#c9d7e6', describe('cmd ' + c.id + ' queued', c), CROW - 4);
          bars += bar(ctx, hits, c, y + 2, LABEL + 36, width, RES_COLORS.CMD, describe('cmd ' + c.id + ' (' + (c.status || '') + ')', c), CROW - 4);
          for (const b of M.bars) if (b.fields.cmd_id === c.id)
            bar(ctx, hits, b, y + CROW - 7, LABEL + 36, width, RES_COLORS[b.res], describe(b.res + ' ' + b.unit, b), 4);
        }
        stats.npu.commandBars = bars;
        stats.npu.commandRows = shown;
        if (!shown) ctx.fillText('no command ends in this window' + (filter.value ? ' or matches the filter' : ''), LABEL, TOP + 12);
        return bars;
      }, true);

    // Event markers: IRQ, token complete, errors, warnings.
    const kindsM = Object.keys(MARK_COLORS);
    const sm = section('markers', 'NPU event markers', 'One row per kind; hover a tick for its fields.');
    sm.append(legend(kindsM.map((k) => [k, MARK_COLORS[k]])));
    canvasView(sm, 'markers', TOP + kindsM.length * ROW + 4, (ctx, w, h, hits) => {
      const width = w - LABEL - 4;
      timeAxis(ctx, LABEL, width, 0, P, 'npu');
      let n = 0;
      kindsM.forEach((k, i) => {
        const y = TOP + i * ROW;
        ctx.fillStyle = '#1d232a';
        ctx.fillText(k, 4, y + 11);
        ctx.fillStyle = MARK_COLORS[k];
        for (const m of M.marks) {
          if (m.type !== k || !matches(m, m.fields.component || k)) continue;
          const x = xOf(m.t, LABEL, width);
          if (x < LABEL || x > w) continue;
          ctx.fillRect(x - 1, y + 2, 3, ROW - 4);
          hits.push({ x: x - 2, y, w: 5, h: ROW, text: k + ' at cycle ' + cyc(m.t) + '\n' +
            Object.entries(m.fields).filter(([, v]) => v !== null).map(([a, v]) => a + '=' + v).join(' ') });
          ++n;
        }
      });
      return n;
    }, true);

    // Heatmap: DRAM and NoC bandwidth (bytes per cycle), TE and VE utilization, per column.
    const sh = section('heatmap', 'NPU heatmap', 'Per column of the view: DRAM and NoC bytes per cycle (transfers ' +
      'spread over their span) and TE / VE utilization (busy engine-cycles per engine-cycle); darker is more.');
    const hrows = [['DRAM bandwidth', (b) => b.res === 'DRAM', true], ['NoC bandwidth', (b) => b.res === 'NoC', true],
                   ['TE utilization', (b) => b.res === 'TE', false], ['VE utilization', (b) => b.res === 'VE', false]];
    canvasView(sh, 'heatmap', TOP + hrows.length * 22 + 18, (ctx, w, h, hits) => {
      const L = 110, width = w - L - 4, N = Math.max(10, Math.min(400, Math.floor(width / 3)));
      timeAxis(ctx, L, width, 0, P, 'npu');
      let n = 0;
      hrows.forEach(([name, pick, bytes], i) => {
        const y = TOP + i * 22, vals = new Float64Array(N), colPs = (view.x1 - view.x0) / N;
        const items = M.bars.filter((b) => pick(b) && matches(b, b.res));
        const units = Math.max(1, new Set(items.map((b) => b.unit)).size);
        for (const b of items) {
          const t1 = b.t1 + P, span = Math.max(P, t1 - b.t0);
          const size = bytes ? Number(b.fields.size_bytes || 0) : 0;
          for (let k = Math.max(0, Math.floor((b.t0 - view.x0) / colPs)); k < N; ++k) {
            const c0 = view.x0 + k * colPs, c1 = c0 + colPs;
            if (c0 >= t1) break;
            const ov = Math.max(0, Math.min(t1, c1) - Math.max(b.t0, c0));
            vals[k] += bytes ? size * ov / span / (colPs / P) : ov / colPs / units;
          }
        }
        const max = Math.max(...vals, bytes ? 1e-9 : 1);
        ctx.fillStyle = '#1d232a';
        ctx.fillText(name, 4, y + 14);
        for (let k = 0; k < N; ++k) {
          const v = vals[k] / max;
          ctx.fillStyle = 'rgba(31,111,178,' + (0.06 + 0.94 * v).toFixed(3) + ')';
          const x = L + k * width / N;
          ctx.fillRect(x, y + 2, width / N + 0.5, 18);
          hits.push({ x, y, w: width / N, h: 20, text: name + ' from cycle ' + cyc(view.x0 + k * colPs) + ': ' +
            (bytes ? vals[k].toFixed(2) + ' bytes/cycle' : (vals[k] * 100).toFixed(1) + ' %') });
          ++n;
        }
        ctx.fillStyle = '#5b6670';
      });
      ctx.fillText('scale per row: the darkest cell is the row\'s maximum', L, TOP + hrows.length * 22 + 12);
      return n;
    }, true);

    // Phase summary: the analysis's latencies per phase, with the window's bytes and stalls.
    const sp = section('phases', 'NPU phase summary (the window)', 'Latency from the analysis layer (uscope analyze ' +
      '--range, npu); bytes are DMA bytes and stalls SRAM conflicts of the phase\'s commands in the window.');
    const a = npu.analyze.npu;
    const phaseOf = new Map(M.commands.concat(M.queued).map((c) => [c.id, c.fields.phase || '(none)']));
    const bytes = {}, stalls = {};
    for (const b of M.bars) if (b.res === 'DMA') {
      const p = phaseOf.get(b.fields.cmd_id) || '(none)';
      bytes[p] = (bytes[p] || 0) + Number(b.fields.size_bytes || 0);
    }
    for (const e of npu.events) if (e.type.toLowerCase() === 'sram_conflict') {
      const p = phaseOf.get(e.fields.cmd_id) || '(none)';
      stalls[p] = (stalls[p] || 0) + 1;
    }
    sp.append(el('div', { class: 'row' },
      table(['phase', 'commands', 'mean cycles', 'min', 'max', 'DMA bytes', 'bytes/cycle', 'SRAM stalls'],
        a.phases.map((p) => [p.name, p.commands, Number(p.mean_cycles), p.min_cycles, p.max_cycles, bytes[p.name] || 0,
          p.total_cycles ? (bytes[p.name] || 0) / p.total_cycles : 0, stalls[p.name] || 0])),
      table(['engine', 'jobs', 'busy cycles', 'utilization'], a.engines.map((e) =>
        [e.name, e.jobs, e.busy_cycles, Number(e.utilization)])),
      table(['figure', 'value'], [['command latency p50', a.command_latency.p50],
        ['command latency p99', a.command_latency.p99], ['DMA transfers', a.dma.transfers], ['DMA bytes', a.dma.bytes],
        ['SRAM accesses', a.sram.accesses], ['SRAM conflicts', a.sram.conflicts]])));
  }

  // ── zoom and pan ───────────────────────────────────────────────────────
  function resetView() {
    view.x0 = D.window.start_ps;
    view.x1 = Math.max(D.window.end_ps + 1, view.x0 + 1);
  }
  function redrawAll() { for (const r of redraws) r(); }
  function zoom(f, center) {
    const c = center === undefined ? (view.x0 + view.x1) / 2 : center;
    const span = Math.max(D.clock.period_ps * 4, (view.x1 - view.x0) * f);
    view.x0 = c - span / 2;
    view.x1 = c + span / 2;
    redrawAll();
    fetchViewSoon();
  }
  function pan(f) {
    const d = (view.x1 - view.x0) * f;
    view.x0 += d;
    view.x1 += d;
    redrawAll();
    fetchViewSoon();
  }
  document.addEventListener('keydown', (ev) => {
    if (ev.target && (ev.target.tagName === 'INPUT' || ev.target.tagName === 'SELECT')) return;
    if (ev.key === '+' || ev.key === '=') zoom(0.5);
    else if (ev.key === '-' || ev.key === '_') zoom(2);
    else if (ev.key === 'ArrowLeft') pan(-0.2);
    else if (ev.key === 'ArrowRight') pan(0.2);
    else if (ev.key === '0') { resetView(); redrawAll(); }
    else return;
    ev.preventDefault();
  });

  function render() {
    document.getElementById('views').textContent = '';
    redraws.length = 0;
    stats.views = {};
    resetView();
    header();
    if (D.cpu) cpuViews();
    if (D.npu) npuViews();
    stats.view = view;
  }
  window.addEventListener('resize', redrawAll);
  window.addEventListener('hashchange', onHash);
  window.uscopeView = { stats, data: () => D, zoom, pan, reset: () => { resetView(); redrawAll(); }, filter: (a, v) => {
    filter.axis = a; filter.value = v;
    const ax = document.getElementById('filter-axis'), va = document.getElementById('filter-value');
    if (ax) ax.value = a;
    if (va) va.value = v;
    redrawAll();
  } };
  render();
  if (location.hash) onHash();
})();
