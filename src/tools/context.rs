//! [`ToolContext`]: the state tools share during one run — the workspace, the deadline, the
//! program's stderr, and the run's `SQLite` connections.

use std::time::{Duration, Instant};

use super::error::{ErrorKind, ToolError};
use super::sql::Databases;
use super::workspace::Workspace;
use crate::config::NetworkPolicy;
use crate::mcp::Mcp;
use crate::usertools::pyworker::Worker;

/// Most bytes of tool warnings kept for the program's stderr.
const MAX_STDERR: usize = 64 * 1024;

/// What every tool call in a run can reach.
#[derive(Debug)]
pub struct ToolContext {
    pub workspace: Workspace,
    /// When the run's wall-clock limit ends.
    pub deadline: Instant,
    /// Warnings for the program's stderr (truncation notices and the like).
    pub stderr: String,
    pub databases: Databases,
    /// The run's MCP servers, connected on first use.
    pub mcp: Mcp,
    /// Where `web_fetch` may connect.
    pub network: NetworkPolicy,
    /// The Python drop-in files, and their worker once started.
    pub dropin_files: Vec<std::path::PathBuf>,
    pub dropin_worker: Option<Worker>,
    /// How many workers this run started.
    pub dropin_workers_started: usize,
}

impl ToolContext {
    #[must_use]
    pub fn new(workspace: Workspace, deadline: Instant) -> Self {
        Self {
            workspace,
            deadline,
            stderr: String::new(),
            databases: Databases::default(),
            mcp: Mcp::none(),
            network: NetworkPolicy::default(),
            dropin_files: Vec::new(),
            dropin_worker: None,
            dropin_workers_started: 0,
        }
    }

    /// Time left before the deadline (zero once it has passed).
    #[must_use]
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Fails with `TimeoutError` once the deadline has passed; long tools call it as they go.
    pub fn check_deadline(&self, tool: &str) -> Result<(), ToolError> {
        if Instant::now() >= self.deadline {
            Err(ToolError::new(ErrorKind::Timeout, format!("{tool}() stopped: the run's time limit was reached")))
        } else {
            Ok(())
        }
    }

    /// Adds a line to the program's stderr, within a fixed budget.
    pub fn warn(&mut self, message: &str) {
        if self.stderr.len() + message.len() < MAX_STDERR {
            self.stderr.push_str(message);
            self.stderr.push('\n');
        }
    }
}
