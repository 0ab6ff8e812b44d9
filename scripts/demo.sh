#!/usr/bin/env bash
# The main job: builds the wasm package (installing the toolchain when missing) and runs the demo
# on the bundled transcript, with no network access and no API key.
# Usage: bash scripts/demo.sh [token-budget]      the CLI demo, in Node
#        bash scripts/demo.sh --web [port]        the demo page, served on 127.0.0.1 (prints the URL)
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$REPO_ROOT"
bash scripts/setup.sh --build-only >&2
bash scripts/build.sh >&2
if [ "${1:-}" = "--web" ]; then
  shift
  exec node demo/web/server.mjs "$@"
fi
node demo/run.mjs "$@"
