#!/usr/bin/env bash
# Reruns every benchmark and writes the results into docs/benchmarks.md: builds the package,
# runs the host-path harness (bench/host-path: the wasm build driven as OpenClaw drives it) at
# 1K/10K/100K stored messages on node:sqlite and sql.js with afterTurn, and on node:sqlite with
# commitTurn, and the native criterion suite.
# Takes about 2 minutes on the 2-core machine class. Benchmarks assert nothing.
#   bash scripts/bench.sh            # everything
#   SIZES=1000,10000 bash scripts/bench.sh   # a quicker subset
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$REPO_ROOT"
bash scripts/build.sh
criterion_log="$(mktemp)"
cargo bench --bench engine 2>&1 | tee "$criterion_log"
"$NODE26_BIN/node" bench/host-path/report.mjs --sizes "${SIZES:-1000,10000,100000}" \
  --criterion "$criterion_log" --write docs/benchmarks.md
echo "wrote docs/benchmarks.md"
