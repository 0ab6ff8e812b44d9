// The SQLite → PostgreSQL copy behind `lossless-wasm-lcm copy-to-postgres`: every row of a store
// file (copy-source.js) into a PostgreSQL schema the engine has already migrated, with the same
// ids, so the store goes on there as if it had always lived there. Owns the copy's transaction,
// its refusal to mix two stores, and the identity sequences; the table list is copy-tables.js.
//
// - One transaction for the whole copy: a copy that fails or is interrupted leaves the target as
//   it was, and a gateway never sees messages without their context items. The tables are
//   locked EXCLUSIVE (reads go on, writes wait), so a gateway started too early waits for the
//   commit instead of taking ids from a sequence the copy has not moved yet.
// - Idempotent: each row goes in with `ON CONFLICT (<key>) DO NOTHING`, so running it again
//   copies nothing (and says so), and a copy that failed can simply be run again.
// - A row already there under the same key but with other values in the columns that never
//   change (copy-tables.js `identity`) belongs to another store: the copy stops and rolls back
//   rather than mix the two. A conversation already there must also be unchanged: one written
//   after an earlier copy (on either side) is refused too, since copying its rows again would
//   bring back what the other side replaced (context items).
// - `messages.search_text` is what the engine writes on PostgreSQL: the text it derives from
//   `raw_json` (the wasm export messageSearchText, the same Rust code), NUL shown as U+2400.
// Runs in the CLI's own process with the asynchronous `pg` client: the CLI is not a gateway,
// so nothing else waits on its event loop.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { initSync, messageSearchText } from "../../wasm/lossless_wasm.js";
import { POSTGRES_VERSION, SQLITE_VERSION, TABLES } from "./copy-tables.js";
import { redactedUrl, resolvePg, tlsAdvice } from "../postgres/config.js";
import { CopyConflict } from "../errors.js";

/** Rows per INSERT, and the JSON size past which a batch is sent early (long messages). */
const BATCH_ROWS = 1000;
const BATCH_BYTES = 4 << 20;

/** Thrown when the target holds another store's rows (CopyConflict, errors.js); the CLI shows
 *  its message as it is. */

const hex = (value) =>
  (typeof value === "string"
    ? Buffer.from(value, "utf8")
    : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  ).toString("hex");

/** The row as the JSON object the INSERT reads (json_to_recordset): bytes as hex, and for a
 *  message its search text. */
function targetRow(table, values) {
  const row = {};
  table.columns.forEach(([name, type], i) => {
    const v = values[i];
    row[name] = type === "bytea" && v !== null ? hex(v) : v;
  });
  if (table.name === "messages") row.search_text = messageSearchText(row.raw_json);
  return row;
}

/** The columns written, the recordset's column definitions, and the expressions that turn a
 *  recordset column into the target's value (bytea arrives as hex). */
function shape(table) {
  const columns = [...table.columns, ...(table.name === "messages" ? [["search_text", "text"]] : [])];
  return {
    names: columns.map(([n]) => n),
    definitions: columns.map(([n, type]) => `${n} ${type === "bytea" ? "text" : type}`).join(", "),
    value: Object.fromEntries(columns.map(([n, type]) => [n, type === "bytea" ? `decode(r.${n}, 'hex')` : `r.${n}`])),
  };
}

/** Checks one batch against the rows already there; throws CopyConflict on the first row of
 *  another store, or (tables marked `unchanged`) of the same store changed since. */
async function checkConflicts(client, table, s, json) {
  await findConflict(
    client,
    table,
    s,
    json,
    table.identity,
    (where, columns, more) =>
      `the target already holds another store's rows: ${where} has a different ${columns} there than in the source${more}; nothing was copied. ` +
      "Copy into a schema of its own (--postgres-schema) or an empty one.",
  );
  if (!table.unchanged) return;
  await findConflict(
    client,
    table,
    s,
    json,
    table.columns.map(([n]) => n),
    (where, columns, more) =>
      `${where} was written after an earlier copy, on PostgreSQL or in the source (its ${columns} differ)${more}; copying again would mix the two histories, so nothing was copied. ` +
      "Keep the PostgreSQL store as it is, or drop its schema and copy again.",
  );
}

/** Throws CopyConflict with `message(where, columns, more)` for the first row of the batch
 *  already in the target with other values in `columns`. */
async function findConflict(client, table, s, json, columns, message) {
  if (!columns.length) return;
  const differs = columns.map((c) => `t.${c} IS DISTINCT FROM ${s.value[c]}`);
  const { rows } = await client.query({
    text:
      `SELECT ${table.key.map((k) => `r.${k}`).join(", ")}, ${differs.join(", ")}, count(*) OVER () FROM json_to_recordset($1::json) AS r(${s.definitions}) ` +
      `JOIN ${table.name} t ON ${table.key.map((k) => `t.${k} = r.${k}`).join(" AND ")} WHERE ${differs.join(" OR ")} LIMIT 1`,
    values: [json],
    rowMode: "array",
  });
  if (!rows.length) return;
  const row = rows[0];
  const key = table.key.map((k, i) => `${k} ${row[i]}`).join(", ");
  const different = columns.filter((_, i) => row[table.key.length + i]).join(", ");
  const more = Number(row[row.length - 1]) - 1;
  throw new CopyConflict(
    message(`${table.name} ${key}`, different, more > 0 ? ` (and ${more} more row(s) of this batch)` : ""),
  );
}

async function insertBatch(client, table, s, json) {
  const result = await client.query({
    text:
      `INSERT INTO ${table.name} (${s.names.join(", ")}) SELECT ${s.names.map((n) => s.value[n]).join(", ")} ` +
      `FROM json_to_recordset($1::json) AS r(${s.definitions}) ON CONFLICT (${table.key.join(", ")}) DO NOTHING`,
    values: [json],
  });
  return result.rowCount;
}

/** Copies one table in batches; resolves {name, source, copied, existing}. */
async function copyTable(client, source, table) {
  const s = shape(table);
  const select = `SELECT ${table.columns.map(([n]) => n).join(", ")} FROM ${table.name} ORDER BY ${table.key.join(", ")}`;
  let total = 0;
  let copied = 0;
  let batch = [];
  let bytes = 0;
  const flush = async () => {
    if (!batch.length) return;
    const json = `[${batch.join(",")}]`;
    await checkConflicts(client, table, s, json);
    copied += await insertBatch(client, table, s, json);
    batch = [];
    bytes = 0;
  };
  for (const values of source.rows(select)) {
    const text = JSON.stringify(targetRow(table, values));
    batch.push(text);
    bytes += text.length;
    total += 1;
    if (batch.length >= BATCH_ROWS || bytes >= BATCH_BYTES) await flush();
  }
  await flush();
  return { name: table.name, source: total, copied, existing: total - copied };
}

/** Moves `table`'s id sequence past its largest id (never back), so new rows never take a
 *  copied id. */
async function advanceSequence(client, table) {
  const {
    rows: [[sequence]],
  } = await client.query({ text: "SELECT pg_get_serial_sequence($1, 'id')", values: [table.name], rowMode: "array" });
  const {
    rows: [[max]],
  } = await client.query({ text: `SELECT max(id) FROM ${table.name}`, rowMode: "array" });
  if (max === null) return;
  const {
    rows: [[last, called]],
  } = await client.query({ text: `SELECT last_value, is_called FROM ${sequence}`, rowMode: "array" });
  const used = called ? BigInt(last) : BigInt(last) - 1n;
  if (BigInt(max) > used) await client.query({ text: "SELECT setval($1, $2)", values: [sequence, max] });
}

/** Explains a unique-key error that is not the copy's own key: another store's conversation. */
function explain(err, table) {
  if (err instanceof CopyConflict) return err;
  if (err?.code === "23505" && err.constraint === "conversations_one_active_per_key") {
    return new CopyConflict(
      `the target already holds another store's active conversation for a session key of the source (${err.detail ?? "conversations_one_active_per_key"}); nothing was copied. Copy into a schema of its own (--postgres-schema) or an empty one.`,
    );
  }
  const code = err?.code ? ` ${err.code}` : "";
  return new Error(
    `copying ${table} failed: PostgreSQL${code}: ${String(err?.message ?? err).split("\n")[0]}${err?.detail ? ` (${err.detail})` : ""}; nothing was copied`,
  );
}

/** The source's schema version; an Error saying what to do when it is not the one the copy
 *  reads (called before anything touches the server, too). */
export function checkSourceVersion(source) {
  const version = source.version();
  if (version !== SQLITE_VERSION) {
    throw new Error(
      version < SQLITE_VERSION
        ? `the source has schema version ${version}; this copy reads version ${SQLITE_VERSION}: open it once with this lossless-wasm (lossless-wasm-lcm status --db <file> upgrades it), then copy`
        : `the source has schema version ${version}, newer than this lossless-wasm knows (${SQLITE_VERSION}); upgrade lossless-wasm`,
    );
  }
  return version;
}

/**
 * Copies the store `source` (copy-source.js, open) into `schema` at `url`, which the engine has
 * migrated (the caller opened it there once). Resolves the report: per table the source's rows,
 * those copied and those already there, then the target's rows after the commit, and the time.
 */
export async function copyToPostgres({ source, url, schema }) {
  const version = checkSourceVersion(source);
  initSync({ module: readFileSync(new URL("../../wasm/lossless_wasm_bg.wasm", import.meta.url)) });
  const pg = createRequire(import.meta.url)(resolvePg());
  let client;
  try {
    // The client reads the files the URL names (sslrootcert, sslcert, sslkey) as it is made.
    client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: 10_000,
      application_name: `lossless-wasm copy ${schema}`,
    });
    await client.connect();
  } catch (err) {
    client?.end().catch(() => {});
    throw new Error(
      `cannot connect to PostgreSQL at ${redactedUrl(url)}: ${
        String(err?.message ?? err)
          .replaceAll(url, redactedUrl(url))
          .split("\n")[0]
      }${tlsAdvice(err)}`,
    );
  }
  const started = performance.now();
  try {
    await client.query(`SET search_path = ${schema}, public`);
    const {
      rows: [[pgVersion]],
    } = await client.query({ text: "SELECT COALESCE(MAX(version), 0) FROM schema_migrations", rowMode: "array" });
    if (Number(pgVersion) !== POSTGRES_VERSION) {
      throw new Error(
        `the target schema ${schema} has PostgreSQL schema version ${pgVersion}; this copy writes version ${POSTGRES_VERSION}`,
      );
    }
    const tables = [];
    await client.query("BEGIN");
    let current = "";
    try {
      await client.query(`LOCK TABLE ${TABLES.map((t) => t.name).join(", ")} IN EXCLUSIVE MODE`);
      for (const table of TABLES) {
        current = table.name;
        tables.push(await copyTable(client, source, table));
      }
      current = "the id sequences";
      for (const table of TABLES.filter((t) => t.sequence)) await advanceSequence(client, table);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw explain(err, current);
    }
    const ms = performance.now() - started;
    // The planner's statistics still describe the tables before the copy; a gateway's first
    // reads of a long conversation would be planned badly until autovacuum gets to them
    // (src/store/inspection/statistics.rs). The rows are committed: a failure here changes nothing.
    if (tables.some((t) => t.copied > 0))
      await client.query(`ANALYZE ${tables.map((t) => t.name).join(", ")}`).catch(() => {});
    for (const t of tables) {
      const {
        rows: [[n]],
      } = await client.query({ text: `SELECT count(*) FROM ${t.name}`, rowMode: "array" });
      t.target = Number(n);
    }
    return { driver: source.driver, version, tables, ms };
  } finally {
    await client.end().catch(() => {});
  }
}

/** The report as lines of text, and whether every table's target count equals the source's. */
export function copyReportText(report) {
  const width = Math.max(...report.tables.map((t) => t.name.length));
  const lines = [
    `${"table".padEnd(width)}  ${"source".padStart(8)}  ${"copied".padStart(8)}  ${"already there".padStart(13)}  ${"target".padStart(8)}`,
  ];
  for (const t of report.tables) {
    lines.push(
      `${t.name.padEnd(width)}  ${String(t.source).padStart(8)}  ${String(t.copied).padStart(8)}  ${String(t.existing).padStart(13)}  ${String(t.target).padStart(8)}`,
    );
  }
  const copied = report.tables.reduce((n, t) => n + t.copied, 0);
  const rows = report.tables.reduce((n, t) => n + t.source, 0);
  lines.push(
    copied === 0
      ? `nothing to copy: all ${rows} row(s) of the source were already there (${(report.ms / 1000).toFixed(1)} s)`
      : `copied ${copied} of ${rows} row(s) in ${(report.ms / 1000).toFixed(1)} s; id sequences moved past the copied ids`,
  );
  const differ = report.tables.filter((t) => t.target !== t.source);
  for (const t of differ) {
    lines.push(
      `${t.name}: the target holds ${t.target} row(s), the source ${t.source}${t.target > t.source ? " (rows written on PostgreSQL since an earlier copy, or another store's)" : ""}`,
    );
  }
  return { text: lines.join("\n"), countsMatch: differ.length === 0 };
}
