// Catching up from the host's own transcript (issue 42 item 1). A turn whose commit never came
// (the gateway killed mid-turn, or between the reply and commitTurn; openclaw#156425's missing
// commits) leaves messages in the host's session history that no commitTurn carried: after a
// restart OpenClaw 2026.9 re-runs the interrupted turn as a new one ("[System] Your previous turn
// was interrupted by a gateway restart…"), whose commit covers only the re-run, not the user's
// message that started it. Before each turn the host calls `bootstrap`; there this reads what the
// transcript gained since the last read (OpenClaw's transcript cursor API,
// `readSessionTranscriptVisibleMessageDelta`: pages of the visible messages after an opaque
// cursor, up to the current turn's fence) and hands those messages to the engine's `ingest`, which
// stores each one unless its content identity (role, timestamp, content, tool-call id) is already
// stored. A message a commit stored is skipped; one no commit carried is stored, once.
//
// The cursor is kept per session in this process: a gateway reads each session's transcript whole
// once after it starts (every message skipped but the missing ones), then only what each turn
// added. A cursor the host no longer recognises (a reset, a rewritten transcript) is answered
// with `kind: "reset"` and a fresh cursor; the read then starts over from it.

/**
 * Whether a session key is one of the host's internal runs (`agent:main:internal-session-effects:…`,
 * its memory flush; the rule of src/core/session_key.rs). Their transcript starts as a copy of the
 * user's session history, and nobody types into them: they are not caught up (each would store
 * the user's whole conversation again under its own key).
 */
export const isInternalSessionKey = (key) => typeof key === "string" && key.toLowerCase().includes(":internal-");

/** Pages read per catch-up at most (each up to the host's own page limits). */
export const MAX_PAGES_PER_CATCH_UP = 50;

/**
 * @param {object} o
 * @param {(target: {sessionId: string, sessionKey?: string, cursor?: string}) => Promise<object>} o.readDelta
 *        the host's `readSessionTranscriptVisibleMessageDelta`
 * @param {(session: {sessionId: string, sessionKey?: string}, messages: object[]) => Promise<number>} o.ingest
 *        stores the messages not already stored; resolves how many were new
 * @param {{info?: Function, warn?: Function}} [o.logger]
 */
export function createTranscriptCatchUp({ readDelta, ingest, logger }) {
  if (typeof readDelta !== "function") throw new TypeError("createTranscriptCatchUp: readDelta must be a function");
  if (typeof ingest !== "function") throw new TypeError("createTranscriptCatchUp: ingest must be a function");
  const cursors = new Map();
  const tag = (s) => `${s.sessionKey ?? ""}\u0000${s.sessionId}`;

  /**
   * Reads the session's transcript from its cursor to the end and stores the messages no turn
   * stored. Resolves {read, stored, pages, reason}; never throws for what the host answers
   * (`missing`, `unavailable`: nothing to read now), only for an ingest that failed.
   */
  async function catchUp(session) {
    if (typeof session?.sessionId !== "string" || !session.sessionId)
      return { read: 0, stored: 0, pages: 0, reason: "no session id" };
    if (isInternalSessionKey(session.sessionKey)) return { read: 0, stored: 0, pages: 0, reason: "internal run" };
    const key = tag(session);
    let read = 0;
    let stored = 0;
    let pages = 0;
    let restarted = false;
    while (pages < MAX_PAGES_PER_CATCH_UP) {
      const cursor = cursors.get(key);
      const target = {
        sessionId: session.sessionId,
        ...(session.sessionKey ? { sessionKey: session.sessionKey } : {}),
        ...(cursor ? { cursor } : {}),
      };
      const page = await readDelta(target);
      pages += 1;
      if (page?.kind === "reset") {
        // The host no longer knows our cursor (a reset boundary, a replaced transcript): read
        // again from the cursor it gives, once per catch-up.
        if (restarted || typeof page.cursor !== "string")
          return { read, stored, pages, reason: `transcript reset (${page.reason ?? "no reason"})` };
        restarted = true;
        cursors.set(key, page.cursor);
        continue;
      }
      if (page?.kind !== "page")
        return {
          read,
          stored,
          pages,
          reason: `transcript ${page?.kind ?? "unreadable"}${page?.reason ? ` (${page.reason})` : ""}`,
        };
      const messages = (Array.isArray(page.entries) ? page.entries : [])
        .map((e) => e?.message)
        .filter((m) => m && typeof m === "object");
      if (messages.length) {
        stored += await ingest(session, messages);
        read += messages.length;
      }
      // Only once the page is stored does the cursor move past it.
      if (typeof page.cursor === "string") cursors.set(key, page.cursor);
      if (!page.hasMore) break;
    }
    if (stored > 0) {
      logger?.warn?.(
        `[lossless-wasm] caught up ${stored} message(s) of ${session.sessionKey ?? session.sessionId} from the host's transcript that no turn committed (a turn interrupted by a restart or a commit that never came)`,
      );
    }
    return { read, stored, pages, reason: "read" };
  }

  return {
    catchUp,
    /** Forgets a session's cursor (the next catch-up reads its transcript from the start). */
    forget(session) {
      cursors.delete(tag(session));
    },
  };
}

/**
 * The `ingest` of [createTranscriptCatchUp] for an engine handle that `open` resolves: the
 * engine's `ingest` with `fromTranscript`, so a message that an archived conversation of the
 * session key holds is not stored again. The transcript keeps what came before a `/reset` under
 * the same session id, and a process without a cursor (a restarted gateway) reads it all.
 */
export const ingestFromTranscript = (open) => async (session, messages) =>
  (await open()).call("ingest", { ...session, messages, fromTranscript: true });

/**
 * The host's transcript cursor reader, when this host has one (OpenClaw >= 2026.9:
 * `openclaw/plugin-sdk/session-transcript-runtime`), else undefined. Loaded on first use; the
 * plugin loader resolves the SDK path inside the host.
 */
export async function loadHostTranscriptReader(importer = (spec) => import(spec)) {
  try {
    const sdk = await importer("openclaw/plugin-sdk/session-transcript-runtime");
    return typeof sdk?.readSessionTranscriptVisibleMessageDelta === "function"
      ? sdk.readSessionTranscriptVisibleMessageDelta
      : undefined;
  } catch {
    return undefined;
  }
}
