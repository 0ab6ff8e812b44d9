// Registers the context explorer with the host: the gateway route that serves the page and the
// bearer-token JSON API (auth "gateway": the gateway's token or the Control UI's cookie grant,
// never a port of our own), the page's own read API (auth "plugin", answering only the
// capability minted into a page the gateway route served: frame-api.js) and, where the
// host authenticates a framed gateway route (OpenClaw 2026.8.2 and later), a Control UI sidebar
// tab that frames the page. OpenClaw 2026.7.1 has tab descriptors but frames a tab's path with
// no credential at all, so there a tab would only ever show the gateway's 401: no tab, the page
// is still served at EXPLORER_PATH. Registration stays synchronous and cheap: nothing opens
// until the first request.
import { createExplorerFrameApiHandler, EXPLORER_FRAME_API_PATH } from "./frame-api.js";
import { createExplorerHandler, EXPLORER_PATH } from "./route.js";

export const EXPLORER_TAB = Object.freeze({
  surface: "tab",
  id: "context-explorer",
  label: "Context explorer",
  description:
    "The lossless-wasm summary DAG of an agent's conversations: depths, token estimates, fallback warnings, originals.",
  icon: "git-branch",
  group: "agent",
  path: `${EXPLORER_PATH}/`,
  requiredScopes: ["operator.read"],
});

/** The first OpenClaw release known to authenticate a gateway-auth route in its tab frame. */
const FRAME_GRANT_SINCE = [2026, 8, 2];

/**
 * Whether the host frames a gateway-auth route with a credential (the cookie grant). Unknown
 * versions are taken to (newer hosts); a version older than FRAME_GRANT_SINCE is not.
 */
export function hostAuthenticatesTabFrames(version) {
  const parts = /^(\d+)\.(\d+)\.(\d+)/.exec(String(version ?? ""));
  if (!parts) return true;
  const [y, m, d] = parts.slice(1).map(Number);
  const [Y, M, D] = FRAME_GRANT_SINCE;
  return y !== Y ? y > Y : m !== M ? m > M : d >= D;
}

/**
 * @param {object} api the plugin API
 * @param {() => Promise<object>} open the shared engine handle
 * @param {object} options passed to createExplorerHandler
 * @param {string} [hostVersion] the host's version (api.runtime.version), when known
 * @returns {{route: boolean, tab: boolean}} what the host accepted
 */
export function registerExplorer(api, open, options, hostVersion) {
  if (typeof api.registerHttpRoute !== "function") return { route: false, tab: false };
  api.registerHttpRoute({
    path: EXPLORER_PATH,
    auth: "gateway",
    match: "prefix",
    handler: createExplorerHandler(open, { ...options, logger: api.logger }),
  });
  api.registerHttpRoute({
    path: EXPLORER_FRAME_API_PATH,
    auth: "plugin",
    match: "prefix",
    handler: createExplorerFrameApiHandler(open, { logger: api.logger }),
  });
  const describe = api.session?.controls?.registerControlUiDescriptor;
  if (typeof describe !== "function") return { route: true, tab: false };
  if (!hostAuthenticatesTabFrames(hostVersion)) {
    api.logger?.info?.(
      `[lossless-wasm] no Control UI tab for the context explorer: OpenClaw ${hostVersion} frames a tab without the gateway's credential (2026.8.2 and later do); the page is served at ${EXPLORER_PATH}/`,
    );
    return { route: true, tab: false };
  }
  try {
    describe.call(api.session.controls, { ...EXPLORER_TAB });
    return { route: true, tab: true };
  } catch (err) {
    // A host that knows descriptors but refuses this one still serves the page.
    api.logger?.warn?.(
      `[lossless-wasm] the Control UI tab for the context explorer was refused: ${err?.message ?? err}`,
    );
    return { route: true, tab: false };
  }
}
