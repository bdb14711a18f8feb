//! [`Host`]: what a backend calls when a program calls a tool. It owns the registry and the
//! tool context, counts calls, and enforces the wall-clock deadline and the tool-call budget —
//! the limits a backend's interpreter cannot see for itself.

use std::time::Instant;

use super::limits::{Limits, format_seconds, format_size};
use crate::tools::{ErrorKind, Registry, ToolContext, ToolError, Value, mcp};
use crate::usertools::call;
use crate::usertools::markdown::Language;
use crate::usertools::pyworker::{self, Worker};

/// The host side of one run.
#[derive(Debug)]
pub struct Host {
    pub registry: Registry,
    pub ctx: ToolContext,
    pub limits: Limits,
    pub started: Instant,
    pub tool_calls: u64,
    /// Runs a Python user tool inside the sandbox; set by a backend that can.
    pub python: Option<PythonRunner>,
    /// How deep user tools are calling user tools.
    nesting: usize,
}

/// Runs the Python code of the user tool named by the first argument on an input dict.
pub type PythonRunner = fn(&str, &str, Value, &mut Host) -> Result<Value, ToolError>;

/// User tools calling user tools stop here.
const MAX_NESTING: usize = 8;

/// What became of one call from the program.
#[derive(Debug)]
pub enum Dispatch {
    /// The tool returned a value.
    Return(Value),
    /// The tool raised; the program may catch it.
    Raise(ToolError),
    /// A limit was hit; the run ends, uncatchably.
    Stop(LimitHit),
}

/// A run limit that ended the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitHit {
    Time,
    Memory,
    ToolCalls,
}

impl Host {
    #[must_use]
    pub fn new(registry: Registry, ctx: ToolContext, limits: Limits, started: Instant) -> Self {
        Self { registry, ctx, limits, started, tool_calls: 0, python: None, nesting: 0 }
    }

    /// Whether the wall-clock deadline has passed.
    #[must_use]
    pub fn past_deadline(&self) -> bool {
        Instant::now() >= self.ctx.deadline
    }

    /// Calls the tool `name`. Unknown and disabled names raise `NameError` listing the tools.
    pub fn call(&mut self, name: &str, positional: Vec<Value>, keywords: Vec<(String, Value)>) -> Dispatch {
        if self.past_deadline() {
            return Dispatch::Stop(LimitHit::Time);
        }
        let Some(spec) = self.registry.get(name) else {
            if self.registry.user_tool(name).is_some() {
                return self.user_tool(name, positional, keywords);
            }
            if self.registry.is_dropin(name) {
                return self.dropin(name, &positional, keywords);
            }
            return self.mcp_function(name, &positional, keywords);
        };
        if let Err(hit) = self.count_call() {
            return Dispatch::Stop(hit);
        }
        let result = self.registry.call(&mut self.ctx, spec, positional, keywords);
        self.settle(result)
    }

    /// What a tool's result means for the program: a value, a catchable exception, or — for a
    /// timeout once the run's deadline has passed — the end of the run.
    fn settle(&self, result: Result<Value, ToolError>) -> Dispatch {
        match result {
            Ok(value) => Dispatch::Return(value),
            Err(err) if err.kind == ErrorKind::Timeout && self.past_deadline() => Dispatch::Stop(LimitHit::Time),
            Err(err) => Dispatch::Raise(err),
        }
    }

    /// Counts one call against the budget; a call past it is refused and not counted.
    pub fn count_call(&mut self) -> Result<(), LimitHit> {
        if self.tool_calls >= self.limits.max_tool_calls {
            return Err(LimitHit::ToolCalls);
        }
        self.tool_calls += 1;
        Ok(())
    }

    /// A tool from the user's Markdown tool files.
    fn user_tool(&mut self, name: &str, positional: Vec<Value>, keywords: Vec<(String, Value)>) -> Dispatch {
        let Some(tool) = self.registry.user_tool(name).cloned() else {
            return Dispatch::Raise(self.unknown_name(name));
        };
        if let Err(hit) = self.count_call() {
            return Dispatch::Stop(hit);
        }
        let input = match call::bind(&tool, positional, keywords) {
            Ok(input) => input,
            Err(err) => return Dispatch::Raise(err),
        };
        let result = match (tool.tool.language, self.python) {
            (Language::Python, Some(runner)) => {
                if self.nesting >= MAX_NESTING {
                    return Dispatch::Raise(ToolError::runtime(format!(
                        "{name}() nests user tools more than {MAX_NESTING} deep"
                    )));
                }
                self.nesting += 1;
                let result = runner(&tool.tool.name, &tool.tool.code, input, self);
                self.nesting -= 1;
                result
            }
            (Language::Python, None) => Err(ToolError::runtime(format!("{name}() needs a Python backend"))),
            _ => call::run_on_host(&self.ctx, &tool, &input),
        };
        self.settle(result)
    }

    /// A Python drop-in, run by the run's one worker (started on first use).
    fn dropin(&mut self, name: &str, positional: &[Value], keywords: Vec<(String, Value)>) -> Dispatch {
        if !positional.is_empty() {
            return Dispatch::Raise(ToolError::type_error(format!("{name}() takes keyword arguments only")));
        }
        if let Err(hit) = self.count_call() {
            return Dispatch::Stop(hit);
        }
        if self.ctx.dropin_worker.is_none() {
            match Worker::start(&self.ctx.dropin_files, self.ctx.workspace.root()) {
                Ok(worker) => {
                    self.ctx.dropin_worker = Some(worker);
                    self.ctx.dropin_workers_started += 1;
                }
                Err(err) => return Dispatch::Raise(err),
            }
        }
        let timeout = pyworker::CALL_TIMEOUT.min(self.ctx.remaining());
        let args = Value::Dict(keywords.into_iter().map(|(k, v)| (Value::Str(k), v)).collect());
        let Some(worker) = self.ctx.dropin_worker.as_mut() else {
            return Dispatch::Raise(ToolError::runtime("no Python worker"));
        };
        match worker.call(name, &args, timeout) {
            Ok(value) => Dispatch::Return(value),
            Err(err) => {
                if err.kind == ErrorKind::Timeout {
                    // A worker stuck in a call is killed and reaped; the next call starts another.
                    self.ctx.dropin_worker = None;
                    if self.past_deadline() {
                        return Dispatch::Stop(LimitHit::Time);
                    }
                }
                Dispatch::Raise(err)
            }
        }
    }

    /// A `server__tool` function of an MCP server, or a `NameError`.
    fn mcp_function(&mut self, name: &str, positional: &[Value], keywords: Vec<(String, Value)>) -> Dispatch {
        if !name.contains("__") || self.registry.get("mcp_call").is_none() {
            return Dispatch::Raise(self.unknown_name(name));
        }
        let (server, tool) = match mcp::resolve_function(&mut self.ctx, name) {
            None => return Dispatch::Raise(self.unknown_name(name)),
            Some(Err(err)) => return Dispatch::Raise(err),
            Some(Ok(found)) => found,
        };
        if !positional.is_empty() {
            return Dispatch::Raise(ToolError::type_error(format!("{name}() takes keyword arguments only")));
        }
        if let Err(hit) = self.count_call() {
            return Dispatch::Stop(hit);
        }
        let arguments = Value::Dict(keywords.into_iter().map(|(k, v)| (Value::Str(k), v)).collect());
        let result = mcp::call_tool(&mut self.ctx, &server, &tool, &arguments);
        self.settle(result)
    }

    /// Whether `name` is an offered tool (for bare references such as `f = view`).
    #[must_use]
    pub fn has_tool(&self, name: &str) -> bool {
        self.registry.get(name).is_some()
    }

    /// The `NameError` for a name that is neither defined nor an offered tool.
    #[must_use]
    pub fn unknown_name(&self, name: &str) -> ToolError {
        let available = self.registry.names();
        let message = if self.registry.is_disabled(name) {
            format!(
                "name '{name}' is not defined: the tool '{name}' is disabled by configuration (available tools: {available})"
            )
        } else {
            format!("name '{name}' is not defined (available tools: {available})")
        };
        ToolError::new(ErrorKind::Name, message)
    }

    /// The exception type and message for a limit, naming its value and the flag that raises it.
    #[must_use]
    pub fn limit_message(&self, hit: LimitHit) -> (&'static str, String) {
        match hit {
            LimitHit::Time => (
                "TimeoutError",
                format!("time limit of {} exceeded (raise it with --timeout)", format_seconds(self.limits.timeout)),
            ),
            LimitHit::Memory => (
                "MemoryError",
                format!(
                    "memory limit of {} exceeded (raise it with --max-memory)",
                    format_size(self.limits.max_memory)
                ),
            ),
            LimitHit::ToolCalls => (
                "RuntimeError",
                format!("tool-call limit of {} reached (raise it with --max-tool-calls)", self.limits.max_tool_calls),
            ),
        }
    }
}
