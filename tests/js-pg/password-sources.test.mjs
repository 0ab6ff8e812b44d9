// The password can stay out of the plugin's config: a `postgresUrl` without one takes it from
// the environment (PGPASSWORD) or a password file (~/.pgpass, or the file PGPASSFILE names), as
// `pg` reads them in the store's I/O thread. Each case is a gateway child process
// (gateway-child.mjs) with its own environment; a wrong password fails in one line without it.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { pgQuery, runGateway, schemaFor, URL_ } from "./support.mjs";

const server = new globalThis.URL(URL_);
const PASSWORD = decodeURIComponent(server.password);
/** The server's URL without its password. */
const withoutPassword = `postgres://${server.username}@${server.host}${server.pathname}`;

/** A gateway process committing `turns` turns with `env` (PG* variables removed first). */
function gateway(schema, env, turns = 2) {
  const clean = { ...process.env };
  for (const key of Object.keys(clean)) if (key.startsWith("PG")) delete clean[key];
  return runGateway({ schema, name: "G", sessionKey: "agent:main:pw", turns, env: { ...clean, LCM_PG_GATEWAY_URL: withoutPassword, ...env } });
}

const stored = async (schema) => Number((await pgQuery(`SELECT COUNT(*) FROM ${schema}.messages`))[0][0]);

describe("storage postgres: the password outside the config", () => {
  test("a URL without a password and PGPASSWORD in the environment", { timeout: 60_000 }, async () => {
    const schema = schemaFor("pgpassword");
    const run = await gateway(schema, { PGPASSWORD: PASSWORD });
    assert.equal(run.code, 0, run.err);
    assert.equal(run.acks, 2);
    assert.equal(await stored(schema), 4);
  });

  test("a URL without a password and a password file (PGPASSFILE)", { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "lcm-pgpass-"));
    try {
      const file = join(dir, "pgpass");
      writeFileSync(file, `${server.hostname}:${server.port}:${server.pathname.slice(1)}:${server.username}:${PASSWORD.replaceAll("\\", "\\\\").replaceAll(":", "\\:")}\n`);
      chmodSync(file, 0o600);
      const schema = schemaFor("pgpassfile");
      const run = await gateway(schema, { PGPASSFILE: file });
      assert.equal(run.code, 0, run.err);
      assert.equal(run.acks, 2);
      assert.equal(await stored(schema), 4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a wrong PGPASSWORD fails in one line naming the user, without either password", { timeout: 60_000 }, async () => {
    const wrong = `wrong-${PASSWORD.slice(0, 8)}-x`;
    const run = await gateway(schemaFor("pgwrong"), { PGPASSWORD: wrong });
    assert.equal(run.code, 1);
    assert.equal(run.acks, 0);
    assert.match(run.err, /^error: .*cannot connect to PostgreSQL at postgres:\/\/lcm@127\.0\.0\.1:\d+\/postgres: PostgreSQL FATAL 28P01: password authentication failed for user "lcm"/);
    assert.ok(!run.err.includes(PASSWORD) && !run.err.includes(wrong), run.err);
    assert.equal(run.err.trim().split("\n").length, 1, run.err);
  });
});
