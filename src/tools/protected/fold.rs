//! How a name is compared with a protected one: folded so that two names any common file system
//! takes for the same entry fold alike. It must never fold two such names apart; folding more
//! than one file system does only protects a rare name too many.
//!
//! - Case, as the widest of them: NTFS compares names upper-cased (`ı` is `i` there), APFS and
//!   ext4's casefold compare Unicode case folds (`ſ` is `s`, the Kelvin sign `K` is `k`). Each
//!   character is upper-cased and then lower-cased, which folds every one of these.
//! - Unicode normalisation: APFS, HFS+ and ext4's casefold compare decomposed names, so `é` in
//!   one piece and `e` with a combining accent are the same name there.
//! - The code points HFS+ ignores (zero-width joiners and the like, as git does for `.git`).
//! - Windows: trailing dots and spaces are dropped, and `name:stream` names a stream of `name`
//!   (`AGENTS.md::$DATA` is `AGENTS.md` itself), so everything from the first `:` is dropped.

use unicode_normalization::UnicodeNormalization;

/// `name` as it is compared.
pub(crate) fn fold(name: &str) -> String {
    let name = name.split(':').next().unwrap_or_default();
    if name.is_ascii() {
        return name.to_ascii_lowercase().trim_end_matches(['.', ' ']).to_owned();
    }
    let mut out = String::with_capacity(name.len());
    for upper in name.nfd().filter(|c| !ignored_by_hfs(*c)).flat_map(char::to_uppercase) {
        out.extend(upper.to_lowercase());
    }
    let out: String = out.nfd().collect();
    out.trim_end_matches(['.', ' ']).to_owned()
}

/// The code points HFS+ leaves out when it compares names.
fn ignored_by_hfs(c: char) -> bool {
    matches!(c, '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn names_a_file_system_takes_for_the_same_fold_alike() {
        for (name, expected) in [
            (".VSCode", ".vscode"),
            (".v\u{17f}code", ".vscode"),
            ("\u{212a}", "k"),
            (".g\u{131}t", ".git"),
            (".g\u{200c}it", ".git"),
            (".git\u{feff}", ".git"),
            (".git. .", ".git"),
            ("AGENTS.md::$DATA", "agents.md"),
            ("caf\u{e9}", "cafe\u{301}"),
            ("CAFE\u{301}", "cafe\u{301}"),
            ("STRASSE", "strasse"),
            ("stra\u{df}e", "strasse"),
        ] {
            assert_eq!(fold(name), expected, "{name:?}");
        }
    }

    #[test]
    fn other_names_stay_apart() {
        for (a, b) in [(".git", ".gitignore"), ("agents.md", "agent.md"), (".vscode", "vscode"), ("\u{ff47}it", "git")]
        {
            assert_ne!(fold(a), fold(b), "{a:?} {b:?}");
        }
    }
}
