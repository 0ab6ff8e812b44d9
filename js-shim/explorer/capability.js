// The explorer page's capability: a short-lived, page-scoped token with which the page reads its
// API (frame-api.js). Inside the Control UI the page runs in a sandboxed frame (origin
// `null`) whose own requests carry no gateway credential, so the gateway-authenticated load of
// the page (route.js) mints one into the page it serves, for the agent that page shows;
// the frame API answers only requests that present it. Only what the gateway served can hold
// one: the page's HTML is not readable across origins, and the token is never in a URL.
//
// Form: `<expiry ms, base 36>.<HMAC-SHA256 over the agent and expiry, base64url, 32 chars>`,
// signed with a key that lives only in this process (a restart invalidates every page's token;
// the page then reloads itself, which the gateway authenticates again). It travels in the
// request's `Accept` header (`application/json; explorer-capability=<token>`): a CORS-safelisted
// header, so a read needs no preflight.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** How long a served page may read its API before it reloads itself for a fresh capability. */
export const CAPABILITY_TTL_MS = 15 * 60_000;
const KEY = randomBytes(32);
const ACCEPT_PARAM = /(?:^|[;,\s])explorer-capability=([0-9a-z]{1,12}\.[A-Za-z0-9_-]{32})(?:$|[;,\s])/;

const sign = (agentId, expiry) =>
  createHmac("sha256", KEY).update(`lossless-wasm explorer\n${agentId}\n${expiry}`).digest("base64url").slice(0, 32);

/** A capability for a page that shows `agentId`, valid for CAPABILITY_TTL_MS from `now`. */
export function mintCapability(agentId, now = Date.now()) {
  const expiry = (now + CAPABILITY_TTL_MS).toString(36);
  return `${expiry}.${sign(agentId, expiry)}`;
}

/** The capability a request presents in its Accept header, or undefined. */
export function capabilityOf(req) {
  const accept = req.headers?.accept;
  return typeof accept === "string" ? ACCEPT_PARAM.exec(accept)?.[1] : undefined;
}

/**
 * Checks `token` for `agentId`: "valid", "expired" (minted here for this agent, past its time),
 * or "invalid" (absent, malformed, another agent's, or not minted by this process).
 */
export function checkCapability(token, agentId, now = Date.now()) {
  if (typeof token !== "string" || typeof agentId !== "string" || !agentId) return "invalid";
  const dot = token.indexOf(".");
  if (dot < 1) return "invalid";
  const expiry = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1));
  const wanted = Buffer.from(sign(agentId, expiry));
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return "invalid";
  return parseInt(expiry, 36) > now ? "valid" : "expired";
}
