// One writer per stored key across the tabs and workers of an origin. openBrowserEngine holds
// this lock from before it reads the store until close() (or until the page goes away), so two
// tabs never interleave their journals, and the next writer always starts from everything the
// previous one committed.
//
// Two ways to hold it:
//  - the Web Locks API (`navigator.locks`, every current browser in a secure context): an
//    exclusive lock named after the IndexedDB database and key. The browser releases it when the
//    holder's tab closes or crashes, so a dead writer never blocks the next one.
//  - where Web Locks are missing (an insecure http: page, an old browser): a lease record in
//    IndexedDB (indexeddb-store.js `takeLease`), renewed by a timer and by every write; every
//    write checks it in its own transaction (the fence), so a writer that lost its lease (a tab
//    frozen past the lease) cannot write after another took over. A crashed holder blocks the
//    key until its lease expires (`leaseMs`, default 10 s).
// This module decides who may write; it stores nothing itself and knows nothing of the journal.

import { StoreBusyError } from "../errors.js";

const DEFAULT_LEASE_MS = 10_000;

/** The name of a store's lock: the IndexedDB database and key, unambiguously. */
export const lockName = (idbName, key) => `lossless-wasm:store:${JSON.stringify([idbName, key])}`;

function busyError(idbName, key, waitedMs, holder) {
  const waited = waitedMs > 0 ? ` (waited ${waitedMs} ms)` : "";
  const who = holder ? ` (lease holder ${holder})` : "";
  return new StoreBusyError(
    `lossless-wasm: IndexedDB "${idbName}" key ${JSON.stringify(key)} is open for writing in another tab or worker of this origin${who}${waited}; close the engine there (engine.close()), wait longer (lockTimeoutMs), or open it with readOnly: true`,
  );
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Holds the Web Lock until `release()`; rejects with StoreBusyError after `timeoutMs`. */
async function webLock(locks, idbName, key, timeoutMs) {
  let release;
  const held = new Promise((resolve) => {
    release = resolve;
  });
  const controller = new AbortController();
  const timer =
    timeoutMs > 0 && Number.isFinite(timeoutMs) ? setTimeout(() => controller.abort(), timeoutMs) : undefined;
  const options =
    timeoutMs <= 0 ? { ifAvailable: true } : Number.isFinite(timeoutMs) ? { signal: controller.signal } : {};
  try {
    await new Promise((granted, refused) => {
      locks
        .request(lockName(idbName, key), options, (lock) => {
          if (!lock) {
            refused(busyError(idbName, key, 0));
            return undefined;
          }
          granted();
          // Returning this promise keeps the lock until release() settles it.
          return held;
        })
        .catch((err) => refused(err?.name === "AbortError" ? busyError(idbName, key, timeoutMs) : err));
    });
  } finally {
    clearTimeout(timer);
  }
  return { kind: "web-locks", fence: undefined, lost: () => undefined, release: async () => release() };
}

/** Takes the IndexedDB lease, retrying until `timeoutMs`; renews it until `release()`. */
async function lease(store, idbName, key, timeoutMs, leaseMs) {
  const owner = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  const started = Date.now();
  for (;;) {
    const { granted, holder } = await store.takeLease(key, owner, leaseMs);
    if (granted) break;
    const waited = Date.now() - started;
    if (!(waited < timeoutMs)) throw busyError(idbName, key, timeoutMs > 0 ? waited : 0, holder);
    await sleep(Math.min(leaseMs / 4, 250, Math.max(1, timeoutMs - waited)));
  }
  let lostError;
  // Renewing well inside the lease keeps an idle writer's claim; writes renew it as well.
  const timer = setInterval(() => {
    store.takeLease(key, owner, leaseMs).then(
      ({ granted }) => {
        if (!granted)
          lostError ??= new Error(
            `lossless-wasm: this engine lost its write lease on key ${JSON.stringify(key)} to another tab or worker; open the engine again`,
          );
      },
      () => {},
    );
  }, leaseMs / 3);
  return {
    kind: "lease",
    fence: { owner, ttlMs: leaseMs },
    lost: () => lostError,
    release: async () => {
      clearInterval(timer);
      await store.dropLease(key, owner).catch(() => {});
    },
  };
}

/**
 * Waits for the right to write `key` of IndexedDB `idbName` (see the module comment).
 * @param {object} options
 * @param {object} options.store the IndexedDB store (indexeddb-store.js), for the lease
 * @param {string} options.idbName
 * @param {string} options.key
 * @param {number} options.timeoutMs how long to wait for another writer; 0 = fail at once,
 *        Infinity = wait until it closes
 * @param {object|null} [options.locks] a Web Locks LockManager; null uses the lease
 * @param {number} [options.leaseMs] lease length when there is no LockManager
 * @returns {Promise<{kind: "web-locks"|"lease", fence: object|undefined, lost: () => Error|undefined, release: () => Promise<void>}>}
 */
export function acquireStoreLock({ store, idbName, key, timeoutMs, locks, leaseMs = DEFAULT_LEASE_MS }) {
  if (locks) return webLock(locks, idbName, key, timeoutMs);
  return lease(store, idbName, key, timeoutMs, leaseMs);
}
