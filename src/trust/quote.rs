//! How `codeact trust` prints text that came from a repository (server names, commands,
//! arguments, headers, paths, tool names, link targets): so that what it shows is what it
//! approves, and a listing cannot be forged with characters a terminal does not show as
//! themselves. It writes no output itself.

use std::borrow::Cow;
use std::fmt::Write as _;

use unicode_general_category::{GeneralCategory, get_general_category};

/// Whether `c` may not be printed as itself in a listing: a control (C0, DEL, C1), a format
/// character (Unicode `Cf`: bidi overrides and isolates, zero-width spaces and joiners, the BOM,
/// soft hyphen), a line or paragraph separator, a space other than U+0020, a private-use,
/// unassigned or surrogate code point, one of the other characters Unicode says to draw as
/// nothing (its default-ignorable ones: Hangul fillers, Khmer's inherent vowels, variation
/// selectors, the combining grapheme joiner), or the blank Braille pattern, drawn as a space.
#[must_use]
pub(crate) fn is_hidden(c: char) -> bool {
    match get_general_category(c) {
        GeneralCategory::Control
        | GeneralCategory::Format
        | GeneralCategory::LineSeparator
        | GeneralCategory::ParagraphSeparator
        | GeneralCategory::PrivateUse
        | GeneralCategory::Unassigned
        | GeneralCategory::Surrogate => true,
        GeneralCategory::SpaceSeparator => c != ' ',
        _ => matches!(
            c,
            '\u{034f}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{17b4}'
                | '\u{17b5}'
                | '\u{180b}'..='\u{180f}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{ffa0}'
                | '\u{e0100}'..='\u{e01ef}'
        ),
    }
}

/// `text` as a listing prints it: as it is when it holds no [hidden](is_hidden) character,
/// else whole in the shell's `$'…'` quoting, each hidden character as an escape (`\n`, `\t`,
/// `\r`, `\x1b`, `\u202e`, `\U000e0001`) and `\` and `'` escaped, so that it reads back as the same
/// text. The one quoting function for repository text in `codeact trust`.
#[must_use]
pub(crate) fn quote(text: &str) -> Cow<'_, str> {
    if !text.contains(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str("$'");
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            // A byte of ASCII as `\x` and two digits, as codeact's other escapes write it; not a
            // C1 control, which `$'\x85'` would make a lone byte rather than the character.
            c if is_hidden(c) && c.is_ascii() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if is_hidden(c) && u32::from(c) <= 0xffff => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c if is_hidden(c) => {
                let _ = write!(out, "\\U{:08x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    Cow::Owned(out)
}

/// `word` as a word of a command line the shell reads back: as it is when it holds only
/// characters that need no quoting, [`quote`]d when it holds a hidden character, else in single
/// quotes.
#[must_use]
pub(crate) fn shell_word(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,${}".contains(c));
    if plain {
        word.to_owned()
    } else if word.contains(is_hidden) {
        quote(word).into_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_printed_as_it_is() {
        for text in ["docs", "npx prettier --write", "café ünïcödé 日本", "a b", ""] {
            assert_eq!(quote(text), text);
        }
    }

    #[test]
    fn every_kind_of_hidden_character_is_an_escape() {
        let cases = [
            ("a\nb", "$'a\\nb'"),
            ("a\rb", "$'a\\rb'"),
            ("a\u{1b}[2Jb\u{7f}", "$'a\\x1b[2Jb\\x7f'"),
            ("\u{202e}txt.exe", "$'\\u202etxt.exe'"),
            ("n\u{200b}px", "$'n\\u200bpx'"),
            ("a\u{2028}b\u{2029}", "$'a\\u2028b\\u2029'"),
            ("a\u{85}b", "$'a\\u0085b'"),
            ("a\u{a0}b", "$'a\\u00a0b'"),
            ("tag\u{e0041}", "$'tag\\U000e0041'"),
            ("x\u{3164}", "$'x\\u3164'"),
            ("docs\u{17b4}", "$'docs\\u17b4'"),
            ("\u{2800}--read-only", "$'\\u2800--read-only'"),
            ("it's\\\n", "$'it\\'s\\\\\\n'"),
        ];
        for (text, shown) in cases {
            assert_eq!(quote(text), shown, "{text:?}");
        }
    }

    #[test]
    fn shell_words_are_quoted_only_as_much_as_needed() {
        assert_eq!(shell_word("${env:HOME}/x"), "${env:HOME}/x");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("prettier\n      docs: x"), "$'prettier\\n      docs: x'");
        assert_eq!(shell_word(""), "''");
    }
}
