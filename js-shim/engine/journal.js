// Incremental persistence for sql.js: a write-ahead journal of the statements each committed
// transaction ran, instead of a copy of the whole database after every write.
//
// `journalDatabase(db)` wraps a sql.js Database in the small interface the Rust side binds to
// (prepare/bind/step/get/reset/free, exec, export, close). Reads pass straight through. Every
// statement that can write is recorded with its bound values once it has run; COMMIT closes the
// transaction's entry, ROLLBACK drops it. Replaying the entries, in order, on the snapshot they
// were recorded after rebuilds the same database: SQLite is deterministic for the same
// statements on the same state (ids are max+1, the engine passes time in, nothing is random).
//
// A persister (IndexedDB in browsers, a file in Node) appends each new entry durably before the
// engine call that produced it resolves, so the cost of a turn is the size of the turn, not of
// the history. Now and then it writes a fresh snapshot and drops the journal (a checkpoint), so
// reopening never replays more than a bounded journal.

const READ = /^\s*(SELECT|WITH|EXPLAIN)\b/i;
const WRITE_WORD = /\b(INSERT|UPDATE|DELETE|REPLACE)\b/i;
const isRead = (sql) => READ.test(sql) && !(/^\s*WITH\b/i.test(sql) && WRITE_WORD.test(sql));
const CONTROL = { BEGIN: "begin", COMMIT: "commit", END: "commit", ROLLBACK: "rollback" };
// Connection settings change no data; the engine re-applies them on every open.
const CONNECTION_ONLY = /^\s*PRAGMA\s+foreign_keys\s*=\s*(ON|OFF|1|0)\s*;?\s*$/i;

function controlOf(sql) {
  const word = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase();
  // "ROLLBACK TO <savepoint>" and "RELEASE" are not used by the engine; treat them as plain writes.
  if (word === "ROLLBACK" && /\bTO\b/i.test(sql)) return undefined;
  return CONTROL[word];
}

/** Approximate bytes an entry takes when stored (for the checkpoint policy). */
export function entrySize(entry) {
  let n = 16;
  for (const [sql, values] of entry) {
    n += sql.length + 8;
    for (const v of values ?? []) n += typeof v === "string" ? v.length : (v?.byteLength ?? 8);
  }
  return n;
}

/** The schema cookie and the connection's change counter: both move when a script wrote. */
function changeMarks(db) {
  const [row] = db.exec("SELECT (SELECT schema_version FROM pragma_schema_version), total_changes()");
  return row ? row.values[0].join(",") : "";
}

class RecordingStatement {
  constructor(stmt, sql, journal) {
    this.stmt = stmt;
    this.sql = sql;
    this.control = controlOf(sql);
    this.journal = journal;
    this.values = [];
    this.ran = false;
  }

  bind(values) {
    this.values = values ?? [];
    this.ran = false;
    return this.stmt.bind(values);
  }

  step() {
    const row = this.stmt.step();
    // Recorded once it has run without error: a failed statement changed nothing.
    if (!this.ran) {
      this.ran = true;
      this.journal.ran(this.sql, this.values, this.control);
    }
    return row;
  }

  get() {
    return this.stmt.get();
  }

  reset() {
    this.ran = false;
    return this.stmt.reset();
  }

  free() {
    return this.stmt.free();
  }
}

/**
 * Wraps a sql.js Database so the transactions committed through it are recorded.
 * @returns {{db: object, take: () => Array<Array<[string, any[]]>>, pending: () => boolean}}
 *   `db` goes to the engine; `take()` removes and returns the committed entries in order.
 */
export function journalDatabase(db) {
  let open = null;
  let committed = [];
  const journal = {
    ran(sql, values, control) {
      if (control === "begin") open = [];
      else if (control === "rollback") open = null;
      else if (control === "commit") {
        if (open?.length) committed.push(open);
        open = null;
      } else if (open) open.push([sql, values]);
      // A write outside a transaction commits on its own.
      else committed.push([[sql, values]]);
    },
  };
  const wrapped = {
    prepare(sql) {
      const stmt = db.prepare(sql);
      return isRead(sql) ? stmt : new RecordingStatement(stmt, sql, journal);
    },
    exec(script) {
      if (CONNECTION_ONLY.test(script)) return db.exec(script);
      // Scripts are migrations or idempotent DDL (CREATE TABLE IF NOT EXISTS on every open);
      // only one that changed the schema or rows is journaled, to be replayed as a script.
      const before = changeMarks(db);
      const out = db.exec(script);
      if (changeMarks(db) !== before) journal.ran(script, null, undefined);
      return out;
    },
    export() {
      return db.export();
    },
    close() {
      return db.close();
    },
    getRowsModified() {
      return db.getRowsModified?.();
    },
  };
  return {
    db: wrapped,
    take() {
      const out = committed;
      committed = [];
      return out;
    },
    pending: () => committed.length > 0,
  };
}

/**
 * Applies journal entries one at a time, yielding after each: the shared body of `replay` and
 * `replaySliced`. Each entry runs in one transaction; a failing entry rolls back and throws,
 * since a journal that does not apply means the snapshot and journal do not belong together.
 */
function* applyEntries(db, entries) {
  const statements = new Map();
  try {
    for (const [i, entry] of entries.entries()) {
      db.exec("BEGIN IMMEDIATE");
      try {
        for (const [sql, values] of entry) {
          if (values === null) {
            db.exec(sql);
            continue;
          }
          let stmt = statements.get(sql);
          if (!stmt) statements.set(sql, (stmt = db.prepare(sql)));
          stmt.bind(values);
          while (stmt.step());
          stmt.reset();
        }
        db.exec("COMMIT");
      } catch (err) {
        db.exec("ROLLBACK");
        throw new Error(
          `lossless-wasm: journal entry ${i + 1} of ${entries.length} does not apply to its snapshot (${err.message}); the stored database was left unchanged`,
        );
      }
      yield i;
    }
  } finally {
    for (const stmt of statements.values()) stmt.free();
  }
}

/** Replays journal entries, in order, on a raw sql.js Database (the snapshot they follow). */
export function replay(db, entries) {
  for (const _ of applyEntries(db, entries));
}

/**
 * `replay`, giving the event loop back every `sliceMs` (a browser tab's main thread stays
 * responsive while a long journal replays). Nothing else may use `db` until it resolves.
 */
export async function replaySliced(db, entries, sliceMs = 20) {
  let sliceStart = performance.now();
  for (const _ of applyEntries(db, entries)) {
    if (performance.now() - sliceStart < sliceMs) continue;
    await new Promise((r) => setTimeout(r, 0));
    sliceStart = performance.now();
  }
}

/**
 * When to checkpoint: once the journal holds more than a sixteenth of the snapshot's size (and
 * at least `minBytes`), so checkpoints cost O(1) amortized per journaled byte and a reopen
 * replays a bounded journal (at 100K messages ~3 MiB, about 1,200 turns, ~1 s).
 */
export function checkpointDue(journalBytes, snapshotBytes, minBytes = 2 << 20) {
  return journalBytes > Math.max(minBytes, snapshotBytes / 16);
}

/**
 * Ties a journaled database to durable storage.
 * @param {object} options
 * @param {object} options.db the raw sql.js Database (already replayed up to date)
 * @param {number} options.snapshotBytes size of the stored snapshot (0: none yet)
 * @param {number} options.journalBytes size of the stored journal after it
 * @param {number} options.nextSeq sequence number of the next journal entry
 * @param {(seq: number, entries: any[]) => Promise<void>|void} options.append durably appends
 * @param {(bytes: Uint8Array) => Promise<void>|void} options.checkpoint durably replaces the
 *        snapshot and drops the journal
 * @returns {{db: object, persist: (exportDatabase: () => Uint8Array) => Promise<void>|void}}
 */
export function journalPersister({
  db,
  snapshotBytes = 0,
  journalBytes = 0,
  nextSeq = 1,
  append,
  checkpoint,
  minCheckpointBytes,
}) {
  const journal = journalDatabase(db);
  let seq = nextSeq;
  let journaled = journalBytes;
  let snapshot = snapshotBytes;
  // A failed write leaves a gap the journal cannot describe: the next save is a full snapshot.
  let mustCheckpoint = snapshotBytes === 0 || checkpointDue(journalBytes, snapshotBytes, minCheckpointBytes);
  const failed = (err) => {
    mustCheckpoint = true;
    throw err;
  };
  return {
    db: journal.db,
    /** Persists what committed since the last call; a promise when storage is asynchronous. */
    persist(exportDatabase) {
      // Taking the entries and exporting happen in the same tick, so nothing falls between them.
      const entries = journal.take();
      const grown = journaled + entries.reduce((n, e) => n + entrySize(e), 0);
      if (mustCheckpoint || checkpointDue(grown, snapshot, minCheckpointBytes)) {
        const bytes = exportDatabase();
        mustCheckpoint = false;
        const finish = () => {
          snapshot = bytes.length;
          journaled = 0;
        };
        try {
          const out = checkpoint(bytes);
          return typeof out?.then === "function" ? out.then(finish, failed) : finish();
        } catch (err) {
          return failed(err);
        }
      }
      if (entries.length === 0) return undefined;
      const first = seq;
      seq += entries.length;
      journaled = grown;
      try {
        const out = append(first, entries);
        return typeof out?.then === "function" ? out.catch(failed) : out;
      } catch (err) {
        return failed(err);
      }
    },
  };
}
