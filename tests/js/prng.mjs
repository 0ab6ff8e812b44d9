// A small deterministic PRNG (mulberry32), shared by the soak test and the host-path benchmark,
// so a run replays exactly from its seed.

/** Numbers in [0, 1) from `seed`, the same sequence every time. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
