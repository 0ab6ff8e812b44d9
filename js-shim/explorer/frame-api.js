// The explorer page's own read API, for the page wherever it runs, and the only way it can read
// inside the Control UI. The Control UI frames the page in `<iframe sandbox="allow-scripts">`:
// the frame's origin is `null`, and the gateway's cookie grant authenticates the frame's
// navigation but reaches none of the page's own requests (to the browser they are third-party
// requests from an opaque origin; Chromium sends them no cookie), so the gateway refuses them
// before a handler of its `auth: "gateway"` routes runs.
//
// So this sibling route is registered with `auth: "plugin"` and authenticates each request
// itself: it answers only a request presenting the capability that the gateway-authenticated
// page load minted into the page (capability.js), for the agent that page shows, and
// only the read calls (GET). Without a capability nothing is served. The answers carry the CORS
// header an origin-`null` reader needs; they carry no cookie-based authority (credentials are
// neither needed nor allowed), and the capability travels in the Accept header, never in a URL.
import { capabilityOf, checkCapability } from "./capability.js";
import { HttpError } from "../errors.js";
import { READ_CALLS, sendJson, statusOf } from "./route.js";

export const EXPLORER_FRAME_API_PATH = "/plugins/lossless-wasm/explorer-api";

/** What a reader in the sandboxed frame needs to read an answer (no credentials). */
const FRAME_READ = Object.freeze({ "access-control-allow-origin": "null", vary: "Origin" });

/**
 * @param {() => Promise<object>} openHandle the shared engine handle (node/engine.js)
 * @param {{logger?: object}} [options]
 * @returns {(req, res) => Promise<boolean>} the route handler
 */
export function createExplorerFrameApiHandler(openHandle, { logger } = {}) {
  return async function explorerFrameApi(req, res) {
    const url = new URL(req.url ?? "/", "http://gateway.invalid");
    if (!url.pathname.startsWith(`${EXPLORER_FRAME_API_PATH}/`)) return false;
    const name = url.pathname.slice(EXPLORER_FRAME_API_PATH.length + 1);
    // Only a sandboxed reader (origin null) needs the header; same-origin pages need none.
    const cors = req.headers.origin === "null" ? FRAME_READ : {};
    try {
      const method = req.method ?? "GET";
      if (method !== "GET" && method !== "HEAD")
        throw new HttpError(405, "the explorer page's API is read-only: GET only");
      const verdict = checkCapability(capabilityOf(req), url.searchParams.get("agent") ?? "");
      if (verdict === "expired") throw new HttpError(401, "the page's capability expired: reload the page");
      if (verdict !== "valid")
        throw new HttpError(
          401,
          "this API answers only the explorer page, for the agent it shows: open the page (the gateway route) first",
        );
      const call = Object.hasOwn(READ_CALLS, name) ? READ_CALLS[name] : undefined;
      if (!call) throw new HttpError(404, `no explorer call ${JSON.stringify(name.slice(0, 40))}`);
      sendJson(res, 200, await call(await openHandle(), url.searchParams), cors);
      return true;
    } catch (err) {
      const status = err instanceof HttpError ? err.status : statusOf(err);
      if (status >= 500) logger?.warn?.(`[lossless-wasm] explorer ${url.pathname}: ${err?.message ?? err}`);
      sendJson(res, status, { error: String(err?.message ?? err) }, cors);
      return true;
    }
  };
}
