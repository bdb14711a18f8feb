//! A tool's signature — name, parameters, return type — and the one generator of what is said
//! about it: the Python signature the instructions show, the JSON Schema `discover` prints. The
//! argument binder ([`super::args`]) reads the same parameters, so what is advertised is what is
//! accepted, for built-in and user tools alike.

use std::borrow::Cow;

use serde_json::{Value as Json, json};

use super::value::Value;

/// Everything known about a built-in tool but how it runs.
#[derive(Debug)]
pub(crate) struct ToolSpec {
    pub(crate) name: &'static str,
    /// One or two sentences for the model.
    pub(crate) description: &'static str,
    pub(crate) params: &'static [Param],
    /// The Python return type, as written in the instructions (`list[dict]`).
    pub(crate) returns: &'static str,
    /// Set for tools that reach beyond the workspace, with why.
    pub(crate) risk: Option<&'static str>,
}

impl ToolSpec {
    #[must_use]
    pub(crate) fn signature(&self) -> Signature<'_> {
        Signature { name: self.name, params: self.params, returns: self.returns }
    }
}

/// One parameter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Param {
    pub(crate) name: Cow<'static, str>,
    pub(crate) kind: Kind,
    pub(crate) default: ParamDefault,
    pub(crate) doc: Cow<'static, str>,
}

impl Param {
    /// A parameter every call must pass.
    #[must_use]
    pub(crate) const fn required(name: &'static str, kind: Kind, doc: &'static str) -> Self {
        Self::new(name, kind, ParamDefault::Required, doc)
    }

    /// A parameter that is `None` unless passed.
    #[must_use]
    pub(crate) const fn optional(name: &'static str, kind: Kind, doc: &'static str) -> Self {
        Self::new(name, kind, ParamDefault::None, doc)
    }

    #[must_use]
    pub(crate) const fn new(name: &'static str, kind: Kind, default: ParamDefault, doc: &'static str) -> Self {
        Self { name: Cow::Borrowed(name), kind, default, doc: Cow::Borrowed(doc) }
    }
}

/// What a parameter accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
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
    /// A JSON type as a tool file declares it.
    Json(JsonType),
}

/// A parameter's default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ParamDefault {
    /// Every call passes it.
    Required,
    /// `None` unless passed.
    None,
    /// May be left out, and then is not passed on at all: the tool's own default applies.
    Omitted,
    Str(&'static str),
    Int(i64),
    Bool(bool),
}

/// A JSON type a tool file declares for an input: `string`, `integer[]`, …
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JsonType {
    pub(crate) base: JsonBase,
    /// A list of `base` values (`string[]`).
    pub(crate) list: bool,
}

/// The JSON types tool files use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonBase {
    String,
    Number,
    Integer,
    Boolean,
    Object,
    Array,
}

impl JsonBase {
    /// Every type, in the order error messages list them.
    pub(crate) const ALL: [Self; 6] =
        [Self::String, Self::Number, Self::Integer, Self::Boolean, Self::Object, Self::Array];

    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Object => "object",
            Self::Array => "array",
        }
    }

    fn accepts(self, value: &Value) -> bool {
        matches!(
            (self, value),
            (Self::String, Value::Str(_))
                | (Self::Number, Value::Int(_) | Value::Float(_))
                | (Self::Integer, Value::Int(_))
                | (Self::Boolean, Value::Bool(_))
                | (Self::Object, Value::Dict(_))
                | (Self::Array, Value::List(_) | Value::Tuple(_))
        )
    }
}

impl JsonType {
    /// Parses `string`, `integer[]` and the like.
    #[must_use]
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let (base, list) = match text.strip_suffix("[]") {
            Some(base) => (base, true),
            None => (text, false),
        };
        JsonBase::ALL.into_iter().find(|b| b.name() == base).map(|base| Self { base, list })
    }

    /// The type as the tool file wrote it.
    #[must_use]
    pub(crate) fn name(self) -> String {
        format!("{}{}", self.base.name(), if self.list { "[]" } else { "" })
    }

    fn accepts(self, value: &Value) -> bool {
        match (self.list, value) {
            (true, Value::List(items) | Value::Tuple(items)) => items.iter().all(|v| self.base.accepts(v)),
            (true, _) => false,
            (false, value) => self.base.accepts(value),
        }
    }

    fn schema(self) -> Json {
        if self.list {
            json!({"type": "array", "items": {"type": self.base.name()}})
        } else {
            json!({"type": self.base.name()})
        }
    }
}

impl Kind {
    /// The type as an error message names it: the Python annotation, or a declared JSON type.
    #[must_use]
    pub(crate) fn type_name(self) -> Cow<'static, str> {
        match self {
            Self::Json(ty) => Cow::Owned(ty.name()),
            other => Cow::Borrowed(other.annotation().unwrap_or("Any")),
        }
    }

    /// The Python annotation; none for a declared JSON type.
    #[must_use]
    pub(crate) fn annotation(self) -> Option<&'static str> {
        Some(match self {
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
            Self::Json(_) => return None,
        })
    }

    /// The JSON Schema of accepted values (without `null`).
    #[must_use]
    pub(crate) fn json_schema(self) -> Json {
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
            Self::Json(ty) => ty.schema(),
        }
    }

    /// Whether `value` has an accepted shape.
    #[must_use]
    pub(crate) fn accepts(self, value: &Value) -> bool {
        let all_str = |items: &[Value]| items.iter().all(|v| matches!(v, Value::Str(_)));
        match (self, value) {
            (Self::Json(ty), value) => ty.accepts(value),
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

impl ParamDefault {
    /// The default as a Python literal, for signatures.
    #[must_use]
    pub(crate) fn python_literal(self) -> Option<String> {
        match self {
            Self::Required => None,
            Self::None | Self::Omitted => Some("None".into()),
            Self::Str(s) => Some(format!("{s:?}")),
            Self::Int(i) => Some(i.to_string()),
            Self::Bool(b) => Some(if b { "True" } else { "False" }.into()),
        }
    }

    /// The value a parameter left out has.
    #[must_use]
    pub(crate) fn value(self) -> Value {
        match self {
            Self::Required | Self::None | Self::Omitted => Value::None,
            Self::Str(s) => Value::Str(s.into()),
            Self::Int(i) => Value::Int(i),
            Self::Bool(b) => Value::Bool(b),
        }
    }

    /// Whether the default is a value (`"."`, `0`, `False`) rather than `None` or nothing.
    #[must_use]
    pub(crate) fn is_literal(self) -> bool {
        matches!(self, Self::Str(_) | Self::Int(_) | Self::Bool(_))
    }

    /// Whether an explicit `None` is accepted whatever the kind.
    #[must_use]
    pub(crate) fn accepts_none(self) -> bool {
        matches!(self, Self::None | Self::Omitted)
    }
}

/// A callable's name, parameters and return type: what signatures, schemas and the argument
/// binder are made from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Signature<'a> {
    pub(crate) name: &'a str,
    pub(crate) params: &'a [Param],
    pub(crate) returns: &'a str,
}

impl Signature<'_> {
    /// The Python signature: `view(path: str, view_range: list[int] | None = None) -> str`.
    /// Parameters without an annotation read `name` or `name=default`.
    #[must_use]
    pub(crate) fn full(&self) -> String {
        self.render(|name, p| {
            let literal = p.default.python_literal();
            match (p.kind.annotation(), literal) {
                (Some(annotation), Some(literal)) => {
                    let optional = if p.default == ParamDefault::None { " | None" } else { "" };
                    format!("{name}: {annotation}{optional} = {literal}")
                }
                (Some(annotation), None) => format!("{name}: {annotation}"),
                (None, Some(literal)) => format!("{name}={literal}"),
                (None, None) => name.to_owned(),
            }
        })
    }

    /// The signature without annotations, as the instructions show it to save tokens:
    /// `view(path, view_range=None) -> str`. Defaults show the types that matter.
    #[must_use]
    pub(crate) fn short(&self) -> String {
        self.render(|name, p| match p.default.python_literal() {
            Some(literal) => format!("{name}={literal}"),
            None => name.to_owned(),
        })
    }

    /// `name(a, b=None) -> T`, each parameter written by `param` given how to write its name.
    /// A tool whose name a program cannot write (`read-file`) reads `call_tool("read-file", …)`,
    /// and inputs whose names are not Python names go last, quoted, in `**{"file-path": …}`.
    fn render(&self, param: impl Fn(&str, &Param) -> String) -> String {
        let (plain, quoted): (Vec<&Param>, Vec<&Param>) =
            self.params.iter().partition(|p| p.kind == Kind::Kwargs || is_python_name(&p.name));
        let mut params: Vec<String> = plain
            .into_iter()
            .map(|p| if p.kind == Kind::Kwargs { format!("**{}", p.name) } else { param(&p.name, p) })
            .collect();
        if !quoted.is_empty() {
            let entries: Vec<String> = quoted.into_iter().map(|p| param(&format!("{:?}", p.name), p)).collect();
            params.push(format!("**{{{}}}", entries.join(", ")));
        }
        if is_python_name(self.name) {
            format!("{}({}) -> {}", self.name, params.join(", "), self.returns)
        } else {
            params.insert(0, format!("{:?}", self.name));
            format!("call_tool({}) -> {}", params.join(", "), self.returns)
        }
    }

    /// The JSON Schema of the keyword arguments.
    #[must_use]
    pub(crate) fn parameters_schema(&self) -> Json {
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for param in self.params.iter().filter(|p| p.kind != Kind::Kwargs) {
            let mut schema = param.kind.json_schema();
            if param.default == ParamDefault::None {
                schema = json!({"anyOf": [schema, {"type": "null"}]});
            }
            if let Json::Object(map) = &mut schema {
                if !param.doc.is_empty() {
                    map.insert("description".into(), param.doc.as_ref().into());
                }
                if let ParamDefault::Str(_) | ParamDefault::Int(_) | ParamDefault::Bool(_) = param.default {
                    map.insert("default".into(), param.default.value().to_json());
                }
            }
            if param.default == ParamDefault::Required {
                required.push(param.name.as_ref());
            }
            properties.insert(param.name.to_string(), schema);
        }
        let open = self.params.iter().any(|p| p.kind == Kind::Kwargs);
        json!({"type": "object", "properties": properties, "required": required, "additionalProperties": open})
    }
}

/// The parameters of a tool that takes keyword arguments only, and any of them.
pub(crate) static KEYWORDS_ONLY: [Param; 1] =
    [Param::new("arguments", Kind::Kwargs, ParamDefault::None, "The tool's arguments, as keywords")];

/// Python's keywords, which no call can use as a name (`None`, `class`, …).
const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// Whether a program can write `name` as a function or keyword name: an ASCII Python
/// identifier that is not a keyword (`readFile`, `ReadFile`, `read_file`; not `read-file`).
#[must_use]
pub(crate) fn is_python_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !PYTHON_KEYWORDS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    static PARAMS: [Param; 3] = [
        Param::required("path", Kind::Str, "a file"),
        Param::optional("view_range", Kind::Range, "lines"),
        Param::new("unique", Kind::Json(JsonType { base: JsonBase::Boolean, list: false }), ParamDefault::Omitted, ""),
    ];

    #[test]
    fn signatures_show_annotations_where_the_type_is_python() {
        let signature = Signature { name: "f", params: &PARAMS, returns: "str" };
        assert_eq!(signature.full(), "f(path: str, view_range: list[int] | None = None, unique=None) -> str");
        assert_eq!(signature.short(), "f(path, view_range=None, unique=None) -> str");
        let keywords = Signature { name: "g", params: &KEYWORDS_ONLY, returns: "Any" };
        assert_eq!(
            (keywords.full(), keywords.short()),
            ("g(**arguments) -> Any".into(), "g(**arguments) -> Any".into())
        );
    }

    #[test]
    fn names_a_program_cannot_write_are_quoted() {
        static QUOTED: [Param; 2] = [
            Param::required("file-path", Kind::Str, ""),
            Param::new(
                "maxLines",
                Kind::Json(JsonType { base: JsonBase::Integer, list: false }),
                ParamDefault::Omitted,
                "",
            ),
        ];
        let signature = Signature { name: "read-file", params: &QUOTED, returns: "Any" };
        assert_eq!(signature.short(), r#"call_tool("read-file", maxLines=None, **{"file-path"}) -> Any"#);
        assert_eq!(signature.full(), r#"call_tool("read-file", maxLines=None, **{"file-path": str}) -> Any"#);
        for name in ["read_file", "readFile", "ReadFile", "_x", "a1"] {
            assert!(is_python_name(name), "{name}");
        }
        for name in ["read-file", "1a", "", "None", "class", "a.b", "é"] {
            assert!(!is_python_name(name), "{name}");
        }
    }

    #[test]
    fn declared_types_parse_check_and_name_themselves() {
        let ty = JsonType::parse("integer[]").unwrap();
        assert_eq!(ty.name(), "integer[]");
        assert!(Kind::Json(ty).accepts(&Value::List(vec![Value::Int(1)])));
        assert!(!Kind::Json(ty).accepts(&Value::List(vec![Value::Str("1".into())])));
        assert_eq!(JsonType::parse("str"), None);
        assert_eq!(JsonType::parse("string[][]"), None);
        assert_eq!(Kind::Json(ty).json_schema(), json!({"type": "array", "items": {"type": "integer"}}));
    }
}
