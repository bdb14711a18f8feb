//! `codeact mcp serve`: codeact as an MCP server, over stdio or streamable HTTP.
//!
//! It offers two tools. `run` takes a program (`code`, and an optional `timeout`) and runs it as
//! one `codeact run` of its own ([`child`]), or in its client's session's worker ([`worker`],
//! [`sessions`]): the result's text is what a model reads from the
//! command line, its structured content the `--json` object, and a failed program is an error
//! result. `describe` gives the tool reference, or the full documentation of the tools it is
//! asked about, so that `run`'s own description stays short. The reference is also the server's
//! instructions.
//!
//! Calls from every client share [`max_concurrent`](crate::cli::ServeArgs::max_concurrent)
//! slots; a call waits for one. A call whose request carries a progress token gets a progress
//! notification every [`PROGRESS_EVERY`](tools::PROGRESS_EVERY) while its program runs, and
//! `notifications/cancelled` stops its program, as does, over HTTP, a client gone for
//! [`GONE_GRACE`](tools::GONE_GRACE).
//!
//! The workspace may not be the root or hold the home directory ([`broad`]), and on Linux the
//! server is not dumpable, so that a program's `bash` cannot read the token from `/proc`.

mod broad;
mod child;
pub(super) mod handoff;
mod http;
mod running;
mod sandbox;
mod server;
mod sessions;
mod tools;
mod waiting;
mod worker;

pub(crate) use self::server::run;
