//! The names Windows does not take for the plain file they spell, and the two spellings it has
//! for one volume. [`windows_name_problem`] is compiled and tested everywhere, but applied only on
//! Windows ([`name_problem`]): elsewhere `:`, `~` or `NUL` are ordinary characters and names.
//!
//! On Windows a program's path could otherwise reach something other than a file of the
//! workspace, or another file than the one it names:
//!
//! - `a.txt:s`, `a.txt::$DATA`, `dir:$I30:$INDEX_ALLOCATION`: a stream of a file, or the file
//!   itself under another name. Any `:` in a name is refused (a drive, as in `C:x`, is a prefix,
//!   refused by [`super::Workspace::confine`] before names are looked at).
//! - `NUL`, `con.txt`, `COM1 .log`, `LPT¹`, `CONIN$`, `CLOCK$`: a device, in whatever directory,
//!   with whatever extension, in any case, for the programs that open paths through Win32.
//! - `.git.`, `.github ` (a trailing dot or space): Win32 drops them, so the name is `.git`
//!   to every other program, while the file system, reached as cap-std reaches it, makes an
//!   entry that keeps them.
//! - `GITHUB~1`, `git~1`: an 8.3 short name, which NTFS resolves to the long name it stands for
//!   (`.github`), so it would slip past the write protection, which compares long names.
//! - `<`, `>`, `"`, `/`, `\`, `|`, `?`, `*` and control characters: never part of a Windows
//!   name; `*`, `?`, `<`, `>` and `"` are wildcards to some APIs, and a `/` or `\` inside one
//!   name (as a `\\?\` path can hold) would be a separator once the path is read again.
//!
//! This module refuses names only; it never opens anything.

use std::ffi::OsStr;
use std::path::{Component, Components, Path, Prefix};

use crate::tools::error::ToolError;

/// A name with a `:`.
pub(super) const STREAM: &str = "names an alternate data stream (a `:` in a name), which codeact does not open";
/// A name with a character Windows does not allow in one.
pub(super) const RESERVED: &str =
    "has a character Windows does not allow in a name (`<>\"/\\|?*` or a control character)";
/// A DOS device name.
pub(super) const DEVICE: &str =
    "names a Windows device (`CON`, `NUL`, `COM1` and the like, with any extension), which codeact does not open";
/// A name ending in a dot or a space.
pub(super) const TRAILING: &str =
    "has a name ending in a dot or a space, which Windows drops, so it would name another file";
/// An 8.3 short name.
pub(super) const SHORT: &str = "has what may be a short name (a `~` and a digit, or a `~` and a letter in a name of \
                                 8.3 shape), which can stand for another, longer name";

/// The device names Win32 reserves in every directory, besides `COM` and `LPT` with a digit.
const DEVICES: [&str; 7] = ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$"];

/// Why this system would not take `name`, one name of a path, for the plain file it spells: on
/// Windows, [`windows_name_problem`]; elsewhere nothing.
pub(super) fn name_problem(name: &OsStr) -> Option<&'static str> {
    if cfg!(windows) { windows_name_problem(name) } else { None }
}

/// Why Windows would not take `name`, one name of a path, for the plain file it spells (the
/// reason, for an error message), or `None` when it would. `.` and `..` are left to the caller.
pub(super) fn windows_name_problem(name: &OsStr) -> Option<&'static str> {
    // A name that is not Unicode (an unpaired surrogate) keeps every character checked below.
    let name = name.to_string_lossy();
    if name == "." || name == ".." {
        return None;
    }
    if name.contains(':') {
        Some(STREAM)
    } else if name.chars().any(|c| c < ' ' || "<>\"/\\|?*".contains(c)) {
        Some(RESERVED)
    } else if is_device(&name) {
        Some(DEVICE)
    } else if name.ends_with(['.', ' ']) {
        Some(TRAILING)
    } else if may_be_short(&name) {
        Some(SHORT)
    } else {
        None
    }
}

/// Whether `name` may be a short name that a file system resolves to a longer one. NTFS and FAT
/// write them as up to six characters, `~` and a digit (`GITHUB~1`); Wine as four characters,
/// `~` and three letters or digits (`_GIT~IBP`); Samba, on a share, with a letter after the `~`
/// too. Refused: a `~` and a digit anywhere, and a `~` after the first character followed by a
/// letter or digit in a name of the 8.3 shape (at most eight characters, then at most one dot
/// and three more).
fn may_be_short(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.windows(2).any(|pair| pair[0] == b'~' && pair[1].is_ascii_digit()) {
        return true;
    }
    let (base, extension) = name.split_once('.').unwrap_or((name, ""));
    let shaped = base.chars().count() <= 8 && extension.chars().count() <= 3 && !extension.contains('.');
    // A `~` after the first character (`~$doc.docx` is an office program's lock file).
    shaped && base.as_bytes().windows(2).skip(1).any(|pair| pair[0] == b'~' && pair[1].is_ascii_alphanumeric())
}

/// Whether Win32 opens the device `name` names rather than a file: it drops trailing dots and
/// spaces, keeps what comes before the first dot, drops the spaces that end it, and compares
/// that, ignoring case, with the reserved names.
fn is_device(name: &str) -> bool {
    let base = name.split('.').next().unwrap_or_default().trim_end_matches(' ').to_ascii_uppercase();
    if DEVICES.contains(&base.as_str()) {
        return true;
    }
    let Some(number) = base.strip_prefix("COM").or_else(|| base.strip_prefix("LPT")) else { return false };
    let mut digits = number.chars();
    matches!((digits.next(), digits.next()), (Some('0'..='9' | '\u{b9}' | '\u{b2}' | '\u{b3}'), None))
}

/// The refusal of a program's `path` that has a name with `problem`.
pub(super) fn refused_name(path: &str, problem: &str) -> ToolError {
    ToolError::permission(format!("path '{path}' {problem}"))
}

/// The components of `path` after those of `root`, both absolute, or `None` when `path` is not
/// below `root`. Windows spells one volume two ways, `C:\` and `\\?\C:\` (and `\\server\share\`
/// and `\\?\UNC\server\share\`): canonical paths, the root's among them, take the second, a
/// link's target (as cap-std reads it) and most programs the first, so prefixes are compared by
/// the volume they name. Everything else is compared as it is written.
pub(super) fn below_root<'a>(root: &Path, path: &'a Path) -> Option<Components<'a>> {
    let mut rest = path.components();
    for part in root.components() {
        let same = match (part, rest.next()?) {
            (Component::Prefix(a), Component::Prefix(b)) => same_volume(a.kind(), b.kind()),
            (a, b) => a == b,
        };
        if !same {
            return None;
        }
    }
    Some(rest)
}

/// Whether two prefixes name the same volume: a drive, or a share, spelt verbatim or not.
fn same_volume(a: Prefix<'_>, b: Prefix<'_>) -> bool {
    match (a, b) {
        (Prefix::Disk(a) | Prefix::VerbatimDisk(a), Prefix::Disk(b) | Prefix::VerbatimDisk(b)) => {
            a.eq_ignore_ascii_case(&b)
        }
        (
            Prefix::UNC(server_a, share_a) | Prefix::VerbatimUNC(server_a, share_a),
            Prefix::UNC(server_b, share_b) | Prefix::VerbatimUNC(server_b, share_b),
        ) => server_a.eq_ignore_ascii_case(server_b) && share_a.eq_ignore_ascii_case(share_b),
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(name: &str) -> Option<&'static str> {
        windows_name_problem(OsStr::new(name))
    }

    fn all_refused_for(names: &[&str], expected: &'static str) {
        for name in names {
            assert_eq!(problem(name), Some(expected), "{name:?}");
        }
    }

    #[test]
    fn a_colon_in_a_name_names_a_stream() {
        all_refused_for(
            &[
                "a.txt:s",
                "a.txt::$DATA",
                "AGENTS.md::$data",
                "dir:$I30:$INDEX_ALLOCATION",
                ".git:x",
                ":",
                "a:",
                "C:",
                "nul:",
                "x:\u{fffd}",
            ],
            STREAM,
        );
    }

    #[test]
    fn characters_windows_reserves_are_refused() {
        all_refused_for(
            &[
                "a<b",
                "a>b",
                "a\"b",
                "a|b",
                "a?b",
                "*",
                "*.py",
                "a/b",
                "x/../y",
                "a\\b",
                "tab\there",
                "\u{1}",
                "x\u{1f}",
            ],
            RESERVED,
        );
        // DEL and characters beyond ASCII are allowed.
        for name in ["x\u{7f}", "caf\u{e9}", "\u{ff0a}"] {
            assert_eq!(problem(name), None, "{name:?}");
        }
    }

    #[test]
    fn device_names_are_refused_in_every_spelling() {
        all_refused_for(
            &[
                "NUL",
                "nul",
                "Nul",
                "nul.txt",
                "NUL.tar.gz",
                "nul .txt",
                "NUL.",
                "nul. .",
                "NUL ",
                "nul  . ",
                "CON",
                "con.py",
                "PRN",
                "prn.md",
                "AUX",
                "aux.c",
                "COM0",
                "com1",
                "COM9.log",
                "com5 .txt",
                "LPT0",
                "lpt1",
                "LPT9.txt",
                "COM\u{b9}",
                "com\u{b2}.txt",
                "COM\u{b3}",
                "LPT\u{b9}",
                "lpt\u{b2}",
                "LPT\u{b3}.x",
                "CONIN$",
                "conin$.txt",
                "CONOUT$",
                "conout$ ",
                "CLOCK$",
                "clock$.x",
            ],
            DEVICE,
        );
    }

    #[test]
    fn names_that_only_begin_like_a_device_are_files() {
        for name in
            ["nul_", "null", "nulx.txt", "CONSOLE", "COM10", "LPT", "COM", "com1x", "COM\u{b4}", "x.nul", "auxiliary"]
        {
            assert_eq!(problem(name), None, "{name:?}");
        }
    }

    #[test]
    fn a_trailing_dot_or_space_is_refused() {
        all_refused_for(&[".git.", ".github ", ".git. .", "AGENTS.md.", "a ", "a..", "x . ", "..."], TRAILING);
        for name in [".", "..", ".git", ".a", "a.b", " a"] {
            assert_eq!(problem(name), None, "{name:?}");
        }
    }

    #[test]
    fn what_may_be_a_short_name_is_refused() {
        all_refused_for(
            &[
                "GITHUB~1",
                "github~1",
                "git~1",
                "GIT~2",
                "AGENTS~1.MD",
                "VSCODE~10",
                "A1B2C3~1.TXT",
                "x~0y",
                // Wine's short names: four characters, `~`, three letters or digits.
                "_GIT~IBP",
                "_git~ibp",
                "_GIT~DER",
                "_MCP~NMM.JSO",
                "CLAU~QSG.MD",
                "NODE~IOW",
                "_GIT~3JH",
                // Samba's, with letters after the `~`.
                "ABCDE~XY",
                "a~b1",
                "x~y",
            ],
            SHORT,
        );
        for name in [
            "~",
            "a~",
            "~a",
            "~ab",
            "backup~",
            "~$doc.docx",
            "my~long~name.txt",
            "a~b.config",
            "notes~draft.md",
            "a~.txt",
            "a~-b",
        ] {
            assert_eq!(problem(name), None, "{name:?}");
        }
    }

    #[test]
    fn plain_names_pass() {
        for name in
            ["a.txt", "src", ".git", ".github", "AGENTS.md", "Makefile", "a b", "$DATA", "x-y_z.tar.gz", "日本語"]
        {
            assert_eq!(problem(name), None, "{name:?}");
        }
    }

    #[test]
    fn the_rules_apply_on_windows_only() {
        for name in ["a.txt:s", "NUL", ".git.", "GITHUB~1", "a?b"] {
            let expected = if cfg!(windows) { problem(name) } else { None };
            assert_eq!(name_problem(OsStr::new(name)), expected, "{name:?}");
        }
    }

    #[test]
    fn a_volume_spelt_verbatim_or_not_is_the_same() {
        let os = OsStr::new;
        for (a, b) in [
            (Prefix::Disk(b'C'), Prefix::VerbatimDisk(b'C')),
            (Prefix::VerbatimDisk(b'c'), Prefix::Disk(b'C')),
            (Prefix::UNC(os("srv"), os("share")), Prefix::VerbatimUNC(os("SRV"), os("Share"))),
            (Prefix::DeviceNS(os("C:")), Prefix::DeviceNS(os("C:"))),
        ] {
            assert!(same_volume(a, b), "{a:?} {b:?}");
        }
        for (a, b) in [
            (Prefix::Disk(b'C'), Prefix::Disk(b'D')),
            (Prefix::VerbatimDisk(b'C'), Prefix::DeviceNS(os("C:"))),
            (Prefix::VerbatimDisk(b'C'), Prefix::Verbatim(os("C:"))),
            (Prefix::VerbatimDisk(b'C'), Prefix::UNC(os("localhost"), os("C$"))),
            (Prefix::UNC(os("srv"), os("a")), Prefix::UNC(os("srv"), os("b"))),
            (Prefix::VerbatimDisk(b'C'), Prefix::Verbatim(os("GLOBALROOT"))),
        ] {
            assert!(!same_volume(a, b), "{a:?} {b:?}");
        }
    }

    #[test]
    fn below_root_takes_what_follows_the_root() {
        let below = |root: &str, path: &'static str| {
            below_root(Path::new(root), Path::new(path)).map(|rest| rest.as_path().to_path_buf())
        };
        let root = if cfg!(windows) { r"\\?\C:\ws" } else { "/ws" };
        let inside = if cfg!(windows) { r"\\?\C:\ws\src\a.py" } else { "/ws/src/a.py" };
        assert_eq!(below(root, inside), Some(Path::new("src").join("a.py")));
        assert_eq!(below(root, if cfg!(windows) { r"\\?\C:\ws" } else { "/ws" }), Some(Path::new("").to_path_buf()));
        for elsewhere in ["/w", "/wsx/a", "/etc/passwd", "/"] {
            assert_eq!(below(root, elsewhere), None, "{elsewhere}");
        }
    }

    /// How std reads each Windows spelling, and what [`below_root`] makes of it.
    #[cfg(windows)]
    #[test]
    fn below_root_reads_every_windows_spelling_of_a_volume() {
        let root = Path::new(r"\\?\C:\ws");
        let rest = |path: &str| below_root(root, Path::new(path)).map(|rest| rest.as_path().to_path_buf());
        for path in [r"C:\ws\src\a.py", r"c:\ws\src\a.py", "C:/ws/src/a.py", r"C:\ws/src\a.py", r"\\?\C:\ws\src\a.py"] {
            assert_eq!(rest(path), Some(Path::new(r"src\a.py").to_path_buf()), "{path}");
        }
        for path in [r"D:\ws\a", r"C:\WS\a", r"\\.\C:\ws\a", r"\\?\GLOBALROOT\ws\a", r"\\server\share\ws\a", r"C:\w"] {
            assert_eq!(rest(path), None, "{path}");
        }
        // A `/` is no separator in a verbatim path: `ws/x` is one name, so not the root's.
        assert_eq!(rest(r"\\?\C:\ws/src"), None);
        // Below a verbatim root, such a name stays one name, which the name rules then refuse.
        let names: Vec<_> = below_root(root, Path::new(r"\\?\C:\ws\a/..\b")).into_iter().flatten().collect();
        assert_eq!(names, [Component::Normal(OsStr::new("a/..")), Component::Normal(OsStr::new("b"))]);
        assert_eq!(problem("a/.."), Some(RESERVED));
    }
}
