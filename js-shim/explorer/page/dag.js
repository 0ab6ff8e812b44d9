// Draws the summary DAG as SVG (shared by the browser demo page and the gateway's context
// explorer): one row per depth (leaf summaries at the bottom), each node a
// rectangle spanning the original messages it covers (by message seq), coloured by its level,
// outlined when it is in the model's view; edges go from a summary to its children, and a strip
// at the bottom shows every stored message (raw in the view, or summarized).

const SVG = "http://www.w3.org/2000/svg";
const ROW = 46;
const NODE = 24;
const LEFT = 52;
const RIGHT = 12;
const TOP = 8;

function el(name, attrs = {}, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  parent?.appendChild(node);
  return node;
}

/** A one-line description of a summary, for tooltips and the detail panel. */
export function describeSummary(s) {
  const range = s.firstSeq == null ? "no messages" : `messages ${s.firstSeq}–${s.lastSeq} (${s.messageCount})`;
  return `S${s.id} · ${s.kind} · depth ${s.depth} · ${s.level} · ${s.tokens} tokens (from ${s.sourceTokens}) · covers ${range}${s.inContext ? " · in the view" : ""}`;
}

/**
 * Renders `summaries` (from `describe()`) into `container`.
 * @param {HTMLElement} container
 * @param {object[]} summaries
 * @param {{messageCount: number, selected?: number, onSelect: (id: number) => void}} options
 */
export function renderDag(container, summaries, { messageCount, selected, onSelect }) {
  container.replaceChildren();
  const width = Math.max(container.clientWidth || 900, 600);
  const maxDepth = summaries.reduce((m, s) => Math.max(m, s.depth), 0);
  const stripY = TOP + (maxDepth + 1) * ROW;
  const height = stripY + 40;
  const svg = el(
    "svg",
    { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `${summaries.length} summaries` },
    container,
  );
  const total = Math.max(messageCount, 1);
  const inner = width - LEFT - RIGHT;
  const x = (seq) => LEFT + ((seq - 1) / total) * inner;
  const y = (depth) => TOP + (maxDepth - depth) * ROW;
  const byId = new Map(summaries.map((s) => [s.id, s]));
  const box = (s) => {
    const x0 = x(s.firstSeq ?? 1);
    const w = Math.max(x((s.lastSeq ?? 1) + 1) - x0 - 1, 5);
    return { x0, w, cx: x0 + w / 2, top: y(s.depth), bottom: y(s.depth) + NODE };
  };

  const axis = el("g", { class: "axis" }, svg);
  for (let d = 0; d <= maxDepth && summaries.length; d++)
    el("text", { x: 4, y: y(d) + 16 }, axis).textContent = `depth ${d}`;
  el("text", { x: 4, y: stripY + 13 }, axis).textContent = "messages";
  for (const seq of [1, Math.ceil(total / 2), total]) {
    el("text", { x: Math.min(x(seq), width - 40), y: stripY + 32 }, axis).textContent = String(seq);
  }

  // The message strip: everything raw, then the summarized ranges over it.
  el("rect", { x: LEFT, y: stripY, width: inner, height: 16, fill: "var(--raw)" }, svg);
  const edges = el("g", {}, svg);
  for (const s of summaries) {
    const b = box(s);
    if (s.kind === "leaf") {
      el("rect", { x: b.x0, y: stripY, width: b.w, height: 16, fill: "#dfe4ea" }, svg);
      el("line", { class: "edge", x1: b.cx, y1: b.bottom, x2: b.cx, y2: stripY }, edges);
    } else {
      for (const child of s.children) {
        const c = byId.get(child);
        if (c) el("line", { class: "edge", x1: b.cx, y1: b.bottom, x2: box(c).cx, y2: box(c).top }, edges);
      }
    }
  }

  for (const s of summaries) {
    const b = box(s);
    const classes = ["node", s.level, s.inContext ? "in-context" : "", s.id === selected ? "selected" : ""]
      .filter(Boolean)
      .join(" ");
    const g = el(
      "g",
      { class: classes, "data-id": s.id, "data-depth": s.depth, "data-level": s.level, tabindex: 0 },
      svg,
    );
    el("rect", { x: b.x0, y: b.top, width: b.w, height: NODE, rx: 3, fill: `var(--${s.level})` }, g);
    el("title", {}, g).textContent = describeSummary(s);
    if (b.w > 26) el("text", { x: b.x0 + 4, y: b.top + 15 }, g).textContent = `S${s.id}`;
    g.addEventListener("click", () => onSelect(s.id));
    g.addEventListener("keydown", (e) => e.key === "Enter" && onSelect(s.id));
  }
  if (summaries.length === 0) {
    el("text", { x: LEFT, y: TOP + 16, fill: "#667" }, svg).textContent =
      "No summaries yet: step through a few turns; the first leaf pass runs once enough raw history sits outside the fresh tail.";
  }
  return svg;
}
