#!/usr/bin/env bash
# Builds the wasm module and assembles the installable npm package in dist/pkg, plus its
# `npm pack` tarball in dist/. Usage: bash scripts/build.sh [--debug]
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$REPO_ROOT"

profile=release
[ "${1:-}" = "--debug" ] && profile=debug
flags=(); [ "$profile" = release ] && flags=(--release)

# On a fresh clone: the npm packages (sql.js ships inside the package) and the wasm toolchain
# come from the setup's build-only part, which skips whatever is already there.
if [ ! -f node_modules/sql.js/dist/sql-wasm.wasm ] || ! command -v wasm-bindgen >/dev/null || ! { rustup_has_wasm || debian_wasm_std; }; then
  echo "==> build prerequisites missing; running: bash scripts/setup.sh --build-only"
  bash scripts/setup.sh --build-only
fi

wasm_cargo build --quiet --lib --target wasm32-unknown-unknown "${flags[@]}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"

rm -rf dist/pkg && mkdir -p dist/pkg/wasm dist/pkg/shim
wasm-bindgen --target web --out-dir dist/pkg/wasm --out-name lossless_wasm \
  "$WASM_TARGET_DIR/wasm32-unknown-unknown/$profile/lossless_wasm.wasm"
# The shim's folders as they are (docs/architecture.md), the explorer's page among them.
cp -r js-shim/. dist/pkg/shim/
# sql.js ships inside the package (the Node build only, ~1.3 MB), so installing the plugin needs
# no registry access. Browser embedders bring their own sql.js.
mkdir -p dist/pkg/vendor/sql.js
cp node_modules/sql.js/dist/sql-wasm.wasm node_modules/sql.js/LICENSE dist/pkg/vendor/sql.js/
# .cjs: the package is "type": "module", and sql.js is a CommonJS file.
cp node_modules/sql.js/dist/sql-wasm.js dist/pkg/vendor/sql.js/sql-wasm.cjs
cp openclaw.plugin.json pkg-template/README.md dist/pkg/
cp -r pkg-template/types dist/pkg/types
node -e '
  const fs = require("fs");
  const pkg = JSON.parse(fs.readFileSync("pkg-template/package.json", "utf8"));
  pkg.version = process.argv[1];
  fs.writeFileSync("dist/pkg/package.json", JSON.stringify(pkg, null, 2) + "\n");
' "$version"
grep -q "ENGINE_VERSION = \"$version\"" js-shim/engine/context-engine.js || {
  echo "error: js-shim/engine/context-engine.js ENGINE_VERSION differs from Cargo.toml version $version" >&2; exit 1; }

rm -f dist/*.tgz
(cd dist && npm pack --silent ./pkg >/dev/null)
echo "built dist/pkg and dist/$(cd dist && ls *.tgz) ($(du -h dist/pkg/wasm/lossless_wasm_bg.wasm | cut -f1) wasm)"
