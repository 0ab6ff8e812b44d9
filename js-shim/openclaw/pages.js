// Pages of the recall tools' answers that fit the host's tool-result limit (result-size.js): the
// most of the engine's answer that fits, and where the rest continues, never a cut that loses
// text. Each pager takes the engine's answer, `render` (that answer as the tool result) and
// `fits` (whether a result is under the limit), and returns the result to hand the host.
//
// Continuations, all counted as the engine counts (Unicode scalars for text offsets, positions
// in a listing for summaries):
// - lcm_expand of a message: `nextCursor` is the character offset the next page starts at;
// - lcm_expand of a summary: `nextCursor` is the position of the first item not shown; an item
//   too large for a page alone is shown in part, and its `continueAt` is where the rest starts
//   (lcm_expand with its messageId, or lcm_describe with its summaryId, and that cursor);
// - lcm_describe of a summary: `nextCursor` is the character offset of its content's next page
//   (a page with a cursor is that content alone);
// - lcm_grep: `nextOffset` is the first hit of the same search not shown.

import { codePointCount, codePoints, largest } from "./result-size.js";

/** `item` with only its first `k` characters, continuing at `at` (undefined: nothing left). */
function partOf(item, k, at) {
  const whole = codePointCount(item.content);
  return {
    ...item,
    content: codePoints(item.content, k),
    // The engine's estimate, scaled to the part shown.
    tokens: whole ? Math.ceil((item.tokens * k) / whole) : item.tokens,
    truncated: at !== undefined,
    continueAt: at ?? null,
  };
}

/** A page's estimated tokens: its items' and their framing (the engine's 8 per item). */
const pageTokens = (items) => items.reduce((n, item) => n + item.tokens + 8, 0);

/**
 * An lcm_expand page. A message's text goes on at the character where this page stops; a
 * summary's listing at the first item not shown.
 */
export function expandPage(out, render, fits) {
  const whole = render(out);
  if (fits(whole) || !out.items.length) return whole;
  if (out.target === "message") {
    const item = out.items[0];
    const length = codePointCount(item.content);
    const from = (item.continueAt ?? out.total) - length;
    const page = (k) => {
      const end = from + k;
      const more = end < out.total ? end : undefined;
      const items = [partOf(item, k, more)];
      return render({ ...out, items, tokens: pageTokens(items), nextCursor: more === undefined ? null : String(more) });
    };
    const k = largest(1, length, (n) => fits(page(n)));
    return k >= 1 ? page(k) : whole;
  }
  const first = out.nextCursor === null || out.nextCursor === undefined ? out.total : Number(out.nextCursor);
  const start = first - out.items.length;
  const listing = (items, consumed) => {
    const next = start + consumed;
    return render({ ...out, items, tokens: pageTokens(items), nextCursor: next < out.total ? String(next) : null });
  };
  const n = largest(1, out.items.length, (m) => fits(listing(out.items.slice(0, m), m)));
  if (n >= 1) return listing(out.items.slice(0, n), n);
  // The first item alone is too large: its first part, and the listing goes on after it.
  const item = out.items[0];
  const length = codePointCount(item.content);
  const part = (k) => listing([partOf(item, k, k < length ? k : undefined)], 1);
  const k = largest(1, length, (m) => fits(part(m)));
  return k >= 1 ? part(k) : whole;
}

/**
 * An lcm_describe answer for a summary whose content is too long for one answer:
 * `render(d, page)` with `page = {head, from, shown, nextCursor}`. Without a cursor the answer
 * is the description and as much of the content as fits after it (`head`); with one, that
 * content page alone, from character `cursor` (the description is not repeated).
 */
export function describePage(d, cursor, render, fits) {
  if (d.type !== "summary") return render(d);
  const length = codePointCount(d.content);
  const next = (end) => (end < length ? String(end) : null);
  if (cursor === undefined) {
    const whole = render(d);
    if (fits(whole)) return whole;
    const head = (k) =>
      render({ ...d, content: codePoints(d.content, k) }, { head: true, from: 0, shown: k, nextCursor: next(k) });
    return head(
      Math.max(
        0,
        largest(0, length, (m) => fits(head(m))),
      ),
    );
  }
  const start = Math.min(cursor, length);
  const rest = [...d.content].slice(start).join("");
  const page = (k) =>
    render({ ...d, content: codePoints(rest, k) }, { head: false, from: start, shown: k, nextCursor: next(start + k) });
  return page(
    Math.max(
      Math.min(1, length - start),
      largest(1, length - start, (m) => fits(page(m))),
    ),
  );
}

/**
 * An lcm_grep page: the hits from `offset` on that fit, `render(out, page)` with
 * `page = {offset, total, nextOffset}`; a single hit too large for a page has its snippet
 * shortened (a snippet is an excerpt; lcm_expand reads the message itself).
 */
export function grepPage(out, offset, render, fits) {
  const total = out.hits.length;
  const from = Math.min(offset ?? 0, total);
  const page = (hits) => {
    const next = from + hits.length;
    return render({ ...out, hits }, { offset: from, total, nextOffset: next < total ? next : null });
  };
  const n = largest(1, total - from, (m) => fits(page(out.hits.slice(from, from + m))));
  if (n >= 1) return page(out.hits.slice(from, from + n));
  if (from >= total) return page([]);
  const hit = out.hits[from];
  const short = (k) => page([{ ...hit, snippet: `${codePoints(hit.snippet, k)}…` }]);
  const k = largest(0, codePointCount(hit.snippet), (m) => fits(short(m)));
  return short(Math.max(0, k));
}
