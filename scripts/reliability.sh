#!/usr/bin/env bash
# The long reliability runs behind docs/reliability.md (too slow for CI; the test suite runs a
# short version of each): the 10,000-turn summarizer-fault soak, 100 SIGKILLs per storage driver
# at every write point, and the property tests with many more cases.
# Usage: bash scripts/reliability.sh [soak-turns]   (default 10000; results in target/reliability/)
set -uo pipefail
source "$(dirname "$0")/env.sh"
cd "$REPO_ROOT"
turns="${1:-10000}"
out="target/reliability"
mkdir -p "$out"
[ -f dist/pkg/shim/index.js ] || bash scripts/build.sh || { echo "build failed"; exit 1; }
node="$NODE26_BIN/node"
[ -x "$node" ] || { echo "error: Node 26 (node:sqlite) is missing; run: bash scripts/setup.sh" >&2; exit 1; }
status=0
run() {
  local name="$1"; shift
  echo "=== $name"
  local start=$SECONDS
  "$@" 2>&1 | tee "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "--- $name: exit $rc, $((SECONDS - start)) s"
  [ "$rc" = 0 ] || status=1
}
# node:sqlite carries the long soak; sql.js rewrites its whole file after every turn, so its
# soak is a fifth as long (its per-turn save cost is measured in docs/benchmarks.md).
run soak-node-sqlite "$node" tests/js/soak-run.mjs node:sqlite "$turns" "$out/soak-node-sqlite.json"
run soak-sqljs "$node" tests/js/soak-run.mjs sql.js "$((turns / 5))" "$out/soak-sqljs.json"
run crash env LOSSLESS_KILLS=100 "$node" --test --test-reporter=spec tests/js/node/durability.test.mjs tests/js/node/crash.test.mjs
run fuzz env LOSSLESS_FUZZ_CASES=100000 cargo test --release --test native fuzz::
echo
[ "$status" = 0 ] && echo "reliability: all runs passed" || echo "reliability: some runs FAILED (see $out)"
exit "$status"
