//! One catalogue entry: a callable tool of any kind, its signature (what its arguments are
//! bound to) and its [`ToolDoc`] (what `discover` and the instructions say about it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value as Json, json};

use crate::mcp::McpHelper;
use crate::tools::handler::Builtin;
use crate::tools::spec::{KEYWORDS_ONLY, Signature};
use crate::usertools::load::UserTool;

/// A callable tool.
#[derive(Debug, Clone)]
pub(crate) enum Tool {
    /// A built-in tool.
    Builtin(&'static Builtin),
    /// A Markdown tool file.
    Markdown(Arc<UserTool>),
    /// A Python drop-in.
    DropIn(Arc<DropIn>),
    /// `mcp_call`, `mcp_tools`, or one MCP server's tool as a function.
    Mcp(Arc<McpFunction>),
}

/// A Python drop-in: a `tools/*.py` file run by the run's worker.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DropIn {
    pub(crate) name: String,
    /// Empty until a worker described it.
    pub(crate) description: String,
    pub(crate) path: PathBuf,
    /// The JSON Schema its `TOOL` dict declares, when it declares one.
    pub(crate) parameters: Option<Json>,
}

/// What an MCP entry calls.
#[derive(Debug, Clone)]
pub(crate) enum McpFunction {
    /// One of the helpers (`mcp_call`, `mcp_tools`, `mcp_resources`, …), by what it takes.
    Helper(McpHelper),
    /// `<server>__<tool>(**arguments)`; `read_only` when its server marks it `readOnlyHint`.
    Tool { function: String, server: String, tool: String, description: String, input_schema: Json, read_only: bool },
}

impl PartialEq for McpFunction {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Helper(a), Self::Helper(b)) => a == b,
            (Self::Tool { function: a, server: x, .. }, Self::Tool { function: b, server: y, .. }) => a == b && x == y,
            _ => false,
        }
    }
}

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source<'a> {
    Builtin,
    File(&'a Path),
    Mcp(&'a str),
}

/// Everything said about a tool, computed from its entry alone.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolDoc<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    /// The Python signature with annotations, as `discover` prints it.
    pub(crate) signature: String,
    /// The signature without annotations, as the instructions show it.
    pub(crate) short_signature: String,
    /// The JSON Schema of the keyword arguments.
    pub(crate) parameters: Json,
    pub(crate) returns: &'a str,
    /// Set for tools that reach beyond the workspace, with why.
    pub(crate) risk: Option<&'static str>,
    pub(crate) source: Source<'a>,
}

impl Tool {
    /// The name a program calls it by.
    #[must_use]
    pub(crate) fn name(&self) -> &str {
        self.signature().name
    }

    /// The signature its arguments are bound to.
    #[must_use]
    pub(crate) fn signature(&self) -> Signature<'_> {
        match self {
            Self::Builtin(builtin) => builtin.spec.signature(),
            Self::Markdown(tool) => tool.signature(),
            Self::DropIn(dropin) => Signature { name: &dropin.name, params: &KEYWORDS_ONLY, returns: "Any" },
            Self::Mcp(function) => match function.as_ref() {
                McpFunction::Helper(helper) => helper.spec().signature(),
                McpFunction::Tool { function, .. } => {
                    Signature { name: function, params: &KEYWORDS_ONLY, returns: "Any" }
                }
            },
        }
    }

    /// The server of an MCP server's tool.
    #[must_use]
    pub(crate) fn server(&self) -> Option<&str> {
        match self {
            Self::Mcp(function) => match function.as_ref() {
                McpFunction::Tool { server, .. } => Some(server),
                McpFunction::Helper(_) => None,
            },
            Self::Builtin(_) | Self::Markdown(_) | Self::DropIn(_) => None,
        }
    }

    #[must_use]
    pub(crate) fn describe(&self) -> ToolDoc<'_> {
        let signature = self.signature();
        let (description, risk, source, parameters) = match self {
            Self::Builtin(builtin) => (builtin.spec.description, builtin.spec.risk, Source::Builtin, None),
            Self::Markdown(tool) => (tool.tool.description.as_str(), None, Source::File(&tool.path), None),
            Self::DropIn(dropin) => {
                (dropin.description.as_str(), None, Source::File(&dropin.path), dropin.parameters.clone())
            }
            Self::Mcp(function) => match function.as_ref() {
                McpFunction::Helper(helper) => (helper.spec().description, None, Source::Builtin, None),
                McpFunction::Tool { server, description, input_schema, .. } => {
                    (description.as_str(), None, Source::Mcp(server), Some(input_schema.clone()))
                }
            },
        };
        ToolDoc {
            name: signature.name,
            description,
            signature: signature.full(),
            short_signature: signature.short(),
            parameters: parameters.unwrap_or_else(|| signature.parameters_schema()),
            returns: signature.returns,
            risk,
            source,
        }
    }
}

impl ToolDoc<'_> {
    /// The tool's entry in `discover`'s manifest.
    #[must_use]
    pub(crate) fn to_json(&self) -> Json {
        let mut entry = json!({
            "name": self.name,
            "description": self.description,
            "signature": self.signature,
            "parameters": self.parameters,
            "returns": self.returns,
        });
        if let Json::Object(map) = &mut entry {
            if let Some(risk) = self.risk {
                map.insert("risk".into(), json!({"level": "high", "reason": risk}));
            }
            match self.source {
                Source::Builtin => {}
                Source::File(path) => {
                    map.insert("source".into(), path.display().to_string().into());
                }
                Source::Mcp(server) => {
                    map.insert("source".into(), format!("mcp:{server}").into());
                }
            }
        }
        entry
    }
}
