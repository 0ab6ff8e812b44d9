// The host's own session history, read from its files in a test sandbox, to compare with our
// store: OpenClaw 2026.9 keeps transcripts in SQLite (`agents/<agent>/agent/openclaw-agent.sqlite`,
// the active path in `session_transcript_active_events`), 2026.7 in JSONL files
// (`agents/<agent>/sessions/<session id>.jsonl`, one entry per line). Read-only; for tests only
// (the plugin itself reads the transcript through the host's API: js-shim/openclaw/transcript-catch-up.js).

import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";

/** Plain text of a transcript message's content (a string or text parts). */
export function messageText(message) {
  const c = message?.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
  return "";
}

/**
 * The messages of every session in the sandbox's transcripts for `agent`, oldest first:
 * [{sessionId, role, text, message}]. 2026.9: the active path (what the host shows and sends);
 * 2026.7: every message entry of the JSONL files.
 */
export function hostTranscriptMessages(stateDir, { agent = "main" } = {}) {
  const dbPath = path.join(stateDir, "agents", agent, "agent", "openclaw-agent.sqlite");
  if (fs.existsSync(dbPath)) return fromSqlite(dbPath);
  const dir = path.join(stateDir, "agents", agent, "sessions");
  if (fs.existsSync(dir)) return fromJsonl(dir);
  throw new Error(`no host transcript under ${stateDir} (neither ${dbPath} nor ${dir})`);
}

function fromSqlite(dbPath) {
  const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
  const db = new DatabaseSync(dbPath, { readOnly: true, timeout: 15_000 });
  try {
    const rows = db
      .prepare(
        "SELECT a.session_id AS sessionId, e.event_json AS json, e.event_zstd AS zstd FROM session_transcript_active_events a " +
          "JOIN transcript_events e ON e.session_id = a.session_id AND e.seq = a.event_seq " +
          "WHERE a.message_position IS NOT NULL ORDER BY a.session_id, a.active_position",
      )
      .all();
    return rows.flatMap((r) => {
      const text = r.json ?? (r.zstd ? zlib.zstdDecompressSync(Buffer.from(r.zstd)).toString("utf8") : null);
      if (text == null) throw new Error(`transcript event of ${r.sessionId} has neither JSON nor zstd data`);
      const event = JSON.parse(text);
      const message = event?.type === "message" ? event.message : null;
      return message ? [{ sessionId: r.sessionId, role: message.role, text: messageText(message), message }] : [];
    });
  } finally {
    db.close();
  }
}

function fromJsonl(dir) {
  const out = [];
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith(".jsonl") && !n.includes("trajectory")).sort()) {
    const sessionId = f.replace(/\.jsonl$/, "");
    for (const line of fs.readFileSync(path.join(dir, f), "utf8").split("\n")) {
      if (!line.trim()) continue;
      const entry = JSON.parse(line);
      if (entry?.type === "message" && entry.message) out.push({ sessionId, role: entry.message.role, text: messageText(entry.message), message: entry.message });
    }
  }
  return out;
}
