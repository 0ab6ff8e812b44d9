// OpenClaw plugin entry. `register` is synchronous and cheap, as the host requires: it only
// registers the engine factory, the recall tools' per-session factory and the /lcm command.
// The wasm module and the database open lazily on first use and
// are shared by every factory call for the same database path.
import { homedir } from "node:os";
import { join } from "node:path";
import { createContextEngine, ENGINE_ID } from "./engine/context-engine.js";
import { openNodeEngine } from "./node/engine.js";
import { createLcmCommand } from "./operator/lcm-command.js";
import { createRecallTools, TOOL_NAMES } from "./openclaw/tools.js";
import { registerExplorer } from "./explorer/registration.js";
import { endsWithItsTurn, hostCommand, oneShotHandOver, openclawCliEntry, spawnSuccessor } from "./node/successor.js";
import { storedTurns } from "./engine/summary-runner.js";
import {
  createTranscriptCatchUp,
  ingestFromTranscript,
  loadHostTranscriptReader,
} from "./openclaw/transcript-catch-up.js";
import { openclawLimits } from "./openclaw/host-limits.js";

function stateDir(api) {
  try {
    const dir = api.runtime?.state?.resolveStateDir?.();
    if (typeof dir === "string" && dir) return dir;
  } catch {
    // Not available in this registration mode; fall back like the host does.
  }
  return process.env.OPENCLAW_STATE_DIR || join(homedir(), ".openclaw");
}

/** The plugin-wide LLM capability (`api.runtime.llm`), when this registration mode has one. */
function hostLlm(api) {
  try {
    return api.runtime?.llm;
  } catch {
    return undefined;
  }
}

/** The host's version (`api.runtime.version`), when this registration mode exposes it. */
function hostVersion(api) {
  try {
    const v = api.runtime?.version;
    return typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The host's config as it stands now (a hot reload changes it): `api.runtime.config.current()`
 *  where the host has it, else the config the plugin was registered with. */
function currentHostConfig(api) {
  try {
    return api.runtime?.config?.current?.() ?? api.config;
  } catch {
    return api.config;
  }
}

export function resolveDbPath(api) {
  const configured = api.pluginConfig?.dbPath;
  return typeof configured === "string" && configured.trim()
    ? configured
    : join(stateDir(api), "lossless-wasm", "lossless.sqlite");
}

/** Registers `openclaw lcm …` with the host's CLI; it runs the headless command (operator/cli.js) on this
 *  plugin's database. */
function registerLcmCli(api) {
  api.registerCli?.(
    async ({ program }) => {
      program
        .command("lcm")
        .description(LCM_CLI_DESCRIPTION)
        .argument("[args...]", "status | doctor [--dry-run] | repair [--dry-run] | import <lcm.db>, and their options")
        .allowUnknownOption(true)
        .helpOption(false)
        .action(async (args) => {
          const { main } = await import("./operator/cli.js");
          // The plugin's engine settings, the host's LLM for summarize and repair, and its log
          // (a successor reports there what the turns that handed over would have).
          process.exitCode = await main(["--db", resolveDbPath(api), ...(args ?? [])], {
            config: api.pluginConfig ?? {},
            llm: hostLlm(api),
            logger: api.logger,
          });
        });
    },
    { descriptors: [{ name: "lcm", description: LCM_CLI_DESCRIPTION, hasSubcommands: true }] },
  );
}

/** Registrations of the plugin in this process: OpenClaw registers it again on a hot reload of
 *  its config, keeping this module; the newest one's config opens the engine (node/engine.js). */
let registrations = 0;

const LCM_CLI_DESCRIPTION =
  "Lossless context: status, integrity doctor, repair of fallback summaries, lossless-claw import";

export default {
  id: ENGINE_ID,
  name: "Lossless context (wasm)",
  description: "Lossless context management: every message kept in SQLite, a budget-sized view for the model.",
  register(api) {
    // `openclaw lcm status|doctor|repair|import`: the operator command through the host's own CLI
    // (typed in chat, /lcm reaches the plugin only through the gateway's channels).
    registerLcmCli(api);
    if (api.registrationMode === "cli-metadata") return;
    const config = api.pluginConfig ?? {};
    const generation = ++registrations;
    const open = () => openNodeEngine(resolveDbPath(api), config, undefined, { generation });
    // A reset recorded by the host (2026.9 keeps the session id) starts a new conversation; the
    // old one is archived, never purged. Rollovers to a new session id are seen on the next call.
    api.on?.("before_reset", async (event, ctx) => {
      const sessionKey = ctx?.sessionKey ?? event?.sessionKey;
      const sessionId = ctx?.sessionId ?? event?.sessionId ?? sessionKey;
      if (!sessionId) return;
      try {
        await (await open()).call("reset", { sessionId, sessionKey, cause: event?.reason ?? "reset" });
      } catch (err) {
        api.logger?.warn?.(`[lossless-wasm] could not record the reset of ${sessionKey ?? sessionId}: ${err.message}`);
      }
    });
    // The recall tools, built per session: the factory's ctx names the session they may read
    // (the engine derives the agent from its key and checks every id against it).
    // lcm_ask asks the plugin-wide LLM (tool calls carry no session-bound one). Their answers fit
    // the host's tool-result limit, lower for a session whose model window the host reported
    // small (the engine factory notes it; the tool context does not carry it).
    const windows = new Map();
    const noteWindow = (session, tokens) => windows.set(session.sessionKey ?? session.sessionId, tokens);
    api.registerTool?.(
      (ctx) =>
        createRecallTools(open, ctx, {
          llm: () => hostLlm(api),
          askTimeoutMs: config.askTimeoutMs,
          toolResultMaxChars: config.toolResultMaxChars,
          modelWindow: (session) => windows.get(session),
        }),
      { names: TOOL_NAMES },
    );
    // The operator command: /lcm status | doctor | repair (bypasses the model).
    api.registerCommand?.(
      createLcmCommand(open, {
        config,
        hostLlm: () => hostLlm(api),
        defaultImportPath: () => join(stateDir(api), "lcm.db"),
      }),
    );
    // The context explorer: a page the gateway serves under its own auth, and a Control UI tab.
    registerExplorer(api, open, { config, hostLlm: () => hostLlm(api) }, hostVersion(api));
    // A storage that cannot open (an unusable `dbPath`, a bad config) is refused: the factory
    // throws, the host answers the turn with its legacy engine and stores it in its own
    // transcript only. Our line says so once per distinct reason, not every turn; the open is
    // tried again each turn, so a fixed folder is picked up without a restart.
    // What a turn whose commit never came left in the host's transcript (a crash mid-turn, a
    // re-run after a restart) is stored from the transcript itself, where the host can read it
    // (transcript-catch-up.js). One reader per plugin: its cursors outlive the per-turn engines.
    let reader;
    const transcriptCatchUp = createTranscriptCatchUp({
      readDelta: async (target) => {
        reader ??= loadHostTranscriptReader();
        const read = await reader;
        return read ? read(target) : { kind: "unavailable", reason: "this host has no transcript reader" };
      },
      ingest: ingestFromTranscript(open),
      logger: api.logger,
    });
    const refusals = new Set();
    const refuse = (err) => {
      const line = `[lossless-wasm] ${String(err?.message ?? err).replace(/^lossless-wasm: /, "")}; refusing: OpenClaw answers with its legacy context engine, and lossless-wasm stores nothing, until it opens (tried again each turn)`;
      if (!refusals.has(line)) {
        refusals.add(line);
        api.logger?.error?.(line);
      }
      return err;
    };
    api.registerContextEngine(ENGINE_ID, async () => {
      // Open (or reuse) before returning, so a bad config or database fails the factory with
      // its own message instead of failing later inside a turn.
      const handle = await open().catch((err) => {
        throw refuse(err);
      });
      // The factory runs every turn; the config warnings belong in the log once per engine.
      if (!handle.warningsLogged) {
        for (const warning of handle.configWarnings ?? []) api.logger?.warn?.(`[lossless-wasm] ${warning}`);
        handle.warningsLogged = true;
      }
      return createContextEngine(open, {
        logger: api.logger,
        // A one-shot process hands summaries it cannot wait for to `openclaw lcm summarize`.
        startSuccessor:
          config.summarySuccessor === false || !openclawCliEntry()
            ? undefined
            : (session) =>
                spawnSuccessor(session, {
                  entry: openclawCliEntry(),
                  logPath: join(stateDir(api), "lossless-wasm", "successor.log"),
                }),
        // ... and one whose process ends with its turn sends no request that would die with it.
        endsWithTurn: oneShotHandOver(hostVersion(api)) ? () => endsWithItsTurn(storedTurns()) : undefined,
        // ... while a gateway writes its summaries itself, also at its first turn after a crash.
        outlivesTurns: () => hostCommand() === "gateway",
        config,
        hostLlm: () => hostLlm(api),
        fullHistory: true,
        // OpenClaw's turns never wait on a slow summarizer (docs/summarization.md).
        summariesInBackground: true,
        // Gateways only: a process without a cursor reads the session's whole visible
        // transcript, which a one-shot process would do at every turn. (That transcript still
        // holds the messages before a /reset, same session id; `fromTranscript` skips them.)
        transcriptCatchUp: hostCommand() === "gateway" ? transcriptCatchUp : undefined,
        onModelWindow: noteWindow,
        // The reply budget and preflight reserve of this host (2026.7 reports neither as 2026.9 does).
        limits: openclawLimits({ hostVersion: hostVersion(api), hostConfig: () => currentHostConfig(api) }),
        // The host makes an engine object per logical turn and disposes it after the turn.
        instancePerTurn: true,
      });
    });
  },
};
