//! Starting a program in a fresh guest.
//!
//! Loading the [`PRELUDE`] (parsing and compiling its source, or unmarshalling a compiled
//! copy, then defining its functions) took CPython in the guest longer than the rest of a
//! small run together. So it is done once, when the guest is compiled for this machine: a
//! fresh guest runs [`init_code`], which fetches the prelude's source from the host, loads it
//! and keeps its entry point, and that instance's state is snapshotted into the component
//! that is compiled and cached. Every run starts from the snapshot and only calls the entry
//! point ([`main_call`]).
//!
//! Only the snapshot's initialisation is served the prelude: a run answers [`FETCH`] like any
//! other name that is not a tool, and nothing a program does reaches a later run, except in a
//! guest kept for a session of `codeact mcp serve` ([`session_call`]), where later programs
//! run in the interpreter the earlier ones left.

use crate::digest::sha256_hex;

/// The Python code run in a fresh guest before the program: tool functions, error mapping,
/// output streams, the last expression's value and the traceback.
pub(crate) const PRELUDE: &str = include_str!("prelude.py");

/// The file name the prelude is compiled under; tracebacks leave its frames out.
const PRELUDE_NAME: &str = "<prelude>";

/// The name the initialisation fetches the prelude's source under.
pub(crate) const FETCH: &str = "__codeact_prelude";

/// The builtin the initialisation keeps the prelude's entry point under, until a run takes it.
const MAIN: &str = "__codeact_main";

/// The Python code a fresh guest runs once, before it is snapshotted.
///
/// The cyclic garbage collector is turned off first and stays off in the snapshot: the guest
/// starts a few allocations short of its first pass, which walks every object of the initial
/// heap (about a millisecond, and more for the next), and nothing before the program makes
/// cycles. The prelude turns it back on, with a later first pass, before the program starts.
///
/// Nothing here may keep a host resource (a file, a stream) in the snapshot: a run's host
/// would not know it. The snapshot is refused when the host holds any once this returns.
#[must_use]
pub(crate) fn init_code() -> String {
    format!(
        "import gc; gc.disable(); import builtins; from wit_world.imports import tools as __codeact_tools\n\
         __codeact_prelude = {{}}\n\
         exec(compile(__codeact_tools.dispatch({FETCH:?}, ''), {PRELUDE_NAME:?}, 'exec'), __codeact_prelude)\n\
         builtins.{MAIN} = __codeact_prelude[{MAIN:?}]\n\
         del __codeact_tools, __codeact_prelude\n"
    )
}

/// The Python code that runs `program` in a guest started from the snapshot, with a function
/// for each of `tool_names` (a JSON list) and, with `mcp_functions`, MCP `server__tool` names
/// resolved on use; the prelude sends its report with `nonce` ([`bridge::Reports`]). The
/// entry point leaves the builtins before the program starts, and the nonce is only an argument
/// of that one call: the program's own text never holds it.
///
/// [`bridge::Reports`]: super::bridge::Reports
#[must_use]
pub(crate) fn main_call(program: &str, tool_names: &str, mcp_functions: bool, nonce: &str) -> String {
    let arguments = entry_arguments(program, tool_names, mcp_functions, nonce);
    format!("__import__('builtins').__dict__.pop({MAIN:?})({arguments})\n")
}

/// The entry point's arguments for `program`, as Python source.
fn entry_arguments(program: &str, tool_names: &str, mcp_functions: bool, nonce: &str) -> String {
    let program = serde_json::to_string(program).unwrap_or_else(|_| "''".to_owned());
    let mcp = if mcp_functions { "True" } else { "False" };
    format!("{program}, {tool_names}, {mcp}, {nonce:?}")
}

/// The Python code that runs `program` as [`main_call`] does, in a guest kept for a session:
/// its first call takes the entry point from the builtins, and keeps it, with the namespace the
/// session's programs share, for the next.
#[must_use]
pub(crate) fn session_call(program: &str, tool_names: &str, mcp_functions: bool, nonce: &str) -> String {
    let arguments = entry_arguments(program, tool_names, mcp_functions, nonce);
    format!(
        "{SESSION} = globals().get({SESSION:?}) or (__import__('builtins').__dict__.pop({MAIN:?}), \
         {{'__name__': '__main__'}}); {SESSION}[0]({arguments}, {SESSION}[1])\n"
    )
}

/// Where a session's guest keeps the entry point and the namespace ([`session_call`]).
const SESSION: &str = "__codeact_session";

/// A digest of everything this program puts into the snapshot, for the compiled guest's cache
/// key: a new prelude never meets an old snapshot.
#[must_use]
pub(crate) fn digest() -> String {
    sha256_hex(format!("{}\0{PRELUDE}", init_code()).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_call_passes_the_program_as_a_python_string() {
        let code = main_call("print('a\"b')\nx = 1", "[\"view\"]", true, "0f");
        assert_eq!(
            code,
            "__import__('builtins').__dict__.pop(\"__codeact_main\")(\"print('a\\\"b')\\nx = 1\", [\"view\"], True, \"0f\")\n"
        );
        assert_eq!(code.lines().count(), 1);
    }

    #[test]
    fn the_session_call_keeps_the_entry_point_and_the_namespace_for_the_next() {
        let code = session_call("x = 1", "[]", false, "0f");
        assert_eq!(
            code,
            "__codeact_session = globals().get(\"__codeact_session\") or \
             (__import__('builtins').__dict__.pop(\"__codeact_main\"), {'__name__': '__main__'}); \
             __codeact_session[0](\"x = 1\", [], False, \"0f\", __codeact_session[1])\n"
        );
        assert_eq!(code.lines().count(), 1);
    }

    #[test]
    fn the_init_code_fetches_the_prelude_and_keeps_its_entry_point() {
        let code = init_code();
        assert!(code.starts_with("import gc; gc.disable();"), "{code}");
        assert!(code.contains(&format!("dispatch({FETCH:?}, '')")), "{code}");
        assert!(code.contains("builtins.__codeact_main = "), "{code}");
        assert!(PRELUDE.contains(&format!("def {MAIN}(")), "the prelude defines the entry point");
    }
}
