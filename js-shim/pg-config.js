// What config `storage: "postgres"` needs before anything connects: the connection URL (config
// `postgresUrl`, else env LOSSLESS_WASM_POSTGRES_URL), the schema (config `postgresSchema`,
// checked as an unquoted identifier), that URL with its password hidden (the only form that may
// appear in a message or a log line), and where the npm package `pg` is (it is not bundled:
// SQLite users install the plugin without it, so it is resolved from the plugin's directory
// when PostgreSQL is asked for).
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export const POSTGRES_URL_ENV = "LOSSLESS_WASM_POSTGRES_URL";
export const DEFAULT_POSTGRES_SCHEMA = "lossless_wasm";
/** The `pg` release the driver is written and tested against. */
export const PG_VERSION = "8.23.1";

/** The plugin's own directory (the package root: this file is in its `shim/`). */
const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));

/** `url` with the password replaced by `***` (`postgres://user:***@host:port/db`); a string
 *  that is not a URL is not shown at all. */
export function redactedUrl(url) {
  const scheme = typeof url === "string" ? url.indexOf("://") : -1;
  if (scheme < 0) return "<connection string>";
  const rest = url.slice(scheme + 3);
  const slash = rest.indexOf("/");
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const at = authority.lastIndexOf("@");
  if (at < 0) return url;
  const colon = authority.slice(0, at).indexOf(":");
  if (colon < 0) return url;
  return `${url.slice(0, scheme + 3)}${rest.slice(0, colon)}:***${rest.slice(at)}`;
}

/** The connection URL for `config`; an Error naming the key (never the value) when invalid. */
export function postgresUrlFor(config, env = process.env) {
  const url = config?.postgresUrl ?? env[POSTGRES_URL_ENV];
  if (url === undefined || url === null || url === "") {
    throw new Error(`invalid config \`postgresUrl\`: storage "postgres" needs a connection URL (postgres://user:password@host:port/db) in \`postgresUrl\` or the environment variable ${POSTGRES_URL_ENV}`);
  }
  if (typeof url !== "string" || !/^postgres(ql)?:\/\//.test(url)) {
    const from = config?.postgresUrl !== undefined ? "config `postgresUrl`" : `environment variable ${POSTGRES_URL_ENV}`;
    throw new Error(`invalid ${from}: must be a connection URL starting with postgres:// or postgresql://`);
  }
  return url;
}

/** The schema for `config`; an Error naming `postgresSchema` when it is not a plain
 *  identifier (it is spelled into `CREATE SCHEMA` and `SET search_path`). */
export function postgresSchemaFor(config) {
  const schema = config?.postgresSchema ?? DEFAULT_POSTGRES_SCHEMA;
  if (typeof schema !== "string" || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error("invalid config `postgresSchema`: must be a schema name: lower-case letters, digits and _, not starting with a digit, at most 63 characters");
  }
  return schema;
}

/** The path of the `pg` package's entry, resolved from the plugin's directory; an Error saying
 *  how to install it when it is missing. */
export function resolvePg() {
  try {
    return createRequire(new URL("../package.json", import.meta.url)).resolve("pg");
  } catch {
    throw new Error(`lossless-wasm: storage "postgres" needs the npm package pg, which is not installed beside the plugin; install it with: npm install --prefix ${JSON.stringify(PLUGIN_DIR)} pg@${PG_VERSION}`);
  }
}
