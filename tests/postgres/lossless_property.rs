//! The lossless property (`lossless_property_cases/cases.rs`) on PostgreSQL, each case on a fresh
//! schema of a real server: random conversations driven through random compactions never lose a
//! message; every stored message stays reachable through `lcm_expand` from the current view and
//! findable through `lcm_grep`. 64 random cases here, against 128 on SQLite
//! (lossless_property.rs): each case opens a fresh schema (the store's migrations) and sends
//! every statement over loopback, ~0.5 s a case on this project's 2-core machines against
//! ~0.1 s in memory. 128 cases took 59–68 s with another build on the machine; 64 take 30–40 s,
//! which keeps this file under a minute. Its failing seeds go to
//! lossless_property_pg.proptest-regressions, which starts with SQLite's seed.
//! Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres lossless_property::`.

pg_store!();

const CASES: u32 = 64;
const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/lossless_property_pg.proptest-regressions"
);

include!("../lossless_property_cases/cases.rs");
