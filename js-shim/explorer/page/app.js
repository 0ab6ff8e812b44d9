// The context explorer's controller: reads one agent's conversations, a conversation's summary
// DAG (with its fallback / failure / rejection warnings) and a node's originals from the gateway
// route's JSON API (relative URLs, so the page works wherever the route is mounted), and draws
// them with the DAG module the demo page uses. The agent scope is a page parameter (`?agent=`)
// that the server enforces on every call; the page only asks. Text from the store is inserted
// as text, never as HTML. The one write is a repair, behind a typed confirmation.
//
// The page reads through its own API (../explorer-api/, js-shim/explorer/frame-api.js) with the
// capability the gateway-authenticated page load put into it (in the Accept header: no
// preflight, never in a URL). Inside the Control UI this page is a sandboxed frame with origin
// `null`, and the gateway's cookie grant reaches only its navigation, never its requests; so
// the capability is what authenticates a read, here and outside the Control UI alike. An
// expired capability reloads the page (a navigation, which the gateway authenticates again).
import { describeSummary, renderDag } from "./dag.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const state = { agent: params.get("agent") || "main", conversation: undefined, dag: undefined, selected: undefined };
const capability = document.querySelector('meta[name="explorer-capability"]')?.content ?? "";
const framed = (() => {
  try {
    return window.top !== window;
  } catch {
    return true;
  }
})();
const FOLD_AFTER = 3;
const fmt = (n) => Number(n ?? 0).toLocaleString("en-US");
const clip = (text, n = 1500) => (text.length > n ? `${text.slice(0, n)}…` : text);

const h = (tag, { dataset, ...props } = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  Object.assign(node.dataset, dataset);
  node.append(...children.filter((c) => c != null));
  return node;
};

async function api(name, query = {}) {
  const search = new URLSearchParams({ agent: state.agent, ...query });
  let res;
  try {
    res = await fetch(`../explorer-api/${name}?${search}`, {
      credentials: "omit",
      headers: { accept: `application/json; explorer-capability=${capability}` },
    });
  } catch (err) {
    throw new Error(`the gateway did not answer (${err?.message ?? err}): is it still running?`);
  }
  const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (res.status === 401 && /capability expired/.test(body.error ?? "")) reloadKeepingState();
  if (!res.ok) throw Object.assign(new Error(body.error ?? `HTTP ${res.status}`), { status: res.status });
  return body;
}

/** A fresh page (and capability) showing the same conversation: the navigation carries the grant. */
function reloadKeepingState() {
  const search = new URLSearchParams({ agent: state.agent });
  if (state.conversation != null) search.set("conversation", String(state.conversation));
  location.search = `?${search}`;
}

/** `items` as list entries, the first FOLD_AFTER shown and the rest folded under a summary line. */
function foldedList(items, render, noun) {
  const shown = h("ul", {}, ...items.slice(0, FOLD_AFTER).map(render));
  if (items.length <= FOLD_AFTER) return [shown];
  const rest = items.slice(FOLD_AFTER);
  return [
    shown,
    h(
      "details",
      { className: "fold" },
      h("summary", {}, `${rest.length} more ${noun}`),
      h("ul", {}, ...rest.map(render)),
    ),
  ];
}

function setStatus(text, error = false) {
  $("status").textContent = text;
  $("status").classList.toggle("error", error);
}

function badges(c) {
  const out = [
    h("span", { className: "badge depth", title: "depth of the DAG" }, `depth ${c.maxDepth}`),
    h("span", { className: "badge" }, `${c.summaries} summaries`),
  ];
  if (c.fallbackSummaries) out.push(h("span", { className: "badge warn" }, `${c.fallbackSummaries} fallback`));
  if (c.failedPasses) out.push(h("span", { className: "badge warn" }, `${c.failedPasses} failed`));
  if (c.rejectedAnswers) out.push(h("span", { className: "badge warn" }, `${c.rejectedAnswers} rejected`));
  if (c.status !== "active") out.push(h("span", { className: "badge" }, c.status));
  return out;
}

async function loadConversations() {
  $("agent").value = state.agent;
  $("scope-note").textContent = `agent ${state.agent}`;
  const { conversations } = await api("conversations");
  const list = $("conversations");
  list.replaceChildren();
  if (!conversations.length)
    list.append(h("li", { className: "hint" }, `no conversations stored for agent ${state.agent}`));
  // The user's conversations first; the host's internal runs (memory flush) in a group of their
  // own after them (the server lists them in that order).
  const user = conversations.filter((c) => !c.internal);
  const internal = conversations.filter((c) => c.internal);
  const add = (c) => {
    const item = h(
      "li",
      { dataset: { conversationId: c.id, sessionKey: c.sessionKey, internal: String(Boolean(c.internal)) } },
      h("div", { className: "key" }, c.sessionKey),
      h(
        "div",
        {},
        `${fmt(c.messageCount)} messages · ${fmt(c.tokenCount)} tokens stored · ${fmt(c.contextTokens)} tokens in context`,
      ),
      h("div", {}, ...badges(c)),
    );
    item.addEventListener("click", () => openConversation(c.id).catch(fail));
    list.append(item);
  };
  user.forEach(add);
  if (internal.length) {
    list.append(
      h(
        "li",
        { className: "group", dataset: { group: "internal" } },
        `The host's internal runs (memory flush and the like), not your conversations: ${internal.length}`,
      ),
    );
    internal.forEach(add);
  }
  document.body.dataset.conversations = String(conversations.length);
  return conversations;
}

function renderWarnings(d) {
  const box = $("warnings");
  box.replaceChildren();
  const fallbacks = d.summaries.filter((s) => s.level === "fallback");
  if (fallbacks.length) {
    box.append(
      h(
        "div",
        { className: "warning", dataset: { warning: "fallback" } },
        `${fallbacks.length} fallback summar${fallbacks.length === 1 ? "y" : "ies"} (${fallbacks.map((s) => `S${s.id}`).join(", ")}): written without a summarizer's answer; a repair re-summarizes them with the host's LLM.`,
      ),
    );
  }
  if (d.failures.length) {
    box.append(
      h(
        "div",
        { className: "warning", dataset: { warning: "failed" } },
        `${d.conversation.failedPasses} compaction pass(es) failed; the newest:`,
        ...foldedList(
          d.failures,
          (e) => h("li", {}, `${new Date(e.createdAt).toISOString()} ${e.pass}: ${e.reason}`),
          "failed passes",
        ),
      ),
    );
  }
  if (d.rejected.length) {
    box.append(
      h(
        "div",
        { className: "warning", dataset: { warning: "rejected" } },
        `${d.conversation.rejectedAnswers} summarizer answer(s) rejected; the newest:`,
        ...foldedList(
          d.rejected,
          (r) =>
            h(
              "li",
              {},
              `${new Date(r.createdAt).toISOString()} ${r.pass}/${r.level}: ${r.reason ?? "no reason recorded"}`,
            ),
          "rejected answers",
        ),
      ),
    );
  }
}

function draw() {
  const d = state.dag;
  if (!d) return;
  renderDag($("dag"), d.summaries, {
    messageCount: d.conversation.messageCount,
    selected: state.selected,
    onSelect: (id) => select(id).catch(fail),
  });
}

async function openConversation(id) {
  state.conversation = id;
  state.selected = undefined;
  for (const li of document.querySelectorAll("#conversations li"))
    li.classList.toggle("selected", Number(li.dataset.conversationId) === id);
  const d = await api("dag", { conversation: id });
  state.dag = d;
  const c = d.conversation;
  const summaryTokens = d.summaries.reduce((n, s) => n + s.tokens, 0);
  $("dag-title").textContent = `Summary DAG of ${c.sessionKey}`;
  $("totals").textContent =
    `${fmt(c.messageCount)} messages (${fmt(c.tokenCount)} tokens) · ${d.summaries.length} summaries, depth ${c.maxDepth}, ${fmt(summaryTokens)} tokens · ` +
    `in context (the view is cut from it): ${d.contextSummaries} summaries + ${d.contextMessages} raw messages, ${fmt(c.contextTokens)} tokens`;
  draw();
  renderWarnings(d);
  renderRepair(d);
  $("detail").replaceChildren(
    h(
      "p",
      { className: "hint" },
      "Click a node of the DAG to read its summary and expand it to the original messages.",
    ),
  );
  document.body.dataset.summaries = String(d.summaries.length);
  document.body.dataset.conversation = String(id);
}

function messageBlock(m) {
  return h(
    "div",
    { className: "msg", dataset: { seq: m.seq, id: m.id } },
    h("span", { className: "role" }, `#${m.seq} ${m.role} (${m.tokens} tokens): `),
    clip(m.content),
  );
}

async function select(id) {
  state.selected = id;
  for (const node of document.querySelectorAll("#dag .node"))
    node.classList.toggle("selected", Number(node.dataset.id) === id);
  const { summary, content } = await api("summary", { summary: id });
  const panel = $("detail");
  const parts = [
    h("p", {}, h("strong", {}, describeSummary(summary))),
    h("details", { open: true }, h("summary", {}, "summary text"), h("pre", {}, content)),
  ];
  if (summary.kind === "condensed") {
    const children = await api("expand", { summary: id });
    parts.push(h("h3", {}, `children (${summary.children.length} summaries)`));
    for (const item of children.items) {
      const child = h("div", { className: "child", title: "click to open" }, describeSummary(item.summary));
      child.addEventListener("click", () => select(item.summary.id).catch(fail));
      parts.push(child);
    }
  }
  const originals = h("div", { className: "originals" });
  const expandButton = h(
    "button",
    { type: "button", id: "expand-originals" },
    `Expand to the ${summary.messageCount} original messages`,
  );
  parts.push(h("h3", {}, "original messages, as lcm_expand returns them"), expandButton, originals);
  panel.replaceChildren(...parts);
  const page = async (cursor) => {
    const out = await api("expand", { summary: id, messages: "1", ...(cursor != null ? { cursor } : {}) });
    originals.querySelector("button.more")?.remove();
    for (const item of out.items) originals.append(messageBlock(item.message));
    if (out.nextCursor != null) {
      const more = h("button", { type: "button", className: "more" }, "more");
      more.addEventListener("click", () => page(out.nextCursor).catch(fail));
      originals.append(more);
    }
    document.body.dataset.originals = String(originals.querySelectorAll(".msg").length);
  };
  expandButton.addEventListener("click", () => {
    expandButton.remove();
    page(undefined).catch(fail);
  });
}

/** Repair: a plan first (nothing written), then the typed phrase, then the backup and the work. */
function renderRepair(d) {
  const box = $("repair");
  box.replaceChildren();
  if (!d.summaries.some((s) => s.level === "fallback")) return;
  const planButton = h("button", { type: "button", id: "repair-plan" }, "Plan a repair…");
  box.append(planButton);
  planButton.addEventListener("click", async () => {
    try {
      const plan = await api("repair-plan", { conversation: d.conversation.id });
      if (!Array.isArray(plan.planned)) throw new Error(`repair cannot run: ${plan.reason ?? "no plan"}`);
      if (framed) {
        // The Control UI's grant allows reading only: the gateway refuses the write here.
        planButton.replaceWith(
          h(
            "div",
            { className: "plan" },
            `would redo ${plan.planned.length} summar${plan.planned.length === 1 ? "y" : "ies"}: ${plan.planned.map((p) => `S${p.id} (${p.reason})`).join(", ")}. ` +
              `The Control UI tab may only read: run \`openclaw lcm repair\` for this session, or open the page outside the Control UI (see "Opening the explorer" below).`,
          ),
        );
        return;
      }
      const input = h("input", { id: "repair-confirm", placeholder: plan.confirmPhrase, autocomplete: "off" });
      const go = h("button", { type: "button", id: "repair-go", disabled: true }, "Repair (a backup is taken first)");
      const result = h("p", { id: "repair-result" });
      input.addEventListener("input", () => (go.disabled = input.value !== plan.confirmPhrase));
      go.addEventListener("click", async () => {
        go.disabled = true;
        result.textContent = "repairing…";
        try {
          const res = await fetch(`api/repair`, {
            method: "POST",
            credentials: "same-origin",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ agent: state.agent, conversation: d.conversation.id, confirm: input.value }),
          });
          const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
          if (res.status === 401 || res.status === 403)
            throw new Error(
              "the gateway refused the write: inside the Control UI tab the page may only read; run `openclaw lcm repair` instead",
            );
          if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
          result.textContent = `redone ${body.repaired.length} summar${body.repaired.length === 1 ? "y" : "ies"}; backup: ${body.backup}${body.failures.length ? `; left in place: ${body.failures.join("; ")}` : ""}`;
          await openConversation(d.conversation.id);
        } catch (err) {
          result.textContent = String(err.message ?? err);
          result.classList.add("error");
        }
      });
      planButton.replaceWith(
        h(
          "div",
          { className: "plan" },
          `would redo ${plan.planned.length} summar${plan.planned.length === 1 ? "y" : "ies"}: ${plan.planned.map((p) => `S${p.id} (${p.reason})`).join(", ")}. Type "${plan.confirmPhrase}" to confirm: `,
        ),
        input,
        go,
        result,
      );
    } catch (err) {
      fail(err);
    }
  });
}

function fail(err) {
  console.error(err);
  setStatus(`error: ${err?.message ?? err}`, true);
}

$("scope-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const agent = $("agent").value.trim();
  if (!agent) return;
  // The scope lives in the URL, so a link names exactly what it shows.
  location.search = `?agent=${encodeURIComponent(agent)}`;
});
window.addEventListener("resize", draw);

// How to open this page outside the Control UI, with this gateway's own address.
const here = new URL(`./?agent=${encodeURIComponent(state.agent)}`, location.href);
$("route-url").textContent = here.href;
$("curl-example").textContent =
  `curl -H "Authorization: Bearer $TOKEN" '${new URL(`api/conversations?agent=${encodeURIComponent(state.agent)}`, here).href}'`;
document.body.dataset.framed = String(framed);

try {
  const conversations = await loadConversations();
  setStatus(`agent ${state.agent} · ${conversations.length} conversation(s) · read-only`);
  const wanted = Number(params.get("conversation"));
  const first =
    conversations.find((c) => c.id === wanted) ??
    conversations.find((c) => !c.internal && c.summaries > 0) ??
    conversations.find((c) => !c.internal) ??
    conversations[0];
  if (first) await openConversation(first.id);
  document.body.dataset.ready = "1";
} catch (err) {
  fail(err);
  document.body.dataset.ready = "error";
}
