// Preloaded with `node --require` into a test gateway process (fault-support.mjs `skewMs`): moves
// Date.now() of every thread of the process (workers run the preload too) by
// LCM_TEST_CLOCK_SKEW_MS, as on a machine whose clock is that far off.
"use strict";
const skew = Number(process.env.LCM_TEST_CLOCK_SKEW_MS ?? 0);
const realNow = Date.now;
Date.now = () => realNow() + skew;
