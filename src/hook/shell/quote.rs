//! One word as each shell reads it back unchanged: for the command lines codeact tells a model
//! to run (its own invocation, a `cd` into the project, a `--workspace`).

/// `text` as one POSIX shell word: as it is when it holds only characters no shell treats
/// specially, else single-quoted (a quote inside ends the quoting, is escaped, and starts it
/// again).
#[must_use]
pub(crate) fn posix_word(text: &str) -> String {
    let plain = !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c));
    if plain { text.to_owned() } else { format!("'{}'", text.replace('\'', r"'\''")) }
}

/// `text` as one PowerShell argument: as it is when plain, else single-quoted, each quote
/// (PowerShell's typographic ones too) doubled.
#[must_use]
pub(crate) fn powershell_word(text: &str) -> String {
    let plain = text.starts_with(|c: char| c.is_ascii_alphabetic())
        && !text.ends_with('\\')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "/\\._-:".contains(c));
    if plain {
        return text.to_owned();
    }
    let mut quoted = String::from("'");
    for c in text.chars() {
        if matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}') {
            quoted.push(c);
        }
        quoted.push(c);
    }
    quoted.push('\'');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_posix_word_is_quoted_only_when_the_shell_would_read_it_otherwise() {
        let quoted: Vec<String> =
            ["/usr/bin/codeact", "/a b/it's", "", "$HOME", "a=b", "x;y", "*"].into_iter().map(posix_word).collect();
        assert_eq!(quoted, ["/usr/bin/codeact", r"'/a b/it'\''s'", "''", "'$HOME'", "a=b", "'x;y'", "'*'"]);
    }

    #[test]
    fn a_powershell_word_doubles_every_kind_of_single_quote() {
        let quoted: Vec<String> =
            [r"C:\bin\codeact.exe", r"C:\my repo\it's", "it\u{2019}s", "$env:X", r"C:\dir\", "-x"]
                .into_iter()
                .map(powershell_word)
                .collect();
        assert_eq!(
            quoted,
            [r"C:\bin\codeact.exe", r"'C:\my repo\it''s'", "'it\u{2019}\u{2019}s'", "'$env:X'", r"'C:\dir\'", "'-x'"]
        );
    }
}
