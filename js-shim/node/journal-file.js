// The statement journal (engine/journal.js) on files, for the Node sql.js fallback: `<path>` is the
// database snapshot, replaced atomically at checkpoints (file-store.js), and `<path>.lwjournal`
// holds the transactions committed after it, appended and fsynced before each call resolves.
// A turn then costs a small append instead of rewriting the whole database.
//
// Journal file: an 8-byte header ("LWJ1" + the snapshot generation, u32 LE), then records of
// [payload length u32][crc32 of payload u32][payload = v8-serialized entries]. Each record is
// one write, so a crash mid-append leaves at most the last record torn (short, or zeros): it
// was never acknowledged and is cut off on open. A record that fails its checksum with more
// data after it is corruption, not a crash: opening fails with an error naming the file.
// Generation: the snapshot stores its generation in `PRAGMA user_version`. A checkpoint writes
// the snapshot with generation g+1 first and then a fresh journal for g+1, so a crash between
// the two leaves a journal of generation g that the next open recognises as already contained
// in the snapshot, and ignores. This module must not decide when to checkpoint (engine/journal.js does).
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { deserialize, serialize } from "node:v8";
import * as zlib from "node:zlib";
import { fsyncDirectoryOf, readDatabaseFile, writeFileAtomic } from "./file-store.js";
import { entrySize, journalPersister, replay } from "../engine/journal.js";

const MAGIC = "LWJ1";

// zlib.crc32 exists from Node 20.15 / 22.2; older Nodes (which lack node:sqlite and so rely on
// this driver most) get the same CRC-32 computed here.
let table;
function crc32Js(bytes) {
  table ??= Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  let c = 0xffffffff;
  for (const b of bytes) c = table[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
export const crc32 = zlib.crc32 ?? crc32Js;
/** For the test that the fallback agrees with zlib's. */
export const crc32Fallback = crc32Js;

/** The journal file that belongs to the database at `path`. */
export const journalPath = (path) => `${path}.lwjournal`;

function header(generation) {
  const b = Buffer.alloc(8);
  b.write(MAGIC, 0, "latin1");
  b.writeUInt32LE(generation >>> 0, 4);
  return b;
}

/** Atomically replaces `path` with `bytes` (temp file, fsync, rename, fsync of the directory). */
function replaceFile(path, bytes) {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    writeAll(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDirectoryOf(path);
}

function writeAll(fd, bytes) {
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
}

const corrupt = (path, at, why) =>
  new Error(
    `lossless-wasm: the journal ${path} is corrupt at byte ${at} (${why}); nothing was changed. ` +
      `It holds the writes made after the database's last checkpoint: restore it from a backup, or move it away to open the database without those writes.`,
  );

const zerosFrom = (bytes, at) => {
  for (let i = at; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
};

/**
 * Reads a journal: its generation, the entries of its intact records, where they end, and
 * whether a torn tail follows. Undefined when there is none; throws (naming it) when corrupt.
 */
export function readJournal(path) {
  if (!existsSync(path)) return undefined;
  const bytes = readFileSync(path);
  if (bytes.length === 0) return undefined;
  if (bytes.length < 8 || bytes.toString("latin1", 0, 4) !== MAGIC)
    throw corrupt(path, 0, `it does not start with the ${MAGIC} header`);
  const generation = bytes.readUInt32LE(4);
  const entries = [];
  let at = 8;
  for (let record = 1; at < bytes.length && !zerosFrom(bytes, at); record++) {
    // A short header or payload is the last append, cut by a crash.
    if (at + 8 > bytes.length) break;
    const end = at + 8 + bytes.readUInt32LE(at);
    if (end > bytes.length) break;
    const payload = bytes.subarray(at + 8, end);
    if (crc32(payload) !== bytes.readUInt32LE(at + 4)) {
      if (end === bytes.length) break;
      throw corrupt(path, at, `record ${record} fails its checksum and ${bytes.length - end} bytes follow it`);
    }
    let list;
    try {
      list = deserialize(payload);
    } catch (err) {
      throw corrupt(path, at, `record ${record} passes its checksum but does not decode: ${err.message}`);
    }
    if (!Array.isArray(list)) throw corrupt(path, at, `record ${record} is not a list of transactions`);
    entries.push(...list);
    at = end;
  }
  return { generation, entries, end: at, torn: at < bytes.length };
}

function snapshotGeneration(db) {
  return Number(db.exec("PRAGMA user_version")[0]?.values[0][0] ?? 0);
}

/**
 * The snapshot with its journal replayed, in memory; writes nothing. A journal one generation
 * behind the snapshot is stale (a crash inside a checkpoint) and skipped; any other mismatch
 * with records in it means the two files do not belong together, and fails.
 */
function load(SQL, path) {
  const snapshot = readDatabaseFile(path);
  const raw = new SQL.Database(snapshot);
  try {
    const generation = snapshotGeneration(raw);
    const jpath = journalPath(path);
    const found = readJournal(jpath);
    const current = found?.generation === generation;
    if (found && !current && found.entries.length > 0 && (found.generation + 1) >>> 0 !== generation) {
      throw new Error(
        `lossless-wasm: the journal ${jpath} (generation ${found.generation}) does not belong to ${path} (generation ${generation}); nothing was changed. ` +
          `Was the database file replaced? Put back the matching file, or move the journal away to open the database without its writes.`,
      );
    }
    try {
      replay(raw, current ? found.entries : []);
    } catch (err) {
      throw new Error(`${err.message} (journal ${jpath}, database ${path})`);
    }
    return { raw, snapshot, generation, found, current };
  } catch (err) {
    raw.close();
    throw err;
  }
}

/**
 * Reads the database at `path` as the engine would see it (snapshot plus journal) into a sql.js
 * Database, for readers (tests, tools); changes no file, so it is safe while a writer has it open.
 */
export function readJournaledFile(SQL, path) {
  return load(SQL, path).raw;
}

/**
 * Folds a sql.js journal into its database file (a checkpoint) and removes the journal, so a
 * driver that does not read journals (node:sqlite) sees every write. The caller holds the lock.
 * @returns {boolean} whether the journal held writes that were folded in
 */
export function foldJournal(SQL, path) {
  const jpath = journalPath(path);
  if (!existsSync(jpath)) return false;
  // Throws when the journal is corrupt: it is evidence, never deleted unread.
  let folded = Boolean(readJournal(jpath)?.entries.length);
  if (folded) {
    const { raw, generation, current } = load(SQL, path);
    folded = current;
    try {
      // The new generation makes the journal stale should we crash before removing it.
      if (folded) {
        raw.exec(`PRAGMA user_version = ${(generation + 1) >>> 0}`);
        writeFileAtomic(path, raw.export());
      }
    } finally {
      raw.close();
    }
  }
  unlinkSync(jpath);
  fsyncDirectoryOf(jpath);
  return folded;
}

/**
 * Opens the database at `path` with a sql.js module: the snapshot plus its journal replayed.
 * @param {object} [options]
 * @param {number} [options.checkpointBytes] the least journal size that triggers a checkpoint
 *        (engine/journal.js also waits for a sixteenth of the snapshot, so checkpoints amortize)
 * @returns {{db: object, persist: Function, close: Function}} `db` and `persist` go to createHandle
 */
export function openJournaledFile(SQL, path, { checkpointBytes } = {}) {
  const { raw, snapshot, generation: opened, found, current } = load(SQL, path);
  let generation = opened;
  const jpath = journalPath(path);
  const entries = current ? found.entries : [];
  let fd;
  try {
    // A torn tail is cut off, and a missing or stale journal replaced, before anything is appended.
    if (current && found.torn) replaceFile(jpath, readFileSync(jpath).subarray(0, found.end));
    else if (!current) replaceFile(jpath, header(generation));
    fd = openSync(jpath, "a");
  } catch (err) {
    raw.close();
    throw err;
  }
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
      writeAll(fd, Buffer.concat([head, payload]));
      fsyncSync(fd);
    },
    checkpoint(bytes) {
      // `bytes` already carries generation + 1 (set just before the export, below).
      writeFileAtomic(path, bytes);
      closeSync(fd);
      replaceFile(jpath, header(generation + 1));
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
