//! The built-in credential patterns, as data: one row per way a credential is written, each
//! naming the class its placeholder carries (`[credential: <class>]`), the literal text that
//! marks where to look, how to find it and what must hold for a match to count.
//!
//! Rows are written from each provider's documented token format (prefixes, lengths,
//! alphabets), not from any test corpus. Earlier rows win where matches overlap, so specific
//! token formats come first and the context rules (URL passwords, headers, `key = value` lines)
//! last: a GitHub token inside a URL is reported as a `github-token`.
//!
//! This module must not run anything: [`super::Redactor`] compiles and applies the table.

/// How a row finds its candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finder {
    /// A regex, run only in windows around each keyword hit: from `before` bytes ahead of the
    /// keyword to `after` bytes past it, then on to the end of the token there (regex-lite is
    /// linear but slow, ~5 MB/s, so it never scans a whole prompt). `groups` name the capture
    /// groups that hold the secret, first present wins; empty means the whole match. A window
    /// without the byte `needs` (when given) is skipped without running the regex.
    Regex {
        /// The regex, in regex-lite syntax.
        regex: &'static str,
        /// Capture groups that hold the secret, first present wins; empty: the whole match.
        groups: &'static [usize],
        /// Bytes ahead of the keyword hit where the window starts.
        before: usize,
        /// Bytes past the keyword hit where the window ends (then on to the end of the token).
        after: usize,
        /// A byte every match contains; a window without it is skipped.
        needs: Option<u8>,
    },
    /// A whole token of `len` characters of `alphabet` after `prefix`, followed by `padding`,
    /// anywhere in a text that holds one of the keywords (for a secret that carries no marker
    /// of its own and sits anywhere in a text that names its service).
    TokenRun {
        /// Literal text the token starts with.
        prefix: &'static str,
        /// The characters the token is made of.
        alphabet: Alphabet,
        /// The token's length in characters, after the prefix.
        len: usize,
        /// Literal text that follows the token (such as `==`); empty for none.
        padding: &'static str,
    },
    /// `KEY=value`, `key: value`, `"key": "value"`, `key => 'value'` where the key names a
    /// secret (hand-written: the key and value checks are more than a regex can say).
    Assignment,
    /// A Discord bot token: base64 of a numeric user id, a dot, 6 characters, a dot, an HMAC.
    DiscordBotToken,
    /// A Telegram bot token: a numeric bot id, a colon, 35 characters.
    TelegramBotToken,
    /// A PEM private key block, whole: `-----BEGIN … PRIVATE KEY-----` to its `END` line (or,
    /// cut short, to the end of its base64).
    PemPrivateKey,
    /// A base64 blob (a Kubernetes secret's `data:` value, say) whose decoded text holds a
    /// credential; the blob takes the inner credential's class.
    Base64Blob,
}

/// The characters of a [`Finder::TokenRun`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alphabet {
    /// `A-Z a-z 0-9 + /`; the token is a whole run of these.
    Base64,
    /// `0-9 a-f A-F` inside a whole run of letters and digits.
    Hex,
}

/// What must hold for a candidate to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The format alone is specific enough.
    None,
    /// At least two of upper case, lower case and digits: random, not a word.
    Mixed,
    /// At least 2 digits, 2 letters, and 3 bits of entropy per character.
    Random,
    /// Not a reference or a placeholder (`$TOKEN`, `${X}`, `<token>`, `***`, `YOUR_KEY`).
    NotPlaceholder,
    /// As `NotPlaceholder`, and random-looking ([`Check::Mixed`], 8 or more characters).
    RandomValue,
    /// Not a placeholder, and not a port number (`registry:5000@sha256`).
    UrlPassword,
    /// The first part decodes to a JSON header with `alg`, `typ`, `enc` or `kid`.
    JwtHeader,
    /// The blob decodes to a PEM private key.
    Base64PrivateKey,
    /// Upper case, lower case and digits, and 4.2 bits of entropy per character: a random
    /// base64 key, not an identifier or a hex digest.
    RandomBase64,
}

/// One built-in pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pattern {
    /// The placeholder's class, e.g. `aws-secret-key`.
    pub class: &'static str,
    /// What kind of credential it is, for the documentation's table.
    pub category: &'static str,
    /// Lower-case ASCII text a match contains or starts near (matched case-insensitively).
    pub keywords: &'static [&'static str],
    /// How it finds its candidates.
    pub finder: Finder,
    /// What must hold for a candidate to count.
    pub check: Check,
}

const fn re(regex: &'static str, after: usize) -> Finder {
    Finder::Regex {
        regex,
        groups: &[],
        before: 0,
        after,
        needs: None,
    }
}

const fn re_group(
    regex: &'static str,
    groups: &'static [usize],
    before: usize,
    after: usize,
) -> Finder {
    Finder::Regex {
        regex,
        groups,
        before,
        after,
        needs: None,
    }
}

/// As [`re_group`], for a regex that cannot match in a window without `needs`.
const fn re_needs(
    regex: &'static str,
    groups: &'static [usize],
    before: usize,
    after: usize,
    needs: u8,
) -> Finder {
    Finder::Regex {
        regex,
        groups,
        before,
        after,
        needs: Some(needs),
    }
}

const CLOUD: &str = "cloud";
const VCS: &str = "version control and registries";
const LLM: &str = "LLM providers";
const CHAT: &str = "chat bots and webhooks";
const PAYMENT: &str = "payments";
const SAAS: &str = "other services";
const GENERIC: &str = "generic";

/// The built-in table, in priority order.
pub const BUILTIN: &[Pattern] = &[
    // Private keys first: their blocks contain lines any other rule might nibble at.
    Pattern {
        class: "private-key",
        category: GENERIC,
        keywords: &["-----begin"],
        finder: Finder::PemPrivateKey,
        check: Check::None,
    },
    Pattern {
        class: "private-key",
        category: GENERIC,
        keywords: &["private-lines:"],
        finder: re(
            r"Private-Lines:\s*[0-9]+(?:\r?\n|\\r?\\n)(?:[A-Za-z0-9+/=]+(?:\r?\n|\\r?\\n)?)+",
            8_000,
        ),
        check: Check::None,
    },
    Pattern {
        class: "private-key",
        category: GENERIC,
        keywords: &["ls0tls1crudjt"],
        finder: re(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}", 64),
        check: Check::Base64PrivateKey,
    },
    // Cloud providers.
    Pattern {
        class: "aws-access-key-id",
        category: CLOUD,
        keywords: &["akia", "asia", "abia", "acca"],
        finder: re(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", 24),
        check: Check::None,
    },
    Pattern {
        class: "aws-secret-key",
        category: CLOUD,
        keywords: &[
            "secret_access_key",
            "secretaccesskey",
            "secret-access-key",
            "secret access key",
            "aws_secret",
            "aws-secret",
            "awssecret",
        ],
        finder: re_group(
            r#"(?i)(?:secret[_ -]?access[_ -]?key|aws[_-]?secret(?:[_-]?key)?)(?:\s*\[[^\]\n]*\])?\\?["']?\s*(?:=>|:=|[:=])?\s*\\?["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
            &[1],
            0,
            96,
        ),
        check: Check::None,
    },
    Pattern {
        class: "gcp-api-key",
        category: CLOUD,
        keywords: &["aiza"],
        finder: re(r"\bAIza[0-9A-Za-z_-]{30,}", 48),
        check: Check::None,
    },
    Pattern {
        class: "gcp-oauth-secret",
        category: CLOUD,
        keywords: &["gocspx-"],
        finder: re(r"\bGOCSPX-[0-9A-Za-z_-]{20,}", 48),
        check: Check::None,
    },
    Pattern {
        class: "gcp-access-token",
        category: CLOUD,
        keywords: &["ya29."],
        finder: re(r"\bya29\.[0-9A-Za-z_-]{20,}", 48),
        check: Check::None,
    },
    Pattern {
        class: "gcp-refresh-token",
        category: CLOUD,
        keywords: &["1//0"],
        finder: re(r"\b1//0[0-9A-Za-z_-]{30,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "azure-storage-key",
        category: CLOUD,
        keywords: &[
            "accountkey",
            "sharedaccesskey",
            "primarykey",
            "secondarykey",
        ],
        finder: re_group(
            r"(?i)\b(?:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)\s*=\s*([A-Za-z0-9+/]{20,}={0,2})",
            &[1],
            0,
            32,
        ),
        check: Check::None,
    },
    Pattern {
        class: "azure-storage-key",
        category: CLOUD,
        keywords: &["azure", "keyname", "windows.net"],
        finder: Finder::TokenRun {
            prefix: "",
            alphabet: Alphabet::Base64,
            len: 86,
            padding: "==",
        },
        check: Check::Mixed,
    },
    Pattern {
        class: "azure-sas-signature",
        category: CLOUD,
        keywords: &["sig="],
        finder: re_group(r"[?&]sig=([A-Za-z0-9%+/=_-]{16,})", &[1], 1, 32),
        check: Check::None,
    },
    Pattern {
        class: "azure-client-secret",
        category: CLOUD,
        keywords: &[
            "0q~", "1q~", "2q~", "3q~", "4q~", "5q~", "6q~", "7q~", "8q~", "9q~",
        ],
        finder: re_group(
            r"(?:^|[^A-Za-z0-9_~.-])([A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:[^A-Za-z0-9_~.-]|$)",
            &[1],
            5,
            48,
        ),
        check: Check::None,
    },
    Pattern {
        class: "signed-url-signature",
        category: CLOUD,
        keywords: &[
            "x-amz-signature=",
            "x-goog-signature=",
            "x-amz-security-token=",
        ],
        finder: re_group(
            r"(?i)[?&](?:X-Amz-Signature|X-Goog-Signature|X-Amz-Security-Token)=([^&\s#'\x22]{16,})",
            &[1],
            1,
            48,
        ),
        check: Check::None,
    },
    // Version control and package registries.
    Pattern {
        class: "github-token",
        category: VCS,
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        finder: re(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{40,255})",
            48,
        ),
        check: Check::None,
    },
    Pattern {
        class: "gitlab-token",
        category: VCS,
        keywords: &[
            "glpat-",
            "gldt-",
            "glptt-",
            "glrt-",
            "glcbt-",
            "glft-",
            "glsoat-",
            "glimt-",
            "glagent-",
            "gloas-",
            "gr1348941",
        ],
        finder: re(
            r"\b(?:(?:glpat|gldt|glptt|glrt|glcbt|glft|glsoat|glimt|glagent|gloas)-[A-Za-z0-9_.-]{20,}|GR1348941[A-Za-z0-9_-]{20,})",
            48,
        ),
        check: Check::None,
    },
    Pattern {
        class: "bitbucket-token",
        category: VCS,
        keywords: &["atbb"],
        finder: re(r"\bATBB[A-Za-z0-9_=.-]{24,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "atlassian-token",
        category: VCS,
        keywords: &["atatt3", "atctt3"],
        finder: re(r"\bAT[AC]TT3[A-Za-z0-9_=.-]{24,}", 48),
        check: Check::None,
    },
    Pattern {
        class: "npm-token",
        category: VCS,
        keywords: &["npm_"],
        finder: re(r"\bnpm_[A-Za-z0-9]{36,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "pypi-token",
        category: VCS,
        keywords: &["pypi-ag"],
        finder: re(r"\bpypi-Ag[A-Za-z0-9_-]{50,}", 64),
        check: Check::None,
    },
    Pattern {
        class: "rubygems-token",
        category: VCS,
        keywords: &["rubygems_"],
        finder: re(r"\brubygems_[a-f0-9]{48}\b", 64),
        check: Check::None,
    },
    Pattern {
        class: "nuget-api-key",
        category: VCS,
        keywords: &["oy2"],
        finder: re(r"\boy2[a-z0-9]{43}\b", 48),
        check: Check::Random,
    },
    Pattern {
        class: "docker-hub-token",
        category: VCS,
        keywords: &["dckr_pat_", "dckr_oat_"],
        finder: re(r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}", 48),
        check: Check::None,
    },
    // LLM providers: specific prefixes before OpenAI's generic `sk-`.
    Pattern {
        class: "anthropic-api-key",
        category: LLM,
        keywords: &["sk-ant-"],
        finder: re(r"\bsk-ant-[A-Za-z0-9_-]{20,}", 48),
        check: Check::None,
    },
    Pattern {
        class: "openrouter-api-key",
        category: LLM,
        keywords: &["sk-or-"],
        finder: re(r"\bsk-or-v[0-9]+-[A-Za-z0-9]{32,}", 48),
        check: Check::None,
    },
    Pattern {
        class: "openai-api-key",
        category: LLM,
        keywords: &["sk-"],
        finder: re(
            r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}",
            48,
        ),
        check: Check::Random,
    },
    Pattern {
        class: "huggingface-token",
        category: LLM,
        keywords: &["hf_", "api_org_"],
        finder: re(r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "groq-api-key",
        category: LLM,
        keywords: &["gsk_"],
        finder: re(r"\bgsk_[A-Za-z0-9]{40,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "replicate-token",
        category: LLM,
        keywords: &["r8_"],
        finder: re(r"\br8_[A-Za-z0-9]{30,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "perplexity-api-key",
        category: LLM,
        keywords: &["pplx-"],
        finder: re(r"\bpplx-[A-Za-z0-9]{40,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "xai-api-key",
        category: LLM,
        keywords: &["xai-"],
        finder: re(r"\bxai-[A-Za-z0-9]{60,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "fireworks-api-key",
        category: LLM,
        keywords: &["fw_"],
        finder: re(r"\bfw_[A-Za-z0-9]{24,}", 48),
        check: Check::Random,
    },
    Pattern {
        class: "nvidia-api-key",
        category: LLM,
        keywords: &["nvapi-"],
        finder: re(r"\bnvapi-[A-Za-z0-9_-]{40,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "tavily-api-key",
        category: LLM,
        keywords: &["tvly-"],
        finder: re(r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "langsmith-api-key",
        category: LLM,
        keywords: &["lsv2_"],
        finder: re(r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b", 64),
        check: Check::None,
    },
    // Chat bots and webhooks.
    Pattern {
        class: "slack-token",
        category: CHAT,
        keywords: &["xox", "xapp-"],
        finder: re(
            r"\b(?:xox[abposer]-[A-Za-z0-9-]{10,}|xoxe\.xox[bp]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,})",
            48,
        ),
        check: Check::None,
    },
    Pattern {
        class: "slack-webhook",
        category: CHAT,
        keywords: &["hooks.slack.com"],
        finder: re_group(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9/_-]{20,})",
            &[1],
            0,
            48,
        ),
        check: Check::None,
    },
    Pattern {
        class: "discord-webhook",
        category: CHAT,
        keywords: &["/api/webhooks/"],
        finder: re_group(
            r"discord(?:app)?\.com/api/webhooks/[0-9]+/([A-Za-z0-9_-]{30,})",
            &[1],
            24,
            64,
        ),
        check: Check::None,
    },
    Pattern {
        class: "telegram-bot-token",
        category: CHAT,
        keywords: &[],
        finder: Finder::TelegramBotToken,
        check: Check::None,
    },
    Pattern {
        class: "telegram-bot-token",
        category: CHAT,
        keywords: &["telegram.org/bot"],
        finder: re_group(
            r"telegram\.org/(?:file/)?bot([0-9]{6,12}:[A-Za-z0-9_-]{30,40})",
            &[1],
            0,
            64,
        ),
        check: Check::None,
    },
    Pattern {
        class: "discord-bot-token",
        category: CHAT,
        keywords: &[],
        finder: Finder::DiscordBotToken,
        check: Check::None,
    },
    // Payments.
    Pattern {
        class: "stripe-key",
        category: PAYMENT,
        keywords: &[
            "sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "pk_test_", "whsec_",
        ],
        finder: re(
            r"\b(?:[spr]k_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9+/=]{24,})",
            48,
        ),
        check: Check::None,
    },
    Pattern {
        class: "square-token",
        category: PAYMENT,
        keywords: &["sq0atp-", "sq0csp-"],
        finder: re(r"\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", 48),
        check: Check::None,
    },
    // Other services.
    Pattern {
        class: "sendgrid-api-key",
        category: SAAS,
        keywords: &["sg."],
        finder: re(r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", 48),
        check: Check::None,
    },
    Pattern {
        class: "twilio-api-key",
        category: SAAS,
        keywords: &["twilio"],
        finder: Finder::TokenRun {
            prefix: "SK",
            alphabet: Alphabet::Hex,
            len: 32,
            padding: "",
        },
        check: Check::None,
    },
    Pattern {
        class: "twilio-auth-token",
        category: SAAS,
        keywords: &["twilio"],
        finder: Finder::TokenRun {
            prefix: "",
            alphabet: Alphabet::Hex,
            len: 32,
            padding: "",
        },
        check: Check::Random,
    },
    Pattern {
        class: "mailgun-api-key",
        category: SAAS,
        keywords: &["key-"],
        finder: re(r"\bkey-[0-9a-f]{32}\b", 48),
        check: Check::Random,
    },
    Pattern {
        class: "mailchimp-api-key",
        category: SAAS,
        keywords: &["-us"],
        finder: re_group(r"\b([0-9a-f]{32}-us[0-9]{1,2})\b", &[1], 34, 8),
        check: Check::None,
    },
    Pattern {
        class: "brevo-api-key",
        category: SAAS,
        keywords: &["xkeysib-", "xsmtpsib-"],
        finder: re(r"\bx(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}\b", 96),
        check: Check::None,
    },
    Pattern {
        class: "shopify-token",
        category: SAAS,
        keywords: &["shpat_", "shpca_", "shppa_", "shpss_"],
        finder: re(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", 48),
        check: Check::None,
    },
    Pattern {
        class: "digitalocean-token",
        category: SAAS,
        keywords: &["dop_v1_", "doo_v1_", "dor_v1_"],
        finder: re(r"\bdo[opr]_v1_[a-f0-9]{64}\b", 80),
        check: Check::None,
    },
    Pattern {
        class: "linear-api-key",
        category: SAAS,
        keywords: &["lin_api_"],
        finder: re(r"\blin_api_[A-Za-z0-9]{40}\b", 56),
        check: Check::None,
    },
    Pattern {
        class: "notion-token",
        category: SAAS,
        keywords: &["ntn_", "secret_"],
        finder: re(r"\b(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})\b", 56),
        check: Check::Random,
    },
    Pattern {
        class: "vault-token",
        category: SAAS,
        keywords: &["hvs.", "hvb.", "hvr."],
        finder: re(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "databricks-token",
        category: SAAS,
        keywords: &["dapi"],
        finder: re(r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b", 48),
        check: Check::Random,
    },
    Pattern {
        class: "age-secret-key",
        category: SAAS,
        keywords: &["age-secret-key-1"],
        finder: re(
            r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
            80,
        ),
        check: Check::None,
    },
    Pattern {
        class: "postman-api-key",
        category: SAAS,
        keywords: &["pmak-"],
        finder: re(r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", 72),
        check: Check::None,
    },
    Pattern {
        class: "new-relic-key",
        category: SAAS,
        keywords: &["nrak-"],
        finder: re(r"\bNRAK-[A-Z0-9]{27}\b", 40),
        check: Check::None,
    },
    Pattern {
        class: "grafana-token",
        category: SAAS,
        keywords: &["glsa_", "glc_"],
        finder: re(
            r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
            64,
        ),
        check: Check::None,
    },
    Pattern {
        class: "sentry-token",
        category: SAAS,
        keywords: &["sntrys_", "sntryu_"],
        finder: re(r"\bsntry[su]_[A-Za-z0-9+/=_]{40,}", 64),
        check: Check::None,
    },
    Pattern {
        class: "doppler-token",
        category: SAAS,
        keywords: &[
            "dp.pt.",
            "dp.st.",
            "dp.sa.",
            "dp.ct.",
            "dp.scim.",
            "dp.audit.",
        ],
        finder: re(r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", 64),
        check: Check::None,
    },
    Pattern {
        class: "pulumi-token",
        category: SAAS,
        keywords: &["pul-"],
        finder: re(r"\bpul-[a-f0-9]{40}\b", 48),
        check: Check::None,
    },
    Pattern {
        class: "terraform-token",
        category: SAAS,
        keywords: &[".atlasv1."],
        finder: re_group(
            r"\b([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,})",
            &[1],
            16,
            96,
        ),
        check: Check::None,
    },
    Pattern {
        class: "heroku-api-key",
        category: SAAS,
        keywords: &["hrku-"],
        finder: re(r"\bHRKU-[A-Za-z0-9_-]{30,}", 48),
        check: Check::None,
    },
    Pattern {
        class: "supabase-token",
        category: SAAS,
        keywords: &["sbp_"],
        finder: re(r"\bsbp_[a-f0-9]{40}\b", 48),
        check: Check::None,
    },
    Pattern {
        class: "planetscale-token",
        category: SAAS,
        keywords: &["pscale_"],
        finder: re(r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,}", 64),
        check: Check::None,
    },
    Pattern {
        class: "netlify-token",
        category: SAAS,
        keywords: &["nfp_"],
        finder: re(r"\bnfp_[A-Za-z0-9]{36,}", 48),
        check: Check::Mixed,
    },
    Pattern {
        class: "flyio-token",
        category: SAAS,
        keywords: &["fo1_", "fm2_"],
        finder: re(
            r"\b(?:fo1_[A-Za-z0-9_-]{40,}|fm2_[A-Za-z0-9+/=_-]{40,})",
            64,
        ),
        check: Check::None,
    },
    Pattern {
        class: "twitter-bearer-token",
        category: SAAS,
        keywords: &["aaaaaaaaaaaaaaaaaaaaa"],
        finder: re(r"\bAAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{30,}", 64),
        check: Check::None,
    },
    Pattern {
        class: "mapbox-token",
        category: SAAS,
        keywords: &["sk.eyj"],
        finder: re(r"\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", 64),
        check: Check::None,
    },
    // Generic formats.
    Pattern {
        class: "jwt",
        category: GENERIC,
        keywords: &["eyj"],
        finder: re(
            r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)?",
            64,
        ),
        check: Check::JwtHeader,
    },
    Pattern {
        class: "url-password",
        category: GENERIC,
        keywords: &["://"],
        finder: re_needs(
            r#"\b[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s:/?#@'"<>\[\]]*:([^\s/@'"<>]+)@[A-Za-z0-9\[]"#,
            &[1],
            40,
            64,
            b'@',
        ),
        check: Check::UrlPassword,
    },
    Pattern {
        class: "authorization-header",
        category: GENERIC,
        keywords: &["authorization"],
        finder: re_group(
            r#"(?i)\b(?:proxy-)?authorization\\?["'`]?\s*[:=]\s*\\?["'`]?(?:(?:bearer|basic|token|bot|apikey|api-key|key|sso-key|ssws|gitlab-token|splunk)\s+)?([^\s"'`\\,;]+)"#,
            &[1],
            0,
            64,
        ),
        check: Check::RandomValue,
    },
    Pattern {
        class: "authorization-header",
        category: GENERIC,
        keywords: &[
            "x-api-key",
            "api-key:",
            "x-auth-token",
            "private-token",
            "x-goog-api-key",
            "x-vault-token",
            "x-access-token",
            "ocp-apim-subscription-key",
            "x-functions-key",
            "x-figma-token",
            "x-shopify-access-token",
            "dd-api-key",
            "dd-application-key",
        ],
        finder: re_group(
            r#"(?i)\b(?:x-api-key|api-key|x-auth-token|private-token|x-goog-api-key|x-vault-token|x-access-token|ocp-apim-subscription-key|x-functions-key|x-figma-token|x-shopify-access-token|dd-api-key|dd-application-key)\\?["']?\s*:\s*\\?["']?([^\s"'\\,;]+)"#,
            &[1],
            0,
            64,
        ),
        check: Check::RandomValue,
    },
    Pattern {
        class: "password-argument",
        category: GENERIC,
        keywords: &[
            "--password",
            "--passwd",
            "--pass",
            "--token",
            "--api-key",
            "--apikey",
            "--api_key",
            "--secret",
            "--client-secret",
            "--access-token",
            "--auth-token",
            "--bearer-token",
            "--registry-token",
        ],
        finder: re_group(
            r#"(?i)(?:^|\s)--(?:password|passwd|pass|token|api-key|apikey|api_key|secret|client-secret|access-token|auth-token|bearer-token|registry-token)(?:=|\s+)(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'-][^\s"']*))"#,
            &[1, 2, 3],
            1,
            48,
        ),
        check: Check::NotPlaceholder,
    },
    Pattern {
        class: "password-argument",
        category: GENERIC,
        keywords: &["mysql", "mariadb"],
        finder: re_group(
            r#"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"-][^\s'"]*))"#,
            &[1, 2, 3],
            0,
            256,
        ),
        check: Check::NotPlaceholder,
    },
    Pattern {
        class: "password-argument",
        category: GENERIC,
        keywords: &["sshpass", "docker login"],
        finder: re_group(
            r#"\b(?:sshpass\s+-p\s*|docker\s+login\b[^\n|;&]*?\s-p\s+)(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"-][^\s'"]*))"#,
            &[1, 2, 3],
            0,
            256,
        ),
        check: Check::NotPlaceholder,
    },
    Pattern {
        class: "password-argument",
        category: GENERIC,
        keywords: &["curl", " -a ", " --auth"],
        finder: re_needs(
            r#"\b(?:curl|https?|xh|xhs)\b[^\n|;&]*?\s(?:-u|--user|-a|--auth)(?:\s+|=)["']?[^\s:"'@]+:([^\s"']+)"#,
            &[1],
            256,
            512,
            b':',
        ),
        check: Check::UrlPassword,
    },
    Pattern {
        class: "password-argument",
        category: GENERIC,
        keywords: &["requirepass", "masterauth"],
        finder: re_group(
            r#"\b(?:requirepass|masterauth)\s+(?:"([^"\n]+)"|'([^'\n]+)'|([^\s'"]+))"#,
            &[1, 2, 3],
            0,
            64,
        ),
        check: Check::NotPlaceholder,
    },
    Pattern {
        class: "password-argument",
        category: GENERIC,
        keywords: &["machine"],
        finder: re_group(
            r"\bmachine\s+\S+\s+(?:login\s+\S+\s+)?password\s+(\S+)",
            &[1],
            0,
            256,
        ),
        check: Check::NotPlaceholder,
    },
    Pattern {
        class: "secret-value",
        category: GENERIC,
        keywords: &["<add "],
        finder: re_group(
            r#"(?i)<add\s+(?:key|name)\s*=\s*"[^"]*(?:password|passwd|pwd|secret|token|apikey|api_key|api-key|accesskey|access_key|clientsecret|connectionstring)"\s+value\s*=\s*"([^"]+)""#,
            &[1],
            0,
            512,
        ),
        check: Check::NotPlaceholder,
    },
    Pattern {
        class: "session-cookie",
        category: GENERIC,
        keywords: &["cookie:", "cookie\":"],
        finder: re_group(
            r#"(?i)\b(?:set-)?cookie\\?["']?\s*:\s*[^\n]*?\b(?:[A-Za-z0-9_.-]*sess(?:ion)?(?:_?id)?|[A-Za-z0-9_.-]*sid|remember[_-]?(?:me|token)?)=([^;\s"'\\]{16,})"#,
            &[1],
            0,
            512,
        ),
        check: Check::RandomValue,
    },
    Pattern {
        class: "secret-value",
        category: GENERIC,
        keywords: &[
            "password>",
            "passwd>",
            "secret>",
            "token>",
            "apikey>",
            "api_key>",
            "api-key>",
        ],
        finder: re_group(
            r"(?i)<[A-Za-z0-9_:.-]*(?:password|passwd|secret|token|apikey|api_key|api-key)>([^<\n]{3,})</",
            &[1],
            48,
            256,
        ),
        check: Check::NotPlaceholder,
    },
    Pattern {
        class: "secret-value",
        category: GENERIC,
        keywords: &[
            "pass",
            "pwd",
            "secret",
            "token",
            "key",
            "credential",
            "auth",
            "dockerc",
        ],
        finder: Finder::Assignment,
        check: Check::None,
    },
    Pattern {
        class: "aws-secret-key",
        category: CLOUD,
        keywords: &["aws", "akia", "asia"],
        finder: Finder::TokenRun {
            prefix: "",
            alphabet: Alphabet::Base64,
            len: 40,
            padding: "",
        },
        check: Check::RandomBase64,
    },
    Pattern {
        class: "base64-encoded",
        category: GENERIC,
        keywords: &[
            "data:",
            "\"data\"",
            "stringdata",
            "secret",
            "base64",
            "dockerconfigjson",
        ],
        finder: Finder::Base64Blob,
        check: Check::None,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_keyword_is_lower_case_ascii_of_three_bytes_or_more() {
        for p in BUILTIN {
            for k in p.keywords {
                assert!(
                    k.len() >= 3 && k.is_ascii() && k.to_ascii_lowercase() == *k,
                    "{}: {k:?}",
                    p.class
                );
            }
        }
    }

    #[test]
    fn every_class_name_is_a_lower_case_slug() {
        for p in BUILTIN {
            assert!(
                p.class
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                p.class
            );
        }
    }
}
