// Browser persistence: the database file lives in IndexedDB under a name of the embedder's
// choosing. Saves are IndexedDB transactions created in call order, so a later save never lands
// before an earlier one; each resolves when the transaction has committed.

const STORE = "databases";

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** Opens (creating if needed) the IndexedDB database `dbName` that holds our database files. */
export async function openIndexedDbStore(dbName = "lossless-wasm") {
  if (typeof indexedDB === "undefined") throw new Error("IndexedDB is not available in this environment");
  const open = indexedDB.open(dbName, 1);
  open.onupgradeneeded = () => open.result.createObjectStore(STORE);
  const idb = await request(open);
  return {
    /** The saved database file for `key`, or undefined. */
    async load(key) {
      const value = await request(idb.transaction(STORE, "readonly").objectStore(STORE).get(key));
      return value === undefined ? undefined : new Uint8Array(value);
    },
    /** Saves a database file; resolves once the write has committed. */
    save(key, bytes) {
      const tx = idb.transaction(STORE, "readwrite");
      tx.objectStore(STORE).put(bytes, key);
      return new Promise((resolve, reject) => {
        tx.oncomplete = () => resolve();
        tx.onerror = () => reject(tx.error);
        tx.onabort = () => reject(tx.error ?? new Error("IndexedDB transaction aborted"));
      });
    },
    close() {
      idb.close();
    },
  };
}
