//! Behaviour of the redactor as a whole: each class is found in the context it is usually
//! written in (true positives), and the texts that merely look like credentials survive
//! unchanged (false positives). Fake secrets are generated, so no real-looking key is spelled
//! out in the source and every run uses the same ones.

use super::*;
use serde_json::json;

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const HEX: &[u8] = b"0123456789abcdef";
const UPPER_NUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// `len` characters of `alphabet`, deterministic in `seed`.
pub(super) fn fake(alphabet: &[u8], len: usize, seed: u64) -> String {
    let mut state = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            alphabet[((state >> 33) % alphabet.len() as u64) as usize] as char
        })
        .collect()
}

fn b64(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn b64url(bytes: &[u8]) -> String {
    b64(bytes)
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

fn redactor() -> Redactor {
    Redactor::builtin().unwrap()
}

/// (class, text around the secret, the secret) for every built-in class.
fn planted() -> Vec<(&'static str, String, String)> {
    let pem_body = (0..6)
        .map(|i| fake(B64, 64, 100 + i))
        .collect::<Vec<_>>()
        .join("\n");
    let pem = format!("-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----");
    let jwt = format!(
        "{}.{}.{}",
        b64url(br#"{"alg":"HS256","typ":"JWT"}"#),
        b64url(br#"{"sub":"1234567890","name":"Ada"}"#),
        fake(URLSAFE, 43, 7)
    );
    let discord = format!(
        "{}.{}.{}",
        b64url(b"412345678901234567"),
        fake(URLSAFE, 6, 8),
        fake(URLSAFE, 38, 9)
    );
    let aws_secret = fake(B64, 40, 10);
    let v = |s: &str| s.to_owned();
    vec![
        ("aws-access-key-id", format!("aws_access_key_id = AKIA{}", fake(UPPER_NUM, 16, 1)), format!("AKIA{}", fake(UPPER_NUM, 16, 1))),
        ("aws-secret-key", format!("aws_secret_access_key = {aws_secret}"), aws_secret.clone()),
        ("aws-secret-key", format!("{{\"AccessKeyId\": \"ASIA{}\", \"SecretAccessKey\": \"{aws_secret}\"}}", fake(UPPER_NUM, 16, 2)), aws_secret.clone()),
        ("gcp-api-key", format!("https://maps.googleapis.com/x?key=AIza{}", fake(URLSAFE, 35, 3)), format!("AIza{}", fake(URLSAFE, 35, 3))),
        ("gcp-oauth-secret", format!("client_secret: GOCSPX-{}", fake(URLSAFE, 28, 4)), format!("GOCSPX-{}", fake(URLSAFE, 28, 4))),
        ("gcp-access-token", format!("token ya29.{}", fake(URLSAFE, 120, 5)), format!("ya29.{}", fake(URLSAFE, 120, 5))),
        ("private-key", format!("cat id_rsa\n{pem}\n$ "), pem.clone()),
        ("private-key", format!("{{\"private_key\": \"{}\"}}", pem.replace('\n', "\\n").replace("RSA ", "")), pem.replace('\n', "\\n").replace("RSA ", "")),
        ("azure-storage-key", format!("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={}==;EndpointSuffix=core.windows.net", fake(B64, 86, 11)), format!("{}==", fake(B64, 86, 11))),
        ("azure-sas-signature", format!("https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig={}%3D", fake(ALNUM, 43, 12)), format!("{}%3D", fake(ALNUM, 43, 12))),
        ("azure-client-secret", format!("secret value: abc8Q~{}", fake(URLSAFE, 34, 13)), format!("abc8Q~{}", fake(URLSAFE, 34, 13))),
        ("github-token", format!("git remote -v\norigin https://x-access-token:ghp_{}@github.com/o/r.git (fetch)", fake(ALNUM, 36, 14)), format!("ghp_{}", fake(ALNUM, 36, 14))),
        ("github-token", format!("GH_TOKEN=github_pat_{}", fake(ALNUM, 82, 15)), format!("github_pat_{}", fake(ALNUM, 82, 15))),
        ("gitlab-token", format!("https://oauth2:glpat-{}@gitlab.com/g/p.git", fake(URLSAFE, 20, 16)), format!("glpat-{}", fake(URLSAFE, 20, 16))),
        ("npm-token", format!("//registry.npmjs.org/:_authToken=npm_{}", fake(ALNUM, 36, 17)), format!("npm_{}", fake(ALNUM, 36, 17))),
        ("pypi-token", format!("password = pypi-AgEIcHlwaS5vcmc{}", fake(URLSAFE, 70, 18)), format!("pypi-AgEIcHlwaS5vcmc{}", fake(URLSAFE, 70, 18))),
        ("anthropic-api-key", format!("ANTHROPIC_API_KEY=sk-ant-api03-{}AA", fake(URLSAFE, 93, 19)), format!("sk-ant-api03-{}AA", fake(URLSAFE, 93, 19))),
        ("openai-api-key", format!("client = OpenAI(api_key=\"sk-proj-{}\")", fake(URLSAFE, 120, 20)), format!("sk-proj-{}", fake(URLSAFE, 120, 20))),
        ("openai-api-key", format!("key: sk-{}", fake(ALNUM, 48, 21)), format!("sk-{}", fake(ALNUM, 48, 21))),
        ("huggingface-token", format!("huggingface-cli login --token hf_{}", fake(ALNUM, 34, 22)), format!("hf_{}", fake(ALNUM, 34, 22))),
        ("groq-api-key", format!("GROQ=gsk_{}", fake(ALNUM, 52, 23)), format!("gsk_{}", fake(ALNUM, 52, 23))),
        ("slack-token", format!("SLACK_BOT=xoxb-{}-{}-{}", fake(b"0123456789", 12, 24), fake(b"0123456789", 13, 25), fake(ALNUM, 24, 26)), format!("xoxb-{}-{}-{}", fake(b"0123456789", 12, 24), fake(b"0123456789", 13, 25), fake(ALNUM, 24, 26))),
        ("slack-webhook", format!("curl -X POST https://hooks.slack.com/services/T{}/B{}/{}", fake(UPPER_NUM, 8, 27), fake(UPPER_NUM, 8, 28), fake(ALNUM, 24, 29)), format!("T{}/B{}/{}", fake(UPPER_NUM, 8, 27), fake(UPPER_NUM, 8, 28), fake(ALNUM, 24, 29))),
        ("discord-webhook", format!("https://discord.com/api/webhooks/112233445566778899/{}", fake(URLSAFE, 68, 30)), fake(URLSAFE, 68, 30)),
        ("telegram-bot-token", format!("https://api.telegram.org/bot{}:AA{}/sendMessage", fake(b"0123456789", 10, 31), fake(URLSAFE, 33, 32)), format!("{}:AA{}", fake(b"0123456789", 10, 31), fake(URLSAFE, 33, 32))),
        ("discord-bot-token", format!("client.login('{discord}')"), discord.clone()),
        ("stripe-key", format!("Stripe.api_key = 'sk_live_{}'", fake(ALNUM, 24, 33)), format!("sk_live_{}", fake(ALNUM, 24, 33))),
        ("sendgrid-api-key", format!("SENDGRID: SG.{}.{}", fake(URLSAFE, 22, 34), fake(URLSAFE, 43, 35)), format!("SG.{}.{}", fake(URLSAFE, 22, 34), fake(URLSAFE, 43, 35))),
        ("twilio-api-key", format!("twilio api key SK{}", fake(HEX, 32, 36)), format!("SK{}", fake(HEX, 32, 36))),
        ("jwt", format!("cookie session={jwt}; Path=/"), jwt.clone()),
        ("url-password", v("DATABASE_URL=postgres://app:Sup3r-S3cret@db.internal:5432/app"), v("Sup3r-S3cret")),
        ("authorization-header", format!("curl -H \"Authorization: Bearer {}\" https://api.example.com", fake(ALNUM, 40, 37)), fake(ALNUM, 40, 37)),
        ("authorization-header", format!("x-api-key: {}", fake(ALNUM, 32, 38)), fake(ALNUM, 32, 38)),
        ("secret-value", v("export DB_PASSWORD=correct-horse-battery"), v("correct-horse-battery")),
        ("secret-value", format!("  webhook_secret: {}", fake(ALNUM, 24, 39)), fake(ALNUM, 24, 39)),
        ("password-argument", v("mysql -u root -pS3cretPass! -h db"), v("S3cretPass!")),
        ("password-argument", v("docker login -u bot --password 'Tr0ub4dor&3' registry.example.com"), v("Tr0ub4dor&3")),
    ]
}

#[test]
fn every_built_in_pattern_compiles() {
    assert!(Redactor::builtin().is_ok());
    assert!(Redactor::builtin_classes().len() >= 40);
}

#[test]
fn each_class_is_replaced_by_its_typed_placeholder_in_context() {
    let r = redactor();
    for (class, text, secret) in planted() {
        assert!(text.contains(&secret), "the fixture plants {class}");
        let out = redact(&text, &r);
        assert_eq!(
            out.counts.get(class),
            1,
            "{class} found once in {text:?} -> {:?} {:?}",
            out.text,
            out.counts
        );
        assert!(
            !out.text.contains(&secret),
            "{class}: the secret is gone from {:?}",
            out.text
        );
        assert!(
            out.text.contains(&placeholder(class)),
            "{class}: {:?}",
            out.text
        );
    }
}

#[test]
fn url_passwords_keep_scheme_user_and_host() {
    let out =
        redactor().redact("mongodb+srv://admin:hunter22@cluster0.example.net/db?retryWrites=true");
    assert_eq!(
        out.text,
        "mongodb+srv://admin:[credential: url-password]@cluster0.example.net/db?retryWrites=true"
    );
}

#[test]
fn assignments_keep_the_key_and_lose_the_value() {
    let out = redactor().redact("API_SECRET=\"Zq8-wE3rT6yU\"\nDEBUG=true\n  password: 'p4ss w0rd'");
    assert_eq!(out.text, "API_SECRET=\"[credential: secret-value]\"\nDEBUG=true\n  password: '[credential: secret-value]'");
    assert_eq!(out.counts.get("secret-value"), 2);
}

#[test]
fn a_private_key_block_is_replaced_whole_and_the_text_around_it_kept() {
    let body = fake(B64, 64, 1);
    let text = format!("before\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\nafter");
    assert_eq!(
        redactor().redact(&text).text,
        "before\n[credential: private-key]\nafter"
    );
    let cut = format!("head -c 200 key.pem\n-----BEGIN PRIVATE KEY-----\n{body}");
    assert_eq!(
        redactor().redact(&cut).text,
        "head -c 200 key.pem\n[credential: private-key]",
        "a block cut short is still removed"
    );
}

#[test]
fn a_token_inside_a_url_or_header_is_reported_under_its_own_class() {
    let token = format!("ghs_{}", fake(ALNUM, 36, 3));
    let out = redactor().redact(&format!(
        "https://x-access-token:{token}@github.com/o/r and Authorization: token {token}"
    ));
    assert_eq!(out.counts.get("github-token"), 2, "{:?}", out.counts);
    assert_eq!(out.counts.total(), 2);
}

#[test]
fn a_token_right_after_an_escaped_newline_is_found_and_the_escape_kept() {
    let token = format!("ghp_{}", fake(ALNUM, 36, 8));
    let out = redactor().redact(&format!(r#"{{"note": "rotate it:\n{token}\tnow"}}"#));
    assert_eq!(
        out.text,
        r#"{"note": "rotate it:\n[credential: github-token]\tnow"}"#
    );
}

#[test]
fn redaction_is_idempotent() {
    let r = redactor();
    for (_, text, _) in planted() {
        let once = r.redact(&text).text;
        let twice = r.redact(&once);
        assert_eq!(twice.text, once);
        assert!(
            twice.counts.is_empty(),
            "placeholders are never redacted again: {:?}",
            twice.counts
        );
    }
}

#[test]
fn base64_encoded_credentials_in_a_kubernetes_secret_are_found() {
    let url = b64(b"postgres://app:Zq8wE3rT6yU@db:5432/app");
    let key = b64(format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        fake(B64, 64, 4)
    )
    .as_bytes());
    let text = format!(
        "apiVersion: v1\nkind: Secret\ndata:\n  url: {url}\n  tls.key: {key}\n  host: {}\n",
        b64(b"db.internal")
    );
    let out = redactor().redact(&text);
    assert!(
        !out.text.contains(&url) && !out.text.contains(&key),
        "{}",
        out.text
    );
    assert_eq!(
        (
            out.counts.get("url-password"),
            out.counts.get("private-key")
        ),
        (1, 1),
        "{:?}",
        out.counts
    );
    assert!(
        out.text.contains(&b64(b"db.internal")),
        "a value holding no credential stays"
    );
}

#[test]
fn extra_patterns_add_classes_and_may_replace_only_a_named_group() {
    let custom = custom::parse(&json!([
        {"name": "acme-token", "pattern": "acme_[a-z0-9]{24}", "keywords": ["acme_"]},
        {"name": "ticket-secret", "pattern": "ticket=(?P<secret>[A-Z]{10})"},
    ]))
    .unwrap();
    let r = Redactor::new(&custom).unwrap();
    let out = r.redact(&format!(
        "use acme_{} for ticket=ABCDEFGHIJ",
        fake(b"abcdefghijklmnopqrstuvwxyz0123456789", 24, 5)
    ));
    assert_eq!(
        out.text,
        "use [credential: acme-token] for ticket=[credential: ticket-secret]"
    );
}

#[test]
fn json_values_under_secret_keys_are_replaced_and_other_strings_redacted() {
    let token = format!("ghp_{}", fake(ALNUM, 36, 6));
    let mut value = json!({"role": "assistant", "content": [{"type": "toolCall", "name": "http", "arguments": {"url": "https://x", "api_key": "Qm9vb2xlYW4x", "note": format!("use {token}")}}]});
    let counts = redactor().redact_json(&mut value);
    let args = &value["content"][0]["arguments"];
    assert_eq!(args["api_key"], "[credential: secret-value]");
    assert_eq!(args["note"], "use [credential: github-token]");
    assert_eq!(args["url"], "https://x");
    assert_eq!(
        (counts.get("secret-value"), counts.get("github-token")),
        (1, 1)
    );
}

/// Texts that look like credentials and are not: they must come out unchanged.
pub(super) fn must_survive() -> Vec<String> {
    let mut out: Vec<String> = [
        "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39\nMerge: 1a2b3c4 5d6e7f8",
        "git log --oneline\nbcda3e9 docs/benchmarks.md: the fourth look's full run",
        "request id 123e4567-e89b-12d3-a456-426614174000 and f47ac10b-58cc-4372-a567-0e02b2c3d479",
        "\"integrity\": \"sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUR1xmLo0dWz7CZ5Dw==\"",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "checksum = \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"",
        "md5 d41d8cd98f00b204e9800998ecf8427e  file.txt",
        "![chart](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==)",
        "/home/user/projects/lossless-wasm/src/core/compaction/escalation.rs:42:17",
        "C:\\Users\\dev\\AppData\\Local\\Temp\\build-output-1234567890abcdef.log",
        "let token = tokens.next().ok_or_else(|| Error::input(\"token\", \"missing\"))?;",
        "fn estimate_tokens(text: &str) -> u32 { let max_tokens = 1200; }",
        "pub struct Config { pub api_key: Option<String>, pub password: SecretString }",
        "interface Login { username: string; password: string; token?: string }",
        "const secret = process.env.JWT_SECRET;\nconst apiKey = config.get('apiKey');",
        "password = getpass.getpass('Password: ')\ntoken = os.environ['GITHUB_TOKEN']",
        "export OPENAI_API_KEY=$OPENAI_API_KEY\nexport GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
        "Authorization: Bearer $TOKEN\nAuthorization: Bearer <your-token>\nAuthorization: Bearer YOUR_API_KEY",
        "TypeScriptCompilerOptionsWithStrictNullChecks and AbstractSingletonProxyFactoryBeanImpl",
        "use crate::core::compaction::ledger::Ledger; // tokenizer_config.json eos_token: \"</s>\"",
        "{\"max_tokens\": 4096, \"next_page_token\": \"CiAKGjBpNDd2Nmp2Zml6cTdvMHpyMTFi\", \"token_type\": \"bearer\"}",
        "https://github.com/rust-lang/regex/blob/master/regex-lite/src/lib.rs#L42",
        "git@github.com:openclaw/lossless-wasm.git and ssh://git@github.com:22/o/r.git",
        "docker pull registry.example.com:5000/team/image@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "https://example.com:8443/path@v2/resource",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE1AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@host",
        "-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAKHHIG...\n-----END CERTIFICATE-----",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
        "The task-management-service-for-users-v2 and risk-assessment-2024-q3 are done.",
        "disk-usage-report-2024-01-15-final-version-3 was generated",
        "Enter your password: \nPassword for 'https://github.com': ",
        "If the password is wrong, reset it. The token expired yesterday.",
        "| key | type | description |\n| password | string | the user's password |",
        "password_hash: \"$2b$12$KIXQJQ9Zx1r5uGq0b8nQeO\" and public_key: \"MFkwEwYHKoZI\"",
        "PASSWORD_MIN_LENGTH=12\nTOKEN_TTL_SECONDS=3600\nSECRET_NAME=prod/db\nAPI_KEY_HEADER=x-api-key",
        "aws s3 ls s3://my-bucket/2024/01/ --region eu-west-1 --profile dev",
        "arn:aws:iam::123456789012:role/service-role/lambda-exec-role",
        "aws_access_key_id = <redacted>\naws_secret_access_key = ****************************************",
        "user_id: 01HF3Z8Q7W6V5X4Y3T2S1R0P9N and ulid 01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "base64 -d <<< SGVsbG8sIFdvcmxkIQ== prints Hello, World!",
        "ok 1 - assemble keeps the fresh tail (12.345ms)\n# tests 42\n# pass 42",
        "error[E0308]: mismatched types\n --> src/engine/compaction/pass.rs:166:52",
        "npm WARN deprecated inflight@1.0.6: This module is not supported",
        "The eyJ prefix marks a JWT; sk- marks an OpenAI key; ghp_ marks a GitHub token.",
        "resolved \"https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#679591c564c3bffaae8454cf0b3df370c3d6911c\"",
        "Set-Cookie: theme=dark; Path=/; SameSite=Lax",
        "grep -rn \"password\" src/ | wc -l\n42",
        "kubectl create secret generic db --from-literal=password=$DB_PASSWORD",
        "secretKeyRef:\n    name: db-credentials\n    key: password",
        "token: Token::Ident(name), secret: Secret::new(bytes), key: Key::from(raw)",
        "AbstractTokenProviderFactory.getInstance().createAccessTokenForUserWithScopes(scopes)",
        "headers['Authorization'] = 'Bearer ' + token",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    // Long hex digests, one per common length.
    for (i, len) in [32usize, 40, 56, 64, 96, 128].iter().enumerate() {
        out.push(format!("digest {}", fake(HEX, *len, 900 + i as u64)));
    }
    out
}

#[test]
fn texts_that_only_look_like_credentials_survive_unchanged() {
    let r = redactor();
    let mut redacted = Vec::new();
    let survivors = must_survive();
    assert!(survivors.len() >= 50);
    for text in &survivors {
        let out = r.redact(text);
        if out.text != *text {
            redacted.push(format!("{text:?} -> {:?}", out.text));
        }
    }
    assert!(
        redacted.is_empty(),
        "false positives:\n{}",
        redacted.join("\n")
    );
}

#[test]
fn arbitrary_text_never_panics_and_every_replacement_is_counted() {
    let fragments = [
        "password=",
        "é",
        "\"",
        "token: ",
        "sk-",
        "://",
        ":",
        "@",
        "AKIA",
        "eyJ",
        "-----BEGIN PRIVATE KEY-----",
        "\n",
        "🎉",
        "=",
        "ghp_",
        "静默",
        "\\\"",
        "api_key",
        " ",
        "'",
        "`",
        "$",
        "{",
        "Bearer ",
        "Authorization: ",
        "LS0tLS1CRUdJTi",
        "8Q~",
        ":AA",
        ".",
        "==",
        "xoxb-",
    ];
    let r = redactor();
    let mut state = 99u64;
    for round in 0..3_000 {
        let mut text = String::new();
        for _ in 0..(round % 40) {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let pick = (state >> 33) as usize;
            if pick % 3 == 0 {
                text.push_str(&fake(B64, pick % 50, state));
            } else {
                text.push_str(fragments[pick % fragments.len()]);
            }
        }
        let out = r.redact(&text);
        let placed =
            out.text.matches("[credential: ").count() - text.matches("[credential: ").count();
        assert_eq!(
            placed as u32,
            out.counts.total(),
            "{text:?} -> {:?}",
            out.text
        );
    }
}

#[test]
fn the_documentation_lists_every_built_in_class() {
    let doc = include_str!("../../../docs/summarization.md");
    let missing: Vec<&str> = Redactor::builtin_classes()
        .into_iter()
        .filter(|c| !doc.contains(&format!("`{c}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/summarization.md does not list {missing:?}"
    );
}

#[test]
fn a_long_line_with_many_keys_is_handled_in_one_pass() {
    // 20,000 keys on one line: quadratic scanning would take minutes in a debug build.
    let line: String = (0..20_000)
        .map(|i| format!("{{\"token_{i}\":\"v{i}\",\"api_key\":\"Zx9{i:05}QwErTy\"}},"))
        .collect();
    let out = redactor().redact(&line);
    assert_eq!(out.counts.get("secret-value"), 20_000);
}
