// A loopback TCP proxy that adds a fixed delay in each direction, to measure the PostgreSQL
// driver as if the server were a network round trip away (bench/postgres-node.mjs). Every chunk
// is forwarded a fixed time after it arrived, in order; nothing is batched or reordered. Node's
// timers count whole milliseconds (setTimeout(1.5) waits 1 ms), so a 3 ms round trip is 1 ms
// towards the server and 2 ms back, and the caller measures what it got (`SELECT 1`). Both
// sockets have TCP_NODELAY: without it Nagle's algorithm and the peer's delayed ACK hold back
// the small writes of a pipeline (one measured "one round trip" turn took 48 ms instead of ~3).
// Listens on 127.0.0.1 only.
//
//   import { startDelayProxy } from "./pg-proxy.mjs";
//   const proxy = await startDelayProxy({ target: { host: "127.0.0.1", port }, upMs: 1, downMs: 2 });
//   … connect to 127.0.0.1:proxy.port … ; await proxy.close();
import { createConnection, createServer } from "node:net";

/** Forwards `from` to `to`, each chunk `delayMs` later. Timers of equal delay fire in the order
 *  they were set, so the byte stream stays in order. */
function pipeDelayed(from, to, delayMs, counted) {
  from.on("data", (chunk) => {
    counted(chunk.length);
    setTimeout(() => { if (!to.destroyed) to.write(chunk); }, delayMs);
  });
  from.on("end", () => setTimeout(() => to.end(), delayMs));
  from.on("error", () => to.destroy());
  from.on("close", () => setTimeout(() => to.destroy(), delayMs));
}

/**
 * Starts the proxy. `target` is where the server listens (a loopback address); `upMs` is added
 * to what goes to the server and `downMs` to what comes back (whole milliseconds), so the round
 * trip grows by their sum (plus up to a millisecond of timer lateness).
 * Resolves to { port, traffic(), close() }.
 */
export async function startDelayProxy({ target, upMs, downMs }) {
  for (const ms of [upMs, downMs]) if (!Number.isInteger(ms) || ms < 0 || ms > 1000) throw new Error(`pg-proxy: a delay must be whole milliseconds in 0..1000, not ${ms}`);
  if (!/^(127\.|::1$|localhost$)/.test(target.host)) throw new Error(`pg-proxy: only loopback targets, not ${target.host}`);
  const sockets = new Set();
  let bytes = 0;
  let connections = 0;
  const counted = (n) => { bytes += n; };
  const server = createServer((client) => {
    connections++;
    const upstream = createConnection({ host: target.host, port: target.port });
    for (const s of [client, upstream]) {
      s.setNoDelay(true);
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    }
    pipeDelayed(client, upstream, upMs, counted);
    pipeDelayed(upstream, client, downMs, counted);
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return {
    port: server.address().port,
    /** What went through it so far (tests check their traffic really did). */
    traffic: () => ({ connections, bytes }),
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
