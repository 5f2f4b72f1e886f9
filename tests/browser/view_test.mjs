// uscope view's page in a real browser (ctest: view_browser, run by run_view_test.sh): headless
// Chromium, driven by puppeteer-core, opens each page, checks that every view drew (a canvas
// with pixels, the labels it must show, as many command bars as the analysis layer counted),
// that no console error occurred, exercises zoom and the filter, and saves a screenshot of each
// view. In serve mode it also moves to another window through the server's API.
//
//   node view_test.mjs CHROMIUM OUT_DIR PAGE...
// PAGE: static:NAME:FILE.html (a page on disk), serve:NAME:URL (a running `uscope view --serve`)
// or api:NAME:URL (that server's answers to bad requests: 400 with a message, never a crash).
import puppeteer from 'puppeteer-core';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

const [chromium, outDir, ...pages] = process.argv.slice(2);
if (!chromium || !outDir || !pages.length) {
  console.error('usage: node view_test.mjs CHROMIUM OUT_DIR (static|serve):NAME:FILE_OR_URL...');
  process.exit(2);
}

// Every view a trace with that scope must draw: [section id, canvas name, a label it shows].
const CPU_VIEWS = [['pipeline', 'pipeline', 'CPU pipeline'], ['ipc', 'ipc-window', 'IPC over time'],
                   ['buffers', 'buffers', 'Buffer occupancy'], ['analyze', null, 'analyze_performance']];
const NPU_VIEWS = [['gantt', 'gantt-resources', 'NPU Gantt per resource'], ['commands', 'gantt-commands', 'NPU commands'],
                   ['markers', 'markers', 'NPU event markers'], ['heatmap', 'heatmap', 'NPU heatmap'],
                   ['phases', null, 'NPU phase summary']];

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--font-render-hinting=none'],
});
let failed = false;
try {
  for (const spec of pages) {
    const [mode, name, ...rest] = spec.split(':');
    const where = rest.join(':');
    try {
      if (mode === 'api') await checkApi(where);
      else await checkPage(mode, name, mode === 'static' ? pathToFileURL(where).href : where);
      console.log(`view browser: ${name}: OK`);
    } catch (e) {
      failed = true;
      console.error(`view browser: ${name}: FAILED: ${e.stack || e}`);
    }
  }
} finally {
  await browser.close();
}
if (failed) process.exit(1);
console.log('view browser test: OK');

async function checkPage(mode, name, url) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900, deviceScaleFactor: 1 });
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console error: ' + m.text()); });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('requestfailed', (r) => problems.push('request failed: ' + r.url()));
  // A static page fetches nothing: any request but the page itself is a failure.
  page.on('request', (r) => { if (mode === 'static' && r.url() !== url) problems.push('network request: ' + r.url()); });
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => window.uscopeView && window.uscopeView.stats.views);
  const data = await page.evaluate(() => window.uscopeView.data());
  assert.deepEqual(problems, [], 'console or network problems while loading');

  const expected = [...(data.cpu ? CPU_VIEWS : []), ...(data.npu ? NPU_VIEWS : [])];
  assert.ok(expected.length, 'the page has neither cpu nor npu data');
  // The views of an absent scope are absent, with a note saying why.
  const notes = await page.$$eval('.note', (n) => n.map((x) => x.textContent));
  if (!data.cpu) {
    assert.equal(await page.$('#view-pipeline'), null, 'a cpu view on a trace without a cpu scope');
    assert.ok(notes.some((n) => n.includes('no cpu protocol scope')), 'no note about the absent cpu views: ' + notes);
  }
  if (!data.npu) {
    assert.equal(await page.$('#view-gantt'), null, 'an npu view on a trace without an npu scope');
    assert.ok(notes.some((n) => n.includes('no npu protocol scope')), 'no note about the absent npu views: ' + notes);
  }
  const header = await page.$eval('#header', (h) => h.textContent);
  assert.ok(header.includes(data.file), 'the header does not name the trace');
  assert.ok(header.includes('window: cycles'), 'the header does not give the window');

  for (const [id, canvas, label] of expected) {
    const text = await page.$eval('#view-' + id, (s) => s.textContent);
    assert.ok(text.includes(label), `view ${id}: no label "${label}"`);
    if (id === 'buffers' && !data.cpu.buffers.length) {
      assert.ok(text.includes('has no buffers'), 'a trace without buffers: no note in the buffer view');
    } else if (canvas) {
      const drawn = await page.evaluate((n) => {
        const c = document.querySelector(`canvas[data-view="${n}"]`);
        if (!c) return null;
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let ink = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) ++ink;
        return { ink, marks: Number(c.dataset.marks), w: c.width, h: c.height };
      }, canvas);
      assert.ok(drawn, `view ${id}: no canvas ${canvas}`);
      assert.ok(drawn.w > 0 && drawn.h > 0 && drawn.ink > 100, `view ${id}: canvas ${canvas} is empty (${JSON.stringify(drawn)})`);
      assert.ok(drawn.marks > 0, `view ${id}: canvas ${canvas} drew no bars, lines or cells`);
    } else {
      assert.ok(await page.$eval('#view-' + id, (s) => s.querySelectorAll('table td').length > 0), `view ${id}: empty table`);
    }
  }
  const stats = await page.evaluate(() => window.uscopeView.stats);
  if (data.cpu) {
    assert.equal(stats.cpu.rows, data.cpu.insns.length, 'pipeline rows');
    assert.ok(stats.cpu.rows > 0, 'no instruction in the window');
    // The analyze table is `uscope analyze`'s: its IPC is in the page.
    assert.ok((await page.$eval('#view-analyze', (s) => s.textContent)).includes('IPC'), 'analyze table lacks IPC');
  }
  if (data.npu) {
    // One Gantt bar per command the analysis layer counts in the window.
    assert.ok(data.npu.commands > 0, 'the analysis counts no command in the window');
    assert.equal(stats.npu.commandBars, Math.min(data.npu.commands, 60), 'command bars vs the analysis command count');
  }

  // Screenshots of each view, before zooming.
  await page.screenshot({ path: `${outDir}/view-${name}-page.png`, fullPage: true });
  for (const [id] of [['header'], ...expected]) {
    const el = await page.$(id === 'header' ? '#header' : '#view-' + id);
    await el.screenshot({ path: `${outDir}/view-${name}-${id}.png` });
  }

  // Zoom: '+' halves the viewport and every time-axis view redraws; '0' restores it.
  const before = await page.evaluate(() => ({ ...window.uscopeView.stats.view }));
  await page.focus('canvas');
  await page.keyboard.press('+');
  const after = await page.evaluate(() => ({ ...window.uscopeView.stats.view }));
  const ratio = (after.x1 - after.x0) / (before.x1 - before.x0);
  assert.ok(Math.abs(ratio - 0.5) < 1e-9, `zoom in: viewport ratio ${ratio}`);
  await page.keyboard.press('ArrowRight');
  const panned = await page.evaluate(() => ({ ...window.uscopeView.stats.view }));
  assert.ok(panned.x0 > after.x0, 'pan right did not move the viewport');
  await page.screenshot({ path: `${outDir}/view-${name}-zoomed.png`, fullPage: true });
  await page.keyboard.press('0');
  const reset = await page.evaluate(() => ({ ...window.uscopeView.stats.view }));
  assert.deepEqual(reset, before, 'reset did not restore the window');

  if (data.npu) {
    // Filter on a command id: one command row and bar remain; an id no event has: none.
    const id = String(data.npu.events.find((e) => e.type.toLowerCase() === 'cmd_end').fields.cmd_id);
    await page.select('#filter-axis', 'cmd_id');
    await page.type('#filter-value', id);
    let s = await page.evaluate(() => window.uscopeView.stats.npu);
    assert.equal(s.commandBars, 1, `filter cmd_id=${id}: ${s.commandBars} command bars`);
    await page.evaluate(() => window.uscopeView.filter('cmd_id', '987654321'));
    s = await page.evaluate(() => window.uscopeView.stats.npu);
    assert.equal(s.commandBars, 0, 'filter on an absent id left bars');
    await page.evaluate(() => window.uscopeView.filter('phase', String(window.uscopeView.data().npu.analyze.npu.phases[0].name)));
    s = await page.evaluate(() => window.uscopeView.stats.npu);
    assert.equal(s.commandBars, data.npu.analyze.npu.phases[0].commands, 'filter on a phase: its commands');
    // A context axis (spec §3.2): events carry a ctx id, the page looks its tenant up.
    const ctxs = data.npu.contexts || {};
    const tenants = new Set(Object.values(ctxs).map((c) => c.tenant_id).filter((v) => v !== undefined));
    if (tenants.size) {
      const tenant = [...tenants][0];
      const enq = new Map(data.npu.events.filter((e) => e.type.toLowerCase() === 'cmd_enqueue')
        .map((e) => [e.fields.cmd_id, (ctxs[e.fields.ctx] || {}).tenant_id]));
      const want = data.npu.events.filter((e) => e.type.toLowerCase() === 'cmd_end' && enq.get(e.fields.cmd_id) === tenant).length;
      await page.evaluate((v) => window.uscopeView.filter('tenant_id', v), String(tenant));
      s = await page.evaluate(() => window.uscopeView.stats.npu);
      assert.ok(want > 0, 'no command of tenant ' + tenant);
      assert.equal(s.commandBars, Math.min(want, 60), `filter tenant_id=${tenant}`);
    }
    await page.evaluate(() => window.uscopeView.filter('cmd_id', ''));
  }

  // Range links: a static page gives the command line; the server fetches the window.
  const w = data.window, half = Math.floor((w.end - w.start) / 2);
  await page.evaluate((h) => { location.hash = h; }, `range=${w.start}:${w.start + half}`);
  if (mode === 'static') {
    await page.waitForFunction(() => document.getElementById('range-result').textContent.includes('uscope view'));
  } else {
    await page.waitForFunction((a) => window.uscopeView.data().window.end === a, {}, w.start + half);
    const d2 = await page.evaluate(() => window.uscopeView.data());
    assert.equal(d2.window.start, w.start);
    if (d2.npu) assert.ok(d2.npu.commands <= data.npu.commands, 'a narrower window counts more commands');
    await page.screenshot({ path: `${outDir}/view-${name}-served-range.png`, fullPage: true });
    // Zooming out past the data fetches the cycles in view from the server.
    await page.focus('canvas');
    await page.keyboard.press('-');
    await page.keyboard.press('-');
    await page.waitForFunction((e) => window.uscopeView.data().window.end > e, {}, d2.window.end);
    const d3 = await page.evaluate(() => window.uscopeView.data());
    assert.ok(d3.window.end - d3.window.start > d2.window.end - d2.window.start, 'zoom out fetched no wider window');
  }
  assert.deepEqual(problems, [], 'console or network problems');
  await page.close();
}

// The server's API: a window's data; 400 with a JSON message for every bad parameter, 404, 405,
// 431 for an oversized request; and the server still answers afterwards.
async function checkApi(base) {
  const get = async (path, init) => {
    const r = await fetch(base.replace(/\/$/, '') + path, init);
    return { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
  };
  const ok = await get('/api/view?range=0:100');
  assert.equal(ok.status, 200, ok.body);
  const d = JSON.parse(ok.body);
  assert.equal(d.window.start, 0);
  assert.equal(d.window.end, 100);
  assert.ok(!d.cpu || d.cpu.overview === undefined, 'a window answer carries the overview');
  for (const bad of ['/api/view?range=10', '/api/view?range=a:b', '/api/view?range=9:3', '/api/view?range=99999999:99999999',
                     '/api/view?file=/etc/passwd', '/api/view?range=0:10&trace=../x.uscope', '/?range=0:1',
                     '/api/view?range=' + '9'.repeat(40) + ':1']) {
    const r = await get(bad);
    assert.equal(r.status, 400, `${bad}: ${r.status} ${r.body}`);
    assert.ok(JSON.parse(r.body).error.length > 0, `${bad}: no message`);
  }
  assert.equal((await get('/etc/passwd')).status, 404);
  assert.equal((await get('/../../etc/passwd')).status, 404);
  assert.equal((await get('/api/view', { method: 'POST', body: 'x' })).status, 405);
  const big = await get('/api/view?range=0:1', { headers: { 'x-pad': 'x'.repeat(16384) } });
  assert.equal(big.status, 431);
  const page = await get('/');
  assert.equal(page.status, 200);
  assert.ok(page.type.startsWith('text/html') && page.body.includes('id="uscope-data" data-mode="serve"'), 'the served page');
}
