//! [`ToolSpec`]: one tool's name, description, parameters and return type — the single source
//! that argument binding, `discover`'s JSON Schemas and the instructions' signatures read.

use serde_json::{Value as Json, json};

use super::args::Args;
use super::context::ToolContext;
use super::error::ToolError;
use super::value::Value;

/// The function that runs a tool once its arguments are bound.
pub type Handler = fn(&mut ToolContext, &Args) -> Result<Value, ToolError>;

/// Everything known about one tool.
#[derive(Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    /// One or two sentences for the model.
    pub description: &'static str,
    pub params: &'static [Param],
    /// The Python return type, as written in the instructions (`list[dict]`).
    pub returns: &'static str,
    /// Set for tools that reach beyond the workspace, with why.
    pub risk: Option<&'static str>,
    pub handler: Handler,
}

/// One parameter.
#[derive(Debug)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub default: Default,
    pub doc: &'static str,
}

/// What a parameter accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    Int,
    /// An int or a float.
    Number,
    Bool,
    /// A path or a list of paths.
    Paths,
    StrList,
    /// `[start, end]`, two ints.
    Range,
    /// A list (positional) or a dict (named) of SQL parameters.
    SqlParams,
    /// `**kwargs`: every keyword the other parameters do not take, as a dict.
    Kwargs,
    /// A dict of strings (HTTP headers).
    StrDict,
    /// Any JSON-like value.
    Any,
}

/// A parameter's default; `Required` has none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Default {
    Required,
    None,
    Str(&'static str),
    Int(i64),
    Bool(bool),
}

impl Kind {
    /// The Python annotation.
    #[must_use]
    pub fn python_type(self) -> &'static str {
        match self {
            Self::Str => "str",
            Self::Int => "int",
            Self::Number => "float",
            Self::Bool => "bool",
            Self::Paths => "str | list[str]",
            Self::StrList => "list[str]",
            Self::Range => "list[int]",
            Self::SqlParams => "list | dict",
            Self::Kwargs | Self::Any => "Any",
            Self::StrDict => "dict[str, str]",
        }
    }

    /// The JSON Schema of accepted values (without `null`).
    #[must_use]
    pub fn json_schema(self) -> Json {
        match self {
            Self::Str => json!({"type": "string"}),
            Self::Int => json!({"type": "integer"}),
            Self::Number => json!({"type": "number"}),
            Self::Bool => json!({"type": "boolean"}),
            Self::Paths => json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}),
            Self::StrList => json!({"type": "array", "items": {"type": "string"}}),
            Self::Range => json!({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}),
            Self::SqlParams => json!({"anyOf": [{"type": "array"}, {"type": "object"}]}),
            Self::Kwargs => json!({"type": "object"}),
            Self::StrDict => json!({"type": "object", "additionalProperties": {"type": "string"}}),
            Self::Any => json!({}),
        }
    }

    /// Whether `value` has an accepted shape.
    #[must_use]
    pub fn accepts(self, value: &Value) -> bool {
        let all_str = |items: &[Value]| items.iter().all(|v| matches!(v, Value::Str(_)));
        match (self, value) {
            (Self::Str | Self::Paths, Value::Str(_))
            | (Self::Int | Self::Number, Value::Int(_))
            | (Self::Number, Value::Float(_))
            | (Self::Bool, Value::Bool(_))
            | (Self::SqlParams, Value::List(_) | Value::Tuple(_) | Value::Dict(_))
            | (Self::Kwargs, Value::Dict(_))
            | (Self::Any, _) => true,
            (Self::StrDict, Value::Dict(pairs)) => {
                pairs.iter().all(|(k, v)| matches!((k, v), (Value::Str(_), Value::Str(_))))
            }
            (Self::Paths | Self::StrList, Value::List(items) | Value::Tuple(items)) => all_str(items),
            (Self::Range, Value::List(items) | Value::Tuple(items)) => {
                items.len() == 2 && items.iter().all(|v| matches!(v, Value::Int(_)))
            }
            _ => false,
        }
    }
}

impl Default {
    /// The default as a Python literal, for signatures.
    #[must_use]
    pub fn python_literal(self) -> Option<String> {
        match self {
            Self::Required => None,
            Self::None => Some("None".into()),
            Self::Str(s) => Some(format!("{s:?}")),
            Self::Int(i) => Some(i.to_string()),
            Self::Bool(b) => Some(if b { "True" } else { "False" }.into()),
        }
    }

    /// The default as a bound value.
    #[must_use]
    pub fn value(self) -> Value {
        match self {
            Self::Required | Self::None => Value::None,
            Self::Str(s) => Value::Str(s.into()),
            Self::Int(i) => Value::Int(i),
            Self::Bool(b) => Value::Bool(b),
        }
    }
}

impl ToolSpec {
    /// The Python signature: `view(path: str, view_range: list[int] | None = None) -> str`.
    #[must_use]
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| {
                if p.kind == Kind::Kwargs {
                    return format!("**{}", p.name);
                }
                let optional = if p.default == Default::None { " | None" } else { "" };
                match p.default.python_literal() {
                    Some(literal) => format!("{}: {}{optional} = {literal}", p.name, p.kind.python_type()),
                    None => format!("{}: {}", p.name, p.kind.python_type()),
                }
            })
            .collect();
        format!("{}({}) -> {}", self.name, params.join(", "), self.returns)
    }

    /// The signature without annotations, as the instructions show it to save tokens:
    /// `view(path, view_range=None) -> str`. Defaults show the types that matter.
    #[must_use]
    pub fn short_signature(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| match p.default.python_literal() {
                _ if p.kind == Kind::Kwargs => format!("**{}", p.name),
                Some(literal) => format!("{}={literal}", p.name),
                None => p.name.to_owned(),
            })
            .collect();
        format!("{}({}) -> {}", self.name, params.join(", "), self.returns)
    }

    /// The JSON Schema of the keyword arguments.
    #[must_use]
    pub fn parameters_schema(&self) -> Json {
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for param in self.params.iter().filter(|p| p.kind != Kind::Kwargs) {
            let mut schema = param.kind.json_schema();
            if param.default == Default::None {
                schema = json!({"anyOf": [schema, {"type": "null"}]});
            }
            if let Json::Object(map) = &mut schema {
                map.insert("description".into(), param.doc.into());
                if !matches!(param.default, Default::Required | Default::None) {
                    map.insert("default".into(), param.default.value().to_json());
                }
            }
            if param.default == Default::Required {
                required.push(param.name);
            }
            properties.insert(param.name.into(), schema);
        }
        let open = self.params.iter().any(|p| p.kind == Kind::Kwargs);
        json!({"type": "object", "properties": properties, "required": required, "additionalProperties": open})
    }
}
