#!/usr/bin/env bash
# Runs every test suite: native Rust, wasm in Node, wasm in headless Chromium, the JS shim
# against a fake host, the end-to-end test in the real OpenClaw host, and a real small model as
# the summarizer. Installs what is missing first (scripts/setup.sh) and builds the package
# (scripts/build.sh).
# Ends with one line "N passed, N failed" summing all suites; exits non-zero if any failed.
set -uo pipefail
source "$(dirname "$0")/env.sh"
cd "$REPO_ROOT"

bash scripts/setup.sh || { echo "setup failed"; exit 1; }
bash scripts/build.sh || { echo "build failed"; exit 1; }

logs="$(mktemp -d)"
passed=0; failed=0; broken=()

# Adds one suite's counts, parsed from its runner's own summary lines.
count() {
  local name="$1" log="$2" status="$3" p f
  if grep -q '^test result:' "$log"; then
    p=$(grep -o '[0-9]* passed' "$log" | awk '{s+=$1} END {print s+0}')
    f=$(grep -o '[0-9]* failed' "$log" | awk '{s+=$1} END {print s+0}')
  else
    p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
    f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
  fi
  passed=$((passed + p)); failed=$((failed + f))
  if [ "$status" != 0 ] || [ "$p" = 0 ]; then broken+=("$name"); fi
  echo "--- $name: $p passed, $f failed (exit $status)"
}

suite() {
  local name="$1"; shift
  echo "=== $name"
  "$@" 2>&1 | tee "$logs/$name.log"
  count "$name" "$logs/$name.log" "${PIPESTATUS[0]}"
}

suite native cargo test
# The store on a real PostgreSQL server that the suite starts and deletes itself
# (scripts/pg-server.sh; installed by setup.sh): ~1.5 min warm, ~1 min more for its first build.
# One `--test` per tests/*_pg.rs, so a new PostgreSQL test file runs without being listed here.
pg_tests=""
for f in tests/*_pg.rs; do
  pg_tests="$pg_tests --test $(basename "$f" .rs)"
done
# shellcheck disable=SC2086
suite postgres bash scripts/pg-server.sh run cargo test --features postgres $pg_tests
suite postgres-node bash scripts/pg-server.sh run "$NODE26_BIN/node" --test --test-reporter=tap --test-concurrency=1 tests/js-pg/
# Node 26 first on PATH: the node:sqlite storage cases run in it.
suite wasm-node env PATH="$NODE26_BIN:$PATH" CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  bash -c 'source scripts/env.sh && wasm_cargo test --target wasm32-unknown-unknown --test wasm_node'
suite wasm-chromium env CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner CHROMEDRIVER=/usr/bin/chromedriver \
  bash -c 'source scripts/env.sh && wasm_cargo test --target wasm32-unknown-unknown --test wasm_browser'
# The shim on both storage drivers (sql.js and node:sqlite) needs Node 26 too.
suite shim "$NODE26_BIN/node" --test --test-reporter=tap tests/js/
suite browser-package "$NODE26_BIN/node" --test --test-reporter=tap tests/browser/
suite e2e-openclaw "$NODE26_BIN/node" --test --test-reporter=tap --test-concurrency=1 tests/e2e/
# A real small instruct model on the CPU (installed by setup.sh) as a session's summarizer:
# about three minutes of model time on this project's 2-core machines (docs/summarization.md).
suite real-model "$NODE26_BIN/node" --test --test-reporter=tap --test-concurrency=1 tests/model/

echo
if [ ${#broken[@]} -gt 0 ]; then
  echo "suites that failed or ran no test: ${broken[*]}"
fi
echo "$passed passed, $failed failed"
[ ${#broken[@]} -eq 0 ] && [ "$failed" = 0 ]
