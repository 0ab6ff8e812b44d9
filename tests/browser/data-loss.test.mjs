// When Chromium finds an origin's IndexedDB corrupt on opening it, it deletes the database and
// hands the page an empty one, saying so only on that one open's upgrade event (dataLoss
// "total"). This test damages a real profile's LevelDB log between two browser runs, as a
// crash can, and checks that the browser engine reports the loss (engine.dataLoss, a console
// warning) instead of opening the empty store as a new one, that the report outlives that first
// open (a later open, in a worker, still has it), and that the engine keeps working.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { launchOnProfile } from "./chromium.mjs";
import { startStaticServer } from "./static-server.mjs";

let server;
let profile;

before(async () => {
  server = await startStaticServer();
  profile = mkdtempSync(join(tmpdir(), "lossless-wasm-data-loss-"));
});

after(async () => {
  await server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** Runs `body` (the source of an async function of `lib`, the library module, and `SQL`) in a
 *  page of a browser on the test's profile, then closes that browser. */
async function inBrowser(body) {
  const context = await launchOnProfile(profile);
  const warnings = [];
  try {
    const page = await context.newPage();
    page.on("console", (m) => m.type() === "warning" && warnings.push(m.text()));
    await page.goto(`${server.url}/tests/browser/blank.html`);
    await page.addScriptTag({ url: "/node_modules/sql.js/dist/sql-wasm.js" });
    const result = await page.evaluate(async (source) => {
      const lib = await import("/dist/pkg/shim/library.js");
      const SQL = await globalThis.initSqlJs({ locateFile: (f) => `/node_modules/sql.js/dist/${f}` });
      return new Function("lib", "SQL", `return (async () => { ${source} })();`)(lib, SQL);
    }, body);
    return { result, warnings };
  } finally {
    await context.close();
  }
}

/** Flips bytes in the middle of the origin's LevelDB write-ahead log: on the next open LevelDB
 *  meets a record whose checksum fails with data after it, which is corruption. */
function damageLevelDbLog() {
  const dir = join(profile, "Default", "IndexedDB");
  const origin = readdirSync(dir).find((d) => d.startsWith("http_127.0.0.1_") && d.endsWith(".indexeddb.leveldb"));
  assert.ok(origin, `the origin's LevelDB directory under ${dir} (found ${readdirSync(dir).join(", ")})`);
  const logs = readdirSync(join(dir, origin)).filter((f) => f.endsWith(".log")).map((f) => join(dir, origin, f));
  const log = logs.sort((a, b) => statSync(b).size - statSync(a).size)[0];
  const bytes = log && readFileSync(log);
  assert.ok(bytes?.length > 1000, `a LevelDB log holding the stored turns (${log ?? "none"}: ${bytes?.length ?? 0} bytes)`);
  for (let i = 0; i < 16; i++) bytes[Math.floor(bytes.length / 2) + i] ^= 0xff;
  writeFileSync(log, bytes);
}

const OPEN = `lib.openBrowserEngine({ SQL, idbName: "loss-test", key: "chat" })`;
const s = `{ sessionId: "s", sessionKey: "chat" }`;
const turn = (i) => `engine.commitTurn({ ...${s}, advancementKey: "t${i}", messages: [
  { role: "user", content: "loss question ${i} " + "x".repeat(300), timestamp: ${10 * i} },
  { role: "assistant", content: [{ type: "text", text: "loss answer ${i}" }], timestamp: ${10 * i + 1} } ] })`;

test("a database the browser discarded as corrupt is reported, not opened as a new one", async () => {
  const written = await inBrowser(`
    const engine = await ${OPEN};
    ${[0, 1, 2].map((i) => `await ${turn(i)};`).join("\n")}
    const count = (await engine.describe(${s})).messageCount;
    const dataLoss = engine.dataLoss;
    await engine.close();
    return { count, dataLoss };
  `);
  assert.deepEqual(written.result, { count: 6, dataLoss: null }, "three turns stored, nothing reported lost");
  assert.deepEqual(written.warnings, []);

  damageLevelDbLog();
  const reopened = await inBrowser(`
    const engine = await ${OPEN};
    const before = (await engine.describe(${s})).messageCount ?? 0;
    const status = (await ${turn(3)}).status;
    const after = (await engine.describe(${s})).messageCount;
    const dataLoss = engine.dataLoss;
    await engine.close();
    return { before, status, after, dataLoss };
  `);
  // The premise: the browser did discard what was stored.
  assert.equal(reopened.result.before, 0, "the browser handed the page an empty database");
  assert.match(reopened.result.dataLoss?.message ?? "", /corrupt/i, "the browser's reason is kept");
  assert.ok(reopened.result.dataLoss.at > 0);
  assert.equal(reopened.result.status, "committed");
  assert.equal(reopened.result.after, 2, "the engine goes on storing");
  assert.equal(reopened.warnings.length, 1, `one warning on the open that met the loss: ${JSON.stringify(reopened.warnings)}`);
  assert.match(reopened.warnings[0], /discarded IndexedDB "loss-test" .*recreated it empty/);

  const later = await inBrowser(`
    const engine = await lib.openBrowserEngineInWorker({ sqlJsUrl: "/node_modules/sql.js/dist/sql-wasm.js", idbName: "loss-test", key: "chat" });
    const count = (await engine.describe(${s})).messageCount;
    const dataLoss = engine.dataLoss;
    await engine.close();
    return { count, dataLoss };
  `);
  assert.equal(later.result.count, 2, "the turn stored after the loss is there");
  assert.deepEqual(later.result.dataLoss, reopened.result.dataLoss, "a later open, in a worker, still reports the loss");
  assert.deepEqual(later.warnings, [], "only the open that met the loss warns");
});
