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
const PLUGIN_DIR = fileURLToPath(new URL("../..", import.meta.url));

/** Query parameters whose value is a secret: `pg` reads `?password=` as the password. */
const SECRET_PARAMS = /([?&](?:ssl)?password=)[^&#]*/gi;

/** Where the user part of `rest` (a URL after its `scheme://`) ends: its last `@` outside
 *  the query (a password may hold an unencoded `/` or `@`; `?application_name=a@b` may too). */
function userPartEnd(rest) {
  let at = rest.lastIndexOf("@");
  while (at >= 0) {
    const query = rest.lastIndexOf("?", at);
    if (query < 0 || !rest.slice(query, at).includes("=")) return at;
    at = rest.lastIndexOf("@", query);
  }
  return -1;
}

/** `url` with the password replaced by `***` (`postgres://user:***@host:port/db`), the one in
 *  the user part and any given as a query parameter (`?password=***`); a string that is not a
 *  URL is not shown at all. */
export function redactedUrl(url) {
  const scheme = typeof url === "string" ? url.indexOf("://") : -1;
  if (scheme < 0) return "<connection string>";
  const rest = url.slice(scheme + 3);
  const at = userPartEnd(rest);
  const colon = rest.indexOf(":");
  const shown =
    colon < 0 || colon > at ? url : `${url.slice(0, scheme + 3)}${rest.slice(0, colon)}:***${rest.slice(at)}`;
  return shown.replace(SECRET_PARAMS, "$1***");
}

/** Node's codes for a server certificate that no trusted CA signed. */
const UNTRUSTED_CERTIFICATE = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT",
]);

/** What to change when a connection failed for TLS or for the lack of it, as a clause to put
 *  after the failure (" (…)"), or "" when the failure is something else. */
export function tlsAdvice(err) {
  const message = String(err?.message ?? "");
  if (/no pg_hba\.conf entry .*no encryption/.test(message))
    return " (the server accepts this connection only over TLS: add sslmode=verify-full to the URL, and sslrootcert=<CA file> when a private CA signed the server's certificate)";
  if (/server does not support SSL/i.test(message))
    return " (the server has TLS off: remove sslmode from the URL, or turn ssl on in the server)";
  if (UNTRUSTED_CERTIFICATE.has(err?.code))
    return " (the server's certificate was not signed by a CA this process trusts: name the CA's certificate file with sslrootcert=<file> in the URL)";
  if (err?.code === "ERR_TLS_CERT_ALTNAME_INVALID")
    return " (the server's certificate is for another host name: connect by a name the certificate lists)";
  if (err?.code === "CERT_HAS_EXPIRED") return " (the server's certificate has expired)";
  return "";
}

/** The connection URL for `config`; an Error naming the key (never the value) when invalid. */
export function postgresUrlFor(config, env = process.env) {
  const url = config?.postgresUrl ?? env[POSTGRES_URL_ENV];
  if (url === undefined || url === null || url === "") {
    throw new Error(
      `invalid config \`postgresUrl\`: storage "postgres" needs a connection URL (postgres://user:password@host:port/db) in \`postgresUrl\` or the environment variable ${POSTGRES_URL_ENV}`,
    );
  }
  if (typeof url !== "string" || !/^postgres(ql)?:\/\//.test(url)) {
    const from =
      config?.postgresUrl !== undefined ? "config `postgresUrl`" : `environment variable ${POSTGRES_URL_ENV}`;
    throw new Error(`invalid ${from}: must be a connection URL starting with postgres:// or postgresql://`);
  }
  return url;
}

/** The schema for `config`; an Error naming `postgresSchema` when it is not a plain
 *  identifier (it is spelled into `CREATE SCHEMA` and `SET search_path`). */
export function postgresSchemaFor(config) {
  const schema = config?.postgresSchema ?? DEFAULT_POSTGRES_SCHEMA;
  if (typeof schema !== "string" || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(
      "invalid config `postgresSchema`: must be a schema name: lower-case letters, digits and _, not starting with a digit, at most 63 characters",
    );
  }
  return schema;
}

/** The path of the `pg` package's entry, resolved from the plugin's directory; an Error saying
 *  how to install it when it is missing. */
export function resolvePg() {
  try {
    return createRequire(new URL("../../package.json", import.meta.url)).resolve("pg");
  } catch {
    throw new Error(
      `lossless-wasm: storage "postgres" needs the npm package pg, which is not installed beside the plugin; install it with: npm install --prefix ${JSON.stringify(PLUGIN_DIR)} pg@${PG_VERSION}`,
    );
  }
}
