//! Hand-written finders for credentials a keyword cannot point at: they are found by their
//! shape (lengths and alphabets of dot-separated parts, a run of exactly 40 base64 characters)
//! and confirmed by decoding. Each returns byte spans; the table in [`super::patterns`] says
//! when each runs and what class it reports.

use super::checks::{base64_decode, mixed};
use super::patterns::Alphabet;

fn is_b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

/// Discord bot tokens: `base64(user id) . 6-7 chars . 27-40 chars`. The first part decodes to
/// the 17-20 digits of a Discord id, or (for a token typed by hand) at least each part mixes
/// letter cases or digits: the three lengths together are what makes this safe to look for.
pub(super) fn discord_bot_tokens(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = text.get(from..).and_then(|rest| rest.find('.')) {
        let dot = from + found;
        from = dot + 1;
        let mut start = dot;
        while start > 0 && is_b64url(bytes[start - 1]) && dot - start <= 28 {
            start -= 1;
        }
        let first = &bytes[start..dot];
        if !(23..=28).contains(&first.len())
            || !matches!(first[0], b'M' | b'N' | b'O')
            || (start > 0 && is_b64url(bytes[start - 1]))
        {
            continue;
        }
        let second_end = (dot + 1..bytes.len())
            .find(|&i| !is_b64url(bytes[i]))
            .unwrap_or(bytes.len());
        if !(6..=7).contains(&(second_end - dot - 1)) || bytes.get(second_end) != Some(&b'.') {
            continue;
        }
        let third_end = (second_end + 1..bytes.len())
            .find(|&i| !is_b64url(bytes[i]))
            .unwrap_or(bytes.len());
        if !(27..=40).contains(&(third_end - second_end - 1)) {
            continue;
        }
        let id_is_digits = std::str::from_utf8(first)
            .ok()
            .and_then(base64_decode)
            .is_some_and(|id| (17..=20).contains(&id.len()) && id.iter().all(u8::is_ascii_digit));
        let random_parts = [
            &bytes[start..dot],
            &bytes[dot + 1..second_end],
            &bytes[second_end + 1..third_end],
        ]
        .iter()
        .all(|part| std::str::from_utf8(part).is_ok_and(mixed));
        if id_is_digits || random_parts {
            out.push((start, third_end));
            from = third_end;
        }
    }
    out
}

/// Telegram bot tokens: `<bot id: 8-10 digits>:<35 characters of base64url>` (30 to 40 are
/// taken, for tokens copied from documentation), mixing letter cases or digits. Found at every `:` with digits before it, wherever it is written.
pub(super) fn telegram_bot_tokens(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (colon, _) in text.match_indices(':') {
        let mut start = colon;
        while start > 0 && bytes[start - 1].is_ascii_digit() && colon - start <= 10 {
            start -= 1;
        }
        let digits = colon - start;
        let preceded_by_token = start > 0
            && (bytes[start - 1].is_ascii_alphanumeric() && !text[..start].ends_with("bot")
                || bytes[start - 1] == b'_');
        if !(8..=10).contains(&digits) || preceded_by_token {
            continue;
        }
        let end = (colon + 1..bytes.len())
            .find(|&i| !is_b64url(bytes[i]))
            .unwrap_or(bytes.len());
        if (30..=40).contains(&(end - colon - 1)) && mixed(&text[colon + 1..end]) {
            out.push((start, end));
        }
    }
    out
}

/// PEM private key blocks starting at the `-----BEGIN` positions in `starts`: the label must
/// end in `PRIVATE KEY` (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP … BLOCK; a certificate or a
/// public key is not a secret), and the block runs to the end of its `-----END …-----` line or,
/// when a tool cut it short, over the base64 lines after it.
pub(super) fn pem_private_keys(
    text: &str,
    starts: impl Iterator<Item = usize>,
) -> Vec<(usize, usize)> {
    const BEGIN: &str = "-----BEGIN ";
    let mut out: Vec<(usize, usize)> = Vec::new();
    for start in starts {
        if out.last().is_some_and(|(_, end)| start < *end) || !text[start..].starts_with(BEGIN) {
            continue;
        }
        let label_start = start + BEGIN.len();
        let Some(label_len) = text[label_start..]
            .get(..64.min(text.len() - label_start))
            .and_then(|head| head.find("-----"))
        else {
            continue;
        };
        let label = &text[label_start..label_start + label_len];
        let label = label.strip_suffix(" BLOCK").unwrap_or(label);
        if !label.ends_with("PRIVATE KEY")
            || !label
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ')
        {
            continue;
        }
        let body = label_start + label_len + 5;
        let end =
            matching_end(text, body).unwrap_or_else(|| base64_lines_end(text.as_bytes(), body));
        out.push((start, end));
    }
    out
}

/// The end of the first `-----END … PRIVATE KEY-----` line within a key's reach of `body`.
fn matching_end(text: &str, body: usize) -> Option<usize> {
    const END: &str = "-----END ";
    let reach = (body + 24_000).min(text.len());
    let mut from = body;
    while let Some(n) = text.get(from..reach).and_then(|window| window.find(END)) {
        let label = from + n + END.len();
        let close = text[label..]
            .get(..64.min(text.len() - label))
            .and_then(|head| head.find("-----"))?;
        let name = &text[label..label + close];
        if name.ends_with("PRIVATE KEY") || name.ends_with("PRIVATE KEY BLOCK") {
            return Some(label + close + 5);
        }
        from = label;
    }
    None
}

/// Where the base64 lines after a cut-short `BEGIN` line end: lines of base64 (broken by real
/// or `\n`-escaped newlines), and the `Proc-Type:` / `DEK-Info:` headers of an encrypted key.
fn base64_lines_end(bytes: &[u8], body: usize) -> usize {
    let mut end = body;
    let mut i = body;
    // An encrypted key's headers are followed by one blank line.
    let mut blank_ok = false;
    loop {
        // One line break, real or escaped.
        match (bytes.get(i), bytes.get(i + 1)) {
            (Some(b'\r'), Some(b'\n')) => i += 2,
            (Some(b'\n' | b'\r'), _) => i += 1,
            (Some(b'\\'), Some(b'n')) => i += 2,
            _ => return end,
        }
        let line_start = i;
        while bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        {
            i += 1;
        }
        let header = bytes[line_start..].starts_with(b"Proc-Type:")
            || bytes[line_start..].starts_with(b"DEK-Info:");
        if header {
            while bytes
                .get(i)
                .is_some_and(|b| !matches!(b, b'\n' | b'\r' | b'\\'))
            {
                i += 1;
            }
            blank_ok = true;
        } else if i == line_start && blank_ok {
            blank_ok = false;
            continue;
        } else if i == line_start {
            return end;
        }
        end = i;
    }
}

/// Maximal runs of `is_member` bytes, as byte spans.
fn runs<'a, F: Fn(u8) -> bool + 'a>(
    bytes: &'a [u8],
    is_member: F,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !is_member(bytes[i]) {
            i += 1;
        }
        if i >= bytes.len() {
            return None;
        }
        let start = i;
        while i < bytes.len() && is_member(bytes[i]) {
            i += 1;
        }
        Some((start, i))
    })
}

/// Whole tokens: a run of `alphabet`'s run characters that is `prefix` plus exactly `len`
/// characters of the alphabet, followed by `padding` and then nothing token-like. A run right
/// after `-`, `_`, `.` or `=` is part of something longer (`sha512-…`, `key=…` is another rule's).
pub(super) fn token_runs(
    text: &str,
    prefix: &str,
    alphabet: Alphabet,
    len: usize,
    padding: &str,
) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let in_run: fn(u8) -> bool = match alphabet {
        Alphabet::Base64 => is_b64,
        Alphabet::Hex => |b: u8| b.is_ascii_alphanumeric(),
    };
    let in_alphabet: fn(&u8) -> bool = match alphabet {
        Alphabet::Base64 => |b: &u8| is_b64(*b),
        Alphabet::Hex => u8::is_ascii_hexdigit,
    };
    runs(bytes, in_run)
        .filter(|&(s, e)| {
            e - s == prefix.len() + len
                && text[s..e].starts_with(prefix)
                && bytes[s + prefix.len()..e].iter().all(in_alphabet)
        })
        .filter(|&(s, _)| !(s > 0 && matches!(bytes[s - 1], b'-' | b'_' | b'.' | b'=')))
        .filter_map(|(s, e)| {
            let end = e + padding.len();
            let padded = bytes.get(e..end).is_some_and(|p| p == padding.as_bytes());
            let then = bytes.get(end).copied();
            (padded && !then.is_some_and(|b| in_run(b) || b == b'=')).then_some((s, end))
        })
        .collect()
}

/// Base64 blobs (16 to 8,192 characters, padded to a multiple of 4) whose decoded bytes are
/// printable text: the candidates for a look inside.
pub(super) fn printable_base64_blobs(text: &str) -> Vec<(usize, usize, String)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (s, mut e) in runs(bytes, is_b64) {
        while e < bytes.len() && bytes[e] == b'=' && e - s < 8_192 {
            e += 1;
        }
        let len = e - s;
        // Base64 of text always has digits somewhere; a long identifier usually has none.
        if !(16..=8_192).contains(&len)
            || len % 4 != 0
            || !bytes[s..e].iter().any(u8::is_ascii_digit)
        {
            continue;
        }
        let Some(decoded) = base64_decode(&text[s..e]) else {
            continue;
        };
        let Ok(decoded) = String::from_utf8(decoded) else {
            continue;
        };
        if decoded
            .chars()
            .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
        {
            out.push((s, e, decoded));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_discord_token_needs_an_id_that_decodes_to_digits() {
        // base64("123456789012345678") = MTIzNDU2Nzg5MDEyMzQ1Njc4
        let token = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789";
        let text = format!("client.login('{token}')");
        assert_eq!(discord_bot_tokens(&text), vec![(14, 14 + token.len())]);
        assert!(discord_bot_tokens(
            "NotAToken1234567890abcdefg.abcdef.abcdefghijklmnopqrstuvwxyz01"
        )
        .is_empty());
    }

    #[test]
    fn a_telegram_token_is_a_bot_id_a_colon_and_35_characters() {
        let token = "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";
        for text in [
            format!("TeleBot(\"{token}\")"),
            format!("https://api.telegram.org/bot{token}/getMe"),
            format!("Updater('{}')", token.replace(":AA", ":BB")),
        ] {
            assert_eq!(telegram_bot_tokens(&text).len(), 1, "{text}");
        }
        assert!(
            telegram_bot_tokens("at 20240101:abcdefghijklmnopqrstuvwxyzabcdefghi").is_empty(),
            "one case only"
        );
        assert!(
            telegram_bot_tokens("2024010112:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawAAHdqTcvCH1v")
                .is_empty(),
            "too long"
        );
        assert!(
            telegram_bot_tokens("v123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw").is_empty(),
            "part of a longer word"
        );
    }

    #[test]
    fn a_pem_private_key_runs_to_its_end_line_or_over_its_base64_lines() {
        let key = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3y\nAoGCCqGSM49\n-----END EC PRIVATE KEY-----";
        let text = format!("cert:\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\nkey:\n{key}\ndone");
        let found = pem_private_keys(&text, text.match_indices("-----BEGIN").map(|(i, _)| i));
        assert_eq!(
            found.iter().map(|(s, e)| &text[*s..*e]).collect::<Vec<_>>(),
            [key],
            "the certificate stays"
        );
        let cut = r"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\nkqhkiG9w0BAQEF\n and the rest of the message";
        let found = pem_private_keys(cut, std::iter::once(0));
        assert_eq!(
            &cut[found[0].0..found[0].1],
            r"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\nkqhkiG9w0BAQEF"
        );
        let encrypted = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,34F0\n\nMIIEpAIBAAKCAQEA\nzz\n\nnext paragraph";
        let found = pem_private_keys(encrypted, std::iter::once(0));
        assert_eq!(&encrypted[found[0].1..], "\n\nnext paragraph");
    }

    #[test]
    fn token_runs_are_whole_tokens_of_the_exact_length() {
        let text = "key AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY end";
        let found = token_runs(text, "", Alphabet::Base64, 40, "");
        assert_eq!(
            found.iter().map(|(s, e)| &text[*s..*e]).collect::<Vec<_>>(),
            ["wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]
        );
        assert!(
            token_runs(&format!("{}x", &text[32..72]), "", Alphabet::Base64, 40, "").is_empty(),
            "a longer run is not a key"
        );
        assert!(token_runs(
            "sha1-wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "",
            Alphabet::Base64,
            40,
            ""
        )
        .is_empty());
        let sk = "SK0123456789abcdef0123456789abcdef";
        assert_eq!(
            token_runs(&format!("api_key: {sk}\n"), "SK", Alphabet::Hex, 32, ""),
            vec![(9, 9 + sk.len())]
        );
        assert!(token_runs(
            "SK0123456789abcdef0123456789abcdeg",
            "SK",
            Alphabet::Hex,
            32,
            ""
        )
        .is_empty());
        assert_eq!(
            token_runs("k=x AAAA==;", "", Alphabet::Base64, 4, "==").len(),
            1
        );
    }

    #[test]
    fn only_base64_that_decodes_to_text_is_a_candidate() {
        let blobs = printable_base64_blobs(
            "password: cGFzc3dvcmQxMjM0NTY3OA== and iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB",
        );
        assert_eq!(blobs.len(), 1);
        assert_eq!(blobs[0].2, "password12345678");
    }
}
