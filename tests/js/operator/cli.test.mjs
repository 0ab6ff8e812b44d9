// The headless operator CLI (`lossless-wasm-lcm`, dist/pkg/shim/operator/cli.js) run as a child process
// against real database files: import creates one from a lossless-claw lcm.db, status, doctor and
// repair read and fix it, repair writes through an OpenAI-compatible LLM on 127.0.0.1, and wrong
// command lines, missing or broken databases get clear messages and exit codes.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { writeLosslessClawDb } from "../lcm-fixture.mjs";
import { PKG, query, STORAGES, tempDir } from "../support.mjs";

const CLI = fileURLToPath(new URL("shim/operator/cli.js", PKG));
const KEY = "agent:main:headless";

/** Runs the CLI; resolves {code, stdout, stderr}. Asynchronous: the mock LLM runs in this process. */
function cli(args, env = {}) {
  const clean = { ...process.env };
  for (const k of Object.keys(clean)) if (k.startsWith("LOSSLESS_WASM_") || k.startsWith("OPENCLAW_")) delete clean[k];
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...clean, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** An OpenAI-compatible chat-completions server; `fail` makes it answer HTTP 500. */
async function mockLlm({ fail = false } = {}) {
  const requests = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const json = JSON.parse(body || "{}");
      requests.push({ url: req.url, auth: req.headers.authorization, body: json });
      if (fail) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "mock: unavailable" } }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      const text = `## Goal\n- release rel-7 frozen Thursday noon (redone headless ${requests.length})`;
      res.end(JSON.stringify({ id: "x", model: json.model, choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: text } }] }));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}/v1`, requests, close: () => new Promise((r) => server.close(r)) };
}

/** A database made by the CLI's own import (a conversation and one fallback summary). */
async function importedDb(storage) {
  const dir = tempDir("cli");
  const source = join(dir, "lcm.db");
  await writeLosslessClawDb(source, KEY);
  const db = join(dir, "lossless.sqlite");
  const out = await cli(["--db", db, "--storage", storage, "import", source]);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /1 new conversation\(s\), 4 message\(s\), 1 summary \(1 fallback\)/);
  return { dir, db };
}

describe("command line errors", () => {
  test("no command, an unknown command or option: usage on stderr, exit 2", async () => {
    for (const [args, message] of [
      [[], /no command given/],
      [["frobnicate"], /unknown command "frobnicate"/],
      [["status", "--bogus"], /Unknown option '--bogus'/],
      [["status", "--dry-run"], /--dry-run applies to doctor and repair, not status/],
      [["import"], /import needs exactly one path/],
      [["status", "--storage", "leveldb"], /--storage must be auto, node:sqlite, sql.js or postgres/],
      [["copy-to-postgres"], /copy-to-postgres needs the server: --postgres-url .* or \$LOSSLESS_WASM_POSTGRES_URL/],
      [["status", "--storage", "postgres"], /--storage postgres needs the server/],
      [["copy-to-postgres", "--postgres-url", "mysql://u:secret@h/db"], /invalid --postgres-url: must be a connection URL starting with postgres:\/\//],
      [["copy-to-postgres", "--postgres-url", "postgres://u:secret@h/db", "--postgres-schema", "Bad-Name"], /invalid --postgres-schema: must be a schema name/],
      [["copy-to-postgres", "--postgres-url", "postgres://u:secret@h/db", "--storage", "postgres"], /copy-to-postgres reads a SQLite store/],
      [["copy-to-postgres", "extra", "--postgres-url", "postgres://u:secret@h/db"], /copy-to-postgres takes no argument/],
      [["status", "--postgres-url", "postgres://u:secret@h/db"], /--postgres-url and --postgres-schema apply to copy-to-postgres and --storage postgres/],
      [["repair", "--timeout-ms", "soon", "--dry-run"], /--timeout-ms must be a positive integer/],
    ]) {
      const out = await cli(args);
      assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
      assert.match(out.stderr, message);
      assert.match(out.stderr, /usage: lossless-wasm-lcm/);
      assert.equal(out.stdout, "");
      assert.ok(!out.stderr.includes("secret"), `${args.join(" ")}: the password is never shown`);
    }
  });

  test("copy-to-postgres without a database at --db: named in the message, exit 2", async () => {
    const missing = join(tempDir("cli"), "nope.sqlite");
    const out = await cli(["--db", missing, "copy-to-postgres"], { LOSSLESS_WASM_POSTGRES_URL: "postgres://u:secret@127.0.0.1:1/db" });
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /no database at/);
  });

  test("--help prints the usage on stdout, exit 0", async () => {
    const out = await cli(["--help"]);
    assert.equal(out.code, 0);
    assert.match(out.stdout, /usage: lossless-wasm-lcm \[--db <path> \| --storage postgres\] <command>/);
    assert.match(out.stdout, /copy-to-postgres/);
  });

  test("a database path that does not exist: named in the message, exit 2, nothing created", async () => {
    const missing = join(tempDir("cli"), "nope", "lossless.sqlite");
    const out = await cli(["--db", missing, "status"]);
    assert.equal(out.code, 2);
    assert.match(out.stderr, new RegExp(`no database at ${missing.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    assert.equal(existsSync(missing), false, "status must not create a database");
  });

  test("a database path under a file: status says the database cannot be opened, naming dbPath, the path and the reason", async () => {
    const file = join(tempDir("cli"), "a-file");
    writeFileSync(file, "not a folder");
    const unusable = join(file, "lossless-wasm", "lossless.sqlite");
    const out = await cli(["--db", unusable, "status"]);
    assert.equal(out.code, 2);
    assert.equal(out.stderr.trim().split("\n").length, 1, out.stderr);
    assert.ok(out.stderr.includes(`config \`dbPath\` is ${unusable}: ENOTDIR`), out.stderr);
    assert.match(out.stderr, /legacy context engine/);
  });

  test("without --db the plugin's default location under $OPENCLAW_STATE_DIR is used", async () => {
    const state = tempDir("cli-state");
    const out = await cli(["status"], { OPENCLAW_STATE_DIR: state });
    assert.equal(out.code, 2);
    assert.match(out.stderr, new RegExp(`no database at ${join(state, "lossless-wasm", "lossless.sqlite").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  });

  test("a file that is not SQLite: the command fails with the engine's message, exit 1, the file untouched", async () => {
    const path = join(tempDir("cli"), "notes.txt");
    writeFileSync(path, "these are notes, not a database\n".repeat(20));
    const before = readFileSync(path);
    const out = await cli(["--db", path, "status"]);
    assert.equal(out.code, 1, out.stderr);
    assert.match(out.stderr, /lossless-wasm-lcm: status failed: .+/);
    assert.deepEqual(readFileSync(path), before);
  });
});

for (const storage of STORAGES) describe(`storage ${storage}`, () => {
  test("status, doctor and repair --dry-run report on a real database; repair without an LLM says it needs one", async () => {
    const { db } = await importedDb(storage);
    const status = await cli(["--db", db, "--storage", storage, "status"]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^lossless-wasm status\nconversations: 0 active, 1 archived\nmessages: 4 \(/);
    assert.match(status.stdout, /summaries by level and depth: fallback d0: 1\n/);

    const doctor = await cli(["--db", db, "--storage", storage, "doctor", "--dry-run"]);
    assert.match(doctor.stdout, /lossless-wasm doctor: .*\(dry run: nothing changed\)/);
    assert.match(doctor.stdout, /sqlite_integrity/);
    assert.equal(doctor.code, /all checks pass/.test(doctor.stdout) ? 0 : 1, doctor.stdout);

    const plan = await cli(["--db", db, "--storage", storage, "repair", "--dry-run"]);
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /would redo 1 fallback summary and 0 built on them:\n {2}summary \d+ \(depth 0, fallback\)/);

    const noLlm = await cli(["--db", db, "--storage", storage, "repair"]);
    assert.equal(noLlm.code, 2);
    assert.match(noLlm.stderr, /repair needs an LLM .*--llm-url/);
    const still = await query(db, "SELECT level FROM summaries");
    assert.deepEqual(still, [["fallback"]], "nothing was repaired without an LLM");
  });

  test("repair through an OpenAI-compatible endpoint redoes the fallback; a failing endpoint leaves it, exit 1", async () => {
    const { db } = await importedDb(storage);
    const down = await mockLlm({ fail: true });
    try {
      const failed = await cli(["--db", db, "--storage", storage, "repair", "--llm-url", down.url, "--llm-model", "tiny"]);
      assert.equal(failed.code, 1, `${failed.stdout}\n${failed.stderr}`);
      assert.match(failed.stdout, /redone 0/);
      assert.ok(down.requests.length >= 1, "the endpoint was asked");
    } finally {
      await down.close();
    }
    assert.deepEqual(await query(db, "SELECT level FROM summaries"), [["fallback"]], "a failed repair keeps the old summary");

    const llm = await mockLlm();
    try {
      const out = await cli(["--db", db, "--storage", storage, "repair"], {
        LOSSLESS_WASM_LLM_URL: llm.url,
        LOSSLESS_WASM_LLM_MODEL: "tiny",
        LOSSLESS_WASM_LLM_API_KEY: "sk-test",
      });
      assert.equal(out.code, 0, `${out.stdout}\n${out.stderr}`);
      assert.match(out.stdout, /1 fallback summary and 0 built on them; redone 1 \(\d+\)/);
      assert.equal(llm.requests.length, 1);
      const [r] = llm.requests;
      assert.equal(r.url, "/v1/chat/completions");
      assert.equal(r.auth, "Bearer sk-test");
      assert.equal(r.body.model, "tiny");
      assert.ok(JSON.stringify(r.body.messages).includes("release train leaves on Thursday"), "the prompt carries the original messages");
    } finally {
      await llm.close();
    }
    const rows = await query(db, "SELECT level, content FROM summaries");
    assert.equal(rows.length, 1);
    assert.equal(rows[0][0], "normal");
    assert.match(rows[0][1], /redone headless 1/);
    const after = await cli(["--db", db, "--storage", storage, "repair", "--dry-run"]);
    assert.match(after.stdout, /no fallback summaries; nothing to do/);
  });
});
