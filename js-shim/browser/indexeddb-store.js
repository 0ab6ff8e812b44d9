// Browser persistence in IndexedDB, under a database name of the embedder's choosing. Two
// object stores:
//  - "databases": a database file (snapshot) per key — also the whole-file format of earlier
//    versions, which therefore opens as a snapshot with an empty journal;
//  - "journal": the transactions committed since that snapshot, keyed [key, seq] (engine/journal.js).
// Every write is one IndexedDB transaction with strict durability (flushed before it reports
// complete), and transactions are created in call order, so a later write never lands before an
// earlier one. A checkpoint replaces the snapshot and deletes the journal in one transaction.
//
// Where the Web Locks API is missing, one writer per key is kept by a lease record in
// "databases" under the array key ["lease", key] (embedder keys are strings, so it never
// collides): {owner, expires}. A writer holding a lease passes it as `fence` to every write,
// which checks the lease in the same transaction (IndexedDB runs overlapping read-write
// transactions one at a time) and renews it, so a writer whose lease another tab took over can
// never write again. This module only stores; store-lock.js decides when to take a lease.
//
// Chromium discards an origin's IndexedDB data that it finds corrupt when opening it (a crash
// can leave LevelDB so) and recreates it empty; the only word of it is `dataLoss: "total"` on
// the upgrade event of the first open after. That open records it in "databases" under
// ["loss"] ({at, message}), so every later open of the store still knows that what was stored
// before `at` is gone, instead of taking the empty store for a new one.

import { LeaseLostError } from "../errors.js";

const DATABASES = "databases";
const JOURNAL = "journal";

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("IndexedDB transaction aborted"));
  });
}

const journalRange = (key) => IDBKeyRange.bound([key, 0], [key, Infinity]);
const leaseKey = (key) => ["lease", key];
const LOSS_KEY = ["loss"];

/**
 * Runs `writes(tx)` in `tx` only if `fence` (when given) still owns the key's lease, renewing it;
 * otherwise aborts the transaction so nothing of it lands. Resolves once committed.
 */
function fenced(tx, key, fence, writes) {
  if (!fence) {
    writes(tx);
    return done(tx);
  }
  let lost;
  const leases = tx.objectStore(DATABASES);
  const read = leases.get(leaseKey(key));
  read.onsuccess = () => {
    const lease = read.result;
    if (lease?.owner !== fence.owner) {
      lost = new LeaseLostError(key, lease?.owner);
      tx.abort();
      return;
    }
    leases.put({ owner: fence.owner, expires: Date.now() + fence.ttlMs }, leaseKey(key));
    writes(tx);
  };
  return done(tx).catch((err) => {
    throw lost ?? err;
  });
}

/** Opens (creating or upgrading if needed) the IndexedDB database `dbName`. */
export async function openIndexedDbStore(dbName = "lossless-wasm") {
  if (typeof indexedDB === "undefined") throw new Error("IndexedDB is not available in this environment");
  const open = indexedDB.open(dbName, 2);
  let observedLoss;
  open.onupgradeneeded = (event) => {
    const idb = open.result;
    if (!idb.objectStoreNames.contains(DATABASES)) idb.createObjectStore(DATABASES);
    if (!idb.objectStoreNames.contains(JOURNAL)) idb.createObjectStore(JOURNAL);
    if (event.dataLoss === "total") {
      observedLoss = {
        at: Date.now(),
        message: event.dataLossMessage || "the browser reported that it discarded this database",
      };
      open.transaction.objectStore(DATABASES).put(observedLoss, LOSS_KEY);
    }
  };
  const idb = await request(open);
  const write = (stores) => idb.transaction(stores, "readwrite", { durability: "strict" });
  return {
    /** The browser's report that it discarded this database, when this open received it. */
    observedLoss,
    /** The saved database file (snapshot) for `key`, or undefined. */
    async load(key) {
      const value = await request(idb.transaction(DATABASES, "readonly").objectStore(DATABASES).get(key));
      return value === undefined ? undefined : new Uint8Array(value);
    },
    /** Saves a whole database file (and drops any journal); resolves once committed. */
    save(key, bytes) {
      return this.checkpoint(key, bytes);
    },
    /** The snapshot and the journal entries after it, read in one transaction, and the record
     *  of a loss the browser reported (`{at, message}`, or undefined). */
    async loadJournaled(key) {
      const tx = idb.transaction([DATABASES, JOURNAL], "readonly");
      const [snapshot, keys, entries, loss] = await Promise.all([
        request(tx.objectStore(DATABASES).get(key)),
        request(tx.objectStore(JOURNAL).getAllKeys(journalRange(key))),
        request(tx.objectStore(JOURNAL).getAll(journalRange(key))),
        request(tx.objectStore(DATABASES).get(LOSS_KEY)),
      ]);
      const lastSeq = keys.length ? keys[keys.length - 1][1] : 0;
      return { snapshot: snapshot === undefined ? undefined : new Uint8Array(snapshot), entries, lastSeq, loss };
    },
    /** Appends journal entries at `firstSeq`, `firstSeq + 1`, …; resolves once committed.
     *  With `fence` ({owner, ttlMs}) it writes only while that owner holds the key's lease. */
    append(key, firstSeq, entries, fence) {
      return fenced(write([DATABASES, JOURNAL]), key, fence, (tx) => {
        const store = tx.objectStore(JOURNAL);
        entries.forEach((entry, i) => store.put(entry, [key, firstSeq + i]));
      });
    },
    /** Replaces the snapshot and drops the journal, atomically; resolves once committed. */
    checkpoint(key, bytes, fence) {
      return fenced(write([DATABASES, JOURNAL]), key, fence, (tx) => {
        tx.objectStore(DATABASES).put(bytes, key);
        tx.objectStore(JOURNAL).delete(journalRange(key));
      });
    },
    /**
     * Takes (or renews) the key's lease for `owner` when it is free, expired or already
     * `owner`'s; resolves to `{granted, holder}` (`holder`: the other owner when refused).
     */
    takeLease(key, owner, ttlMs) {
      const tx = write(DATABASES);
      const leases = tx.objectStore(DATABASES);
      const result = { granted: false, holder: undefined };
      const read = leases.get(leaseKey(key));
      read.onsuccess = () => {
        const lease = read.result;
        if (lease && lease.owner !== owner && lease.expires > Date.now()) {
          result.holder = lease.owner;
          return;
        }
        leases.put({ owner, expires: Date.now() + ttlMs }, leaseKey(key));
        result.granted = true;
      };
      return done(tx).then(() => result);
    },
    /** Gives the lease up if `owner` still holds it. */
    dropLease(key, owner) {
      const tx = write(DATABASES);
      const leases = tx.objectStore(DATABASES);
      const read = leases.get(leaseKey(key));
      read.onsuccess = () => {
        if (read.result?.owner === owner) leases.delete(leaseKey(key));
      };
      return done(tx);
    },
    close() {
      idb.close();
    },
  };
}
