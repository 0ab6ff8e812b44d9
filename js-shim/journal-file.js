// The statement journal (journal.js) on files, for the Node sql.js fallback: `<path>` is the
// database snapshot, replaced atomically at checkpoints (file-store.js), and `<path>.lwjournal`
// holds the transactions committed after it, appended and fsynced before each call resolves.
// A turn then costs a small append instead of rewriting the whole database.
//
// Journal file: an 8-byte header ("LWJ1" + the snapshot generation, u32 LE), then records of
// [payload length u32][crc32 of payload u32][payload = v8-serialized entries]. A torn or
// corrupt record ends the journal (it was never acknowledged); it is cut off on open.
// Generation: the snapshot stores its generation in `PRAGMA user_version`. A checkpoint writes
// the snapshot with generation g+1 first and then a fresh journal for g+1, so a crash between
// the two leaves a journal of generation g that the next open recognises as already contained
// in the snapshot, and ignores.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { deserialize, serialize } from "node:v8";
import { crc32 } from "node:zlib";
import { fsyncDirectoryOf, readDatabaseFile, writeFileAtomic } from "./file-store.js";
import { entrySize, journalPersister, replay } from "./journal.js";

const MAGIC = "LWJ1";

/** The journal file that belongs to the database at `path`. */
export const journalPath = (path) => `${path}.lwjournal`;

function header(generation) {
  const b = Buffer.alloc(8);
  b.write(MAGIC, 0, "latin1");
  b.writeUInt32LE(generation >>> 0, 4);
  return b;
}

/** Replaces the journal with an empty one of `generation`, atomically. */
function resetJournal(path, generation) {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    writeSync(fd, header(generation));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDirectoryOf(path);
}

/** Reads a journal: its generation, the entries of its intact records, and where they end. */
export function readJournal(path) {
  if (!existsSync(path)) return undefined;
  const bytes = readFileSync(path);
  if (bytes.length < 8 || bytes.toString("latin1", 0, 4) !== MAGIC) return undefined;
  const generation = bytes.readUInt32LE(4);
  const entries = [];
  let at = 8;
  while (at + 8 <= bytes.length) {
    const length = bytes.readUInt32LE(at);
    const sum = bytes.readUInt32LE(at + 4);
    const end = at + 8 + length;
    if (end > bytes.length) break;
    const payload = bytes.subarray(at + 8, end);
    if (crc32(payload) !== sum) break;
    entries.push(...deserialize(payload));
    at = end;
  }
  return { generation, entries, end: at, torn: at < bytes.length };
}

function snapshotGeneration(db) {
  return Number(db.exec("PRAGMA user_version")[0]?.values[0][0] ?? 0);
}

/**
 * Opens the database at `path` with a sql.js module: the snapshot plus its journal replayed.
 * @returns {{db: object, persist: Function, close: Function}} `db` and `persist` go to createHandle
 */
export function openJournaledFile(SQL, path, { checkpointBytes } = {}) {
  const snapshot = readDatabaseFile(path);
  const raw = new SQL.Database(snapshot);
  const jpath = journalPath(path);
  let generation = snapshotGeneration(raw);
  const found = readJournal(jpath);
  const entries = found && found.generation === generation ? found.entries : [];
  try {
    replay(raw, entries);
  } catch (err) {
    raw.close();
    throw err;
  }
  // A missing, stale or torn journal is rewritten before anything is appended to it.
  if (!found || found.generation !== generation || found.torn) {
    if (found && found.generation === generation) {
      // Keep the intact records: rewrite them without the torn tail.
      const tmp = `${jpath}.tmp-${process.pid}`;
      const fd = openSync(tmp, "w", 0o600);
      try {
        writeSync(fd, readFileSync(jpath).subarray(0, found.end));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, jpath);
      fsyncDirectoryOf(jpath);
    } else {
      resetJournal(jpath, generation);
    }
  }
  let fd = openSync(jpath, "a");
  const persister = journalPersister({
    db: raw,
    snapshotBytes: snapshot?.length ?? 0,
    journalBytes: entries.reduce((n, e) => n + entrySize(e), 0),
    nextSeq: entries.length + 1,
    minCheckpointBytes: checkpointBytes,
    append(_seq, list) {
      const payload = serialize(list);
      const head = Buffer.alloc(8);
      head.writeUInt32LE(payload.length, 0);
      head.writeUInt32LE(crc32(payload), 4);
      writeSync(fd, Buffer.concat([head, payload]));
      fsyncSync(fd);
    },
    checkpoint(bytes) {
      // `bytes` already carries generation + 1 (set just before the export, below).
      writeFileAtomic(path, bytes);
      closeSync(fd);
      resetJournal(jpath, generation + 1);
      generation += 1;
      fd = openSync(jpath, "a");
    },
  });
  return {
    db: persister.db,
    persist(exportDatabase) {
      return persister.persist(() => {
        raw.exec(`PRAGMA user_version = ${(generation + 1) >>> 0}`);
        return exportDatabase();
      });
    },
    close() {
      closeSync(fd);
    },
  };
}
