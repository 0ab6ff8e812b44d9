// Naming who holds a PostgreSQL lock a call waits for (issue 24), in two halves. Each of the
// store's connections carries an application_name that says which process it is (host name,
// pid, host command), which is what an operator reads in pg_stat_activity. And a waited
// statement that is still unanswered after a while is watched: a side connection of the I/O
// thread asks the server who blocks its connection (pg_blocking_pids joined with
// pg_stat_activity) until the statement settles, so that a lock timeout (55P03) can name the
// holders; once the wait is cancelled the aborted transaction can no longer ask. A statement
// answered before the watch fires costs nothing: no round trip, no connection. Runs in the I/O
// thread (io-thread-main.js). Never throws into the call: a lookup that fails or finds
// nothing leaves the call's error as it was.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename } from "node:path";
import { isMainThread } from "node:worker_threads";

/** PostgreSQL keeps this many bytes of an application_name (NAMEDATALEN - 1) and turns
 *  anything but printable ASCII into "?". */
export const APPLICATION_NAME_BYTES = 63;
/** A watched wait asks at most this often, and first this long after the statement was sent
 *  (or a third of the lock timeout when that is shorter: well before the timeout). */
const LOOKUP_EVERY_MS = 5_000;
/** How many holders an error names; the rest are counted. */
const MAX_NAMED = 3;

/** `text` reduced to characters that are safe in a name and in a one-line message. */
const plain = (text, max) =>
  String(text ?? "")
    .replace(/\s+/g, " ")
    .replace(/[^A-Za-z0-9._:@ -]/g, "")
    .trim()
    .slice(0, max);

/** The process's main script. A worker thread's process.argv names the worker's own file, so
 *  there the script is read from the process's command line (Linux; elsewhere none). */
function mainScript() {
  if (isMainThread) return process.argv[1];
  try {
    return readFileSync("/proc/self/cmdline", "utf8")
      .split("\0")
      .slice(1)
      .find((arg) => !arg.startsWith("-") && /\.[cm]?js$/.test(arg));
  } catch {
    return undefined;
  }
}

/**
 * What the host process is, in a word or two: OpenClaw names its command in process.title
 * ("openclaw-gateway", "openclaw-agent"), the lcm CLI does too ("lossless-wasm-lcm doctor"); both
 * prefixes are dropped ("gateway", "agent", "lcm doctor"). process.title is the process's, so a
 * worker thread sees it too. Otherwise the main script's name ("fault-gateway"). Never the
 * command line's options: they may hold a password.
 */
export function hostCommand(title = process.title, script = mainScript()) {
  const untitled = !title || /[/\\]/.test(title) || title === "node" || title === process.execPath;
  const name = untitled ? basename(String(script ?? "")).replace(/\.(c|m)?js$/, "") : title;
  return plain(name.replace(/^(openclaw|lossless-wasm)-(?=.)/, ""), 24);
}

/**
 * The application_name of the store's connections: `lossless-wasm <schema> <host> pid <pid>
 * <command>`, at most 63 bytes (the server truncates). The host name (its first label) is
 * shortened first, then dropped: the lookup also reports the client's address.
 */
export function applicationName(schema, { host = hostname(), pid = process.pid, command = hostCommand() } = {}) {
  const base = `lossless-wasm ${schema}`;
  const tail = ` pid ${pid}${command ? ` ${command}` : ""}`;
  const shortHost = plain(String(host).split(".")[0], APPLICATION_NAME_BYTES);
  const room = APPLICATION_NAME_BYTES - base.length - tail.length - 1;
  if (shortHost && room >= 1) return `${base} ${shortHost.slice(0, room)}${tail}`;
  return `${base}${tail}`.slice(0, APPLICATION_NAME_BYTES);
}

/** The application_name of the I/O thread's side connection (kept apart from the store's). */
export const lookupApplicationName = (pid = process.pid) => `lossless-wasm lock lookup pid ${pid}`;

/** Who blocks backend $1, oldest transaction first. */
const HOLDERS_SQL = `SELECT a.pid, a.application_name, host(a.client_addr), a.client_port, a.state,
  floor(EXTRACT(EPOCH FROM clock_timestamp() - a.xact_start))::int8::text
  FROM unnest(pg_blocking_pids($1::int)) AS b(pid) JOIN pg_stat_activity a ON a.pid = b.pid
  ORDER BY a.xact_start NULLS LAST, a.pid`;

/** One holder as an error names it: `pid 4242 ("lossless-wasm public host-b pid 311 gateway",
 *  from 10.0.0.5, idle in a transaction for 31 s)`. */
function holderText([pid, app, addr, port, state, seconds]) {
  const parts = [];
  const name = plain(app, APPLICATION_NAME_BYTES);
  if (name) parts.push(`"${name}"`);
  if (addr) parts.push(`from ${plain(addr, 64)}`);
  else if (Number(port) === -1) parts.push("from a local socket");
  if (seconds !== null && seconds !== undefined)
    parts.push(`${state === "idle in transaction" ? "idle " : ""}in a transaction for ${Number(seconds)} s`);
  return parts.length ? `pid ${Number(pid)} (${parts.join(", ")})` : `pid ${Number(pid)}`;
}

/** "pid 4242 (…), pid 4243 (…) and 2 more", or null when there is no one to name. */
export function holdersText(rows) {
  if (!rows?.length) return null;
  const named = rows.slice(0, MAX_NAMED).map(holderText).join(", ");
  return rows.length > MAX_NAMED ? `${named} and ${rows.length - MAX_NAMED} more` : named;
}

/** How long a waited statement runs before its connection's blockers are looked up, for a
 *  connection whose lock_timeout is `lockTimeoutMs`; null when too short to look in time. */
export function lookupDelayFor(lockTimeoutMs) {
  const delay = Math.min(LOOKUP_EVERY_MS, Math.floor((lockTimeoutMs ?? 0) / 3));
  return delay >= 50 ? delay : null;
}

/**
 * Watches a waited statement on `client` (a connected `pg` Client; its server process's pid
 * is `client.backendPid`, else the start-up's `client.processID`) until the returned function
 * is called. Past `delayMs` and every `delayMs` after, asks through a side connection
 * (`connectSide()` resolves to a connected Client, reused for the whole wait and ended with
 * it) who blocks it, and keeps the latest answer as `client.lockHolders` (rows, or null when
 * no one blocks it).
 */
export function watchLockWait(client, { delayMs, connectSide }) {
  client.lockHolders = null;
  const pid = client.backendPid ?? client.processID;
  if (!delayMs || !pid) return () => {};
  let stopped = false;
  let busy = false;
  let side = null;
  let timer = null;
  const close = () => {
    const s = side;
    side = null;
    s?.end().catch(() => {});
  };
  const look = async () => {
    busy = true;
    try {
      side ??= await connectSide();
      if (!stopped) {
        const { rows } = await side.query({ text: HOLDERS_SQL, values: [pid], rowMode: "array" });
        if (!stopped) client.lockHolders = rows.length ? rows : null;
      }
    } catch {
      close();
    }
    busy = false;
    if (stopped) close();
    else timer = setTimeout(look, delayMs);
  };
  timer = setTimeout(look, delayMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
    if (!busy) close();
  };
}
