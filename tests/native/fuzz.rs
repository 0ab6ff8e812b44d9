//! Bad input never panics (property tests): message and content-block parsing, config, search
//! patterns and the import path, fed with generated values that are mostly almost right (real
//! roles and block types with wrong, missing or odd fields) and sometimes anything at all.
//! Every case must end in `Ok` or an error that names what is wrong, and a rejected call must
//! leave what was stored before exactly as it was.
//!
//! The properties that go through a store (search patterns, rejected commits and imports) are in
//! `fuzz_cases/cases.rs`, run here on SQLite and in fuzz_pg.rs on PostgreSQL; the parsing and
//! config properties, below, open no store and run here only.
//!
//! Case counts: `LOSSLESS_FUZZ_CASES` (default 1,000 per property for parsing and config, a
//! quarter of that for the engine-level properties); scripts/reliability.sh runs more.

type Db = lossless_wasm::store::native::NativeSql;

fn open_db() -> Db {
    let Ok(sql) = Db::in_memory() else {
        panic!("in-memory SQLite must open")
    };
    sql
}

include!("../fuzz_cases/cases.rs");

use lossless_wasm::core::message::parse_message;

fn search_config() -> ProptestConfig {
    cases(4)
}

fn commit_config() -> ProptestConfig {
    cases(4)
}

/// A new seeded engine per case.
fn with_search_engine<R>(f: impl FnOnce(&mut Engine<Db>) -> R) -> R {
    f(&mut seeded())
}

fn cases(divisor: u32) -> ProptestConfig {
    let n = std::env::var("LOSSLESS_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(1_000);
    ProptestConfig {
        cases: (n / divisor).max(1),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// The parsing and config properties: they open no store, so they run here only.

proptest! {
    #![proptest_config(cases(1))]

    #[test]
    fn parsing_any_message_never_panics_and_errors_name_the_message(value in message()) {
        if let Err(err) = parse_message(&value, "messages[7]") {
            match &err {
                Error::InvalidInput { field, reason } => {
                    prop_assert!(field.starts_with("messages[7]"), "{err}");
                    prop_assert!(!reason.is_empty());
                }
                other => prop_assert!(false, "parsing gave a non-input error: {other}"),
            }
        }
    }

    #[test]
    fn any_config_is_accepted_clamped_or_rejected_naming_its_key(
        entries in prop::collection::vec((prop::sample::select(lossless_wasm::core::config::all_keys()), any_json()), 0..6),
        junk_key in ".{0,10}",
    ) {
        let mut obj: Map<String, Value> = entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        obj.insert(junk_key.clone(), json!(1));
        let keys: Vec<String> = obj.keys().cloned().collect();
        if let Err(err) = Config::from_json(&Value::Object(obj)) {
            match &err {
                Error::InvalidConfig { key, .. } => prop_assert!(keys.contains(key), "{err} names no key of {keys:?}"),
                other => prop_assert!(false, "config gave a non-config error: {other}"),
            }
        }
    }
}
