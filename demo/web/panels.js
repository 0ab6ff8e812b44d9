// The demo page's panels besides the DAG: the token gauge, the detail panel (a summary expanded
// down to its original messages, or one message), search results and the compaction log. Every
// piece of text from the engine is inserted as text, never as HTML.
import { describeSummary } from "./dag.js";

const h = (tag, { dataset, ...props } = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  Object.assign(node.dataset, dataset);
  node.append(...children.filter((c) => c != null));
  return node;
};
const fmt = (n) => Number(n ?? 0).toLocaleString("en-US");
const clip = (text, n = 700) => (text.length > n ? `${text.slice(0, n)}…` : text);

/** The view's tokens against the budget, split into summaries and raw messages. */
export function renderGauge(bar, caption, { info, view, budget, freshTail }) {
  const scale = Math.max(budget, info.contextTokens, view.estimatedTokens, 1) * 1.05;
  const pct = (n) => `${(100 * n) / scale}%`;
  const summaries = Math.min(info.contextSummaryTokens, view.estimatedTokens);
  bar.replaceChildren(
    h("div", { className: "seg summaries", title: "summaries in the view" }),
    h("div", { className: "seg raw", title: "raw messages in the view" }),
    h("div", { className: "budget-line", title: `budget ${budget}` }),
  );
  Object.assign(bar.children[0].style, { left: "0", width: pct(summaries) });
  Object.assign(bar.children[1].style, { left: pct(summaries), width: pct(Math.max(0, view.estimatedTokens - summaries)) });
  bar.children[2].style.left = pct(budget);
  const summarized = info.messageCount - info.contextMessages;
  caption.textContent =
    `view ${fmt(view.estimatedTokens)} of ${fmt(budget)} tokens (${view.messages.length} items) · ` +
    `${info.contextSummaries} summaries (${fmt(info.contextSummaryTokens)} tokens) + ${info.contextMessages} raw messages in the context · ` +
    `fresh tail: the newest ${freshTail} messages are never summarized · ` +
    `${fmt(summarized)} of ${fmt(info.messageCount)} stored messages summarized, every one still stored and searchable`;
}

function messageBlock(m) {
  return h("div", { className: "msg", dataset: { seq: m.seq, id: m.id } }, h("span", { className: "role" }, `#${m.seq} ${m.role}: `), clip(m.content));
}

/** Shows summary `id`: its text, its direct children, and its original messages, paged. */
export async function showSummary(panel, engine, session, id, select) {
  const described = await engine.describe({ ...session, summaryId: id });
  const { summary, content } = described;
  const originals = h("div", { className: "originals" });
  const parts = [h("p", {}, h("strong", {}, describeSummary(summary))), h("details", { open: true }, h("summary", {}, "summary text"), h("pre", {}, content))];
  if (summary.kind === "condensed") {
    const children = await engine.expand({ ...session, summaryId: id, tokenLimit: 200_000 });
    parts.push(h("h3", {}, `children (${summary.children.length} summaries)`));
    for (const item of children.items) {
      const child = h("div", { className: "child", title: "click to expand" }, describeSummary(item.summary));
      child.addEventListener("click", () => select(item.summary.id));
      parts.push(child);
    }
  }
  parts.push(h("h3", {}, `original messages (${summary.messageCount}), as lcm_expand returns them`), originals);
  panel.replaceChildren(...parts);
  const page = async (cursor) => {
    const out = await engine.expand({ ...session, summaryId: id, toMessages: true, tokenLimit: 3000, cursor });
    originals.querySelector("button")?.remove();
    for (const item of out.items) originals.append(messageBlock(item.message));
    if (out.nextCursor != null) {
      const more = h("button", { type: "button" }, "more");
      more.addEventListener("click", () => page(out.nextCursor).catch(console.error));
      originals.append(more);
    }
  };
  await page(undefined);
}

/** Shows one message and, when it was summarized, a link to the summary that covers it. */
export async function showMessage(panel, engine, session, id, select) {
  const { message } = await engine.describe({ ...session, messageId: id });
  const where = message.summaryId == null
    ? h("p", {}, "not summarized: still raw in the context")
    : h("p", {}, "summarized in ", Object.assign(h("a", { href: "#" }, `S${message.summaryId}`), { onclick: (e) => { e.preventDefault(); select(message.summaryId); } }));
  panel.replaceChildren(h("p", {}, h("strong", {}, `message #${message.seq} (id ${message.id}), ${message.tokens} tokens`)), where, messageBlock(message));
}

/** Search hits, newest first; each opens its message or summary. */
export function renderResults(list, hits, pattern, open) {
  list.replaceChildren();
  if (hits.length === 0) list.append(h("li", {}, `no match for "${pattern}"`));
  for (const hit of hits) {
    const label = hit.kind === "summary" ? `S${hit.id}` : `message ${hit.id} (${hit.role})`;
    const item = h("li", { dataset: { kind: hit.kind, id: hit.id } }, h("strong", {}, label), " ", hit.snippet);
    item.addEventListener("click", () => open[hit.kind](hit.id));
    list.append(item);
  }
}

/** Appends compaction events to the log table. */
export function renderEvents(tbody, events, select) {
  for (const e of events) {
    const tokens = e.tokensBefore == null ? "" : e.tokensAfter == null ? fmt(e.tokensBefore) : `${fmt(e.tokensBefore)} → ${fmt(e.tokensAfter)}`;
    const summary = e.summaryId == null ? "" : h("span", { className: "summary-link" }, `S${e.summaryId}`);
    summary && summary.addEventListener("click", () => select(e.summaryId));
    // The trigger's inputs (telemetry) are on hover: they explain the decision.
    const row = h("tr", { className: e.outcome, title: e.telemetryJson ?? "" }, h("td", {}, String(e.id)), h("td", {}, e.pass), h("td", {}, e.outcome), h("td", {}, e.level ?? ""), h("td", {}, tokens), h("td", {}, summary), h("td", {}, e.reason));
    tbody.append(row);
  }
  tbody.closest(".events-scroll")?.scrollTo?.({ top: 1e9 });
}
