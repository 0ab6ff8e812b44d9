// Child process for the PostgreSQL multi-gateway tests: one "gateway" committing turns of one
// session key to a shared PostgreSQL store (../js/turn-writer.mjs).
// Usage: node gateway-child.mjs <schema> <name> <sessionKey> <turns>   (LCM_PG_TEST_URL set;
// LCM_PG_GATEWAY_URL, when set, is the URL this gateway connects to instead: a latency proxy)
import { writeTurns } from "../js/turn-writer.mjs";

const [schema, name, sessionKey, turns] = process.argv.slice(2);
const config = { storage: "postgres", postgresUrl: process.env.LCM_PG_GATEWAY_URL ?? process.env.LCM_PG_TEST_URL, postgresSchema: schema, freshTailCount: 4, leafChunkTokens: 1000 };
await writeTurns({ dbPath: "unused", config, name, sessionKey, turns });
