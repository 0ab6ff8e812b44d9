// The context explorer's gateway route: serves the explorer page (js-shim/explorer/) and its
// JSON API under one path the host registers with `auth: "gateway"`, so the gateway's own
// authentication guards every byte (bearer token, or the Control UI tab's cookie grant); this
// file never checks credentials itself and never opens a port.
//
// Every API call names an agent (`agent=<id>`); the wasm engine resolves it to the session-key
// prefix `agent:<id>:` and answers "not found" for anything outside it (src/engine/explorer.rs).
// The gateway gives a route no per-agent identity (docs/explorer.md), so the scope is the page's
// parameter, enforced here on the server for every request rather than filtered in the page.
//
// Read-only except one call: POST api/repair, which needs the confirmation phrase the page shows
// and takes a backup of the database before it changes anything.
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { runCompaction } from "./compaction-driver.js";

export const EXPLORER_PATH = "/plugins/lossless-wasm/explorer";
const PAGE_DIR = new URL("./explorer/", import.meta.url);
const STATIC = {
  "": ["index.html", "text/html; charset=utf-8"],
  "index.html": ["index.html", "text/html; charset=utf-8"],
  "app.js": ["app.js", "text/javascript; charset=utf-8"],
  "dag.js": ["dag.js", "text/javascript; charset=utf-8"],
  "style.css": ["style.css", "text/css; charset=utf-8"],
};
const MAX_BODY_BYTES = 4096;

/** The phrase a repair request must carry: the user typed it after reading the plan. */
export const repairPhrase = (conversationId) => `repair conversation ${conversationId}`;

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function send(res, status, type, body) {
  res.statusCode = status;
  res.setHeader("content-type", type);
  res.setHeader("cache-control", "no-store");
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("referrer-policy", "no-referrer");
  res.end(body);
}

const sendJson = (res, status, value) => send(res, status, "application/json; charset=utf-8", JSON.stringify(value));

/** An engine error as an HTTP status: ids outside the scope read as not found, like absent ones. */
function statusOf(err) {
  const text = String(err?.message ?? err);
  if (/\bno (conversation|summary) \d+ in this agent's history/.test(text)) return 404;
  if (/invalid|expected|must|required/i.test(text)) return 400;
  return 500;
}

function intParam(query, name, { required = true } = {}) {
  const raw = query.get(name);
  if (raw == null || raw === "") {
    if (required) throw new HttpError(400, `${name} is required`);
    return undefined;
  }
  if (!/^\d{1,15}$/.test(raw))
    throw new HttpError(400, `${name} must be a positive integer, got ${JSON.stringify(raw.slice(0, 40))}`);
  return Number(raw);
}

function agentParam(query) {
  const agent = query.get("agent");
  if (!agent)
    throw new HttpError(400, "agent is required: the explorer shows one agent's conversations (e.g. ?agent=main)");
  return agent;
}

async function readBody(req) {
  let size = 0;
  const chunks = [];
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, "request body too large");
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
  } catch {
    throw new HttpError(400, "the body must be JSON");
  }
}

/** A backup path next to the database that no earlier backup holds. */
function backupPath(dbPath, now) {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, "-");
  return join(dirname(dbPath), `lossless.explorer-backup-${stamp}.sqlite`);
}

/**
 * @param {() => Promise<object>} openHandle the shared engine handle (node-engine.js)
 * @param {object} options
 * @param {object} [options.config] plugin config (`summarizer`, `summaryTimeoutMs`)
 * @param {() => ({complete: Function}|undefined)} [options.hostLlm] the LLM a repair uses
 * @param {object} [options.logger]
 * @returns {(req, res) => Promise<boolean>} the route handler
 */
export function createExplorerHandler(openHandle, { config = {}, hostLlm, logger } = {}) {
  const api = {
    async conversations(handle, query) {
      const agentId = agentParam(query);
      return { agentId, conversations: await handle.call("explorerConversations", { agentId }) };
    },
    async dag(handle, query) {
      return handle.call("explorerDag", {
        agentId: agentParam(query),
        conversationId: intParam(query, "conversation"),
      });
    },
    async summary(handle, query) {
      return handle.call("explorerSummary", { agentId: agentParam(query), summaryId: intParam(query, "summary") });
    },
    async expand(handle, query) {
      return handle.call("explorerExpand", {
        agentId: agentParam(query),
        summaryId: intParam(query, "summary"),
        toMessages: query.get("messages") === "1",
        cursor: intParam(query, "cursor", { required: false }),
        tokenLimit: 4000,
      });
    },
    // What a repair would redo, without writing anything.
    async "repair-plan"(handle, query) {
      const dag = await handle.call("explorerDag", {
        agentId: agentParam(query),
        conversationId: intParam(query, "conversation"),
      });
      const { sessionId, sessionKey } = dag.conversation;
      const plan = await handle.call("repairStart", { sessionId, sessionKey, dryRun: true });
      return { ...plan, conversationId: dag.conversation.id, confirmPhrase: repairPhrase(dag.conversation.id) };
    },
  };

  async function repair(handle, req) {
    const body = await readBody(req);
    const agentId = typeof body.agent === "string" ? body.agent : "";
    const conversationId = Number.isSafeInteger(body.conversation) ? body.conversation : NaN;
    if (!agentId || !(conversationId > 0)) throw new HttpError(400, "repair needs {agent, conversation, confirm}");
    const dag = await handle.call("explorerDag", { agentId, conversationId });
    if (body.confirm !== repairPhrase(conversationId)) {
      throw new HttpError(
        409,
        `repair changes stored summaries: confirm by sending confirm: "${repairPhrase(conversationId)}"`,
      );
    }
    if (typeof handle.backupTo !== "function")
      throw new HttpError(500, "this storage cannot take a backup, so repair is refused");
    const backup = backupPath(handle.path, Date.now());
    await handle.backupTo(backup);
    const { sessionId, sessionKey } = dag.conversation;
    const repairHandle = {
      call: (method, params) => handle.call(method === "compactionStart" ? "repairStart" : "repairContinue", params),
    };
    const report = await runCompaction(
      repairHandle,
      { sessionId, sessionKey },
      { choice: config.summarizer ?? "auto", llm: hostLlm?.(), timeoutMs: config.summaryTimeoutMs },
    );
    logger?.info?.(
      `[lossless-wasm] explorer repair of conversation ${conversationId}: ${report.repaired?.length ?? 0} redone; backup ${backup}`,
    );
    return { ...report, backup, conversationId };
  }

  return async function explorerRoute(req, res) {
    const url = new URL(req.url ?? "/", "http://gateway.invalid");
    if (url.pathname !== EXPLORER_PATH && !url.pathname.startsWith(`${EXPLORER_PATH}/`)) return false;
    const rest = url.pathname.slice(EXPLORER_PATH.length + 1);
    try {
      if (url.pathname === EXPLORER_PATH) {
        // Relative asset and API URLs resolve against the trailing slash.
        res.statusCode = 308;
        res.setHeader("location", `${EXPLORER_PATH}/${url.search}`);
        res.end();
        return true;
      }
      const method = req.method ?? "GET";
      if (rest.startsWith("api/")) {
        const name = rest.slice(4);
        const handle = await openHandle();
        if (name === "repair") {
          if (method !== "POST") throw new HttpError(405, "repair is POST only");
          sendJson(res, 200, await repair(handle, req));
          return true;
        }
        if (method !== "GET" && method !== "HEAD") throw new HttpError(405, "the explorer is read-only: GET only");
        const call = Object.hasOwn(api, name) ? api[name] : undefined;
        if (!call) throw new HttpError(404, `no explorer call ${JSON.stringify(name.slice(0, 40))}`);
        sendJson(res, 200, await call(handle, url.searchParams));
        return true;
      }
      const file = Object.hasOwn(STATIC, rest) ? STATIC[rest] : undefined;
      if (!file) throw new HttpError(404, "not found");
      if (method !== "GET" && method !== "HEAD") throw new HttpError(405, "GET only");
      send(res, 200, file[1], method === "HEAD" ? undefined : await readFile(new URL(file[0], PAGE_DIR)));
      return true;
    } catch (err) {
      const status = err instanceof HttpError ? err.status : statusOf(err);
      if (status >= 500) logger?.warn?.(`[lossless-wasm] explorer ${url.pathname}: ${err?.message ?? err}`);
      sendJson(res, status, { error: String(err?.message ?? err) });
      return true;
    }
  };
}
