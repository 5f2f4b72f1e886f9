#!/usr/bin/env bash
# The MCP SDK client test (ctest: mcp_sdk_client): the official TypeScript SDK
# (@modelcontextprotocol/sdk, the exact version pinned in package.json and
# package-lock.json) spawns `uscope mcp` and `uscope-mcp` over stdio, calls
# every tool and compares the answers with the C API's (expect_main.cpp).
#
#   run_client_test.sh USCOPE USCOPE_MCP USCOPE_MCP_EXPECT SOURCE_DIR WORK_DIR README
#
# `npm ci` installs the SDK into a copy under WORK_DIR (the source tree stays
# clean). No node, no npm or no registry is a failure, never a skip.
set -euo pipefail
uscope=$1 uscope_mcp=$2 expect=$3 src=$4 work=$5 readme=$6

fail() { echo "mcp sdk client: FAILED: $*" >&2; exit 1; }
command -v node >/dev/null || fail "node is not installed (Debian: apt-get install nodejs npm)"
command -v npm >/dev/null || fail "npm is not installed (Debian: apt-get install npm)"
echo "node $(node --version), npm $(npm --version)"

mkdir -p "$work"
cp "$src/package.json" "$src/package-lock.json" "$src/client_test.mjs" "$work/"
cd "$work"
# The lock file pins every package; reuse node_modules when it was installed from this very lock.
if ! cmp -s package-lock.json node_modules/.uscope-lock 2>/dev/null; then
  npm ci --no-audit --no-fund --loglevel=error || fail "npm ci could not install @modelcontextprotocol/sdk (registry unreachable?)"
  cp package-lock.json node_modules/.uscope-lock
fi

rm -f cpu.uscope npu.uscope npu.jsonl noc.uscope expected.json
"$expect" "$work" > expected.json || fail "uscope_mcp_expect failed"
node client_test.mjs "$uscope" "$uscope_mcp" "$work/expected.json" "$readme"
