// Runs the host-path benchmark (run.mjs, one fresh process per case) over sizes, storage drivers
// and transcript shapes, and prints a Markdown section with the anchor's figures beside ours;
// `--write FILE` puts it into FILE between the bench markers (docs/benchmarks.md). The numbers
// are measurements, never assertions.
//
//   node bench/host-path/report.mjs [--sizes 1000,10000,100000] [--storages node:sqlite,sql.js]
//        [--shapes mixed,short] [--commits afterTurn,commitTurn] [--turns 30] [--criterion FILE]
//        [--write docs/benchmarks.md]
//
// `commitTurn` cases run on node:sqlite only: OpenClaw 2026.9, the host that calls it, runs on
// Node versions that all have node:sqlite, where the sql.js fallback is never chosen.
import { execFileSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,10000,100000" },
    storages: { type: "string", default: "node:sqlite,sql.js" },
    shapes: { type: "string", default: "mixed,short" },
    commits: { type: "string", default: "afterTurn,commitTurn" },
    turns: { type: "string", default: "30" },
    criterion: { type: "string" },
    write: { type: "string" },
    // --save FILE keeps the measurements; --load FILE renders saved ones instead of measuring.
    save: { type: "string" },
    load: { type: "string" },
  },
});
const list = (s) => s.split(",").map((x) => x.trim()).filter(Boolean);
const BEGIN = "<!-- bench:host-path:begin -->";
const END = "<!-- bench:host-path:end -->";
// The issue's independent measurement of the TypeScript anchor (lossless-claw), same harness shape.
const ANCHOR = { 1000: { turn: "155 ms", ingest: "467", ratio: "4.5×" }, 10000: { turn: "575 ms", ingest: "453", ratio: "4.3×" }, 100000: { turn: "10,139 ms", ingest: "236", ratio: "4.3×" } };

const node = (script, params) => {
  const out = execFileSync(process.execPath, ["--expose-gc", new URL(script, import.meta.url).pathname, ...params], { encoding: "utf8", maxBuffer: 1 << 24 });
  return JSON.parse(out.trim().split("\n").pop());
};

/** One case: run.mjs builds the database and measures turns; reopen.mjs, in a fresh process on
 *  that database, measures the cold start and the memory of serving turns. */
function runCase(size, storage, shape, commit) {
  const dir = mkdtempSync(join(tmpdir(), "lossless-bench-"));
  try {
    const result = node("run.mjs", ["--size", String(size), "--storage", storage, "--shape", shape, "--commit", commit, "--turns", args.turns, "--dir", dir]);
    const reopen = node("reopen.mjs", ["--dir", dir, "--storage", storage, "--shape", shape, "--commit", commit, "--size", String(size), "--used", String(result.used), "--turns", "10"]);
    return { ...result, ...reopen };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ms = (x) => (x == null ? "–" : `${x.toFixed(2)} ms`);
const int = (x) => Math.round(x).toLocaleString("en-US");
const rows = args.load ? JSON.parse(readFileSync(args.load, "utf8")) : [];
if (!args.load) {
  for (const shape of list(args.shapes)) {
    for (const size of list(args.sizes).map(Number)) {
      for (const storage of list(args.storages)) {
        for (const commit of list(args.commits)) {
          if (commit === "commitTurn" && storage !== "node:sqlite") continue;
          process.stderr.write(`host-path: ${shape} ${size} ${storage} ${commit}\n`);
          rows.push(runCase(size, storage, shape, commit));
        }
      }
    }
  }
}
if (args.save) writeFileSync(args.save, JSON.stringify(rows, null, 1));

const lines = [BEGIN, ""];
lines.push(`Host path, wasm build in Node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)}, on ${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB.`);
lines.push(`Each case is a fresh process: bootstrap the history, grow it by tool-loop turns through the host call and \`maintain\` (host-path ingest is the host call's time), let compaction settle, then ${args.turns} turns of factory → \`assemble\` (whole history, 128K budget) → the host call → \`maintain\`, with an instant summarizer. The host call is \`afterTurn\` with the whole history (OpenClaw 2026.7) or \`commitTurn\` with the turn's messages (2026.9). Per-turn figures are over turns whose \`maintain\` did not summarize; turns that did are counted apart. Anchor figures: the TypeScript lossless-claw under the same kind of harness (issue 12).`);
lines.push("");
lines.push("| shape | stored | driver | host call | view msgs | turn CPU p50 / p95 | turn wall p50 | assemble p50 | host call p50 | summarizing turns (wall p50) | host-path ingest msgs/s | bootstrap msgs/s | db / transcript | journal file while open | cold start | RSS added serving (importing) | anchor: turn CPU p50 · ingest · db ratio |");
lines.push("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  const anchor = ANCHOR[r.size];
  lines.push(`| ${r.shape} | ${int(r.storedMessages)} | ${r.storage} | ${r.commit} | ${int(r.viewMessages)} | ${ms(r.turnCpuP50)} / ${ms(r.turnCpuP95)} | ${ms(r.turnWallP50)} | ${ms(r.assembleP50)} | ${ms(r.commitP50)} | ${r.compactingTurns} (${ms(r.compactingWallP50)}) | ${int(r.hostIngestRate)} | ${int(r.bootstrapRate)} | ${r.storageRatio.toFixed(2)}× | ${(r.journalBytesOpen / 2 ** 20).toFixed(1)} MiB | ${ms(r.coldStartMs)} | ${r.reopenRssAddedMiB.toFixed(0)} MiB (${r.importRssAddedMiB.toFixed(0)} MiB) | ${anchor ? `${anchor.turn} · ${anchor.ingest} · ${anchor.ratio}` : "–"} |`);
}
const breakdown = rows.filter((r) => Object.keys(r.tables ?? {}).length).pop();
if (breakdown) {
  lines.push("");
  lines.push(`Where the bytes go (${breakdown.shape}, ${int(breakdown.storedMessages)} messages, ${breakdown.storage}, dbstat): ` +
    Object.entries(breakdown.tables).slice(0, 8).map(([name, bytes]) => `${name} ${(bytes / breakdown.storedMessages).toFixed(0)} B/msg`).join(", ") +
    `; the host's transcript is ${(breakdown.transcriptBytes / breakdown.storedMessages).toFixed(0)} B/msg.`);
}
if (args.criterion) {
  lines.push("");
  lines.push("Native (criterion, bundled SQLite), medians:");
  lines.push("");
  lines.push("| benchmark | median |");
  lines.push("|---|---|");
  const text = readFileSync(args.criterion, "utf8");
  for (const match of text.matchAll(/^(\S+)\s*\n?\s*time:\s*\[\S+ \S+ (\S+) (\S+) \S+ \S+\]/gm)) lines.push(`| ${match[1]} | ${match[2]} ${match[3]} |`);
}
lines.push("", END);
const section = lines.join("\n");
console.log(section);
if (args.write) {
  const doc = readFileSync(args.write, "utf8");
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  const updated = start >= 0 && end > start ? doc.slice(0, start) + section + doc.slice(end + END.length) : `${doc.trimEnd()}\n\n${section}\n`;
  writeFileSync(args.write, updated);
}
