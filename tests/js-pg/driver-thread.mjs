// A worker thread holding the PostgreSQL driver (dist/pkg/shim/postgres-db.js) by itself, for
// faults.test.mjs: the driver only opens off the main thread, and this lets a test send
// statements one by one, as the engine's store would, with faults injected between them.
// Each message is a list of statements; the reply lists "ok" or "error <message>" for each.
import { parentPort, workerData } from "node:worker_threads";

const { PostgresDatabase } = await import(workerData.driver);
// `defer` (optional): the driver's deferral of unread statements inside a transaction.
const db = new PostgresDatabase({ url: workerData.url, schema: workerData.schema, ...(workerData.defer === undefined ? {} : { defer: workerData.defer }) });

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
