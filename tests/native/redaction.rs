//! Credentials never leave for the summarizer: a session whose tool results, tool calls and
//! prompts carry the credentials planted in `tests/fixtures/credentials/` (see its
//! `manifest.json`) is compacted through the engine with summarizers that record what they are
//! sent. No planted credential may appear in any prompt or any stored summary, and every one
//! must still be in the local store and returned by `lcm_expand` to its own agent (and to no
//! other agent). The cases that go through a store (`redaction_cases/cases.rs`) run here on native
//! SQLite and in redaction_pg.rs on PostgreSQL; the redactor's own cases, below, open no store.

sqlite_store!();

include!("../redaction_cases/cases.rs");

use lossless_wasm::core::redact::Redactor;

// The redactor's own cases: they open no store, so they run here only.

#[test]
fn the_corpus_plants_at_least_54_credentials_of_14_classes_and_the_redactor_removes_each() {
    let m = manifest();
    let classes: BTreeSet<&str> = m.planted.iter().map(|p| p.class.as_str()).collect();
    assert!(
        m.planted.len() >= 54 && classes.len() >= 14,
        "{} planted, {} classes",
        m.planted.len(),
        classes.len()
    );
    let r = Redactor::builtin().unwrap();
    for msg in &m.messages {
        let text = fixture(&msg.file);
        let out = r.redact(&text);
        let command = msg.command.as_deref().map(|c| r.redact(c));
        for p in m.planted.iter().filter(|p| p.file == msg.file) {
            let (before, after, counts) = match p.place.as_str() {
                "command" => (
                    msg.command.clone().unwrap_or_default(),
                    command.as_ref().unwrap().text.clone(),
                    command.as_ref().unwrap().counts.clone(),
                ),
                _ => (text.clone(), out.text.clone(), out.counts.clone()),
            };
            assert!(before.contains(&p.secret), "{}: planted", p.file);
            assert!(
                !after.contains(&p.secret),
                "{}: a {} survived:\n{after}",
                p.file,
                p.class
            );
            assert!(
                counts.get(&p.class) >= 1,
                "{}: reported as {} ({:?})",
                p.file,
                p.class,
                counts
            );
        }
    }
}

/// Texts that hold no credential: the bundled demo transcript, the messages the benchmarks and
/// end-to-end tests generate, the lockfiles (integrity hashes, checksums) and a hand-written
/// coding session full of look-alikes (hashes, UUIDs, images, code about tokens and passwords).
fn clean_corpus() -> Vec<(String, Value)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<(String, Value)> = Vec::new();
    let demo: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("demo/transcript.json")).unwrap())
            .unwrap();
    for (i, m) in demo["messages"].as_array().unwrap().iter().enumerate() {
        out.push((format!("demo/transcript.json#{i}"), m.clone()));
    }
    // benches/engine.rs, bench/wasm-bench.mjs and bench/host-path's "short" shape.
    for i in 0..200 {
        out.push((format!("bench message {i}"), json!({"role": "user", "content": format!("user message {i}: please look at file src/module_{}.rs and fix the failing test", i % 97)})));
        out.push((format!("bench reply {i}"), json!({"role": "assistant", "content": [{"type": "text", "text": format!("Assistant reply {i}. I read the file, changed two lines and the test passes now.")}]})));
    }
    // bench/host-path's "mixed" shape: sentences from its vocabulary.
    let words: Vec<&str> = "the file test module function error build compile cache budget summary index query request response token window context message session agent tool result value config path line change patch review commit branch merge parse render store search expand describe".split(' ').collect();
    let mut state = 7u64;
    for i in 0..300 {
        let sentence: Vec<&str> = (0..40)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                words[((state >> 33) % words.len() as u64) as usize]
            })
            .collect();
        out.push((format!("host-path mixed {i}"), json!({"role": "toolResult", "toolCallId": format!("call_{i}"), "toolName": "read", "content": [{"type": "text", "text": format!("{}.", sentence.join(" "))}], "isError": false})));
    }
    // tests/e2e's longText and tests/js/host-simulator's replies.
    for i in 0..50 {
        let mut s = format!("Compaction e2e turn {i}: please keep these logbook notes.");
        for k in 1..20 {
            s.push_str(&format!(
                " Note {k} for turn {i}: the keeper recorded wind, tide and {} passing ships.",
                k * 3
            ));
        }
        out.push((
            format!("e2e longText {i}"),
            json!({"role": "user", "content": s}),
        ));
        out.push((format!("host-simulator reply {i}"), json!({"role": "assistant", "content": format!("Reply to turn {i}: {}", "the work goes on. ".repeat(20))})));
    }
    for file in ["Cargo.lock", "package-lock.json"] {
        out.push((file.to_owned(), json!({"role": "toolResult", "toolCallId": "c", "toolName": "read", "content": [{"type": "text", "text": std::fs::read_to_string(root.join(file)).unwrap()}], "isError": false})));
    }
    let session =
        std::fs::read_to_string(root.join("tests/fixtures/no-credentials/coding-session.txt"))
            .unwrap();
    for (i, chunk) in session.split("\n=====\n").enumerate() {
        out.push((format!("coding-session.txt#{i}"), json!({"role": "toolResult", "toolCallId": "c", "toolName": "bash", "content": [{"type": "text", "text": chunk}], "isError": false})));
    }
    out
}

/// Redactions measured on the clean corpus when the patterns were written (0 is the goal).
const MEASURED_FALSE_POSITIVES: u32 = 0;

#[test]
fn texts_without_credentials_are_sent_unchanged() {
    let r = Redactor::builtin().unwrap();
    let corpus = clean_corpus();
    assert!(
        corpus.len() > 1_400,
        "the corpus was read: {} texts",
        corpus.len()
    );
    let mut hits = Vec::new();
    let mut total = 0;
    for (name, message) in &corpus {
        let mut value = message.clone();
        let counts = r.redact_json(&mut value);
        let text = lossless_wasm::core::message::text_of_raw_json(&value.to_string()).unwrap();
        let text_counts = r.redact(&text).counts;
        total += counts.total() + text_counts.total();
        if !counts.is_empty() || !text_counts.is_empty() {
            hits.push(format!(
                "{name}: {} / {}",
                counts.describe(),
                text_counts.describe()
            ));
        }
    }
    eprintln!("false positives on {} clean texts: {total}", corpus.len());
    // `<=`, not `==`: should a pattern ever need to trade a documented false positive for
    // coverage, the constant moves with the measurement.
    #[allow(clippy::absurd_extreme_comparisons)]
    let within = total <= MEASURED_FALSE_POSITIVES;
    assert!(
        within,
        "{total} redactions in texts without credentials:\n{}",
        hits.join("\n")
    );
}

/// Credentials written the way other tools and people write them, beyond the corpus's files:
/// a second set, written after the patterns, to check they generalize.
#[test]
fn credentials_written_in_other_ways_are_found_too() {
    let r = Redactor::builtin().unwrap();
    let cases: Vec<(&str, &str)> = vec![
        ("AWS Access Key ID [None]: AKIAQ3EGRSTUVWXYZ234\nAWS Secret Access Key [None]: 9xZpQ2mW7rT4vB8nK1sD6fG3hJ5lA0cE9uY2iO4p\nDefault region name [None]: us-east-1", "9xZpQ2mW7rT4vB8nK1sD6fG3hJ5lA0cE9uY2iO4p"),
        ("AWS Access Key ID [None]: AKIAQ3EGRSTUVWXYZ234", "AKIAQ3EGRSTUVWXYZ234"),
        ("$ export AWS_SECRET_ACCESS_KEY=\"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\"", "Zq7Yt5Rw3Ep1Oi9Uy7Tr5Ew3Qa1Sd9Fg7Hj5Kl3Z"),
        ("const firebaseConfig = { apiKey: \"AIzaSyDk3l9Xq0PzM2nB4vC6xZ8aS1dF3gH5jK7\", authDomain: \"x.firebaseapp.com\" };", "AIzaSyDk3l9Xq0PzM2nB4vC6xZ8aS1dF3gH5jK7"),
        ("AZURE_CLIENT_SECRET=Fk9~Lq2.Wm4_Zx7-Pn3Rt8Vb6Yc1Hd5Js0Ga", "Fk9~Lq2.Wm4_Zx7-Pn3Rt8Vb6Yc1Hd5Js0Ga"),
        ("AccountEndpoint=https://acme.documents.azure.com:443/;AccountKey=Q2xhc3NpY2FsbHkgc3BlYWtpbmcgdGhpcyBpcyBhIGZha2Uga2V5IGZvciB0ZXN0aW5nIG9ubHkhIQ==;", "Q2xhc3NpY2FsbHkgc3BlYWtpbmcgdGhpcyBpcyBhIGZha2Uga2V5IGZvciB0ZXN0aW5nIG9ubHkhIQ=="),
        ("$ gh auth token\ngho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a"),
        ("curl --header \"PRIVATE-TOKEN: glpat-xY7zW3vU9tS1rQ5pO2nM\" https://gitlab.example.com/api/v4/projects", "glpat-xY7zW3vU9tS1rQ5pO2nM"),
        ("client = anthropic.Anthropic(api_key=\"sk-ant-api03-Xy9_Zw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zy6Xw5Vu4Ts3Rq2Po1Nm0Lk9Ji8Hg7Fe6Dc5Ba4-AA\")", "sk-ant-api03-Xy9_Zw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zy6Xw5Vu4Ts3Rq2Po1Nm0Lk9Ji8Hg7Fe6Dc5Ba4-AA"),
        ("MISTRAL_API_KEY=Qw3rTy6uIo9pAs2dFg5hJk8lZx1cVb4n", "Qw3rTy6uIo9pAs2dFg5hJk8lZx1cVb4n"),
        ("{\"models\": {\"providers\": {\"openai\": {\"apiKey\": \"sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3Ab4Cd5Ef6Gh7\"}}}}", "sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3Ab4Cd5Ef6Gh7"),
        ("genai.configure(api_key='AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q')", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
        ("SLACK_SIGNING_SECRET=8f742231b10e8888abcd99yyyzzz85a5", "8f742231b10e8888abcd99yyyzzz85a5"),
        ("app = App(token=\"xoxb-2244668800-1122334455667-AbCdEfGhIjKlMnOpQrStUvWx\")", "xoxb-2244668800-1122334455667-AbCdEfGhIjKlMnOpQrStUvWx"),
        ("updater = Updater(\"5839204716:AAF3kL9mN2pQ7rS4tU1vW8xY5zA6bC0dE3f\", use_context=True)", "5839204716:AAF3kL9mN2pQ7rS4tU1vW8xY5zA6bC0dE3f"),
        ("bot.run('MTE4NzY1NDMyMTA5ODc2NTQzMg.GaBcDe.f1G2h3I4j5K6l7M8n9O0p1Q2r3S4t5U6v7W8x9')", "MTE4NzY1NDMyMTA5ODc2NTQzMg.GaBcDe.f1G2h3I4j5K6l7M8n9O0p1Q2r3S4t5U6v7W8x9"),
        ("stripe.api_key = \"sk_test_51HqLyjWDarjtT1zdp7dcXYZ123abcDEF456ghiJKL789mnoPQR\"", "sk_test_51HqLyjWDarjtT1zdp7dcXYZ123abcDEF456ghiJKL789mnoPQR"),
        ("Cookie: access_token=eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJhYmMiLCJleHAiOjE3MDAwMDAwMDB9.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU", "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJhYmMiLCJleHAiOjE3MDAwMDAwMDB9.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU"),
        ("users:\n- name: admin\n  user:\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVBMHo=\n", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVBMHo="),
        ("  private_key: |\n    -----BEGIN EC PRIVATE KEY-----\n    MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5PtdLQZ6n8H1OoAoGCCqGSM49\n    -----END EC PRIVATE KEY-----\n", "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5PtdLQZ6n8H1OoAoGCCqGSM49"),
        ("amqp://orders:Rabb1t-Pa55@mq.internal:5672/%2f", "Rabb1t-Pa55"),
        ("redis-cli -u redis://:R3disS3cret@cache:6379 ping", "R3disS3cret"),
        ("jdbc:postgresql://db:5432/app?user=app&password=Pg-Pa55w0rd!", "Pg-Pa55w0rd!"),
        ("requests.get(url, headers={'Authorization': 'Bearer 7f3c9a1e5b2d8f4a6c0e9b3d7a1f5c2e'})", "7f3c9a1e5b2d8f4a6c0e9b3d7a1f5c2e"),
        ("http -a admin:Adm1nP4ss! GET https://api.example.com", "Adm1nP4ss!"),
        ("{\"auths\":{\"ghcr.io\":{\"auth\":\"Ym90OmdocF9hYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NQ==\"}}}", "Ym90OmdocF9hYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NQ=="),
        ("NPM_TOKEN=npm_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5 npm publish", "npm_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"),
        ("twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmcCJGE4ZjI5ZDQ3LTk1ZGQtNDE4Ny05YjYxLWM2ZWM2MjE2YzZlNQACKlszLCJmNDYxMmNhYy0wM2ZiLTQ2YTAtYWI dist/*", "pypi-AgEIcHlwaS5vcmcCJGE4ZjI5ZDQ3LTk1ZGQtNDE4Ny05YjYxLWM2ZWM2MjE2YzZlNQACKlszLCJmNDYxMmNhYy0wM2ZiLTQ2YTAtYWI"),
        ("sg = SendGridAPIClient('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')", "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"),
        ("client = Client('AC1f2e3d4c5b6a79881f2e3d4c5b6a7988', 'a1b2c3d4e5f60718293a4b5c6d7e8f90')  # twilio", "a1b2c3d4e5f60718293a4b5c6d7e8f90"),
        ("DB_PASS=\"correct horse battery staple\"", "correct horse battery staple"),
        ("password: hunter2hunter2", "hunter2hunter2"),
        ("export HF_TOKEN=hf_QwErTyUiOpAsDfGhJkLzXcVbNm1234567", "hf_QwErTyUiOpAsDfGhJkLzXcVbNm1234567"),
        ("GROQ_API_KEY=gsk_8aB7cD6eF5gH4iJ3kL2mN1oP0qR9sT8uV7wX6yZ5aB4cD3eF2gH1iJ0k", "gsk_8aB7cD6eF5gH4iJ3kL2mN1oP0qR9sT8uV7wX6yZ5aB4cD3eF2gH1iJ0k"),
        ("DEEPSEEK_API_KEY=sk-4f8a2c1e9b7d6a5f4e3d2c1b0a9f8e7d", "sk-4f8a2c1e9b7d6a5f4e3d2c1b0a9f8e7d"),
        ("$ psql \"postgresql://reporter:Rep0rt!ng2024@analytics.internal/warehouse\"", "Rep0rt!ng2024"),
        ("git push https://oauth2:ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0123456789@github.com/o/r", "ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0123456789"),
        ("wh = 'https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/aBcDeFgHiJkLmNoPqRsTuVwX'", "aBcDeFgHiJkLmNoPqRsTuVwX"),
        ("ssh-keygen output:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"),
        ("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "YWxhZGRpbjpvcGVuc2VzYW1l"),
        ("x-goog-api-key: AIzaSyB-9kL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0", "AIzaSyB-9kL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0"),
        ("\"SessionToken\": \"FwoGZXIvYXdzEJr//////////wEaDM1234567890abcdefghijKLMNOPQRSTUVWXYZ\"", "FwoGZXIvYXdzEJr//////////wEaDM1234567890abcdefghijKLMNOPQRSTUVWXYZ"),
        ("VAULT_TOKEN=hvs.CAESIJ3k9Lm2Np4Qr6St8Uv0Wx2Yz4Ab6Cd8Ef0Gh2Ij4KlGh4KHGh2cy5Q", "hvs.CAESIJ3k9Lm2Np4Qr6St8Uv0Wx2Yz4Ab6Cd8Ef0Gh2Ij4KlGh4KHGh2cy5Q"),
        ("mongodb+srv://svc_user:M0ng0Pa55@cluster0.ab1cd.mongodb.net/?retryWrites=true", "M0ng0Pa55"),
        ("[client]\nuser=root\npassword=My5qlR00t!\n", "My5qlR00t!"),
        ("spring.datasource.password=Spr1ngS3cret", "Spr1ngS3cret"),
        ("<add key=\"ApiKey\" value=\"9a8b7c6d5e4f3a2b1c0d\" />", "9a8b7c6d5e4f3a2b1c0d"),
        ("Set-Cookie: sessionid=8f14e45fceea167a5a36dedd4bea2543; HttpOnly", "8f14e45fceea167a5a36dedd4bea2543"),
    ];
    let missed: Vec<String> = cases
        .iter()
        .filter(|(text, secret)| {
            assert!(text.contains(secret));
            r.redact(text).text.contains(secret)
        })
        .map(|(text, _)| (*text).to_owned())
        .collect();
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
}
