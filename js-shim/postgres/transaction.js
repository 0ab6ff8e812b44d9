// Which statements open and end a transaction, read from their text, for the PostgreSQL driver's
// two threads (database.js decides what may be sent without waiting; io-thread-main.js
// keeps a transaction on the connection it began on). Both must read the text the same way,
// so the rule lives here once. The engine writes these as bare statements ("BEGIN", "COMMIT",
// "ROLLBACK"); the other spellings are accepted so a change of wording cannot turn a
// transaction's end into an ordinary statement.

const BEGIN = /^\s*(BEGIN|START\s+TRANSACTION)\b/i;
const COMMIT = /^\s*(COMMIT|END)\b(?!\s+PREPARED)/i;
// ROLLBACK TO SAVEPOINT keeps the transaction open; ROLLBACK PREPARED is about another one.
const ROLLBACK = /^\s*(ROLLBACK|ABORT)\b(?!\s+(TO|PREPARED)\b)/i;

/** "begin", "commit", "rollback", or null for every other statement. */
export function transactionControl(sql) {
  if (typeof sql !== "string") return null;
  if (BEGIN.test(sql)) return "begin";
  if (COMMIT.test(sql)) return "commit";
  if (ROLLBACK.test(sql)) return "rollback";
  return null;
}
