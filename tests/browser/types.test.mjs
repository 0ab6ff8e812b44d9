// The package's TypeScript types (pkg-template/types, shipped in dist/pkg/types): a consumer
// resolving `lossless-wasm` and `lossless-wasm/library` through package.json `exports` compiles
// with `tsc --noEmit` under strict settings; typical mistakes fail to compile; and the config
// type lists exactly the keys of the plugin manifest's configSchema.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
const dirs = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Compiles `file` in a project where node_modules/lossless-wasm is the built package. */
function compile(file) {
  const dir = mkdtempSync(join(tmpdir(), "lossless-wasm-types-"));
  dirs.push(dir);
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(join(ROOT, "dist/pkg"), join(dir, "node_modules/lossless-wasm"), "dir");
  copyFileSync(join(ROOT, "tests/browser/types", file), join(dir, file));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "nodenext", moduleResolution: "nodenext", lib: ["es2022", "dom"], types: [], skipLibCheck: false },
    files: [file],
  }));
  const run = spawnSync(process.execPath, [TSC, "-p", dir], { encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

test("a consumer of the library and plugin types compiles through package.json exports", () => {
  const { status, output } = compile("consumer.ts");
  assert.equal(status, 0, output);
});

test("typical mistakes do not compile, each on its own line", () => {
  const { status, output } = compile("misuse.ts");
  assert.notEqual(status, 0);
  const source = readFileSync(join(ROOT, "tests/browser/types/misuse.ts"), "utf8").split("\n");
  const expected = source.flatMap((line, i) => (line.includes("// MISUSE") ? [i + 1] : []));
  const failing = [...new Set([...output.matchAll(/misuse\.ts\((\d+),\d+\): error/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);
  assert.deepEqual(failing, expected, output);
});

test("the config type lists exactly the manifest's config keys", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "openclaw.plugin.json"), "utf8"));
  const declared = readFileSync(join(ROOT, "pkg-template/types/config.d.ts"), "utf8");
  const keys = [...declared.matchAll(/^\s+(\w+)\?:/gm)].map((m) => m[1]).sort();
  assert.deepEqual(keys, Object.keys(manifest.configSchema.properties).sort());
});

test("the built package.json points every export at its types", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "dist/pkg/package.json"), "utf8"));
  for (const entry of [".", "./library"]) {
    const types = pkg.exports[entry].types;
    assert.ok(types, `${entry} has types`);
    assert.ok(readFileSync(join(ROOT, "dist/pkg", types), "utf8").length > 0);
  }
  assert.ok(pkg.files.includes("types/"));
});
