// The context explorer's gateway route: serves the explorer page (one self-contained document,
// js-shim/page-document.js) and its JSON API under one path the host registers with
// `auth: "gateway"`, so the gateway's own authentication guards every byte (bearer token, or the
// Control UI tab's cookie grant); this file never checks gateway credentials itself and never
// opens a port.
//
// Serving the page mints a capability for the page's agent into it (capability.js): the
// page reads through that, at the sibling route of frame-api.js, because inside the
// Control UI it runs in a sandboxed frame (origin `null`) whose own requests the gateway's cookie
// grant does not reach. The JSON API below stays for bearer-token clients (scripts, curl, a
// proxy) and carries the one write, repair.
//
// Every API call names an agent (`agent=<id>`); the wasm engine resolves it to the session-key
// prefix `agent:<id>:` and answers "not found" for anything outside it (src/engine/explorer.rs).
// The gateway gives a route no per-agent identity (docs/explorer.md), so the scope is the page's
// parameter, enforced here on the server for every request rather than filtered in the page.
//
// Read-only except one call: POST api/repair, which needs the confirmation phrase the page shows
// and takes a backup of the database before it changes anything.
import { dirname, join } from "node:path";
import { runCompaction } from "../engine/compaction-driver.js";
import { HttpError } from "../errors.js";
import { mintCapability } from "./capability.js";
import { explorerDocument } from "./page-document.js";

export const EXPLORER_PATH = "/plugins/lossless-wasm/explorer";
const PAGE_PATHS = new Set(["", "index.html"]);
const MAX_BODY_BYTES = 4096;

/** The phrase a repair request must carry: the user typed it after reading the plan. */
export const repairPhrase = (conversationId) => `repair conversation ${conversationId}`;

export function send(res, status, type, body, headers = {}) {
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader("content-type", type);
  res.setHeader("cache-control", "no-store");
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("referrer-policy", "no-referrer");
  res.end(body);
}

export const sendJson = (res, status, value, headers) =>
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value), headers);

/** An engine error as an HTTP status: ids outside the scope read as not found, like absent ones. */
export function statusOf(err) {
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

/** The read calls, by name: each takes the engine handle and the query, and only reads. */
export const READ_CALLS = Object.freeze({
  async conversations(handle, query) {
    const agentId = agentParam(query);
    return { agentId, conversations: await handle.call("explorerConversations", { agentId }) };
  },
  async dag(handle, query) {
    return handle.call("explorerDag", { agentId: agentParam(query), conversationId: intParam(query, "conversation") });
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
});

/**
 * @param {() => Promise<object>} openHandle the shared engine handle (node/engine.js)
 * @param {object} options
 * @param {object} [options.config] plugin config (`summarizer`, `summaryTimeoutMs`)
 * @param {() => ({complete: Function}|undefined)} [options.hostLlm] the LLM a repair uses
 * @param {object} [options.logger]
 * @returns {(req, res) => Promise<boolean>} the route handler
 */
export function createExplorerHandler(openHandle, { config = {}, hostLlm, logger } = {}) {
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
        // The page's relative API URLs resolve against the trailing slash.
        res.statusCode = 308;
        res.setHeader("location", `${EXPLORER_PATH}/${url.search}`);
        res.end();
        return true;
      }
      const method = req.method ?? "GET";
      if (rest.startsWith("api/")) {
        const name = rest.slice(4);
        if (name === "repair") {
          if (method !== "POST") throw new HttpError(405, "repair is POST only");
          sendJson(res, 200, await repair(await openHandle(), req));
          return true;
        }
        if (method !== "GET" && method !== "HEAD") throw new HttpError(405, "the explorer is read-only: GET only");
        const call = Object.hasOwn(READ_CALLS, name) ? READ_CALLS[name] : undefined;
        if (!call) throw new HttpError(404, `no explorer call ${JSON.stringify(name.slice(0, 40))}`);
        sendJson(res, 200, await call(await openHandle(), url.searchParams));
        return true;
      }
      if (!PAGE_PATHS.has(rest)) throw new HttpError(404, "not found");
      if (method !== "GET" && method !== "HEAD") throw new HttpError(405, "GET only");
      // The page shows one agent; its capability reads that agent's API only.
      const agent = url.searchParams.get("agent") || "main";
      const html = await explorerDocument(mintCapability(agent));
      send(res, 200, "text/html; charset=utf-8", method === "HEAD" ? undefined : html);
      return true;
    } catch (err) {
      const status = err instanceof HttpError ? err.status : statusOf(err);
      if (status >= 500) logger?.warn?.(`[lossless-wasm] explorer ${url.pathname}: ${err?.message ?? err}`);
      sendJson(res, status, { error: String(err?.message ?? err) });
      return true;
    }
  };
}
