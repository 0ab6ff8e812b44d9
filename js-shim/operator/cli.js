#!/usr/bin/env node
// The headless operator command: `/lcm status|doctor|repair|import` outside chat, on a database
// file or a PostgreSQL store (the package's `lossless-wasm-lcm` bin). It opens the engine the way
// the OpenClaw plugin does (node/engine.js) and runs the same command handler (lcm-command.js);
// only the argument parsing, the LLM for repair and the exit codes live here. `copy-to-postgres`
// moves a SQLite store to PostgreSQL (copy-to-postgres.js), then runs doctor there.
//   exit 0: done (doctor: every check passes; repair: everything redone; copy-to-postgres: every
//           table's rows are there and doctor passes on PostgreSQL)
//   exit 1: the command ran and problems remain, or it failed (the message says why)
//   exit 2: wrong command line, no database at the path, or repair without an LLM
import { existsSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { openCopySource } from "./copy-source.js";
import { whyNotCreatable } from "../node/db-path.js";
import { checkSourceVersion, copyReportText, copyToPostgres } from "./copy-to-postgres.js";
import { runLcmCommand } from "./lcm-command.js";
import { summarizeAsSuccessor } from "../node/successor.js";
import { openNodeEngine } from "../node/engine.js";
import { createOpenAiLlm } from "./openai-llm.js";
import { UsageError } from "../errors.js";
import { POSTGRES_URL_ENV, postgresSchemaFor, postgresUrlFor, redactedUrl } from "../postgres/config.js";

const COMMANDS = ["status", "doctor", "repair", "import", "copy-to-postgres", "summarize", "help"];

const USAGE = `usage: lossless-wasm-lcm [--db <path> | --storage postgres] <command> [--dry-run]

commands:
  status              what is stored, the last compactions and failures, backoff and breaker state
  doctor [--dry-run]  integrity checks; fixes what is safe to fix unless --dry-run
  repair [--dry-run]  re-summarize fallback summaries and the summaries built on them;
                      needs an OpenAI-compatible LLM (--llm-url, --llm-model) unless --dry-run
  import <lcm.db>     import a lossless-claw database (read-only on the source; idempotent)
  copy-to-postgres    copy the SQLite store at --db into PostgreSQL (--postgres-url, --postgres-schema)
                      with the same ids; read-only on the source; idempotent; then doctor --dry-run there
  summarize           write the summaries pending for --session and wait for them (the plugin starts
                      it detached, as \`openclaw lcm summarize\`, when a one-shot process cannot wait);
                      needs an LLM like repair (inside OpenClaw: the host's)

options:
  --db <path>         the database (default: $LOSSLESS_WASM_DB, else the plugin's default
                      <state dir>/lossless-wasm/lossless.sqlite, state dir = $OPENCLAW_STATE_DIR or ~/.openclaw)
  --session <key>     status: also detail this session key; summarize: the session to summarize
  --session-id <id>   summarize: the host's session id (default: the key)
  --storage <driver>  auto (default), node:sqlite or sql.js; postgres: run status, doctor, repair
                      or import on a PostgreSQL store instead of --db (not for copy-to-postgres,
                      whose --storage says how to read the source)
  --postgres-url <u>  postgres://user:password@host:port/db (or $LOSSLESS_WASM_POSTGRES_URL), for
                      --storage postgres and copy-to-postgres; shown with the password hidden
  --postgres-schema <s>  the store's schema on PostgreSQL (default lossless_wasm)
  --llm-url <url>     repair: base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1
                      (or $LOSSLESS_WASM_LLM_URL); the API key is read from $LOSSLESS_WASM_LLM_API_KEY
  --llm-model <id>    repair: the model to ask (or $LOSSLESS_WASM_LLM_MODEL)
  --timeout-ms <n>    repair: time limit per summary request (default 120000)
  -h, --help          this text

exit status: 0 done, 1 problems remain or the command failed, 2 wrong usage`;

function defaultDbPath(env) {
  return join(env.OPENCLAW_STATE_DIR || join(homedir(), ".openclaw"), "lossless-wasm", "lossless.sqlite");
}

/** Parses argv into what to run; throws UsageError with a message a user can act on. */
export function parseCommandLine(argv, env = process.env, { hostLlm = false } = {}) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        db: { type: "string" },
        session: { type: "string" },
        "session-id": { type: "string" },
        storage: { type: "string" },
        "postgres-url": { type: "string" },
        "postgres-schema": { type: "string" },
        "dry-run": { type: "boolean" },
        "llm-url": { type: "string" },
        "llm-model": { type: "string" },
        "timeout-ms": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    throw new UsageError(err.message);
  }
  const { values: v, positionals } = parsed;
  if (v.help) return { help: true };
  const [command, ...rest] = positionals;
  if (!command) throw new UsageError("no command given");
  if (!COMMANDS.includes(command))
    throw new UsageError(`unknown command ${JSON.stringify(command)} (one of ${COMMANDS.join(", ")})`);
  if (command === "help") return { help: true };
  const copy = command === "copy-to-postgres";
  if (command !== "import" && rest.length) throw new UsageError(`${command} takes no argument (got ${rest.join(" ")})`);
  if (command === "import" && rest.length !== 1)
    throw new UsageError("import needs exactly one path: the lossless-claw lcm.db");
  if (command === "summarize" && !v.session)
    throw new UsageError("summarize needs --session <key>: the session whose pending summaries to write");
  if (v["session-id"] !== undefined && command !== "summarize")
    throw new UsageError(`--session-id applies to summarize, not ${command}`);
  if (v["dry-run"] && !["doctor", "repair"].includes(command))
    throw new UsageError(`--dry-run applies to doctor and repair, not ${command}`);
  if (
    v.storage !== undefined &&
    !["auto", "node:sqlite", "sql.js", ...(copy ? [] : ["postgres"])].includes(v.storage)
  ) {
    throw new UsageError(
      copy && v.storage === "postgres"
        ? "copy-to-postgres reads a SQLite store: its --storage is auto, node:sqlite or sql.js (the target is --postgres-url)"
        : `--storage must be auto, node:sqlite, sql.js or postgres (got ${v.storage})`,
    );
  }
  const postgres = copy || v.storage === "postgres";
  if (!postgres && (v["postgres-url"] !== undefined || v["postgres-schema"] !== undefined)) {
    throw new UsageError("--postgres-url and --postgres-schema apply to copy-to-postgres and --storage postgres");
  }
  let postgresUrl;
  let postgresSchema;
  if (postgres) {
    // The URL is checked here, so a missing one is a usage error; its value is never shown.
    if (v["postgres-url"] === undefined && !env[POSTGRES_URL_ENV]) {
      throw new UsageError(
        `${command === "copy-to-postgres" ? "copy-to-postgres" : "--storage postgres"} needs the server: --postgres-url postgres://user:password@host:port/db or $${POSTGRES_URL_ENV}`,
      );
    }
    try {
      postgresUrl = postgresUrlFor({ postgresUrl: v["postgres-url"] }, env);
      postgresSchema = postgresSchemaFor({ postgresSchema: v["postgres-schema"] });
    } catch (err) {
      throw new UsageError(
        err.message
          .replace("config `postgresUrl`", "--postgres-url")
          .replace("config `postgresSchema`", "--postgres-schema"),
      );
    }
  }
  let timeoutMs;
  if (v["timeout-ms"] !== undefined) {
    timeoutMs = Number(v["timeout-ms"]);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
      throw new UsageError(`--timeout-ms must be a positive integer (got ${v["timeout-ms"]})`);
  }
  const llmUrl = v["llm-url"] ?? env.LOSSLESS_WASM_LLM_URL;
  const llmModel = v["llm-model"] ?? env.LOSSLESS_WASM_LLM_MODEL;
  if (command === "summarize" && !hostLlm && !(llmUrl && llmModel)) {
    throw new UsageError(
      "summarize needs an LLM: pass --llm-url <OpenAI-compatible base URL> and --llm-model <id>, or run it as `openclaw lcm summarize`, which uses the host's",
    );
  }
  if (command === "repair" && !v["dry-run"] && !(llmUrl && llmModel)) {
    throw new UsageError(
      "repair needs an LLM to write the new summaries: pass --llm-url <OpenAI-compatible base URL> and --llm-model <id> " +
        "(the API key comes from $LOSSLESS_WASM_LLM_API_KEY), or run /lcm repair inside OpenClaw, which uses the host's LLM. " +
        "repair --dry-run lists what would be redone without one.",
    );
  }
  return {
    command,
    args: [command, ...rest, ...(v["dry-run"] ? ["--dry-run"] : [])],
    dbPath: v.db ?? env.LOSSLESS_WASM_DB ?? defaultDbPath(env),
    sessionKey: v.session,
    sessionId: v["session-id"] ?? v.session,
    storage: v.storage,
    postgres: postgres ? { url: postgresUrl, schema: postgresSchema } : undefined,
    timeoutMs,
    llm: llmUrl && llmModel ? { baseUrl: llmUrl, model: llmModel, apiKey: env.LOSSLESS_WASM_LLM_API_KEY } : undefined,
  };
}

/**
 * Runs the CLI; resolves the exit code. Output goes to `out`/`err` (process streams by default).
 * Inside OpenClaw (`openclaw lcm …`) the plugin passes its config (engine settings; flags win)
 * and the host's LLM (summarize, repair).
 */
export async function main(
  argv,
  { env = process.env, out = process.stdout, err = process.stderr, config = {}, llm, logger } = {},
) {
  let cmd;
  try {
    cmd = parseCommandLine(argv, env, { hostLlm: typeof llm?.complete === "function" });
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err.write(`lossless-wasm-lcm: ${e.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (cmd.help) {
    out.write(`${USAGE}\n`);
    return 0;
  }
  // Only import may create the database; the other commands read one that must exist.
  const onFile = cmd.storage !== "postgres";
  if (onFile && cmd.command !== "import" && !existsSync(cmd.dbPath)) {
    // A path the plugin could never create its database at (node/db-path.js): say why, naming `dbPath`.
    const unusable = whyNotCreatable(cmd.dbPath);
    if (unusable) {
      err.write(
        `lossless-wasm-lcm: ${unusable.message.replace(/^lossless-wasm: /, "")} (the plugin refuses it: OpenClaw answers with its legacy context engine)\n`,
      );
      return 2;
    }
    err.write(
      `lossless-wasm-lcm: no database at ${cmd.dbPath} (pass --db <path>: the plugin's config \`dbPath\`, or its default location)\n`,
    );
    return 2;
  }
  if (onFile && existsSync(cmd.dbPath) && !statSync(cmd.dbPath).isFile()) {
    err.write(`lossless-wasm-lcm: ${cmd.dbPath} is not a file\n`);
    return 2;
  }
  if (cmd.command === "copy-to-postgres") return copyCommand(cmd, out, err);
  const cmdLlm = cmd.llm ? createOpenAiLlm(cmd.llm) : llm;
  try {
    const handle = await openNodeEngine(cmd.dbPath, { ...config, ...engineConfig(cmd) });
    for (const warning of handle.configWarnings ?? []) err.write(`lossless-wasm-lcm: ${warning}\n`);
    if (cmd.command === "summarize") {
      const result = await summarizeAsSuccessor(
        handle,
        { sessionId: cmd.sessionId, sessionKey: cmd.sessionKey },
        { llm: cmdLlm, timeoutMs: cmd.timeoutMs ?? config.summaryTimeoutMs, choice: config.summarizer, logger },
      );
      await handle.flush();
      out.write(`${result.text}\n`);
      return result.ok ? 0 : 1;
    }
    const result = await runLcmCommand(handle, cmd.args, {
      sessionId: cmd.sessionKey,
      sessionKey: cmd.sessionKey,
      // "host" = the given LLM or nothing: a headless repair never falls back to extractive text.
      summarizer: "host",
      llm: cmdLlm,
      timeoutMs: cmd.timeoutMs,
    });
    await handle.flush();
    (result.usage ? err : out).write(`${result.text}\n`);
    return result.usage ? 2 : result.ok ? 0 : 1;
  } catch (e) {
    err.write(`lossless-wasm-lcm: ${cmd.command} failed: ${e?.message ?? e}\n`);
    return 1;
  }
}

/** The engine's config for the command line: the file's driver, or the PostgreSQL store. */
function engineConfig(cmd) {
  if (cmd.storage === "postgres")
    return { storage: "postgres", postgresUrl: cmd.postgres.url, postgresSchema: cmd.postgres.schema };
  return cmd.storage ? { storage: cmd.storage } : {};
}

/** copy-to-postgres: opens the engine on PostgreSQL once (its migrations make the target
 *  schema current), copies, then runs doctor --dry-run there. Exit 0 only when every table's
 *  rows are there and doctor passes. */
async function copyCommand(cmd, out, err) {
  const { url, schema } = cmd.postgres;
  let source;
  let handle;
  try {
    source = await openCopySource(cmd.dbPath, cmd.storage);
    checkSourceVersion(source);
    out.write(`copying ${cmd.dbPath} (read with ${source.driver}) to ${redactedUrl(url)} schema ${schema}\n`);
    handle = await openNodeEngine(cmd.dbPath, { storage: "postgres", postgresUrl: url, postgresSchema: schema });
    const report = await copyToPostgres({ source, url, schema });
    source.close();
    source = undefined;
    const { text, countsMatch } = copyReportText(report);
    out.write(`${text}\n`);
    const doctor = await runLcmCommand(handle, ["doctor", "--dry-run"], {});
    out.write(`${doctor.text}\n`);
    return countsMatch && doctor.ok ? 0 : 1;
  } catch (e) {
    // Messages name the server by its redacted URL; this is the last guard for the password.
    const message = String(e?.message ?? e).replaceAll(url, redactedUrl(url));
    err.write(`lossless-wasm-lcm: copy-to-postgres failed: ${message}\n`);
    return 1;
  } finally {
    source?.close();
    await handle?.close?.().catch(() => {});
  }
}

// Run when executed (also through npm's bin symlink), not when imported by a test.
const invokedAs = process.argv[1];
if (invokedAs && existsSync(invokedAs) && import.meta.url === pathToFileURL(realpathSync(invokedAs)).href) {
  // Names the process (ps, and PostgreSQL's application_name: postgres/lock-holders.js) by its
  // command; never by its options, which may hold a password.
  process.title = ["lossless-wasm-lcm", process.argv.slice(2).find((arg) => COMMANDS.includes(arg))]
    .filter(Boolean)
    .join(" ");
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
