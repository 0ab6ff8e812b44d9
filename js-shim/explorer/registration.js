// Registers the context explorer with the host: the gateway route (auth "gateway": the
// gateway's token or the Control UI's cookie grant, never a port of our own) and, where the host
// offers Control UI descriptors (2026.9), a sidebar tab that frames the same route. Hosts
// without them (2026.7.1) still serve the page at EXPLORER_PATH. Registration stays synchronous
// and cheap: nothing opens until the first request.
import { createExplorerHandler, EXPLORER_PATH } from "./explorer-route.js";

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

/**
 * @param {object} api the plugin API
 * @param {() => Promise<object>} open the shared engine handle
 * @param {object} options passed to createExplorerHandler
 * @returns {{route: boolean, tab: boolean}} what the host accepted
 */
export function registerExplorer(api, open, options) {
  if (typeof api.registerHttpRoute !== "function") return { route: false, tab: false };
  api.registerHttpRoute({
    path: EXPLORER_PATH,
    auth: "gateway",
    match: "prefix",
    handler: createExplorerHandler(open, { ...options, logger: api.logger }),
  });
  const describe = api.session?.controls?.registerControlUiDescriptor;
  if (typeof describe !== "function") return { route: true, tab: false };
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
