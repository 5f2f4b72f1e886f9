#!/usr/bin/env bash
# uscope view in a real browser (ctest: view_browser): makes the demo trace (the Verilator
# testbench), an NPU JSON-Lines trace (make_npu_jsonl.mjs, converted by uscope convert) and a
# trace of a cpu without buffers or npu (the pipeline example),
# writes their pages, serves the NPU trace, and has headless Chromium check every view through
# puppeteer-core (view_test.mjs, the exact version pinned in package.json and package-lock.json).
# The screenshots (view-*.png) are left in WORK_DIR; docs/view-*.png are copies of them.
#
#   run_view_test.sh USCOPE USCOPE_TB USCOPE_EXAMPLE_PIPELINE SOURCE_DIR WORK_DIR
#
# `npm ci` installs puppeteer-core into WORK_DIR (the source tree stays clean). No Chromium, no
# node, no npm or no registry is a failure, never a skip.
set -euo pipefail
uscope=$1 tb=$2 example=$3 src=$4 work=$5

fail() { echo "view browser: FAILED: $*" >&2; exit 1; }
chromium=${USCOPE_CHROMIUM:-$(command -v chromium || true)}
[ -x "$chromium" ] || fail "chromium is not installed (Debian: apt-get install chromium)"
command -v node >/dev/null || fail "node is not installed (Debian: apt-get install nodejs npm)"
command -v npm >/dev/null || fail "npm is not installed (Debian: apt-get install npm)"
echo "node $(node --version), npm $(npm --version), $("$chromium" --version 2>/dev/null | tail -1)"

mkdir -p "$work"
cp "$src/package.json" "$src/package-lock.json" "$src/view_test.mjs" "$src/make_npu_jsonl.mjs" "$work/"
cd "$work"
# The lock file pins every package; reuse node_modules when it was installed from this very lock.
if ! cmp -s package-lock.json node_modules/.uscope-lock 2>/dev/null; then
  npm ci --no-audit --no-fund --loglevel=error || fail "npm ci could not install puppeteer-core (registry unreachable?)"
  cp package-lock.json node_modules/.uscope-lock
fi
rm -f ./*.png ./*.html demo.uscope npu.uscope npu.jsonl cpu.uscope serve.log

# Bad input: a clear message and exit status 1, no page.
if "$uscope" view missing.uscope -o bad.html 2>err.txt; then fail "view of a missing file succeeded"; fi
grep -q "cannot open missing.uscope" err.txt || fail "missing file: $(cat err.txt)"
if "$uscope" view package.json -o bad.html 2>err.txt; then fail "view of a JSON file succeeded"; fi
grep -q "not a uscope file" err.txt || fail "not a trace: $(cat err.txt)"
[ ! -e bad.html ] || fail "a failed view left bad.html"

# The demo trace, viewed where its NPU runs: the first 10,000 cpu cycles from the npu's first event.
"$tb" +trace="$work/demo.uscope" +quiet >tb.log || fail "the testbench failed: $(tail -5 tb.log)"
"$uscope" analyze demo.uscope --json >analyze.json
"$uscope" view demo.uscope -o demo-default.html >/dev/null
range=$(node -e '
  const fs = require("fs");
  const npu = JSON.parse(fs.readFileSync("analyze.json")).npu;
  const page = fs.readFileSync("demo-default.html", "utf8");
  const data = JSON.parse(page.match(/id="uscope-data" data-mode="static">([^]*?)<\/script>/)[1]);
  const a = Math.floor(npu.start_cycle * npu.period_ps / data.clock.period_ps);
  console.log(a + ":" + (a + 9999));')
echo "demo range: $range"
"$uscope" view demo.uscope --range "$range" -o demo.html

# The NPU trace, made from JSON Lines (a trace without a cpu scope).
node make_npu_jsonl.mjs npu.jsonl
"$uscope" convert npu.jsonl -o npu.uscope >/dev/null
"$uscope" view npu.uscope -o npu.html

# A cpu without buffers, and no npu scope.
USCOPE_BENCH_CYCLES=20000 "$example" cpu.uscope >/dev/null
"$uscope" view cpu.uscope -o cpu.html

# Serve mode on a free port of 127.0.0.1; the server runs until this script stops it.
"$uscope" view npu.uscope --serve --port 0 >serve.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's/.* on \(http:[^ ]*\) .*/\1/p' serve.log)
  [ -n "$url" ] && break
  kill -0 $server 2>/dev/null || fail "the server exited: $(cat serve.log)"
  sleep 0.1
done
[ -n "$url" ] || fail "the server printed no URL: $(cat serve.log)"
case "$url" in http://127.0.0.1:*) ;; *) fail "the server is not on loopback: $url" ;; esac

node view_test.mjs "$chromium" "$work" "static:demo:$work/demo.html" "static:npu:$work/npu.html" "static:cpu:$work/cpu.html" \
  "serve:npu-served:$url" "api:npu-api:$url"
kill -0 $server 2>/dev/null || fail "the server died during the test: $(cat serve.log)"
