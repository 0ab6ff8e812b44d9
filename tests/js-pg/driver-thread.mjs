// A worker thread holding the PostgreSQL driver (dist/pkg/shim/postgres/database.js) by itself, for
// faults.test.mjs: the driver only opens off the main thread, and this lets a test send
// statements one by one, as the engine's store would, with faults injected between them.
// Each message is a list of statements; the reply lists "ok" or "error <message>" for each.
import { parentPort, workerData } from "node:worker_threads";

const { PostgresDatabase } = await import(workerData.driver);
// Optional: `defer` (the driver's deferral of unread statements inside a transaction),
// `lockTimeoutMs` and `statementGraceMs` (its timeouts; partition.test.mjs shortens them).
const options = Object.fromEntries(["defer", "lockTimeoutMs", "statementGraceMs"].filter((k) => workerData[k] !== undefined).map((k) => [k, workerData[k]]));
const db = new PostgresDatabase({ url: workerData.url, schema: workerData.schema, ...options });

const run = (sql) => {
  try {
    db.prepare(sql).run([]);
    return "ok";
  } catch (err) {
    return `error ${err.message}`;
  }
};

parentPort.on("message", (statements) => {
  if (statements === "close") {
    db.close();
    parentPort.close();
    return;
  }
  parentPort.postMessage(statements.map(run));
});
