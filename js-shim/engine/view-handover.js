// The JS half of the incremental view hand-over (src/engine/handover.rs): per session, the
// decoded messages of the view last handed over, so a turn parses only the JSON of entries that
// are new to it instead of the whole view.
//
// The host receives the very objects kept here. A host that changes one of them (trims a tool
// result, rewrites content) must not see the change come back in a later view as if it were the
// stored message, so every kept object carries a snapshot of its whole structure (every nested
// object's identity, every key, every primitive value), checked before the object is handed out
// again; on any difference the whole view is fetched afresh from the engine.

/** Sessions whose views are kept (a process serving more starts over; the cost is one parse). */
const MAX_SESSIONS = 32;

/** Appends `value`'s structure to `out`: identities of objects, keys, primitive values. */
function record(value, out) {
  if (value === null || typeof value !== "object") {
    out.push(value);
    return;
  }
  out.push(value);
  if (Array.isArray(value)) {
    out.push(value.length);
    for (let i = 0; i < value.length; i++) record(value[i], out);
    return;
  }
  let keys = 0;
  for (const key in value) {
    out.push(key);
    record(value[key], out);
    keys++;
  }
  out.push(keys);
}

/** Whether `value` still has the structure `snap` recorded from position `at`; the position
 *  after it, or -1 on the first difference. */
function check(value, snap, at) {
  if (snap[at] !== value) return -1;
  at++;
  if (Array.isArray(value)) {
    const n = value.length;
    if (snap[at] !== n) return -1;
    at++;
    for (let i = 0; i < n; i++) {
      const item = value[i];
      if (item !== null && typeof item === "object") {
        at = check(item, snap, at);
        if (at < 0) return -1;
      } else if (snap[at++] !== item && !Object.is(snap[at - 1], item)) return -1;
    }
    return at;
  }
  let keys = 0;
  for (const key in value) {
    if (snap[at] !== key) return -1;
    const item = value[key];
    if (item !== null && typeof item === "object") {
      at = check(item, snap, at + 1);
      if (at < 0) return -1;
    } else if (snap[at + 1] !== item && !Object.is(snap[at + 1], item)) return -1;
    else at += 2;
    keys++;
  }
  return snap[at] === keys ? at + 1 : -1;
}

/** A kept message: the object handed out and its structure when it was decoded. */
function keep(message) {
  const snap = [];
  record(message, snap);
  return { message, snap };
}

const unchanged = (kept) =>
  kept.message !== null && typeof kept.message === "object" && check(kept.message, kept.snap, 0) === kept.snap.length;

/** `f(value)`, after `value` settles when it is a promise. */
const then = (value, f) => (typeof value?.then === "function" ? value.then(f) : f(value));

export function createViewHandover() {
  const sessions = new Map();

  /**
   * The view's messages for `sessionKey`. `fetch(heldToken)` asks the engine for the view
   * (`assembleView`): keys, fresh flags and the JSON of the fresh entries; it may return a
   * promise (the engine in a worker thread), and then so does this.
   */
  function assemble(sessionKey, fetch) {
    const held = sessions.get(sessionKey);
    return then(fetch(held?.token), (out) => {
      const messages = held ? fromHeld(out, held) : undefined;
      if (messages) return settle(sessionKey, out, messages);
      // No usable cache (first call, or the host changed a message we kept): everything afresh.
      return then(held ? fetch(undefined) : out, (all) => settle(sessionKey, all, fromHeld(all, { kept: new Map() })));
    });
  }

  function settle(sessionKey, out, messages) {
    if (!sessions.has(sessionKey) && sessions.size >= MAX_SESSIONS) sessions.clear();
    sessions.set(sessionKey, { token: out.token, kept: messages.kept });
    return { out, messages: messages.list };
  }

  /** Builds the view from the kept objects and the fresh JSON, adding the fresh ones to the
   *  kept map (which is pruned to the view when it has grown to twice its size); undefined when
   *  a kept object the view needs was changed or is missing. */
  function fromHeld(out, held) {
    const fresh = JSON.parse(out.freshJson);
    const list = new Array(out.keys.length);
    const kept = held.kept;
    let next = 0;
    for (let i = 0; i < out.keys.length; i++) {
      const key = out.keys[i];
      let entry;
      if (out.fresh[i]) {
        entry = keep(fresh[next++]);
      } else {
        entry = kept.get(key);
        if (!entry || !unchanged(entry)) return undefined;
      }
      list[i] = entry.message;
      if (key !== 0 && out.fresh[i]) kept.set(key, entry);
    }
    if (kept.size > 2 * list.length + 64) {
      const live = new Set(out.keys);
      for (const key of kept.keys()) if (!live.has(key)) kept.delete(key);
    }
    return { list, kept };
  }

  return { assemble };
}
