// The database file's path as the operator reads about it: a storage that cannot open (its folder
// cannot be created, a path under a file, no permission) is one line naming the config key
// `dbPath`, the path and the operating system's reason, whoever meets it first (the plugin's
// open, `/lcm`, the `lcm` command line). The decision when it cannot open is the plugin's
// (index.js): refuse, so the host answers with its legacy engine and says so.
import { accessSync, constants, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { LosslessError, StorageOpenError } from "../errors.js";

/** Whether `err` is the operating system refusing the file or its folder (not a lock or a
 *  malformed database, whose messages already say what to do). */
export function isOsOpenError(err) {
  return (
    (typeof err?.code === "string" && /^E[A-Z]+$/.test(err.code)) ||
    /unable to open database file/i.test(err?.message ?? "")
  );
}

/** `err` (the OS's reason) as the one line for a database at `path` that cannot open. */
export function storageOpenError(path, err) {
  const reason = String(err?.message ?? err).replace(/^lossless-wasm: /, "");
  // The system's code (ENOTDIR, EACCES, …) when it gave one; the error crosses the worker
  // thread as a StorageOpenError either way (errors.js).
  return new StorageOpenError(`lossless-wasm: the database cannot be opened: config \`dbPath\` is ${path}: ${reason}`, {
    code: err?.code,
  });
}

/**
 * Why a database that does not exist yet at `path` could not be created, without creating
 * anything: the nearest existing folder above it is a file, or not writable. undefined when
 * nothing says it could not (it is simply not there yet).
 */
export function whyNotCreatable(path) {
  let dir = dirname(resolve(path));
  for (;;) {
    let stat;
    try {
      stat = statSync(dir);
    } catch (err) {
      if (err?.code !== "ENOENT") return storageOpenError(path, err);
      const up = dirname(dir);
      if (up === dir) return undefined;
      dir = up;
      continue;
    }
    if (!stat.isDirectory())
      return storageOpenError(path, new LosslessError(`ENOTDIR: ${dir} is a file, not a folder`, { code: "ENOTDIR" }));
    try {
      accessSync(dir, constants.W_OK | constants.X_OK);
    } catch (err) {
      return storageOpenError(path, err);
    }
    return undefined;
  }
}
