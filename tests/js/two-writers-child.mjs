// Child process for the two-writers test: one "gateway" committing turns (with assembles, as a
// host does) to a shared database file (turn-writer.mjs).
// Usage: node two-writers-child.mjs <dbPath> <storage> <name> <sessionKey> <turns>
import { writeTurns } from "./turn-writer.mjs";

const [dbPath, storage, name, sessionKey, turns] = process.argv.slice(2);
await writeTurns({ dbPath, config: { storage, freshTailCount: 4, leafChunkTokens: 1000 }, name, sessionKey, turns });
