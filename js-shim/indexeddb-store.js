// Browser persistence in IndexedDB, under a database name of the embedder's choosing. Two
// object stores:
//  - "databases": a database file (snapshot) per key — also the whole-file format of earlier
//    versions, which therefore opens as a snapshot with an empty journal;
//  - "journal": the transactions committed since that snapshot, keyed [key, seq] (journal.js).
// Every write is one IndexedDB transaction with strict durability (flushed before it reports
// complete), and transactions are created in call order, so a later write never lands before an
// earlier one. A checkpoint replaces the snapshot and deletes the journal in one transaction.

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

/** Opens (creating or upgrading if needed) the IndexedDB database `dbName`. */
export async function openIndexedDbStore(dbName = "lossless-wasm") {
  if (typeof indexedDB === "undefined") throw new Error("IndexedDB is not available in this environment");
  const open = indexedDB.open(dbName, 2);
  open.onupgradeneeded = () => {
    const idb = open.result;
    if (!idb.objectStoreNames.contains(DATABASES)) idb.createObjectStore(DATABASES);
    if (!idb.objectStoreNames.contains(JOURNAL)) idb.createObjectStore(JOURNAL);
  };
  const idb = await request(open);
  const write = (stores) => idb.transaction(stores, "readwrite", { durability: "strict" });
  return {
    /** The saved database file (snapshot) for `key`, or undefined. */
    async load(key) {
      const value = await request(idb.transaction(DATABASES, "readonly").objectStore(DATABASES).get(key));
      return value === undefined ? undefined : new Uint8Array(value);
    },
    /** Saves a whole database file (and drops any journal); resolves once committed. */
    save(key, bytes) {
      return this.checkpoint(key, bytes);
    },
    /** The snapshot and the journal entries after it, read in one transaction. */
    async loadJournaled(key) {
      const tx = idb.transaction([DATABASES, JOURNAL], "readonly");
      const [snapshot, keys, entries] = await Promise.all([
        request(tx.objectStore(DATABASES).get(key)),
        request(tx.objectStore(JOURNAL).getAllKeys(journalRange(key))),
        request(tx.objectStore(JOURNAL).getAll(journalRange(key))),
      ]);
      const lastSeq = keys.length ? keys[keys.length - 1][1] : 0;
      return { snapshot: snapshot === undefined ? undefined : new Uint8Array(snapshot), entries, lastSeq };
    },
    /** Appends journal entries at `firstSeq`, `firstSeq + 1`, …; resolves once committed. */
    append(key, firstSeq, entries) {
      const tx = write(JOURNAL);
      const store = tx.objectStore(JOURNAL);
      entries.forEach((entry, i) => store.put(entry, [key, firstSeq + i]));
      return done(tx);
    },
    /** Replaces the snapshot and drops the journal, atomically; resolves once committed. */
    checkpoint(key, bytes) {
      const tx = write([DATABASES, JOURNAL]);
      tx.objectStore(DATABASES).put(bytes, key);
      tx.objectStore(JOURNAL).delete(journalRange(key));
      return done(tx);
    },
    close() {
      idb.close();
    },
  };
}
