//! The minijinja environment over templates embedded in the binary, with strict undefined
//! values: a template that names a missing variable fails to render instead of printing nothing.
//!
//! Every model-facing text — `codeact instructions`, the session-start context, the installed
//! instructions and agent files, the plugin's generated files — renders `reference.md.j2` from
//! the same tool catalogue.

use anyhow::{Context, Result};
use minijinja::{Environment, UndefinedBehavior, Value, context};
use serde::Serialize;

use crate::backend::Backend;
use crate::catalog::Catalog;
use crate::catalog::entry::{Source, ToolDoc};
use crate::copilot::MARKER_PREFIX;
use crate::limits::{Limits, format_seconds, format_size};
use crate::route::Route;

const TEMPLATES: &[(&str, &str)] = &[
    ("reference.md.j2", include_str!("../templates/reference.md.j2")),
    ("python-monty.md.j2", include_str!("../templates/python-monty.md.j2")),
    ("python-wasm.md.j2", include_str!("../templates/python-wasm.md.j2")),
    ("python-hyperlight.md.j2", include_str!("../templates/python-hyperlight.md.j2")),
    ("codeact.instructions.md.j2", include_str!("../templates/codeact.instructions.md.j2")),
    ("codeact.agent.md.j2", include_str!("../templates/codeact.agent.md.j2")),
    ("plugin/codeact.agent.md.j2", include_str!("../templates/plugin/codeact.agent.md.j2")),
    ("plugin/codeact-install.SKILL.md.j2", include_str!("../templates/plugin/codeact-install.SKILL.md.j2")),
    ("plugin/codeact-install.run.sh.j2", include_str!("../templates/plugin/codeact-install.run.sh.j2")),
];

/// The files of the Copilot CLI plugin folder that codeact renders, by path in the folder, and
/// their templates.
const PLUGIN_FILES: &[(&str, &str)] = &[
    ("agents/codeact.agent.md", "plugin/codeact.agent.md.j2"),
    ("skills/codeact-install/SKILL.md", "plugin/codeact-install.SKILL.md.j2"),
    ("skills/codeact-install/run.sh", "plugin/codeact-install.run.sh.j2"),
];

/// What the reference needs to know.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reference<'a> {
    pub(crate) backend: Backend,
    /// Where a program Monty cannot run runs again (`--backend auto` with CPython installed).
    pub(crate) fallback: Option<Backend>,
    pub(crate) catalog: &'a Catalog,
    pub(crate) limits: &'a Limits,
    /// How the model invokes codeact: an absolute path, `codeact`, or a launcher command.
    pub(crate) binary: &'a str,
    pub(crate) route: Route,
    /// What the MCP server's `run` tool does beyond running a program.
    pub(crate) serving: Serving,
}

/// What an MCP server's `run` calls do beyond running a program, as the reference says it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Serving {
    /// Whether what a program defines stays for the next `run` call (its sessions).
    pub(crate) keeps_state: bool,
    /// How long a call waits before it answers that the program still runs.
    pub(crate) yield_after: Option<std::time::Duration>,
}

impl Serving {
    /// What a server started with its defaults does, for a model that reaches codeact by
    /// `route` (nothing, on the shell route): the instructions files and the hooks cannot know
    /// the server's flags.
    #[must_use]
    pub(crate) fn defaults(route: Route) -> Self {
        if route != Route::Mcp {
            return Self::default();
        }
        Self { keeps_state: true, yield_after: Some(crate::limits::YIELD_AFTER) }
    }
}

/// Who reads a rendered reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reader {
    /// A model with all of its host's tools.
    Model,
    /// The codeact agent, whose only tool is bash.
    Agent,
    /// A model that reaches codeact as an MCP server's `run` tool.
    Mcp,
}

/// A tool as the templates see it.
#[derive(Debug, Serialize)]
struct ToolView {
    signature: String,
    /// What the signature does not say: the shape of a built-in's result, or a user tool's
    /// description.
    note: Option<String>,
}

/// The shape of the built-in results a signature only calls `dict`. The other built-ins take
/// the arguments of the host tools of the same names and need no more words: every one of them
/// is read on every request of a session.
const RESULT_SHAPES: &[(&str, &str)] =
    &[("grep", "of `{path, line, text}` (+ `context`)"), ("bash", "`{stdout, stderr, returncode}`")];

/// What follows a tool's signature in the reference, with its leading separator.
fn note(doc: &ToolDoc<'_>) -> Option<String> {
    let mut note = match doc.source {
        Source::Builtin => {
            RESULT_SHAPES.iter().find(|(name, _)| *name == doc.name).map(|(_, shape)| format!(" {shape}"))
        }
        Source::File(_) | Source::Mcp(_) => (!doc.description.is_empty()).then(|| format!(": {}", doc.description)),
    };
    if doc.risk.is_some() {
        note = Some(note.map_or_else(|| " not sandboxed".to_owned(), |n| format!("{n}; not sandboxed")));
    }
    note
}

/// The most bytes of MCP function signatures the reference lists, all servers together: about
/// 250 tokens, read on every request, however many tools the servers have. Every server is
/// named; what does not fit is counted, and `mcp_tools(server)` lists it.
const SIGNATURE_BUDGET: usize = 1000;

/// One MCP server as the reference lists it.
#[derive(Debug, Serialize, PartialEq, Eq)]
struct ServerView<'a> {
    name: &'a str,
    /// The signatures listed: the first of its tools, in its order.
    functions: Vec<String>,
    /// How many of its tools are not listed.
    more: usize,
}

/// Each server with as many of its signatures as fit in `budget` bytes: taken a round at a
/// time (every server's first, then every server's second…), so that one large server does
/// not crowd the others out, and a signature that does not fit ends its server's list.
fn budgeted(servers: Vec<(&str, Vec<String>)>, budget: usize) -> Vec<ServerView<'_>> {
    // What separates two signatures in a line.
    const SEPARATOR: usize = ", ".len();
    let mut left = budget;
    let mut views: Vec<(ServerView<'_>, std::vec::IntoIter<String>, bool)> = servers
        .into_iter()
        .map(|(name, functions)| {
            let more = functions.len();
            (ServerView { name, functions: Vec::new(), more }, functions.into_iter(), true)
        })
        .collect();
    let mut progress = true;
    while progress {
        progress = false;
        for (view, rest, open) in views.iter_mut().filter(|(_, _, open)| *open) {
            let Some(next) = rest.next() else {
                *open = false;
                continue;
            };
            let cost = next.len() + SEPARATOR;
            if cost > left {
                *open = false;
                continue;
            }
            left -= cost;
            view.functions.push(next);
            view.more -= 1;
            progress = true;
        }
    }
    views.into_iter().map(|(view, _, _)| view).collect()
}

fn environment() -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_keep_trailing_newline(true);
    for (name, source) in TEMPLATES {
        env.add_template(name, source).with_context(|| format!("failed to load template `{name}`"))?;
    }
    Ok(env)
}

impl Reference<'_> {
    /// The command line that runs a program on this backend (without the here-document).
    #[must_use]
    pub(crate) fn command(&self) -> String {
        format!("{} run --backend {}", self.binary, self.backend.flag(self.fallback))
    }

    fn context(&self, marker: &str, reader: Reader) -> Value {
        let tools: Vec<ToolView> = self
            .catalog
            .tools()
            .map(|tool| {
                let described = tool.describe();
                let note = note(&described);
                ToolView { signature: described.short_signature, note }
            })
            .collect();
        let listed = budgeted(self.catalog.server_signatures(), SIGNATURE_BUDGET);
        let cut = listed.iter().any(|server| server.more > 0);
        let mcp: Vec<Value> = listed.into_iter().map(Value::from_serialize).collect();
        context! {
            command => self.command(),
            tools => tools,
            backend => self.backend.name(),
            fallback => self.fallback.map(Backend::name),
            max_output => self.limits.max_output,
            timeout => format_seconds(self.limits.timeout),
            max_memory => format_size(self.limits.max_memory),
            max_tool_calls => self.limits.max_tool_calls,
            read_only => self.limits.read_only,
            marker => marker,
            mcp_servers => mcp,
            mcp_cut => cut,
            agent => reader == Reader::Agent,
            mcp => reader == Reader::Mcp,
            keeps_state => self.serving.keeps_state,
            yield_after => self.serving.yield_after.map(format_seconds),
        }
    }

    /// The text of `template`, ending in exactly one newline: every byte of it may be read on
    /// every request of a session.
    fn render(&self, template: &str, marker: &str, reader: Reader) -> Result<String> {
        let env = environment()?;
        let text = env
            .get_template(template)?
            .render(self.context(marker, reader))
            .with_context(|| format!("failed to render `{template}`"))?;
        Ok(format!("{}\n", text.trim_end_matches('\n')))
    }

    /// Who reads the reference on this route, with all of the host's tools.
    fn reader(&self) -> Reader {
        match self.route {
            Route::Bash => Reader::Model,
            Route::Mcp => Reader::Mcp,
        }
    }

    /// The Markdown reference a model reads (`codeact instructions`, session-start context, the
    /// MCP server's instructions).
    pub(crate) fn reference(&self) -> Result<String> {
        self.render("reference.md.j2", "", self.reader())
    }

    /// The always-on instructions file, with its marker.
    pub(crate) fn instructions_file(&self) -> Result<String> {
        self.render("codeact.instructions.md.j2", &marker(), self.reader())
    }

    /// The custom agent restricted to `bash`, with its marker.
    pub(crate) fn agent_file(&self) -> Result<String> {
        self.render("codeact.agent.md.j2", &marker(), Reader::Agent)
    }
}

/// Every file of the plugin folder codeact renders (the agent, the install skill and its
/// script), by path in the folder. None of them carries the tool reference: the session-start
/// hook or the installed instructions bring it, once.
pub(crate) fn plugin_files() -> Result<Vec<(&'static str, String)>> {
    let env = environment()?;
    PLUGIN_FILES
        .iter()
        .map(|(path, template)| {
            let text = env.get_template(template)?.render(context! {});
            Ok((*path, text.with_context(|| format!("failed to render `{template}`"))?))
        })
        .collect()
}

/// `Generated by codeact`: short, since an instructions file is read on every request.
fn marker() -> String {
    MARKER_PREFIX.to_owned()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn server(name: &str, tools: usize) -> (&str, Vec<String>) {
        (name, (0..tools).map(|n| format!("{name}_tool_{n:03}(argument, option=…)")).collect())
    }

    /// The bytes the listed signatures take, as the budget counts them.
    fn spent(views: &[ServerView<'_>]) -> usize {
        views.iter().flat_map(|view| &view.functions).map(|f| f.len() + 2).sum()
    }

    #[test]
    fn servers_that_fit_are_listed_whole() {
        let views = budgeted(vec![server("a", 2), server("b", 1)], SIGNATURE_BUDGET);
        let whole: Vec<(&str, usize, usize)> = views.iter().map(|v| (v.name, v.functions.len(), v.more)).collect();
        assert_eq!(whole, [("a", 2, 0), ("b", 1, 0)]);
        assert_eq!(views[0].functions[1], "a_tool_001(argument, option=…)");
    }

    #[test]
    fn past_the_budget_every_server_is_named_and_keeps_its_first_tools() {
        for count in [3, 30, 300] {
            let servers: Vec<String> = (0..count).map(|n| format!("s{n}")).collect();
            let views = budgeted(servers.iter().map(|name| server(name, 40)).collect(), SIGNATURE_BUDGET);
            assert_eq!(views.len(), count, "every server is named");
            assert!(spent(&views) <= SIGNATURE_BUDGET, "{count} servers: {}", spent(&views));
            for view in &views {
                assert_eq!(view.functions.len() + view.more, 40, "{}", view.name);
                // A prefix of its tools, in order.
                for (at, function) in view.functions.iter().enumerate() {
                    assert!(function.starts_with(&format!("{}_tool_{at:03}(", view.name)), "{function}");
                }
            }
            // Round by round: no server has two more listed than another.
            let listed: Vec<usize> = views.iter().map(|view| view.functions.len()).collect();
            let (least, most) = (listed.iter().min().unwrap(), listed.iter().max().unwrap());
            assert!(most - least <= 1, "{listed:?}");
        }
        // One huge server does not crowd out a small one.
        let views = budgeted(vec![server("huge", 500), server("small", 2)], SIGNATURE_BUDGET);
        assert_eq!((views[1].functions.len(), views[1].more), (2, 0));
        assert!(views[0].more > 400);
    }

    #[test]
    fn a_signature_too_long_for_what_is_left_ends_its_servers_list_only() {
        let long = ("long", vec!["x".repeat(SIGNATURE_BUDGET), "short()".to_owned()]);
        let views = budgeted(vec![long, server("b", 3)], SIGNATURE_BUDGET);
        assert_eq!((views[0].functions.len(), views[0].more), (0, 2));
        assert_eq!((views[1].functions.len(), views[1].more), (3, 0));
    }
}
