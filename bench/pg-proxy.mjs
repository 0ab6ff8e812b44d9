// A loopback TCP proxy that adds a fixed delay in each direction, to measure the PostgreSQL
// driver as if the server were a network round trip away (bench/postgres-node.mjs). Every chunk
// is forwarded a fixed time after it arrived, in order; nothing is batched or reordered. Node's
// timers count whole milliseconds (setTimeout(1.5) waits 1 ms), so a 3 ms round trip is 1 ms
// towards the server and 2 ms back, and the caller measures what it got (`SELECT 1`). Both
// sockets have TCP_NODELAY: without it Nagle's algorithm and the peer's delayed ACK hold back
// the small writes of a pipeline (one measured "one round trip" turn took 48 ms instead of ~3).
// Listens on 127.0.0.1 only.
//
// The fault tests also use it as a network partition (tests/js-pg/partition.test.mjs):
// `partition()` makes it silent in both directions, on the connections it carries and on new
// ones, without closing any (what crosses is counted and dropped, as a network would lose it);
// `heal()` resets the connections that lived through the partition (a real one ends them once
// TCP gives up) and forwards again for new ones.
// And as a COMMIT whose answer is lost (tests/js-pg/commit-lost.test.mjs):
// `loseAnswersAfterCommit()` arms it for the next COMMIT on any connection (spotted on the wire
// by pg-commit-watch.mjs: a simple query, or the Execute of a prepared statement). That
// connection forwards what the client sends, the COMMIT included, so the server commits; from
// the moment the COMMIT crossed, what the server sends back on it is counted and dropped, and
// its end or close is not passed on; nothing is closed. Answers that reached the proxy before
// are still delivered; those of statements pipelined in front of the COMMIT and answered after
// it are lost with it. `heal()` resets that connection too, and disarms.
//
//   import { startDelayProxy } from "./pg-proxy.mjs";
//   const proxy = await startDelayProxy({ target: { host: "127.0.0.1", port }, upMs: 1, downMs: 2 });
//   … connect to 127.0.0.1:proxy.port … ; await proxy.close();
import { createConnection, createServer } from "node:net";
import { commitWatch } from "./pg-commit-watch.mjs";

/** Forwards `from` to `to`, each chunk `delayMs` later. Timers of equal delay fire in the order
 *  they were set, so the byte stream stays in order. While `link.silent`, or `lost()` (this
 *  direction's answers are being lost), nothing crosses: data is counted as dropped, and an end
 *  or a close is not passed on. `watch(chunk)` sees each chunk that is forwarded, before it is. */
function pipeDelayed(from, to, delayMs, counted, link, { lost = () => false, watch } = {}) {
  const quiet = () => link.silent || lost();
  from.on("data", (chunk) => {
    if (quiet()) return counted.dropped(chunk.length);
    watch?.(chunk);
    counted(chunk.length);
    setTimeout(() => { if (!to.destroyed && !link.silent) to.write(chunk); }, delayMs);
  });
  from.on("end", () => setTimeout(() => { if (!quiet()) to.end(); }, delayMs));
  from.on("error", () => { if (!quiet()) to.destroy(); });
  from.on("close", () => setTimeout(() => { if (!quiet()) to.destroy(); }, delayMs));
}

/**
 * Starts the proxy. `target` is where the server listens (a loopback address); `upMs` is added
 * to what goes to the server and `downMs` to what comes back (whole milliseconds), so the round
 * trip grows by their sum (plus up to a millisecond of timer lateness).
 * Resolves to { port, traffic(), partition(), loseAnswersAfterCommit(), heal(), close() }.
 */
export async function startDelayProxy({ target, upMs, downMs }) {
  for (const ms of [upMs, downMs]) if (!Number.isInteger(ms) || ms < 0 || ms > 1000) throw new Error(`pg-proxy: a delay must be whole milliseconds in 0..1000, not ${ms}`);
  if (!/^(127\.|::1$|localhost$)/.test(target.host)) throw new Error(`pg-proxy: only loopback targets, not ${target.host}`);
  const sockets = new Set();
  let bytes = 0;
  let dropped = 0;
  let connections = 0;
  let partitioned = false;
  // The lost-answer fault: armed for the next COMMIT; how many COMMITs lost their answers.
  let commitArmed = false;
  let lostCommits = 0;
  // Each connection's link: silent from the partition on (or deaf to the server from its lost
  // COMMIT on: `answersLost`), reset by the heal.
  const links = new Set();
  const counted = (n) => { bytes += n; };
  counted.dropped = (n) => { dropped += n; };
  const server = createServer((client) => {
    connections++;
    const link = { silent: partitioned, answersLost: false, pair: [client] };
    links.add(link);
    // During a partition a new connection is accepted and hears nothing back; it is not even
    // passed on to the server (its handshake would be lost).
    const upstream = partitioned ? null : createConnection({ host: target.host, port: target.port });
    if (upstream) link.pair.push(upstream);
    for (const s of link.pair) {
      s.setNoDelay(true);
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    }
    client.on("close", () => { if (!link.silent && !link.answersLost) links.delete(link); });
    if (upstream) {
      const onCommit = () => {
        if (!commitArmed) return;
        commitArmed = false;
        lostCommits++;
        link.answersLost = true;
      };
      pipeDelayed(client, upstream, upMs, counted, link, { watch: commitWatch(onCommit) });
      pipeDelayed(upstream, client, downMs, counted, link, { lost: () => link.answersLost });
    } else {
      client.on("data", (chunk) => counted.dropped(chunk.length));
      client.on("error", () => {});
    }
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return {
    port: server.address().port,
    /** What went through it so far (tests check their traffic really did), what a partition
     *  or a lost answer dropped, and how many COMMITs crossed with their answers lost. */
    traffic: () => ({ connections, bytes, dropped, lostCommits }),
    /** From now on nothing crosses, on any connection, and nothing is closed. */
    partition: () => {
      partitioned = true;
      for (const link of links) link.silent = true;
    },
    /** The next COMMIT sent on any connection reaches the server, and from then on nothing the
     *  server sends on that connection reaches the client; nothing is closed. The store's driver
     *  commits while it opens a connection too: arm this once the connection is open. */
    loseAnswersAfterCommit: () => {
      commitArmed = true;
    },
    /** Resets every connection that lived through the partition or lost its answers; new ones
     *  are forwarded, and a lost-answer fault not yet met is disarmed. */
    heal: () => {
      partitioned = false;
      commitArmed = false;
      for (const link of links) {
        if (!link.silent && !link.answersLost) continue;
        for (const s of link.pair) s.destroy();
        links.delete(link);
      }
    },
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/**
 * Starts the precise proxy (`examples/delay_proxy.rs`, built here with cargo if needed) in a
 * process of its own: delays in microseconds, kept to ~0.1 ms by the kernel's timers instead of
 * Node's whole milliseconds, and none of its work on the caller's event loop. For measuring;
 * the fault tests' partition needs `startDelayProxy`. Resolves to { port, close() }.
 */
export async function startPreciseProxy({ target, upUs, downUs }) {
  const { execFileSync, spawn } = await import("node:child_process");
  const { fileURLToPath } = await import("node:url");
  const root = fileURLToPath(new URL("..", import.meta.url));
  execFileSync("cargo", ["build", "--quiet", "--example", "delay_proxy"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
  const child = spawn(`${root}/target/debug/examples/delay_proxy`, [`${target.host}:${target.port}`, String(upUs), String(downUs)], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    let out = "";
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`delay_proxy exited with ${code} before listening`)));
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const m = /^listening (\d+)\n/.exec(out);
      if (m) resolve(Number(m[1]));
    });
  });
  child.removeAllListeners("exit");
  return {
    port,
    close: () => new Promise((resolve) => {
      child.once("exit", () => resolve());
      child.stdin.end();
    }),
  };
}
