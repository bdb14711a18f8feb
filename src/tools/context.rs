//! [`ToolContext`]: what a built-in tool can reach during one run — the workspace, the
//! deadline and the memory limit, the run's `SQLite` connections, the network policy and the GitHub access the
//! command found — and the warnings it leaves for the program's stderr.

use std::time::{Duration, Instant};

use super::error::{ErrorKind, ToolError};
use super::github::Access;
use super::network::NetworkPolicy;
use super::sql::Databases;
use super::workspace::Workspace;

/// Most bytes of tool warnings kept for the program's stderr.
const MAX_STDERR: usize = 64 * 1024;

/// What every built-in tool call in a run can reach.
#[derive(Debug)]
pub(crate) struct ToolContext {
    pub(crate) workspace: Workspace,
    /// When the run's wall-clock limit ends.
    pub(crate) deadline: Instant,
    /// The run's memory limit (`--max-memory`): tools hold what they build for the program
    /// under it too, `SQLite`'s heap included.
    pub(crate) max_memory: usize,
    pub(crate) databases: Databases,
    /// Where `web_fetch` may connect.
    pub(crate) network: NetworkPolicy,
    /// How `github_api` reaches GitHub, when it is offered.
    pub(crate) github: Option<Access>,
    /// Warnings for the program's stderr (truncation notices and the like).
    warnings: String,
}

impl ToolContext {
    #[must_use]
    pub(crate) fn new(
        workspace: Workspace,
        deadline: Instant,
        max_memory: usize,
        network: NetworkPolicy,
        github: Option<Access>,
    ) -> Self {
        Self {
            workspace,
            deadline,
            max_memory,
            databases: Databases::default(),
            network,
            github,
            warnings: String::new(),
        }
    }

    /// Time left before the deadline (zero once it has passed).
    #[must_use]
    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Fails with `TimeoutError` once the deadline has passed; long tools call it as they go.
    pub(crate) fn check_deadline(&self, tool: &str) -> Result<(), ToolError> {
        check_deadline(self.deadline, tool)
    }

    /// Adds a line to the program's stderr, within a fixed budget.
    pub(crate) fn warn(&mut self, message: &str) {
        if self.warnings.len() + message.len() < MAX_STDERR {
            self.warnings.push_str(message);
            self.warnings.push('\n');
        }
    }

    /// The warnings so far, leaving none.
    pub(crate) fn take_warnings(&mut self) -> String {
        std::mem::take(&mut self.warnings)
    }
}

/// Fails with `TimeoutError` once `deadline` has passed, for work that holds no context.
pub(crate) fn check_deadline(deadline: Instant, tool: &str) -> Result<(), ToolError> {
    if Instant::now() >= deadline { Err(timed_out(tool)) } else { Ok(()) }
}

/// The `TimeoutError` of a tool stopped by the run's time limit.
#[must_use]
pub(crate) fn timed_out(tool: &str) -> ToolError {
    ToolError::new(ErrorKind::Timeout, format!("{tool}() stopped: the run's time limit was reached"))
}
