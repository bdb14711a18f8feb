//! Which shell a shell tool's command line is written for, told by the tool's name, and the
//! classifier that reads it.

use super::{Invocation, Program, classify, powershell};

/// The language of a shell tool's `command`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// A POSIX shell: Copilot CLI's `bash` and `shell`, Claude Code's `Bash`.
    Posix,
    /// PowerShell: Copilot CLI's shell tool on Windows, `powershell`.
    PowerShell,
}

impl Dialect {
    /// The dialect of the tool called `tool`; `None` for a tool that runs no command line.
    #[must_use]
    pub(crate) fn of_tool(tool: &str) -> Option<Self> {
        match tool {
            "bash" | "shell" => Some(Self::Posix),
            "powershell" => Some(Self::PowerShell),
            _ => None,
        }
    }

    /// The codeact run `line` is, when it is exactly one; `identify` says what a program word
    /// names.
    pub(crate) fn codeact_run(self, line: &str, identify: impl Fn(&str) -> Program) -> Option<Invocation> {
        match self {
            Self::Posix => classify::codeact_run(line, identify),
            Self::PowerShell => powershell::codeact_run(line, identify),
        }
    }

    /// Whether every command of `line` only reads.
    #[must_use]
    pub(crate) fn is_read_only(self, line: &str) -> bool {
        match self {
            Self::Posix => classify::is_read_only(line),
            Self::PowerShell => powershell::is_read_only(line),
        }
    }
}
