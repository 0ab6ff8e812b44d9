// The PostgreSQL driver's pure parts, without a server: `?N` → `$N` outside quotes and comments
// (the cases of native_pg's tests, plus each quoting form on its own), and the URL as messages
// show it, without its password; which statements open and end a transaction (the driver defers
// only inside one).
import assert from "node:assert/strict";
import { test } from "node:test";

const PKG = new URL("../../dist/pkg/", import.meta.url);
const { numberedPlaceholders } = await import(new URL("shim/postgres/placeholders.js", PKG));
const { redactedUrl, postgresSchemaFor, postgresUrlFor } = await import(new URL("shim/postgres/config.js", PKG));
const { transactionControl } = await import(new URL("shim/postgres/transaction.js", PKG));

test("placeholders are renumbered outside quotes and comments", () => {
  assert.equal(numberedPlaceholders("SELECT ?1, '?2', \"?3\" -- ?4\n, ?10 /* ?5 */"), "SELECT $1, '?2', \"?3\" -- ?4\n, $10 /* ?5 */");
  assert.equal(numberedPlaceholders("SELECT '??' || ?"), "SELECT '??' || ?");
  assert.equal(numberedPlaceholders("SELECT 'it''s ?1', ?2"), "SELECT 'it''s ?1', $2");
  assert.equal(numberedPlaceholders("SELECT ?1 -- trailing ?2"), "SELECT $1 -- trailing ?2");
  assert.equal(numberedPlaceholders("SELECT /* ?1 unclosed"), "SELECT /* ?1 unclosed");
  assert.equal(numberedPlaceholders("SELECT '?1 unclosed"), "SELECT '?1 unclosed");
  assert.equal(numberedPlaceholders("a - ?1 / ?2"), "a - $1 / $2");
});

test("a connection string is shown without its password", () => {
  assert.equal(redactedUrl("postgres://lcm:s3cret@db.example:5432/lcm"), "postgres://lcm:***@db.example:5432/lcm");
  assert.equal(redactedUrl("postgres://lcm@db/lcm"), "postgres://lcm@db/lcm");
  assert.equal(redactedUrl("host=db password=x"), "<connection string>");
  assert.equal(redactedUrl("postgresql://u:p@ss:w@h/db"), "postgresql://u:***@h/db");
  // Unencoded / or ? in the password (pg cannot use such a URL, but its error must not show it).
  assert.equal(redactedUrl("postgres://u:pa/ss@h/db"), "postgres://u:***@h/db");
  assert.equal(redactedUrl("postgres://u:p?ss@h/db"), "postgres://u:***@h/db");
  // pg reads a `password` query parameter as the password.
  assert.equal(redactedUrl("postgres://lcm@h:5432/db?password=s3cret&sslmode=verify-full"), "postgres://lcm@h:5432/db?password=***&sslmode=verify-full");
  assert.equal(redactedUrl("postgres://u:pw@h/db?application_name=a@b&PASSWORD=x#y"), "postgres://u:***@h/db?application_name=a@b&PASSWORD=***#y");
  // An @ in a query parameter is not the end of a user part.
  assert.equal(redactedUrl("postgres://h:5432/db?sslrootcert=/certs/a@b/ca.crt"), "postgres://h:5432/db?sslrootcert=/certs/a@b/ca.crt");
});

test("the config's URL and schema are checked, naming the key and never the value", () => {
  assert.throws(() => postgresUrlFor({}, {}), /`postgresUrl`.*LOSSLESS_WASM_POSTGRES_URL/);
  assert.equal(postgresUrlFor({}, { LOSSLESS_WASM_POSTGRES_URL: "postgres://a:b@h/d" }), "postgres://a:b@h/d");
  assert.throws(() => postgresUrlFor({ postgresUrl: "mysql://u:s3cret@h/d" }, {}), (err) => /`postgresUrl`/.test(err.message) && !err.message.includes("s3cret"));
  assert.equal(postgresSchemaFor({}), "lossless_wasm");
  for (const bad of ["Upper", "a;b", "1st", "", "x".repeat(64), 3]) assert.throws(() => postgresSchemaFor({ postgresSchema: bad }), /`postgresSchema`/);
});

test("transaction control statements are told from the others", () => {
  const cases = {
    BEGIN: "begin", "begin isolation level serializable": "begin", "START TRANSACTION": "begin", "BEGIN IMMEDIATE": "begin",
    COMMIT: "commit", "  end": "commit", ROLLBACK: "rollback", abort: "rollback",
    "ROLLBACK TO SAVEPOINT s": null, "COMMIT PREPARED 'x'": null, "ROLLBACK PREPARED 'x'": null,
    "INSERT INTO t VALUES ('BEGIN')": null, "BEGINNING": null, "UPDATE commits SET x = 1": null, "": null,
  };
  for (const [sql, want] of Object.entries(cases)) assert.equal(transactionControl(sql), want, sql);
  assert.equal(transactionControl(undefined), null);
});
