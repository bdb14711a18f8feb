//! Starting a program in a fresh guest: a line of bootstrap code loads the [`PRELUDE`] and
//! calls its `__codeact_main` with the program.
//!
//! Parsing and compiling the prelude's source takes CPython in the guest longer than the rest
//! of a small run together, so the guest compiles it once and hands the code object back,
//! marshalled; later runs get that instead of the source. The copy lives in the user-only
//! cache directory under a name made of the guest's and the prelude's digests, so a new guest
//! or a new prelude never meets an old copy. It only ever runs inside the guest, and a copy
//! that does not load is replaced from source in the same run ([`Loader::retry`]).
//!
//! Only the bootstrap may fetch or store the prelude: [`Loader::answer`] serves it until the
//! bootstrap says it is done, before the program starts, and refuses a store unless it served
//! the source in the same run. A program cannot leave code behind for later runs.

use std::path::{Path, PathBuf};

use super::{Installed, PRELUDE, PRELUDE_NAME, cache_dir, sha256_hex, write_private};
use crate::output;

/// The name the bootstrap fetches the prelude under: `compiled` or `source`.
const FETCH: &str = "__codeact_prelude";
/// The name the bootstrap hands back the compiled prelude under.
const STORE: &str = "__codeact_prelude_compiled";
/// The name the bootstrap says it is done under, before the program starts.
const DONE: &str = "__codeact_prelude_done";

/// How every bootstrap starts: the garbage collector off (see [`Loader::bootstrap`]), the
/// host's `tools` interface at hand.
const START: &str = "import gc; gc.disable(); from wit_world.imports import tools as __codeact_tools";

/// Loads the prelude for one run and answers the bootstrap's calls.
#[derive(Debug)]
pub struct Loader {
    /// The compiled prelude's cache file, when there is a cache directory.
    file: Option<PathBuf>,
    /// Its contents, when it has any.
    compiled: Option<Vec<u8>>,
    /// The call that starts the program once the prelude is loaded.
    main: String,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Serving the bootstrap.
    Open,
    /// The compiled copy was served.
    CompiledServed,
    /// The source was served: the compiled copy may be stored, once.
    SourceServed,
    /// The compiled copy was stored.
    Stored,
    /// The program may be running: none of the bootstrap's names are answered.
    Closed,
}

impl Loader {
    /// A loader for running `program`, with a function for each of `tool_names` (a JSON list)
    /// and, with `mcp_functions`, MCP `server__tool` names resolved on use.
    #[must_use]
    pub fn new(installed: &Installed, program: &str, tool_names: &str, mcp_functions: bool) -> Self {
        let file = cache_dir().map(|dir| compiled_file(&dir, installed));
        Self::with_file(file, program, tool_names, mcp_functions)
    }

    fn with_file(file: Option<PathBuf>, program: &str, tool_names: &str, mcp_functions: bool) -> Self {
        let compiled = file.as_ref().and_then(|file| std::fs::read(file).ok()).filter(|bytes| !bytes.is_empty());
        let program = serde_json::to_string(program).unwrap_or_else(|_| "''".to_owned());
        let mcp = if mcp_functions { "True" } else { "False" };
        let main = format!("__codeact_tools.dispatch({DONE:?}, ''); __codeact_main({program}, {tool_names}, {mcp})");
        Self { file, compiled, main, state: State::Open }
    }

    /// The Python code that loads the prelude and starts the program: one line when a compiled
    /// copy is cached (parsing the bootstrap is part of every run), else compiling the source
    /// and handing the result back.
    ///
    /// The cyclic garbage collector is off while the prelude loads, from the first statement:
    /// the guest starts a few allocations short of its first pass, which walks every object of
    /// the initial heap (about a millisecond, and more for the next), and nothing here makes
    /// cycles. The prelude turns it back on, with a later first pass, before the program
    /// starts.
    #[must_use]
    pub fn bootstrap(&self) -> String {
        if self.compiled.is_none() {
            return self.source_bootstrap();
        }
        format!(
            "{START}; exec(__import__('marshal').loads(__codeact_tools.dispatch({FETCH:?}, 'compiled').encode('latin-1'))); {}\n",
            self.main
        )
    }

    /// What to run next in the same guest after the bootstrap returned: the source when the
    /// compiled copy was served but the program never started (the copy did not load).
    #[must_use]
    pub fn retry(&self) -> Option<String> {
        (self.state == State::CompiledServed).then(|| self.source_bootstrap())
    }

    fn source_bootstrap(&self) -> String {
        format!(
            "{START}; import marshal\n\
             __codeact_code = compile(__codeact_tools.dispatch({FETCH:?}, 'source'), {PRELUDE_NAME:?}, 'exec')\n\
             exec(__codeact_code)\n\
             __codeact_tools.dispatch({STORE:?}, marshal.dumps(__codeact_code).decode('latin-1'))\n\
             {}\n",
            self.main
        )
    }

    /// The answer to a guest call named `name`, or `None` when the call is not the
    /// bootstrap's (a tool call or a report; it closes the bootstrap's window).
    pub fn answer(&mut self, name: &str, arg: &str) -> Option<Result<String, String>> {
        let state = std::mem::replace(&mut self.state, State::Closed);
        let open = matches!(state, State::Open | State::CompiledServed);
        match name {
            FETCH if open && arg == "compiled" => {
                self.state = State::CompiledServed;
                Some(self.compiled.as_ref().map(|bytes| latin1(bytes)).ok_or_else(|| "no compiled prelude".to_owned()))
            }
            FETCH if open && arg == "source" => {
                self.state = State::SourceServed;
                Some(Ok(PRELUDE.to_owned()))
            }
            STORE if state == State::SourceServed => {
                self.state = State::Stored;
                self.store(arg);
                Some(Ok("null".to_owned()))
            }
            DONE if state != State::Closed => Some(Ok("null".to_owned())),
            _ => None,
        }
    }

    fn store(&self, latin1: &str) {
        let Some(file) = &self.file else { return };
        let Some(bytes) = latin1.chars().map(|c| u8::try_from(c).ok()).collect::<Option<Vec<u8>>>() else {
            return;
        };
        if let Err(err) = write_private(file, &bytes) {
            output::warning(&format!("cannot cache the compiled prelude in {}: {err:#}", file.display()));
        }
    }
}

/// Bytes as a string of Latin-1 characters, one per byte (the guest's `.encode("latin-1")`
/// turns it back).
fn latin1(bytes: &[u8]) -> String {
    bytes.iter().copied().map(char::from).collect()
}

/// `<cache>/guest/prelude-<guest>-<prelude>.marshal`: one CPython build, one prelude text.
fn compiled_file(cache: &Path, installed: &Installed) -> PathBuf {
    let guest = &installed.manifest.wasm_sha256;
    let prelude = sha256_hex(PRELUDE.as_bytes());
    cache.join("guest").join(format!("prelude-{}-{}.marshal", &guest[..guest.len().min(16)], &prelude[..16]))
}

#[cfg(test)]
mod tests {
    use anyhow::Context as _;

    use super::*;

    fn loader(dir: &Path) -> Loader {
        Loader::with_file(Some(dir.join("prelude.marshal")), "print(1)", "[\"view\"]", false)
    }

    #[test]
    fn without_a_compiled_copy_the_bootstrap_compiles_and_stores_it() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let mut loader = loader(dir.path());
        let code = loader.bootstrap();
        assert!(code.contains("'source'") && code.contains(STORE), "{code}");
        assert!(code.ends_with("__codeact_main(\"print(1)\", [\"view\"], False)\n"), "{code}");
        assert_eq!(loader.answer(FETCH, "source"), Some(Ok(PRELUDE.to_owned())));
        assert_eq!(loader.answer(STORE, "\u{e3}\u{0}code"), Some(Ok("null".to_owned())));
        assert_eq!(std::fs::read(dir.path().join("prelude.marshal"))?, b"\xe3\x00code");
        assert_eq!(loader.answer(DONE, ""), Some(Ok("null".to_owned())));
        assert_eq!(loader.retry(), None);

        let mut next = self::loader(dir.path());
        let code = next.bootstrap();
        assert_eq!(code.lines().count(), 1, "{code}");
        assert!(code.contains("'compiled'") && !code.contains(STORE), "{code}");
        assert_eq!(next.answer(FETCH, "compiled"), Some(Ok("\u{e3}\u{0}code".to_owned())));
        assert_eq!(next.answer(DONE, ""), Some(Ok("null".to_owned())));
        assert_eq!(next.retry(), None, "the program started");
        assert_eq!(next.answer(FETCH, "source"), None);
        Ok(())
    }

    #[test]
    fn a_compiled_copy_that_does_not_load_is_replaced_from_source() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("prelude.marshal"), b"garbage")?;
        let mut loader = loader(dir.path());
        assert!(loader.bootstrap().contains("'compiled'"));
        assert_eq!(loader.answer(FETCH, "compiled"), Some(Ok("garbage".to_owned())));
        // marshal.loads raised: the program never started.
        let retry = loader.retry().context("a retry from source")?;
        assert!(retry.contains("'source'"), "{retry}");
        assert!(loader.answer(FETCH, "source").is_some());
        assert!(loader.answer(STORE, "\u{e3}fresh").is_some());
        assert!(loader.answer(DONE, "").is_some());
        assert_eq!(std::fs::read(dir.path().join("prelude.marshal"))?, b"\xe3fresh");
        assert_eq!(loader.retry(), None, "once");
        Ok(())
    }

    #[test]
    fn a_program_cannot_store_a_prelude() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("prelude.marshal");
        // Without the source served first.
        assert_eq!(loader(dir.path()).answer(STORE, "evil"), None);
        // After the bootstrap is done.
        let mut done = loader(dir.path());
        assert!(done.answer(DONE, "").is_some());
        assert_eq!(done.answer(FETCH, "source"), None);
        assert_eq!(done.answer(STORE, "evil"), None);
        // After any other call, such as the program's first tool call.
        let mut called = loader(dir.path());
        assert!(called.answer(FETCH, "source").is_some());
        assert_eq!(called.answer("view", "{}"), None);
        assert_eq!(called.answer(STORE, "evil"), None);
        assert!(!file.exists());
        Ok(())
    }

    #[test]
    fn characters_beyond_latin1_are_not_stored() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let mut loader = loader(dir.path());
        assert!(loader.answer(FETCH, "source").is_some());
        assert!(loader.answer(STORE, "caf\u{e9} \u{2603}").is_some());
        assert!(!dir.path().join("prelude.marshal").exists());
        assert_eq!(loader.answer(DONE, ""), Some(Ok("null".to_owned())));
        Ok(())
    }
}
