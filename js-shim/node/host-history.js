// What of the host's history crosses to the engine's worker (engine-thread.js). The host
// passes its whole history to `assemble` and `afterTurn` on every turn, but the engine reads
// only part of it: `afterTurn` the messages after `prePromptMessageCount`, `assemble` only its
// length — the messages themselves only when the host knows more than was stored (history from
// before the plugin was installed, or a rollover). Copying all of it into the worker would cost
// every turn time in proportion to the history, on the host's thread. So the host's side sends
// what is read, and the worker rebuilds an array of the same length for the engine:
// - `afterTurn`: the tail, behind a prefix of holes that nothing reads;
// - `assemble`: an array whose elements throw HistoryNeeded when read; the worker then asks for
//   the whole history and the host's side sends it (in parts). The first attempt stopped before
//   it stored anything of the history, and what it did before (archiving a rolled-over
//   conversation) the second attempt finds done.

import { HistoryNeeded } from "../errors.js";

/** The part of `params.messages` a call sends: `{messages, elided}` (`elided` messages before
 *  `messages` were left out), or undefined to send them all. */
export function elide(method, params) {
  const messages = params?.messages;
  if (!Array.isArray(messages)) return undefined;
  if (method === "afterTurn") {
    const pre = params.prePromptMessageCount;
    // Anything the engine would refuse goes whole, so it refuses it with its own error.
    if (!Number.isInteger(pre) || pre <= 0 || pre > messages.length) return undefined;
    return { messages: messages.slice(pre), elided: pre };
  }
  if (method === "assembleView" && messages.length > 0) return { messages: [], elided: messages.length };
  return undefined;
}

/** The array the engine gets for a call whose history was elided (worker side); `onRead` is
 *  called when the engine reads an element that was not sent. */
export function restore(method, messages, elided, onRead) {
  if (method === "afterTurn") {
    // The tail set at its indices on an empty array: V8 keeps it sparse, where `new Array(elided)`
    // allocated (and left to the collector) a slot per elided message, every turn (~0.13 ms and
    // 800 KB at 100,000 messages).
    const array = [];
    messages.forEach((m, i) => {
      array[elided + i] = m;
    });
    if (messages.length === 0) array.length = elided;
    return array;
  }
  return new Proxy(new Array(elided), {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) {
        onRead?.();
        throw new HistoryNeeded();
      }
      return Reflect.get(target, key, receiver);
    },
  });
}

/** Stands for `params.messages` in a call whose messages went ahead in parts. */
export const IN_PARTS = "lossless-wasm:messages-in-parts";
