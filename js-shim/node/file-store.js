// Durable files for Node: the database is replaced atomically (temp file, fsync, rename, fsync of
// the directory), so a crash leaves either the previous or the new database, never a torn one.
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";

const SQLITE_HEADER = "SQLite format 3\0";

/** Reads an existing database file, or returns undefined when there is none. */
export function readDatabaseFile(path) {
  if (!existsSync(path)) return undefined;
  const bytes = readFileSync(path);
  if (bytes.length === 0) return undefined;
  const wal = `${path}-wal`;
  if (existsSync(wal) && statSync(wal).size > 0) {
    throw new Error(
      `lossless-wasm: ${path} has an unmerged write-ahead log (${wal}) from node:sqlite; open it with storage "node:sqlite" (sql.js would miss those writes)`,
    );
  }
  if (bytes.length < 100 || bytes.subarray(0, 16).toString("latin1") !== SQLITE_HEADER) {
    throw new Error(
      `lossless-wasm: ${path} is not a SQLite database (wrong file header); refusing to open it, the file was left unchanged (move it away or set dbPath)`,
    );
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** Atomically replaces `path` with `bytes`. */
export function writeFileAtomic(path, bytes) {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    writeFileSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDirectoryOf(path);
}

/** Makes a rename or creation of `path` durable by fsyncing its directory. */
export function fsyncDirectoryOf(path) {
  let dirFd;
  try {
    dirFd = openSync(dirname(path), "r");
    fsyncSync(dirFd);
  } catch {
    // Some file systems refuse fsync on directories; the rename itself is already atomic.
  } finally {
    if (dirFd !== undefined) closeSync(dirFd);
  }
}
