//! The write-protected paths: files that make the host run something or tell an agent what to
//! do — git's config and hooks, codeact's own config and tools, MCP server lists, editor, dev
//! container and agent settings, hook managers' configs, direnv's `.envrc`, Python
//! environments — and codeact's and Copilot's own directories when they lie in the workspace.
//! A program may read them; `create`, `edit` and `sql` never write them, so a program cannot
//! plant what the next run, the next `git commit`, the next interpreter or the next chat would
//! execute.
//!
//! The rules are matched on every write, by [`Protected::rule_for`], against the path as the
//! program gave it, against where it really leads (symlinks inside the workspace resolved), and
//! against every other name the workspace's symbolic links give that file: `docs/guide.md` is
//! `AGENTS.md` too when `AGENTS.md` links to it, and `shared/vscode/tasks.json` is
//! `.vscode/tasks.json` when `.vscode` links to `shared/vscode`. Names are folded as
//! case-insensitive file systems fold them ([`fold`]), so `.GIT/config` and `.v\u{17f}code` are
//! protected wherever they would be the same file. The named rules match at any depth: a
//! subdirectory becomes a workspace of its own once it is opened as one, so
//! `sub/.codeact/tools/x.py` is as dangerous as `.codeact/tools/x.py`.
//!
//! What only the workspace's contents tell — its links, the hooks folder each repository's
//! `core.hooksPath` names ([`git`]), the folders holding a Python environment — is found by one
//! bounded walk ([`scan`]) before the first write of a run. Past its bounds every write is
//! refused. The program's tools cannot make a link, so the walk stays true for the run;
//! `bash`, which is not confined, can.

mod fold;
mod git;
mod links;
mod named;
mod rules;
pub(crate) mod scan;

pub(crate) use rules::{Hit, Protected};
