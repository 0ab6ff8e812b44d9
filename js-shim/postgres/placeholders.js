// The store's `?N` placeholders as PostgreSQL's `$N`, for the PostgreSQL driver (database.js).
// The store writes `?N` for every backend (SQLite binds `$N` by order of first appearance, so it
// never writes that); a `?` inside a string literal, a quoted identifier or a comment is text
// and stays. The same rule as the native driver's `numbered_placeholders` (src/store/backend/native_pg.rs).

/** `sql` with each `?<digit>` outside quotes and comments written `$<digit>`. */
export function numberedPlaceholders(sql) {
  let out = "";
  let i = 0;
  const n = sql.length;
  // Copies from `i` through the first `end` found at or after `from` (or to the end).
  const copyThrough = (from, end) => {
    const at = sql.indexOf(end, from);
    const stop = at < 0 ? n : at + end.length;
    out += sql.slice(i, stop);
    i = stop;
  };
  while (i < n) {
    const c = sql[i];
    if (c === "'" || c === '"') copyThrough(i + 1, c);
    else if (c === "-" && sql[i + 1] === "-") copyThrough(i + 2, "\n");
    else if (c === "/" && sql[i + 1] === "*") copyThrough(i + 2, "*/");
    else {
      out += c === "?" && sql[i + 1] >= "0" && sql[i + 1] <= "9" ? "$" : c;
      i++;
    }
  }
  return out;
}
