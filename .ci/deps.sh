#!/usr/bin/env bash
# Installs (as root) or names (otherwise) the Debian 12 packages the build and
# the tests need. Sourced by .ci/demo.sh and .ci/test.sh.
# clang builds the libFuzzer target; libclang-rt-14-dev holds libFuzzer and
# the sanitizer runtimes (only a Recommends of clang-14, so named here).
# verilator and gcc-riscv64-unknown-elf build the testbench SoC (verilator_tb/)
# and its firmware.
# verilator also builds the DPI bridge's tests (tests/dpi: signature drift, e2e).
# libdw-dev (elfutils: libdw, libelf) reads the symbols and line tables of a program's ELF
# (src/analysis/elf_info).
# verilator also ships GTKWave's fstapi (include/gtkwave), which the FST export compiles in;
# gtkwave's fst2vcd reads those FST files back in the tests (tests/unit/test_export_waveform.cpp).
# protobuf-compiler (protoc --decode_raw) decodes the Perfetto export in its tests; libdevel-nytprof-perl
# (nytprofhtml, nytprofcsv) reads the NYTProf export in its tests, as a user would.
# g++ brings libtsan2 (via libgcc-12-dev), the TSan runtime of the tsan preset.
USCOPE_PACKAGES=(cmake ninja-build g++ pkg-config liblz4-dev libzstd-dev libdw-dev libgtest-dev
                 libbenchmark-dev libsimdjson-dev libcli11-dev zlib1g-dev libdeflate-dev
                 clang libclang-rt-14-dev
                 verilator gcc-riscv64-unknown-elf gtkwave libdevel-nytprof-perl
                 nodejs protobuf-compiler
                 chromium)
# chromium: the headless browser of the uscope view test (tests/browser, ctest view_browser).
# The MCP SDK client test (tests/mcp) runs the TypeScript SDK with node and npm. Debian's npm is
# a package of its own; nodesource's nodejs brings its own npm (and conflicts with Debian's).
command -v npm >/dev/null 2>&1 || USCOPE_PACKAGES+=(npm)
# The Python package's tests (python/CMakeLists.txt) run with the system's python3, which builds
# and pip-installs the package offline only with pip, setuptools and wheel beside it; numpy, which
# the package uses when present (counters as arrays), so that that path is tested too.
USCOPE_PACKAGES+=(python3 python3-pip python3-setuptools python3-wheel python3-numpy)

uscope_install_deps() {
  local missing=()
  for p in "${USCOPE_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "missing packages; run as root:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    return 1
  fi
}
