// A single-writer lock for sql.js database files. sql.js keeps the whole database in memory and
// persists it as a snapshot plus a journal of its own writes (journal-file.js), so two processes
// on one file would each overwrite or interleave the other's writes without an error. The lock makes the second one fail at open instead, with
// a message saying who holds the file. The lock file holds the owner's pid; a lock whose pid is
// no longer running (the owner crashed or was killed) is stale and taken over.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";

const held = new Map();

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return err.code === "EPERM";
  }
}

function readOwner(lockPath) {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function release(lockPath) {
  if (!held.delete(lockPath)) return;
  try {
    if (readOwner(lockPath) === process.pid) unlinkSync(lockPath);
  } catch {
    // Already gone; nothing to release.
  }
}

process.once("exit", () => {
  for (const lockPath of [...held.keys()]) release(lockPath);
});

/**
 * Takes the lock on `dbPath` for this process, or throws naming the process that holds it.
 * Returns a function that releases it (it is also released when the process exits).
 */
export function lockDatabaseFile(dbPath) {
  const lockPath = `${dbPath}.lock`;
  if (held.has(lockPath)) return () => release(lockPath);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(lockPath, "wx", 0o600);
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      held.set(lockPath, true);
      return () => release(lockPath);
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
    }
    const owner = readOwner(lockPath);
    if (owner !== undefined && owner !== process.pid && alive(owner)) {
      throw new Error(
        `lossless-wasm: ${dbPath} is in use by another process (pid ${owner}, lock file ${lockPath}); ` +
          `storage "sql.js" cannot share a database file between processes (each would overwrite the other's writes). ` +
          `Use storage "node:sqlite", or give each process its own dbPath.`,
      );
    }
    // Stale (its owner is gone), empty (an owner died while writing it) or our own pid left
    // over from a previous life of this pid: take it over.
    try {
      unlinkSync(lockPath);
    } catch (err) {
      if (err.code !== "ENOENT") throw err;
    }
  }
  throw new Error(`lossless-wasm: could not take the lock ${lockPath} for ${dbPath}; another process keeps taking it`);
}
