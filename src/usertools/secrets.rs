//! Finds text that looks like a secret: cloud keys, GitHub tokens, private key blocks, and
//! long literal values assigned to names such as `api_key` or `password`. Secrets belong in the
//! environment, not in tool files that get committed and shown to models.

use std::sync::LazyLock;

use regex::Regex;

struct Pattern {
    what: &'static str,
    regex: Regex,
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    [
        ("an AWS access key", r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("a GitHub token", r"\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b"),
        ("a private key block", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
        ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
        ("an API key", r"\bsk-[A-Za-z0-9_-]{20,}\b"),
        (
            "a hard-coded credential",
            r#"(?i)\b(api[_-]?key|secret|token|password|passwd)\b\s*[:=]\s*["'][^"'\s$]{12,}["']"#,
        ),
    ]
    .into_iter()
    .filter_map(|(what, pattern)| Regex::new(pattern).ok().map(|regex| Pattern { what, regex }))
    .collect()
});

/// Each line (1-based) of `text` that looks like it holds a secret, with what it looks like.
#[must_use]
pub(crate) fn find(text: &str) -> Vec<(usize, &'static str)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| PATTERNS.iter().find(|p| p.regex.is_match(line)).map(|p| (i + 1, p.what)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_tokens_and_private_keys_are_found() {
        let text = "fine line\nkey = 'AKIAIOSFODNN7EXAMPLE'\ntoken: ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\n\
                    -----BEGIN OPENSSH PRIVATE KEY-----\npassword = \"correct-horse-battery\"\npassword = \"$PASSWORD_FROM_ENV\"";
        assert_eq!(
            find(text),
            [
                (2, "an AWS access key"),
                (3, "a GitHub token"),
                (4, "a private key block"),
                (5, "a hard-coded credential")
            ]
        );
    }
}
