//! The minijinja environment over templates embedded in the binary, with strict undefined
//! values: a template that names a missing variable fails to render instead of printing nothing.

use anyhow::{Context, Result};
use minijinja::{Environment, UndefinedBehavior, context};
use serde::Serialize;

use crate::backend::Backend;
use crate::sandbox::Limits;
use crate::sandbox::limits::{format_seconds, format_size};
use crate::tools::Registry;

const TEMPLATES: &[(&str, &str)] = &[("instructions.md.j2", include_str!("../templates/instructions.md.j2"))];

/// A tool as the templates see it.
#[derive(Debug, Serialize)]
struct ToolView {
    name: &'static str,
    signature: String,
    description: &'static str,
    returns: &'static str,
    risk: Option<&'static str>,
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

/// The Markdown reference a model reads: when to use codeact, how to call it, every tool with
/// its signature and return type, and the backend's real Python limits.
pub fn instructions(backend: Backend, registry: &Registry, limits: &Limits, binary: &str) -> Result<String> {
    let env = environment()?;
    let template = env.get_template("instructions.md.j2")?;
    let tools: Vec<ToolView> = registry
        .tools()
        .iter()
        .map(|t| ToolView {
            name: t.name,
            signature: t.signature(),
            description: t.description,
            returns: t.returns,
            risk: t.risk,
        })
        .collect();
    let notes = backend.python_notes();
    template
        .render(context! {
            command => format!("{binary} run --backend {}", backend.name()),
            tools => tools,
            backend_title => notes.title,
            python_notes => notes.text,
            max_output => limits.max_output,
            timeout => format_seconds(limits.timeout),
            max_memory => format_size(limits.max_memory),
            max_tool_calls => limits.max_tool_calls,
        })
        .context("failed to render `instructions.md.j2`")
}
