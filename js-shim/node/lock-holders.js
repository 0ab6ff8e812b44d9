// Who holds a database file open, for the error a call gives when another process kept the
// database locked past the wait: on Linux, the processes whose open files (/proc/<pid>/fd)
// include the database, its WAL or its shared-memory file, with their command lines. Elsewhere,
// or when /proc cannot be read, nothing (the error then says "another process").
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** Command lines longer than this are clipped in the error. */
const MAX_COMMAND = 120;

/** `[{pid, command}]` of the other processes that have `path` (or its -wal/-shm) open. */
export function lockHolders(path) {
  const files = new Set([path, `${path}-wal`, `${path}-shm`]);
  const holders = [];
  let pids;
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return holders;
  }
  for (const pid of pids) {
    let fds;
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    const holds = fds.some((fd) => {
      try {
        return files.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
    if (!holds) continue;
    let command = "";
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").replace(/\s+/g, " ").trim();
    } catch {
      // Exited meanwhile.
    }
    holders.push({
      pid: Number(pid),
      command: command.length > MAX_COMMAND ? `${command.slice(0, MAX_COMMAND)}…` : command,
    });
  }
  return holders;
}

/** "pid 123 (node operator/cli.js import …), pid 456 (…)" or "another process". */
export function describeHolders(holders) {
  if (!holders.length) return "another process";
  return holders.map(({ pid, command }) => (command ? `pid ${pid} (${command})` : `pid ${pid}`)).join(", ");
}
