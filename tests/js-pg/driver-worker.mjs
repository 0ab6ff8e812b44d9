// Runs a script of statements through the PostgreSQL driver (postgres/database.js) directly, in a
// worker thread because the driver blocks its thread and refuses the main one. workerData:
// { url, schema, defer, steps: [[kind, sql, params?], ...] } with kind "run", "all" or "exec";
// posts back each step's outcome ({ ok, rows } or { error, code, name, postgresError, fromIoThread })
// and the driver's stats.
import { workerData, parentPort } from "node:worker_threads";

const { PostgresDatabase } = await import(new URL("shim/postgres/database.js", workerData.pkg));
const { PostgresError } = await import(new URL("shim/errors.js", workerData.pkg));
const db = new PostgresDatabase({ url: workerData.url, schema: workerData.schema, defer: workerData.defer });
const outcomes = [];
for (const [kind, sql, params = []] of workerData.steps) {
  try {
    if (kind === "exec") outcomes.push({ ok: true, rows: db.exec(sql) });
    else if (kind === "run") outcomes.push({ ok: db.prepare(sql).run(params) });
    else outcomes.push({ ok: true, rows: db.prepare(sql).all(params) });
  } catch (err) {
    outcomes.push({
      error: err.message,
      code: err.code,
      name: err.name,
      postgresError: err instanceof PostgresError,
      fromIoThread: /\(thrown in the PostgreSQL I\/O thread, rebuilt here\)$/.test(err.stack),
    });
  }
}
const stats = db.stats();
db.close();
parentPort.postMessage({ outcomes, stats });
