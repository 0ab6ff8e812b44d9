// Child process for lock-holders.test.mjs: another process of the store holding a lock, as a
// gateway's turn does while it runs. Through the driver itself (driver-thread.mjs, in a worker),
// so its connection carries the driver's application_name; process.title is set as OpenClaw
// sets it, so that name says "gateway". It locks every conversation row of <schema> inside a
// transaction, says "holding", and keeps the transaction open until its stdin ends; then it
// rolls back and exits.
// Usage: node lock-holder-child.mjs <schema> <process title>   (LCM_PG_TEST_URL set)
import { writeSync } from "node:fs";
import { Worker } from "node:worker_threads";

const [schema, title] = process.argv.slice(2);
process.title = title;
const say = (line) => writeSync(1, `${line}\n`);
const driver = new URL("../../dist/pkg/shim/postgres/database.js", import.meta.url).href;
// Deferral off: each statement is answered before the next, so "holding" means the lock is held.
const thread = new Worker(new URL("./driver-thread.mjs", import.meta.url), { workerData: { driver, url: process.env.LCM_PG_TEST_URL, schema, defer: false } });
const send = (statements) => new Promise((resolve) => { thread.once("message", resolve); thread.postMessage(statements); });

say(`holding ${(await send(["BEGIN", "SELECT id FROM conversations FOR UPDATE"])).join(" | ")}`);
process.stdin.resume();
await new Promise((resolve) => process.stdin.once("end", resolve));
say(`released ${(await send(["ROLLBACK"])).join(" | ")}`);
thread.postMessage("close");
await new Promise((resolve) => thread.once("exit", resolve));
