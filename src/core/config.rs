//! Engine configuration: defaults, validation, and errors that name the offending key. The same
//! keys are declared in `openclaw.plugin.json`'s `configSchema`; the host validates there first,
//! and this is the second line for browser embedders and hand-written configs.

use serde_json::Value;

use crate::core::compaction::config::{self as compaction_config, CompactionConfig};
use crate::core::masking::config::{self as masking_config, MaskingConfig};
use crate::core::redact::{custom as redact_custom, CustomPattern};
use crate::error::{Error, Result};

/// Budget used when the host does not pass `tokenBudget`.
pub const DEFAULT_TOKEN_BUDGET: u32 = 128_000;
const MIN_TOKEN_BUDGET: u64 = 1_024;

/// Validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Database file; `None` means the shim's default under the host's state directory.
    pub db_path: Option<String>,
    /// Token budget for `assemble` when the host gives none.
    pub default_token_budget: u32,
    /// Which database the Node shim uses (the shim acts on it; the engine only validates it).
    pub storage: Storage,
    /// The schema the store lives in on PostgreSQL (the shim acts on it; the engine only
    /// validates it). `postgresUrl` is validated too but never kept here: it holds a password,
    /// and this struct is printed in debug output.
    pub postgres_schema: String,
    /// How hard node:sqlite syncs each commit (the shim acts on it; the engine only validates it).
    pub durability: Durability,
    /// Which thread the Node shim runs the engine and its storage on (the shim acts on it; the
    /// engine only validates it).
    pub storage_thread: StorageThread,
    /// How long a node:sqlite call waits for another process's write lock before it fails (the
    /// shim acts on it; the engine only validates it).
    pub lock_timeout_ms: u32,
    /// Which summarizer compaction uses.
    pub summarizer: SummarizerChoice,
    /// How long the shim waits for one summary from the host's LLM.
    pub summary_timeout_ms: u32,
    /// How long a call the host's turn waits on may wait for one summary before it goes on in
    /// the background (`core::compaction::hold`).
    pub summary_turn_wait_ms: u32,
    /// Turns without a stored summary (compaction due) after which one turn waits for a summary
    /// (0: never).
    pub summary_catch_up_turns: u32,
    /// Whether the OpenClaw shim may start a successor process (`openclaw lcm summarize`) for
    /// the summaries a one-shot process cannot wait for (the shim acts on it; the engine only
    /// validates it; `core::compaction::hold`).
    pub summary_successor: bool,
    /// How long the shim waits for the one LLM call of delegated recall (`lcm_ask`).
    pub ask_timeout_ms: u32,
    /// The most characters a recall tool's result may take as the host counts them (the shim
    /// pages every answer under it; `js-shim/openclaw/result-size.js`). OpenClaw cuts a tool
    /// result past about half the model's window in tokens, and through Tool Search's
    /// `tool_call` the cut leaves broken JSON.
    pub tool_result_max_chars: u32,
    /// Whether messages and summaries are embedded and recalls also rank by meaning (the
    /// semantic index, `engine::semantic`); false: lexical recall only, no vectors written.
    pub semantic_recall: bool,
    /// Compaction settings (trigger, chunk sizes, targets, backoff).
    pub compaction: CompactionConfig,
    /// Credential patterns added to the built-in ones before text goes to a summarizer.
    pub redact_patterns: Vec<CustomPattern>,
    /// Tool-output stubs, the LLM-free step before summaries.
    pub masking: MaskingConfig,
    /// Values that were out of range and clamped, one sentence each (the shim logs them).
    pub warnings: Vec<String>,
}

/// Who writes summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SummarizerChoice {
    /// The host's LLM when the host offers one, else the extractive summarizer.
    #[default]
    Auto,
    /// Always the host's LLM (compaction waits when there is none).
    Host,
    /// Always the deterministic extractive summarizer (no LLM calls).
    Extractive,
}

impl SummarizerChoice {
    /// The accepted `summarizer` values.
    pub const NAMES: [&'static str; 3] = ["auto", "host", "extractive"];

    fn parse(name: &str) -> Option<SummarizerChoice> {
        match name {
            "auto" => Some(SummarizerChoice::Auto),
            "host" => Some(SummarizerChoice::Host),
            "extractive" => Some(SummarizerChoice::Extractive),
            _ => None,
        }
    }
}

/// The database driver behind the engine in Node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Storage {
    /// node:sqlite when the runtime has it, else sql.js.
    #[default]
    Auto,
    /// sql.js: SQLite compiled to WebAssembly.
    SqlJs,
    /// Node's built-in node:sqlite module.
    NodeSqlite,
    /// A PostgreSQL server (`postgresUrl`, `postgresSchema`), shared by several gateways.
    Postgres,
}

impl Storage {
    /// The accepted `storage` values.
    pub const NAMES: [&'static str; 4] = ["auto", "sql.js", "node:sqlite", "postgres"];

    fn parse(name: &str) -> Option<Storage> {
        match name {
            "auto" => Some(Storage::Auto),
            "sql.js" => Some(Storage::SqlJs),
            "node:sqlite" => Some(Storage::NodeSqlite),
            "postgres" => Some(Storage::Postgres),
            _ => None,
        }
    }
}

/// Where the Node shim runs the engine and its database: in a worker thread, so that no storage
/// work (an import, another process's lock, a checkpoint) holds the host's event loop, or on the
/// host's own thread. Browser embedders have their own choice (`openBrowserEngineInWorker`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StorageThread {
    /// A worker thread of its own.
    #[default]
    Worker,
    /// The host's own thread.
    Main,
}

impl StorageThread {
    /// The accepted `storageThread` values.
    pub const NAMES: [&'static str; 2] = ["worker", "main"];

    fn parse(name: &str) -> Option<StorageThread> {
        match name {
            "worker" => Some(StorageThread::Worker),
            "main" => Some(StorageThread::Main),
            _ => None,
        }
    }
}

/// How the node:sqlite driver syncs a committed transaction (`PRAGMA synchronous` in WAL mode).
/// The sql.js drivers always sync each commit and ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `synchronous = NORMAL`: a commit survives a crash of the process; an OS crash or power
    /// loss may roll back the commits since the last WAL checkpoint (the database stays
    /// consistent, and the host's history re-imports them on its next turn). No fsync per commit.
    #[default]
    Normal,
    /// `synchronous = FULL`: each commit is fsynced before the call returns.
    Full,
}

impl Durability {
    /// The accepted `durability` values.
    pub const NAMES: [&'static str; 2] = ["normal", "full"];

    fn parse(name: &str) -> Option<Durability> {
        match name {
            "normal" => Some(Durability::Normal),
            "full" => Some(Durability::Full),
            _ => None,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            db_path: None,
            default_token_budget: DEFAULT_TOKEN_BUDGET,
            storage: Storage::Auto,
            postgres_schema: DEFAULT_POSTGRES_SCHEMA.to_owned(),
            durability: Durability::Normal,
            storage_thread: StorageThread::Worker,
            lock_timeout_ms: 30_000,
            summarizer: SummarizerChoice::Auto,
            summary_timeout_ms: 120_000,
            summary_turn_wait_ms: 1_000,
            summary_catch_up_turns: 4,
            summary_successor: true,
            ask_timeout_ms: 10_000,
            tool_result_max_chars: TOOL_RESULT_DEFAULT_MAX_CHARS,
            semantic_recall: true,
            compaction: CompactionConfig::default(),
            redact_patterns: Vec::new(),
            masking: MaskingConfig::default(),
            warnings: Vec::new(),
        }
    }
}

/// The engine's own keys; compaction keys are in [`compaction_config::KEYS`].
pub const KEYS: [&str; 17] = [
    "dbPath",
    "defaultTokenBudget",
    "storage",
    "postgresUrl",
    "postgresSchema",
    "durability",
    "storageThread",
    "lockTimeoutMs",
    "summarizer",
    "summaryTimeoutMs",
    "summaryTurnWaitMs",
    "summaryCatchUpTurns",
    "summarySuccessor",
    "askTimeoutMs",
    "toolResultMaxChars",
    "semanticRecall",
    redact_custom::KEY,
];

/// `toolResultMaxChars`: the default fits an 8K window on OpenClaw 2026.7.1 and 2026.9.6 (their
/// cut is at about 4,096 characters there), and the bounds keep a page useful and a page sane.
pub const TOOL_RESULT_DEFAULT_MAX_CHARS: u32 = 3_500;
/// The smallest `toolResultMaxChars` accepted.
pub const TOOL_RESULT_MIN_CHARS: u32 = 1_500;
/// The largest `toolResultMaxChars` accepted.
pub const TOOL_RESULT_MAX_CHARS: u32 = 200_000;

/// The schema a PostgreSQL store lives in when `postgresSchema` is not set.
pub const DEFAULT_POSTGRES_SCHEMA: &str = "lossless_wasm";

/// Whether `name` can be a schema without quoting: PostgreSQL folds unquoted names to lower
/// case, so only lower-case letters, digits and `_`, not starting with a digit, at most 63 bytes
/// (the server's identifier limit; longer names are cut, silently).
pub fn is_schema_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Every key the engine understands, for error messages.
pub fn all_keys() -> Vec<&'static str> {
    KEYS.iter()
        .chain(compaction_config::KEYS)
        .chain(masking_config::KEYS)
        .copied()
        .collect()
}

/// The value `config` uses for a clamped compaction or stub key, as JSON (None: not such a key).
fn value_used(config: &Config, key: &str) -> Option<Value> {
    let field = match key {
        // The stub keys' fields drop the `stub` prefix (`masking_config::MaskingConfig`).
        "stubMinTokens" => "minTokens",
        "stubBatchRatio" => "batchRatio",
        _ => key,
    };
    let as_json = |v: std::result::Result<Value, serde_json::Error>| v.ok()?.get(field).cloned();
    as_json(serde_json::to_value(&config.compaction))
        .or_else(|| as_json(serde_json::to_value(&config.masking)))
}

/// The log line for a clamped key: the key, the value given and the value used.
fn clamp_warning(config: &Config, key: &str, given: &Value) -> String {
    match value_used(config, key) {
        Some(used) => {
            format!("config `{key}`: {given} is out of range; using {used}")
        }
        None => format!("config `{key}`: {given} is out of range and was clamped"),
    }
}

impl Config {
    /// Parses a config object. `null` or a missing config means all defaults; unknown keys and
    /// out-of-range values are rejected with the key's name.
    pub fn from_json(value: &Value) -> Result<Config> {
        let mut config = Config::default();
        let obj = match value {
            Value::Null => return Ok(config),
            Value::Object(obj) => obj,
            _ => {
                return Err(Error::config(
                    "(root)",
                    "the plugin config must be an object",
                ))
            }
        };
        for (key, v) in obj {
            match key.as_str() {
                "dbPath" => match v {
                    Value::String(s) if !s.trim().is_empty() => config.db_path = Some(s.clone()),
                    Value::Null => {}
                    _ => return Err(Error::config(key, "must be a non-empty string (a file path)")),
                },
                "defaultTokenBudget" => {
                    let n = v.as_u64().filter(|n| *n >= MIN_TOKEN_BUDGET && *n <= u64::from(u32::MAX)).ok_or_else(|| {
                        Error::config(key, format!("must be an integer between {MIN_TOKEN_BUDGET} and {}", u32::MAX))
                    })?;
                    config.default_token_budget = n as u32;
                }
                "storage" => {
                    config.storage = v.as_str().and_then(Storage::parse).ok_or_else(|| {
                        Error::config(key, format!("must be one of {:?}", Storage::NAMES))
                    })?;
                }
                "postgresUrl" => match v {
                    // The value is never echoed: it holds the password.
                    Value::String(s) if s.starts_with("postgres://") || s.starts_with("postgresql://") => {}
                    Value::Null => {}
                    _ => return Err(Error::config(key, "must be a connection URL starting with postgres:// or postgresql://")),
                },
                "postgresSchema" => match v {
                    Value::String(s) if is_schema_name(s) => config.postgres_schema = s.clone(),
                    _ => {
                        return Err(Error::config(
                            key,
                            "must be a schema name: lower-case letters, digits and _, not starting with a digit, at most 63 characters",
                        ))
                    }
                },
                "durability" => {
                    config.durability = v.as_str().and_then(Durability::parse).ok_or_else(|| {
                        Error::config(key, format!("must be one of {:?}", Durability::NAMES))
                    })?;
                }
                "storageThread" => {
                    config.storage_thread = v.as_str().and_then(StorageThread::parse).ok_or_else(|| {
                        Error::config(key, format!("must be one of {:?}", StorageThread::NAMES))
                    })?;
                }
                "lockTimeoutMs" => {
                    let n = v.as_u64().filter(|n| *n <= 3_600_000).ok_or_else(|| {
                        Error::config(key, "must be an integer number of milliseconds between 0 and 3600000")
                    })?;
                    config.lock_timeout_ms = n as u32;
                }
                "summaryTimeoutMs" => {
                    let n = v.as_u64().filter(|n| (1_000..=3_600_000).contains(n)).ok_or_else(|| {
                        Error::config(key, "must be an integer number of milliseconds between 1000 and 3600000")
                    })?;
                    config.summary_timeout_ms = n as u32;
                }
                "summaryTurnWaitMs" => {
                    let n = v.as_u64().filter(|n| *n <= 3_600_000).ok_or_else(|| {
                        Error::config(key, "must be an integer number of milliseconds between 0 and 3600000")
                    })?;
                    config.summary_turn_wait_ms = n as u32;
                }
                "summaryCatchUpTurns" => {
                    let n = v.as_u64().filter(|n| *n <= 1_000).ok_or_else(|| {
                        Error::config(key, "must be an integer number of turns between 0 (never) and 1000")
                    })?;
                    config.summary_catch_up_turns = n as u32;
                }
                "summarySuccessor" => {
                    config.summary_successor = v.as_bool().ok_or_else(|| Error::config(key, "must be true or false"))?;
                }
                "semanticRecall" => {
                    config.semantic_recall = v.as_bool().ok_or_else(|| Error::config(key, "must be true or false"))?;
                }
                "askTimeoutMs" => {
                    let n = v.as_u64().filter(|n| (1_000..=600_000).contains(n)).ok_or_else(|| {
                        Error::config(key, "must be an integer number of milliseconds between 1000 and 600000")
                    })?;
                    config.ask_timeout_ms = n as u32;
                }
                "toolResultMaxChars" => {
                    let range = u64::from(TOOL_RESULT_MIN_CHARS)..=u64::from(TOOL_RESULT_MAX_CHARS);
                    let n = v.as_u64().filter(|n| range.contains(n)).ok_or_else(|| {
                        Error::config(
                            key,
                            format!(
                                "must be an integer number of characters between {TOOL_RESULT_MIN_CHARS} and {TOOL_RESULT_MAX_CHARS} (about half the model's context window in tokens)"
                            ),
                        )
                    })?;
                    config.tool_result_max_chars = n as u32;
                }
                "summarizer" => {
                    config.summarizer = v.as_str().and_then(SummarizerChoice::parse).ok_or_else(|| {
                        Error::config(key, format!("must be one of {:?}", SummarizerChoice::NAMES))
                    })?;
                }
                redact_custom::KEY => config.redact_patterns = redact_custom::parse(v)?,
                other => match config.compaction.apply_key(other, v)?.map_or_else(|| config.masking.apply_key(other, v), |c| Ok(Some(c)))? {
                    Some(true) => config.warnings.push(clamp_warning(&config, other, v)),
                    Some(false) => {}
                    None => {
                        return Err(Error::config(other, format!("unknown key (known keys: {})", all_keys().join(", "))));
                    }
                },
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_config_gives_defaults() {
        assert_eq!(Config::from_json(&Value::Null).unwrap(), Config::default());
        assert_eq!(Config::from_json(&json!({})).unwrap(), Config::default());
    }

    #[test]
    fn valid_values_are_taken() {
        let c = Config::from_json(&json!({"dbPath":"/tmp/x.sqlite","defaultTokenBudget":4096}))
            .unwrap();
        assert_eq!(c.db_path.as_deref(), Some("/tmp/x.sqlite"));
        assert_eq!(c.default_token_budget, 4096);
        assert_eq!(
            Config::from_json(&json!({"storage": "node:sqlite"}))
                .unwrap()
                .storage,
            Storage::NodeSqlite
        );
        let c = Config::from_json(&json!({"summarizer": "extractive", "freshTailCount": 4, "leafBudgetHeadroomFactor": 3})).unwrap();
        assert_eq!(c.summarizer, SummarizerChoice::Extractive);
        assert_eq!(c.compaction.fresh_tail_count, 4);
        assert_eq!(c.compaction.leaf_budget_headroom_factor, 1.0, "clamped");
        assert_eq!(c.warnings.len(), 1);
        assert_eq!(
            c.warnings[0],
            "config `leafBudgetHeadroomFactor`: 3 is out of range; using 1.0"
        );
    }

    #[test]
    fn every_clamp_warning_names_the_key_the_value_given_and_the_value_used() {
        let c = Config::from_json(&json!({"stubMinTokens": 5, "condensedFanout": 500, "contextThreshold": 1.5, "backoffBaseMs": 10})).unwrap();
        let mut warnings = c.warnings.clone();
        warnings.sort();
        assert_eq!(
            warnings,
            [
                "config `backoffBaseMs`: 10 is out of range; using 1000",
                "config `condensedFanout`: 500 is out of range; using 64",
                "config `contextThreshold`: 1.5 is out of range; using 1.0",
                "config `stubMinTokens`: 5 is out of range; using 64",
            ]
        );
        // Every key that can clamp says the value used (a key added later too).
        let probes = [
            json!(1e30),
            json!(1e12),
            json!(2.5),
            json!(1),
            json!(0),
            json!(1e-9),
        ];
        let mut clamped = 0;
        for key in compaction_config::KEYS.iter().chain(masking_config::KEYS) {
            for probe in &probes {
                let Ok(c) = Config::from_json(&json!({ *key: probe })) else {
                    continue;
                };
                for w in &c.warnings {
                    clamped += 1;
                    assert!(
                        w.starts_with(&format!("config `{key}`: {probe} is out of range; using ")),
                        "{w}"
                    );
                }
            }
        }
        assert!(clamped >= 12, "{clamped}");
    }

    #[test]
    fn invalid_values_name_the_key() {
        for (bad, key) in [
            (json!({"dbPath": 3}), "dbPath"),
            (json!({"dbPath": "  "}), "dbPath"),
            (json!({"defaultTokenBudget": 10}), "defaultTokenBudget"),
            (json!({"defaultTokenBudget": 1.5e3}), "defaultTokenBudget"),
            (json!({"contextTreshold": 0.5}), "contextTreshold"),
            (json!({"storage": "postgresql"}), "storage"),
            (json!({"postgresUrl": "db.example:5432"}), "postgresUrl"),
            (json!({"postgresUrl": 5432}), "postgresUrl"),
            (json!({"postgresSchema": "Store"}), "postgresSchema"),
            (
                json!({"postgresSchema": "lcm; DROP TABLE x"}),
                "postgresSchema",
            ),
            (json!({"postgresSchema": "1st"}), "postgresSchema"),
            (json!({"durability": "paranoid"}), "durability"),
            (json!({"storageThread": "background"}), "storageThread"),
            (json!({"storageThread": true}), "storageThread"),
            (json!({"lockTimeoutMs": -1}), "lockTimeoutMs"),
            (json!({"lockTimeoutMs": "30s"}), "lockTimeoutMs"),
            (json!({"durability": 2}), "durability"),
            (json!({"summarizer": "gpt"}), "summarizer"),
            (json!({"summaryTimeoutMs": 5}), "summaryTimeoutMs"),
            (json!({"summaryTurnWaitMs": -1}), "summaryTurnWaitMs"),
            (json!({"summaryTurnWaitMs": 0.5}), "summaryTurnWaitMs"),
            (json!({"summaryCatchUpTurns": 1001}), "summaryCatchUpTurns"),
            (
                json!({"summaryCatchUpTurns": "often"}),
                "summaryCatchUpTurns",
            ),
            (json!({"summarySuccessor": "yes"}), "summarySuccessor"),
            (json!({"askTimeoutMs": 999}), "askTimeoutMs"),
            (json!({"askTimeoutMs": "10s"}), "askTimeoutMs"),
            (json!({"toolResultMaxChars": 1499}), "toolResultMaxChars"),
            (json!({"toolResultMaxChars": "4k"}), "toolResultMaxChars"),
            (json!({"toolResultMaxChars": 200_001}), "toolResultMaxChars"),
            (json!({"freshTailCount": "many"}), "freshTailCount"),
        ] {
            let err = Config::from_json(&bad).unwrap_err();
            assert!(err.to_string().contains(&format!("`{key}`")), "{err}");
        }
        assert!(Config::from_json(&json!([1])).is_err());
    }

    #[test]
    fn tool_result_max_chars_defaults_to_what_an_8k_window_takes_and_accepts_its_bounds() {
        assert_eq!(Config::default().tool_result_max_chars, 3_500);
        for n in [TOOL_RESULT_MIN_CHARS, 60_000, TOOL_RESULT_MAX_CHARS] {
            let c = Config::from_json(&json!({ "toolResultMaxChars": n })).unwrap();
            assert_eq!(c.tool_result_max_chars, n);
        }
    }

    #[test]
    fn redact_patterns_are_added_and_a_bad_one_is_rejected_with_its_index() {
        assert!(Config::default().redact_patterns.is_empty());
        let c = Config::from_json(&json!({"redactPatterns": ["itk_[a-z0-9]{32}", {"name": "acme", "pattern": "acme_[0-9]+"}]})).unwrap();
        assert_eq!(c.redact_patterns.len(), 2);
        assert_eq!(c.redact_patterns[1].name, "acme");
        let err = Config::from_json(&json!({"redactPatterns": ["ok+", "(unclosed"]}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`redactPatterns`: entry 1:"), "{err}");
    }

    #[test]
    fn slow_summarizer_keys_default_to_a_one_second_turn_wait_and_a_catch_up_every_four_turns() {
        let c = Config::default();
        assert_eq!(
            (c.summary_turn_wait_ms, c.summary_catch_up_turns),
            (1_000, 4)
        );
        let c =
            Config::from_json(&json!({"summaryTurnWaitMs": 0, "summaryCatchUpTurns": 0})).unwrap();
        assert_eq!((c.summary_turn_wait_ms, c.summary_catch_up_turns), (0, 0));
        assert!(Config::default().summary_successor);
        assert!(
            !Config::from_json(&json!({"summarySuccessor": false}))
                .unwrap()
                .summary_successor
        );
    }

    #[test]
    fn postgres_storage_takes_a_url_and_a_schema_and_never_echoes_the_url() {
        let c = Config::from_json(&json!({"storage": "postgres", "postgresUrl": "postgres://u:pw@h:5432/db", "postgresSchema": "gw_1"})).unwrap();
        assert_eq!(
            (c.storage, c.postgres_schema.as_str()),
            (Storage::Postgres, "gw_1")
        );
        assert_eq!(Config::default().postgres_schema, "lossless_wasm");
        assert!(!format!("{c:?}").contains("pw"), "the password is not kept");
        let err = Config::from_json(&json!({"postgresUrl": "pg://u:s3cret@h/db"}))
            .unwrap_err()
            .to_string();
        assert!(!err.contains("s3cret"), "{err}");
    }

    #[test]
    fn storage_thread_defaults_to_a_worker_and_takes_both_values() {
        assert_eq!(Config::default().storage_thread, StorageThread::Worker);
        assert_eq!(
            Config::from_json(&json!({"storageThread": "main"}))
                .unwrap()
                .storage_thread,
            StorageThread::Main
        );
        assert_eq!(
            Config::from_json(&json!({"storageThread": "worker"}))
                .unwrap()
                .storage_thread,
            StorageThread::Worker
        );
    }

    #[test]
    fn durability_defaults_to_normal_and_takes_both_values() {
        assert_eq!(Config::default().durability, Durability::Normal);
        assert_eq!(
            Config::from_json(&json!({})).unwrap().durability,
            Durability::Normal
        );
        assert_eq!(
            Config::from_json(&json!({"durability": "normal"}))
                .unwrap()
                .durability,
            Durability::Normal
        );
        assert_eq!(
            Config::from_json(&json!({"durability": "full"}))
                .unwrap()
                .durability,
            Durability::Full
        );
    }

    #[test]
    fn invalid_durability_names_the_key_and_the_allowed_values() {
        for bad in [
            json!("FULL"),
            json!("off"),
            json!(true),
            json!(1),
            Value::Null,
        ] {
            let err = Config::from_json(&json!({ "durability": bad }))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("`durability`") && err.contains(r#"["normal", "full"]"#),
                "{err}"
            );
        }
    }
}
