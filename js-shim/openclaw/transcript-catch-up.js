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
//
// OpenClaw 2026.7 has no cursor API; it reads a session's whole transcript (its JSONL) as events
// (`readSessionTranscriptEvents`). [eventsDeltaReader] makes a cursor of it: the number of events
// read and the last one's id. Its messages differ in shape from the ones `afterTurn` handed over
// (a user message a string stamped at admission there, text parts stamped at the prompt here);
// the engine's `fromTranscript` check knows both (src/core/transcript_match.rs). After a crash
// mid-turn 2026.7 runs the next turn as one merged user message ("[Queued user message that
// arrived while the previous turn was still active]…") while its JSONL keeps the new message
// apart: that message is stored from here.

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
 * @param {(target: {sessionId: string, sessionKey?: string, sessionFile?: string, cursor?: string}) => Promise<object>} o.readDelta
 *        the host's `readSessionTranscriptVisibleMessageDelta`, or [eventsDeltaReader] over its whole read
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
    const ids = { sessionId: session.sessionId, ...(session.sessionKey ? { sessionKey: session.sessionKey } : {}) };
    let read = 0;
    let stored = 0;
    let pages = 0;
    let restarted = false;
    while (pages < MAX_PAGES_PER_CATCH_UP) {
      const cursor = cursors.get(key);
      const target = {
        ...ids,
        // The transcript file the host named (OpenClaw 2026.7's bootstrap does), for its reader.
        ...(typeof session.sessionFile === "string" && session.sessionFile ? { sessionFile: session.sessionFile } : {}),
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
        stored += await ingest(ids, messages);
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
 * A reader with the cursor API's answers over a host that reads a transcript whole (OpenClaw 2026.7's
 * `readSessionTranscriptEvents(target)`: every JSONL entry, `{type, id, parentId, message?}`).
 * The cursor is `<events read>:<last event's id>`; while the transcript still has that event at
 * that place, only the events after it are answered, else all of them (a rewritten or replaced
 * transcript: the engine skips what is stored). The messages are every `message` entry in file
 * order, a side branch's too (2026.7 leaves the message a crash interrupted on one), so none the
 * host keeps is missed.
 */
export function eventsDeltaReader(readEvents) {
  if (typeof readEvents !== "function") throw new TypeError("eventsDeltaReader: readEvents must be a function");
  return async ({ cursor, ...target }) => {
    const events = await readEvents(target);
    if (!Array.isArray(events)) return { kind: "unreadable", reason: "the host's transcript events are not a list" };
    const sep = typeof cursor === "string" ? cursor.indexOf(":") : -1;
    const count = sep > 0 ? Number(cursor.slice(0, sep)) : 0;
    const start =
      Number.isInteger(count) && count > 0 && count <= events.length && events[count - 1]?.id === cursor.slice(sep + 1)
        ? count
        : 0;
    const entries = events
      .slice(start)
      .filter((e) => e?.type === "message" && e.message && typeof e.message === "object")
      .map((e) => ({ entryId: e.id, message: e.message }));
    return { kind: "page", cursor: `${events.length}:${events.at(-1)?.id ?? ""}`, hasMore: false, entries };
  };
}

/**
 * The host's transcript reader, when this host has one, else undefined: its cursor API (OpenClaw
 * >= 2026.9: `readSessionTranscriptVisibleMessageDelta`), or its whole-transcript read made into
 * one (2026.7: `readSessionTranscriptEvents`, [eventsDeltaReader]); both in
 * `openclaw/plugin-sdk/session-transcript-runtime`. Loaded on first use; the plugin loader
 * resolves the SDK path inside the host.
 */
export async function loadHostTranscriptReader(importer = (spec) => import(spec)) {
  try {
    const sdk = await importer("openclaw/plugin-sdk/session-transcript-runtime");
    if (typeof sdk?.readSessionTranscriptVisibleMessageDelta === "function")
      return sdk.readSessionTranscriptVisibleMessageDelta;
    if (typeof sdk?.readSessionTranscriptEvents === "function")
      return eventsDeltaReader(sdk.readSessionTranscriptEvents);
    return undefined;
  } catch {
    return undefined;
  }
}
