#!/usr/bin/env bash
# The README's demo: build libuscope and its example, write a trace, print its stats.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/deps.sh
uscope_install_deps
cmake --preset default -DUSCOPE_BUILD_TESTS=OFF -DUSCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build build/default --target uscope_example_pipeline
./build/default/uscope_example_pipeline build/default/pipeline.uscope
