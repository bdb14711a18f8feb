//! How the workspace applies the Windows name rules ([`super::windows_names`]): on Windows to
//! every name of a program's path, of a joined path and of a link's target, elsewhere to none.

use crate::platform::Canonical as _;
use crate::tools::workspace::Workspace;

fn workspace() -> (tempfile::TempDir, Workspace) {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonical().unwrap();
    let ws = Workspace::open(&root).unwrap();
    (temp, ws)
}

#[cfg(not(windows))]
#[test]
fn confine_keeps_windows_spellings_as_plain_names_elsewhere() {
    use std::path::{Path, PathBuf};

    let (_temp, ws) = workspace();
    for path in [
        "a.txt:s",
        "a.txt::$DATA",
        "NUL",
        "con.txt",
        ".git.",
        ".github ",
        "GITHUB~1",
        "a?b",
        "C:foo",
        r"a\..\..\x",
        r"\x",
    ] {
        assert_eq!(ws.confine(path).map(|c| c.as_path().to_path_buf()), Ok(PathBuf::from(path)), "{path:?}");
    }
    assert_eq!(ws.confine("src").unwrap().join(Path::new("a.txt:s")).map(|c| c.shown()), Some("src/a.txt:s".into()));
}

#[cfg(windows)]
mod on_windows {
    use std::path::{Path, PathBuf};

    use super::super::root::link_target;
    use super::super::windows_names::{DEVICE, RESERVED, SHORT, STREAM, TRAILING};
    use super::workspace;
    use crate::platform::Canonical as _;
    use crate::tools::error::{ErrorKind, ToolError};
    use crate::tools::workspace::Confined;
    use crate::tools::workspace::Workspace;

    /// The kind of error `result` holds, if any.
    fn kind<T>(result: Result<T, ToolError>) -> Result<(), ErrorKind> {
        result.map(|_| ()).map_err(|e| e.kind)
    }

    /// What `confine` makes of `path`: the path it shows, or the error's kind and message.
    fn confined(ws: &Workspace, path: &str) -> Result<String, (ErrorKind, String)> {
        ws.confine(path).map(|c| c.shown()).map_err(|e| (e.kind, e.message))
    }

    #[test]
    fn confine_refuses_other_volumes_the_drive_root_and_climbing_out() {
        let (_temp, ws) = workspace();
        for path in [
            "C:foo",
            "c:foo",
            r"C:..\x",
            "C:",
            r"C:\x",
            "C:/x",
            r"D:\x",
            r"\x",
            "/x",
            r"\\server\share\x",
            "//server/share/x",
            r"\\?\C:\x",
            r"\\.\C:\x",
            r"\??\C:\x",
            "//?/c:/x",
            r"\\?\UNC\server\share\x",
            r"\\?\GLOBALROOT\Device\HarddiskVolume1\x",
            r"a\..\..\x",
            r"a/..\../x",
            r"..\x",
            r"src\..\..",
        ] {
            assert_eq!(confined(&ws, path).map_err(|e| e.0), Err(ErrorKind::Permission), "{path:?}");
        }
    }

    #[test]
    fn confine_takes_the_root_in_either_spelling_and_both_separators() {
        let (_temp, ws) = workspace();
        // The canonical root is `C:\…`, as programs mostly write it; `\\?\C:\…` names it too.
        let plain = ws.root().to_str().unwrap().to_owned();
        assert!(!plain.starts_with(r"\\?\"), "{plain}");
        let verbatim = format!(r"\\?\{plain}");
        for path in [
            format!(r"{verbatim}\src\a.py"),
            format!(r"{plain}\src\a.py"),
            format!("{}/src/a.py", plain.replace('\\', "/")),
            format!(r"{plain}/src\a.py"),
            format!(r"{plain}\src\x\..\a.py"),
            "src/a.py".to_owned(),
            r"src\a.py".to_owned(),
            r".\src\.\a.py".to_owned(),
            r"src/x\..\a.py".to_owned(),
        ] {
            assert_eq!(confined(&ws, &path), Ok("src/a.py".into()), "{path:?}");
        }
    }

    #[test]
    fn confine_refuses_names_windows_reads_as_something_else_in_any_component() {
        let (_temp, ws) = workspace();
        for (path, problem) in [
            ("a.txt:s", STREAM),
            ("src/a.txt::$DATA", STREAM),
            (r"dir:$I30:$INDEX_ALLOCATION\x", STREAM),
            (r"src\AGENTS.md:x", STREAM),
            ("NUL", DEVICE),
            (r"src\nul.txt", DEVICE),
            ("CON/x.py", DEVICE),
            ("docs/com1.log", DEVICE),
            ("Lpt9 .txt", DEVICE),
            ("COM\u{b9}", DEVICE),
            ("conout$", DEVICE),
            ("clock$/x", DEVICE),
            (".git./config", TRAILING),
            (r".github \hooks\h.json", TRAILING),
            (".vscode. ./settings.json", TRAILING),
            ("AGENTS.md.", TRAILING),
            ("GITHUB~1/hooks/h.json", SHORT),
            (r"src\git~1\config", SHORT),
            ("AGENTS~1.MD", SHORT),
            ("a?b", RESERVED),
            ("*.py", RESERVED),
            ("src/a<b", RESERVED),
            ("a\"b", RESERVED),
            ("a|b", RESERVED),
            ("x\u{1}", RESERVED),
        ] {
            assert_eq!(
                confined(&ws, path),
                Err((ErrorKind::Permission, format!("path '{path}' {problem}"))),
                "{path:?}"
            );
        }
    }

    #[test]
    fn joined_names_follow_the_same_rules() {
        let (_temp, ws) = workspace();
        let src = ws.confine("src").unwrap();
        for below in ["a.txt:s", "nul", ".git.", "GITHUB~1", "a?b", r"C:x", r"\x", r"..\x"] {
            assert_eq!(src.join(Path::new(below)), None, "{below:?}");
        }
        assert_eq!(src.join(Path::new(r"a\b.py")).map(|c| c.shown()), Some("src/a/b.py".into()));
    }

    #[test]
    fn link_targets_lead_only_to_plain_names_under_the_root() {
        let root = Path::new(r"\\?\C:\ws");
        let shown = Confined::from_normal(PathBuf::from("x"));
        let names = |target: &str| {
            link_target(root, Path::new(target), &shown)
                .map(|(from_root, names)| {
                    (from_root, names.iter().map(|n| n.to_string_lossy().into_owned()).collect::<Vec<_>>())
                })
                .map_err(|e| (e.kind, e.message))
        };
        let read = |from_root: bool, names: &[&str]| Ok((from_root, names.iter().map(|n| (*n).to_owned()).collect()));
        // A junction's target, as cap-std reads it: `C:\…`, the NT prefix `\??\` dropped.
        assert_eq!(names(r"C:\ws\sub"), read(true, &["sub"]));
        assert_eq!(names(r"c:/ws/sub/x"), read(true, &["sub", "x"]));
        assert_eq!(names(r"\\?\C:\ws\sub\..\a"), read(true, &["sub", "..", "a"]));
        assert_eq!(names(r"..\a/b"), read(false, &["..", "a", "b"]));
        for target in [r"C:\other", r"D:\ws\x", r"\x", "/x", "C:x", r"C:..\x", r"\\server\share\ws", r"\\?\Volume{0}\x"]
        {
            assert_eq!(
                names(target),
                Err((ErrorKind::Permission, "'x' is outside the workspace".into())),
                "{target:?}"
            );
        }
        for (target, problem) in
            [("GITHUB~1", SHORT), (r"a\.git.", TRAILING), ("a.txt:s", STREAM), (r"..\nul", DEVICE), ("a*", RESERVED)]
        {
            assert_eq!(
                names(target),
                Err((ErrorKind::Permission, format!("'x' goes through a link whose target {problem}"))),
                "{target:?}"
            );
        }
        // A junction to a volume by its GUID reads as names beside the link (see
        // `Workspace::resolve_names`): a write there stays in the workspace.
        assert_eq!(names(r"Volume{0}\x"), read(false, &["Volume{0}", "x"]));
    }

    /// A junction is made with `mklink /J`, which Wine does not provide; a CI job on Windows
    /// runs this with `--include-ignored`.
    #[test]
    #[ignore = "needs real Windows: junctions made with `mklink /J`"]
    fn a_junction_leads_only_into_the_workspace() {
        let (_temp, ws) = workspace();
        let elsewhere = tempfile::tempdir().unwrap();
        let elsewhere_root = elsewhere.path().canonical().unwrap();
        std::fs::write(elsewhere_root.join("secret.txt"), "secret").unwrap();
        std::fs::create_dir(ws.root().join("sub")).unwrap();
        // `mklink` keeps the target as written: the long names, without `\\?\`.
        let plain = |path: &Path| PathBuf::from(path.to_str().unwrap().strip_prefix(r"\\?\").unwrap());
        let junction = |link: &str, target: &Path| {
            let status = std::process::Command::new("cmd")
                .args(["/C", "mklink", "/J"])
                .arg(plain(&ws.root().join(link)))
                .arg(plain(target))
                .status()
                .unwrap();
            assert!(status.success(), "mklink /J {link}");
        };
        junction("out", &elsewhere_root);
        junction("in", &ws.root().join("sub"));
        let rel = |path: &str| ws.confine(path).unwrap();

        // Outside: refused when writing (where the write would land) and when reading
        // (cap-std refuses an absolute link target).
        assert_eq!(kind(ws.real_location(&rel("out/new.txt"))), Err(ErrorKind::Permission));
        assert_eq!(kind(ws.create_new(&rel("out/new.txt"), b"x")), Err(ErrorKind::Permission));
        assert!(!elsewhere_root.join("new.txt").exists());
        assert_eq!(kind(ws.read(&rel("out/secret.txt"), 100)), Err(ErrorKind::Permission));
        assert_eq!(kind(ws.canonical(&rel("out/secret.txt"))), Err(ErrorKind::Permission));

        // Inside: a new file lands where the junction leads, written without going through
        // it; cap-std still refuses to read through the absolute target.
        assert_eq!(ws.real_location(&rel("in/x.txt")).map(|c| c.shown()), Ok("sub/x.txt".into()));
        assert_eq!(ws.create_new(&rel("in/x.txt"), b"x"), Ok(()));
        assert_eq!(std::fs::read(ws.root().join("sub").join("x.txt")).unwrap(), b"x");
        assert_eq!(kind(ws.read(&rel("in/x.txt"), 100)), Err(ErrorKind::Permission));
    }
}

/// An absolute link target is read below the root ([`super::windows_names::below_root`]) on
/// every system.
#[cfg(unix)]
#[test]
fn an_absolute_link_target_counts_only_under_the_root() {
    let (_temp, ws) = workspace();
    std::fs::create_dir(ws.root().join("real")).unwrap();
    std::os::unix::fs::symlink(ws.root().join("real"), ws.root().join("inside")).unwrap();
    std::os::unix::fs::symlink("/tmp", ws.root().join("elsewhere")).unwrap();
    let located = |path: &str| ws.real_location(&ws.confine(path).unwrap()).map_err(|e| e.kind);
    assert_eq!(located("inside/new/x.txt").map(|c| c.shown()), Ok("real/new/x.txt".into()));
    assert_eq!(located("elsewhere/x.txt"), Err(crate::tools::error::ErrorKind::Permission));
}
