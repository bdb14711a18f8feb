//! [`Host`]: what a backend calls when a program calls a tool. It owns the catalogue, the tool
//! context, the run's MCP connections and drop-in worker, counts calls, and enforces the
//! wall-clock deadline and the tool-call budget — the limits a backend's interpreter cannot
//! see for itself. Every call, whatever its kind, is bound once and dispatched by one `match`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::live::{Live, Running};
use crate::catalog::{Catalog, McpFunction, Tool};
use crate::limits::{Limits, format_seconds, format_size};
use crate::mcp::{Mcp, McpHelper, keywords};
use crate::tools::args::{self, Args};
use crate::tools::{ErrorKind, ToolContext, ToolError, Value, files, github, glob, grep, web};
use crate::usertools::call;
use crate::usertools::dropin::{self, DropIns};
use crate::usertools::load::UserTool;
use crate::usertools::markdown::Language;

/// Runs the Python code of the user tool named by the first argument on an input dict, inside
/// the sandbox with this host serving its tool calls. The backend chooses it.
pub(crate) type PythonRunner = fn(&str, &str, Value, &mut Host) -> Result<Value, ToolError>;

/// User tools calling user tools stop here.
const MAX_NESTING: usize = 8;

/// The function that calls a tool by its name: `call_tool("view", path="a.py")`.
const CALL_TOOL: &str = "call_tool";

/// The host side of one run.
#[derive(Debug)]
pub(crate) struct Host {
    catalog: Catalog,
    ctx: ToolContext,
    mcp: Mcp,
    dropins: DropIns,
    limits: Limits,
    /// What the run shares with its watchdog: output, tool calls, the deadline.
    live: Arc<Live>,
    python: PythonRunner,
    /// How deep user tools are calling user tools.
    nesting: usize,
    /// The first tool called that may have changed something (see [`may_change`]).
    changed: Option<String>,
}

/// What became of one call from the program.
#[derive(Debug)]
pub(crate) enum Dispatch {
    /// The tool returned a value.
    Return(Value),
    /// The tool raised; the program may catch it.
    Raise(ToolError),
    /// A limit was hit; the run ends, uncatchably.
    Stop(LimitHit),
}

/// A run limit that ended the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LimitHit {
    Time,
    Memory,
    ToolCalls,
}

/// What a host is made of.
#[derive(Debug)]
pub(crate) struct Parts {
    pub(crate) catalog: Catalog,
    pub(crate) ctx: ToolContext,
    pub(crate) mcp: Mcp,
    pub(crate) dropins: DropIns,
    pub(crate) limits: Limits,
    /// When the run started.
    pub(crate) started: Instant,
    pub(crate) python: PythonRunner,
}

impl Host {
    #[must_use]
    pub(crate) fn new(parts: Parts) -> Self {
        let Parts { catalog, mut ctx, mut mcp, mut dropins, limits, started, python } = parts;
        let live = Arc::new(Live::new(started, ctx.deadline, limits.max_output));
        // A reply the program could not hold is refused, not read.
        mcp.set_max_message(limits.max_memory);
        dropins.set_max_answer(limits.max_memory);
        // Each MCP entry that cannot be used is said once, whether the program uses it or not.
        for problem in mcp.problems().into_iter().chain(mcp.take_warnings()) {
            ctx.warn(&problem);
        }
        Self { catalog, ctx, mcp, dropins, limits, live, python, nesting: 0, changed: None }
    }

    /// The first tool the program called that may have changed something: it wrote, ran a
    /// command, called a user tool, or called an MCP tool its server does not mark read-only.
    /// A program that did is never run again from the start.
    #[must_use]
    pub(crate) fn changed_something(&self) -> Option<&str> {
        self.changed.as_deref()
    }

    /// Sets the run up to start the same program again from the start, on `backend`, because
    /// Monty could not run it, after it called only tools that change nothing: what it printed
    /// is forgotten; the deadline, the tool-call count (so the budget holds for both runs), the
    /// connections and the workers stay.
    pub(crate) fn start_over(&mut self, backend: &'static str, because: &str) {
        debug_assert!(self.changed.is_none(), "a program that changed something is not run again");
        self.live.start_over();
        self.live.run_on(Running { backend, fell_back: Some(because.to_owned()) });
        let _ = self.ctx.take_warnings();
        for problem in self.mcp.problems() {
            self.ctx.warn(&problem);
        }
    }

    /// What the run shares with other threads: its output so far, its tool calls, its deadline.
    #[must_use]
    pub(crate) fn live(&self) -> &Arc<Live> {
        &self.live
    }

    #[must_use]
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    #[must_use]
    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The tool context, for a backend that serves the program's own file reads.
    #[must_use]
    pub(crate) fn context(&self) -> &ToolContext {
        &self.ctx
    }

    /// When the run's wall-clock limit ends.
    #[must_use]
    pub(crate) fn deadline(&self) -> Instant {
        self.ctx.deadline
    }

    /// Moves the deadline on by `by`: time spent before the program could start (loading a
    /// backend) is not the program's. Also lets go of a clock [held](Self::hold_clock).
    #[cfg_attr(not(guest_backend), expect(dead_code, reason = "only the wasm and hyperlight backends run the guest"))]
    pub(crate) fn extend_deadline(&mut self, by: Duration) {
        self.ctx.deadline += by;
        self.live.set_deadline(Some(self.ctx.deadline));
    }

    /// Holds the watchdog's clock while a backend loads (which may take long, once, to compile
    /// a guest): [`extend_deadline`](Self::extend_deadline) lets go of it.
    #[cfg_attr(not(guest_backend), expect(dead_code, reason = "only the wasm and hyperlight backends run the guest"))]
    pub(crate) fn hold_clock(&self) {
        self.live.set_deadline(None);
    }

    /// How long the run has taken so far.
    #[must_use]
    pub(crate) fn elapsed(&self) -> Duration {
        self.live.started().elapsed()
    }

    #[must_use]
    pub(crate) fn tool_calls(&self) -> u64 {
        self.live.tool_calls()
    }

    /// What the tools left for the program's stderr, leaving nothing.
    pub(crate) fn take_warnings(&mut self) -> String {
        self.ctx.take_warnings()
    }

    /// Adds a line to the program's stderr.
    pub(crate) fn warn(&mut self, message: &str) {
        self.ctx.warn(message);
    }

    /// Whether the wall-clock deadline has passed.
    #[must_use]
    pub(crate) fn past_deadline(&self) -> bool {
        Instant::now() >= self.ctx.deadline
    }

    /// Whether `name` is an offered tool (for bare references such as `f = view`), an MCP
    /// server's function included (which may start its server).
    pub(crate) fn has_tool(&mut self, name: &str) -> bool {
        name == CALL_TOOL || self.catalog.get(name).is_some() || self.resolve_mcp_function(name).is_ok()
    }

    /// The `NameError` for a name that is neither defined nor an offered tool.
    #[must_use]
    pub(crate) fn unknown_name(&self, name: &str) -> ToolError {
        self.catalog.unknown_name(name)
    }

    /// Calls the tool `name`. Unknown and disabled names raise `NameError` listing the tools.
    pub(crate) fn call(&mut self, name: &str, mut positional: Vec<Value>, keywords: Vec<(String, Value)>) -> Dispatch {
        if self.past_deadline() {
            return Dispatch::Stop(LimitHit::Time);
        }
        // `call_tool("read-file", …)` reaches any tool by name, also one a program cannot write.
        if name == CALL_TOOL {
            let Some(Value::Str(tool)) = (!positional.is_empty()).then(|| positional.remove(0)) else {
                let message = format!("{CALL_TOOL}() takes the tool's name as a str first, then its arguments");
                return Dispatch::Raise(ToolError::type_error(message));
            };
            return self.call(&tool, positional, keywords);
        }
        let tool = match self.catalog.get(name) {
            Some(tool) => tool.clone(),
            None => match self.resolve_mcp_function(name) {
                Ok(tool) => tool,
                Err(err) => return Dispatch::Raise(err),
            },
        };
        // A call whose arguments do not bind never reaches the tool, and is not counted.
        let args = match args::bind(&tool.signature(), positional, keywords) {
            Ok(args) => args,
            Err(err) => return Dispatch::Raise(err),
        };
        if let Err(hit) = self.count_call() {
            return Dispatch::Stop(hit);
        }
        let changes = may_change(&tool, &args);
        if changes && self.limits.read_only {
            return Dispatch::Raise(read_only_refusal(tool.name()));
        }
        if self.changed.is_none() && changes {
            self.changed = Some(tool.name().to_owned());
        }
        let result = self.run(&tool, args);
        self.settle(result)
    }

    /// Runs a bound call.
    fn run(&mut self, tool: &Tool, args: Args<'_>) -> Result<Value, ToolError> {
        match tool {
            Tool::Builtin(builtin) => (builtin.handler)(&mut self.ctx, &args),
            Tool::Markdown(tool) => self.markdown(tool, args.passed()),
            Tool::DropIn(dropin) => {
                let timeout = dropin::CALL_TIMEOUT.min(self.ctx.remaining());
                self.dropins.call(&dropin.name, &args.passed(), timeout)
            }
            Tool::Mcp(function) => {
                let result = self.mcp_function(function, &args);
                for warning in self.mcp.take_warnings() {
                    self.ctx.warn(&warning);
                }
                result
            }
        }
    }

    /// An MCP server's function, or one of the MCP helpers.
    fn mcp_function(&mut self, function: &McpFunction, args: &Args<'_>) -> Result<Value, ToolError> {
        let deadline = self.ctx.deadline;
        let arguments = |name: &str| keywords::json_arguments(name, args.extra()).map_err(ToolError::type_error);
        let helper = match function {
            McpFunction::Tool { server, tool, function, .. } => {
                return self.mcp.call(server, tool, arguments(function)?, deadline);
            }
            McpFunction::Helper(helper) => *helper,
        };
        let (server, name) = (args.str("server")?, helper.spec().name);
        match helper {
            McpHelper::Call => self.mcp.call(server, args.str("tool")?, arguments(name)?, deadline),
            McpHelper::Tools => self
                .mcp
                .tools(server, deadline)
                .map(|tools| Value::List(tools.iter().map(|tool| Value::from_json(&tool.entry())).collect())),
            McpHelper::Resources => self.mcp.resources(server, deadline),
            McpHelper::ReadResource => self.mcp.read_resource(server, args.str("uri")?, deadline),
            McpHelper::Prompts => self.mcp.prompts(server, deadline),
            McpHelper::GetPrompt => self.mcp.get_prompt(server, args.str("name")?, arguments(name)?, deadline),
        }
    }

    /// A Markdown tool: Python inside the sandbox, anything else on the host.
    fn markdown(&mut self, tool: &UserTool, input: Value) -> Result<Value, ToolError> {
        let name = &tool.tool.name;
        if tool.tool.code.language != Language::Python {
            return call::run_on_host(tool, &input, self.ctx.workspace.root(), self.ctx.remaining());
        }
        if self.nesting >= MAX_NESTING {
            return Err(ToolError::runtime(format!("{name}() nests user tools more than {MAX_NESTING} deep")));
        }
        self.nesting += 1;
        let result = (self.python)(name, &tool.tool.code.source, input, self);
        self.nesting -= 1;
        result
    }

    /// The `<server>__<tool>` function `name` of a configured MCP server, connecting to the
    /// server and adding its tools to the catalogue; or the `NameError` for `name`.
    fn resolve_mcp_function(&mut self, name: &str) -> Result<Tool, ToolError> {
        let unknown = |catalog: &Catalog| catalog.unknown_name(name);
        if !name.contains("__") || !self.catalog.offers_mcp() {
            return Err(unknown(&self.catalog));
        }
        let Some((server, _)) = self.mcp.resolve(name, self.ctx.deadline)? else { return Err(unknown(&self.catalog)) };
        let tools = self.mcp.tools(&server, self.ctx.deadline)?;
        self.catalog.add_server(&server, &tools);
        self.catalog.get(name).cloned().ok_or_else(|| unknown(&self.catalog))
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
    pub(crate) fn count_call(&mut self) -> Result<(), LimitHit> {
        if self.live.tool_calls() >= self.limits.max_tool_calls {
            return Err(LimitHit::ToolCalls);
        }
        self.live.count_tool_call();
        Ok(())
    }

    /// The error that ends a run at a limit, naming its value and the flag that raises it.
    #[must_use]
    pub(crate) fn limit_error(&self, hit: LimitHit) -> ToolError {
        match hit {
            LimitHit::Time => ToolError::new(
                ErrorKind::Timeout,
                format!("time limit of {} exceeded (raise it with --timeout)", format_seconds(self.limits.timeout)),
            ),
            LimitHit::Memory => ToolError::new(
                ErrorKind::Memory,
                format!(
                    "memory limit of {} exceeded (raise it with --max-memory)",
                    format_size(self.limits.max_memory)
                ),
            ),
            LimitHit::ToolCalls => ToolError::runtime(format!(
                "tool-call limit of {} reached (raise it with --max-tool-calls)",
                self.limits.max_tool_calls
            )),
        }
    }
}

/// Why a call is refused in a read-only run.
fn read_only_refusal(name: &str) -> ToolError {
    ToolError::permission(format!(
        "{name}() may change something, and codeact runs read-only here (the agent runs read-only): only view, \
         glob, grep, GET and HEAD fetches and MCP tools marked read-only may be called"
    ))
}

/// Whether a call may change something outside the program: anything but reading files and
/// searching them, fetching with `GET` or `HEAD`, the MCP helpers that list or read, and an MCP
/// tool its server marks `readOnlyHint`. User tools and `mcp_call` count as changing: what they
/// do is not known.
fn may_change(tool: &Tool, args: &Args<'_>) -> bool {
    let reading_method =
        || args.str("method").is_ok_and(|method| ["GET", "HEAD"].contains(&method.to_ascii_uppercase().as_str()));
    match tool {
        Tool::Builtin(builtin) => {
            let reads = [&files::VIEW, &glob::GLOB, &grep::GREP];
            let fetches = [&web::WEB_FETCH, &github::GITHUB_API];
            if reads.iter().any(|read| std::ptr::eq(*read, *builtin)) {
                false
            } else if fetches.iter().any(|fetch| std::ptr::eq(*fetch, *builtin)) {
                !reading_method()
            } else {
                true
            }
        }
        Tool::Markdown(_) | Tool::DropIn(_) => true,
        Tool::Mcp(function) => match function.as_ref() {
            // The others list or read what a server offers.
            McpFunction::Helper(helper) => *helper == McpHelper::Call,
            McpFunction::Tool { read_only, .. } => !read_only,
        },
    }
}
