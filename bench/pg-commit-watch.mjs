// Spots a COMMIT on its way to a PostgreSQL server, for the proxy's lost-answer fault
// (pg-proxy.mjs, `loseAnswersAfterCommit`). It reads what a client sends on one connection as
// the bytes cross, message by message, whatever the chunking: the untyped opening (an SSL or GSS
// request, then the startup message), then typed messages. A COMMIT is sent either as a simple
// query ('Q', possibly one of several statements in its text) or through the extended protocol,
// where its text appears only once per connection: a named statement is parsed ('P') the first
// time and later only bound ('B') and executed ('E'). So the texts of parsed statements and of
// bound portals are kept, and the COMMIT counts as sent at the Execute of a portal whose text is
// one. An encrypted stream, or anything it cannot frame, ends the watch (it never throws into
// the proxy): it then reports nothing.

const COMMIT = /^\s*(COMMIT|END)\b(?!\s+PREPARED)/i;
/** Larger than any message a test sends; a TLS record read as a length is larger still. */
const MAX_MESSAGE = 256 * 1024 * 1024;

/** The NUL-terminated strings at the start of `body`. */
function cstrings(body, count) {
  const out = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const end = body.indexOf(0, at);
    if (end < 0) throw new Error("unterminated string");
    out.push(body.toString("utf8", at, end));
    at = end + 1;
  }
  return out;
}

/** Whether a simple query's text holds a COMMIT among its statements (split at semicolons:
 *  good enough for the statements a driver writes). */
const commitsIn = (text) => text.split(";").some((s) => COMMIT.test(s));

/**
 * A watch over one connection's client-to-server bytes: `feed(chunk)` with each chunk forwarded,
 * in order; `onCommit()` is called once per COMMIT, when the message that runs it has crossed.
 */
export function commitWatch(onCommit) {
  let started = false;
  let held = null;
  let stopped = false;
  // Prepared statements by name and portals by name ("" is the unnamed one), as their text.
  const statements = new Map();
  const portals = new Map();
  const handle = (type, body) => {
    if (type === 0x51) { // Q: simple query
      if (commitsIn(cstrings(body, 1)[0])) onCommit();
    } else if (type === 0x50) { // P: parse (name, text)
      const [name, text] = cstrings(body, 2);
      statements.set(name, text);
    } else if (type === 0x42) { // B: bind (portal, statement)
      const [portal, name] = cstrings(body, 2);
      portals.set(portal, statements.get(name) ?? "");
    } else if (type === 0x45) { // E: execute (portal)
      if (COMMIT.test(portals.get(cstrings(body, 1)[0]) ?? "")) onCommit();
    } else if (type === 0x43) { // C: close a statement ('S') or a portal ('P')
      const [name] = cstrings(body.subarray(1), 1);
      (body[0] === 0x53 ? statements : portals).delete(name);
    }
  };
  return (chunk) => {
    if (stopped) return;
    try {
      let buf = held ? Buffer.concat([held, chunk]) : chunk;
      for (;;) {
        // Untyped: length (itself included) and a code; typed: a type byte, then the length.
        const head = started ? 5 : 8;
        if (buf.length < head) break;
        const total = started ? 1 + buf.readInt32BE(1) : buf.readInt32BE(0);
        if (total < head || total > MAX_MESSAGE) throw new Error("not PostgreSQL's framing");
        if (buf.length < total) break;
        // The startup message carries protocol version 3.x; SSL, GSS and cancel requests do not.
        if (!started) started = buf.readInt32BE(4) >>> 16 === 3;
        else handle(buf[0], buf.subarray(5, total));
        buf = buf.subarray(total);
      }
      held = buf.length ? Buffer.from(buf) : null;
    } catch {
      stopped = true;
      held = null;
    }
  };
}
