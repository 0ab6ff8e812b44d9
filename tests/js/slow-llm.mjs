// Summarizers that take their time, for the slow-summarizer tests: one answered after a fixed
// delay, one answered only when the test says so. Each records every request (start, answer,
// abort). Not a test file itself.

export const SUMMARY = "## Goal\n- keep the harbour logbook\n## Progress\n- noted tides, winds and passing ships";

const abortError = () => Object.assign(new Error("aborted"), { name: "AbortError" });

/** Answers each request `delayMs` after it arrives (or rejects when its signal aborts first). */
export function delayedLlm({ delayMs }) {
  const requests = [];
  return {
    requests,
    complete({ signal }) {
      const request = { startedAt: Date.now(), answeredAt: undefined, aborted: false };
      requests.push(request);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          request.answeredAt = Date.now();
          resolve({ text: SUMMARY, stopReason: "stop", model: "slow-summarizer" });
        }, delayMs);
        signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          request.aborted = true;
          reject(abortError());
        }, { once: true });
      });
    },
  };
}

/** Answers only when released: `release()` answers every request waiting now; after
 *  `answerAtOnce()`, later requests are answered as they come. */
export function heldLlm() {
  const requests = [];
  let atOnce = false;
  const waiting = () => requests.filter((r) => !r.answeredAt && !r.aborted);
  return {
    requests,
    waiting,
    complete({ signal }) {
      const request = { startedAt: Date.now(), answeredAt: undefined, aborted: false };
      requests.push(request);
      return new Promise((resolve, reject) => {
        request.answer = () => {
          request.answeredAt = Date.now();
          resolve({ text: SUMMARY, stopReason: "stop", model: "held-summarizer" });
        };
        signal?.addEventListener("abort", () => {
          request.aborted = true;
          reject(abortError());
        }, { once: true });
        if (atOnce) request.answer();
      });
    },
    release() {
      for (const r of waiting()) r.answer();
    },
    answerAtOnce() {
      atOnce = true;
      this.release();
    },
  };
}

/** Turn `i`'s user note: ~1,600 characters, distinct per turn, so a small window fills quickly. */
export function longNote(i) {
  let s = `Logbook note ${i}: please keep these harbour notes.`;
  for (let k = 1; s.length < 1_600; k++) s += ` Entry ${k} of note ${i}: wind, tide and ${k * 3} passing ships recorded.`;
  return s.slice(0, 1_600);
}
