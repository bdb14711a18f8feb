//! A call's keyword arguments against an MCP tool's `inputSchema`, checked before the call is
//! sent: a typo, a missing argument or a wrong type raises a `TypeError` that names the argument,
//! as a Python function would, instead of a server's `-32602` or a keyword silently ignored.
//!
//! Pure functions, no I/O: a schema is never fetched, so a `$ref` to a URL fails to resolve and
//! that schema checks nothing. Messages are the text of a `TypeError`; the caller raises it.

use std::fmt::Write as _;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::{Map, Value as Json};

use super::python_repr::{short_repr, write_str_repr};
use crate::tools::args::missing_arguments;

/// The most options of an `enum` a message lists.
const MAX_OPTIONS: usize = 5;

/// Keywords by which a schema accepts names its `properties` do not list; where one is present
/// the names are left to the validator.
const OPEN_KEYWORDS: [&str; 10] = [
    "patternProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "$dynamicRef",
    "if",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
];

/// A tool's input schema, compiled once: hold one per tool and call [`ArgumentCheck::check`]
/// for every call, rather than compiling the schema each time.
///
/// A schema that does not compile (invalid, or with a `$ref` that cannot be resolved offline),
/// or whose `type` is not `"object"`, checks nothing: the server still checks its own arguments,
/// and a broken schema must not make a tool uncallable.
#[derive(Debug, Clone)]
pub(crate) struct ArgumentCheck {
    validator: Option<Validator>,
    /// The names the tool accepts, in schema order; `None` when it accepts any.
    names: Option<Vec<String>>,
    required: Vec<String>,
}

impl ArgumentCheck {
    #[must_use]
    pub(crate) fn new(schema: &Json) -> Self {
        let validator = if is_object_schema(schema) { compile(schema) } else { None };
        if validator.is_none() {
            return Self { validator: None, names: None, required: Vec::new() };
        }
        let required = schema
            .get("required")
            .and_then(Json::as_array)
            .map(|names| names.iter().filter_map(Json::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        Self { validator, names: closed_names(schema), required }
    }

    /// The `TypeError` message for `arguments` of a call to `function`, if they violate the
    /// schema, in the order Python checks: an unexpected keyword, then missing ones, then values.
    ///
    /// An argument not among `properties` is refused unless the schema says extras are welcome
    /// (`additionalProperties` `true` or a schema): JSON Schema allows extras by default, but a
    /// typo such as `numbrs=` must not be sent and ignored.
    pub(crate) fn check(&self, function: &str, arguments: &Map<String, Json>) -> Result<(), String> {
        let Some(validator) = &self.validator else { return Ok(()) };
        if let Some(names) = &self.names
            && let Some(unexpected) = arguments.keys().find(|key| !names.contains(key))
        {
            let accepted = if names.is_empty() {
                "it takes no arguments".to_owned()
            } else {
                format!("accepted: {}", names.join(", "))
            };
            return Err(format!("{function}() got an unexpected keyword argument '{unexpected}' ({accepted})"));
        }
        let missing: Vec<&str> =
            self.required.iter().filter(|name| !arguments.contains_key(*name)).map(String::as_str).collect();
        if !missing.is_empty() {
            return Err(missing_arguments(function, &missing));
        }
        let instance = Json::Object(arguments.clone());
        if validator.is_valid(&instance) {
            return Ok(());
        }
        match validator.iter_errors(&instance).next() {
            Some(error) => Err(value_message(function, &instance, &error)),
            None => Ok(()),
        }
    }
}

/// Checks `arguments` against `schema` once; see [`ArgumentCheck`], which compiles it once for
/// many calls.
#[cfg(test)]
fn check_arguments(function: &str, schema: &Json, arguments: &Map<String, Json>) -> Result<(), String> {
    ArgumentCheck::new(schema).check(function, arguments)
}

/// Compiles `schema` without fetching anything and without asserting `format` (a client's format
/// checks may disagree with the server's, and JSON Schema 2020-12 makes them annotations).
pub(super) fn compile(schema: &Json) -> Option<Validator> {
    jsonschema::options().offline().should_validate_formats(false).build(schema).ok()
}

/// MCP input schemas are objects; one whose `type` says otherwise (or a boolean schema) is not
/// checked.
fn is_object_schema(schema: &Json) -> bool {
    match schema.get("type") {
        None => schema.is_object(),
        Some(Json::String(kind)) => kind == "object",
        Some(Json::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        Some(_) => false,
    }
}

/// The names a schema accepts, when it lists them all: `properties` present, and extras neither
/// welcomed by `additionalProperties` nor possible through another keyword.
fn closed_names(schema: &Json) -> Option<Vec<String>> {
    let properties = schema.get("properties")?.as_object()?;
    if OPEN_KEYWORDS.iter().any(|keyword| schema.get(keyword).is_some()) {
        return None;
    }
    match schema.get("additionalProperties") {
        None | Some(Json::Bool(false)) => Some(properties.keys().cloned().collect()),
        Some(_) => None,
    }
}

/// `f() argument 'config'['port']: 'x' is not of type "integer"`: the argument is the first
/// segment of the error's instance path, the rest indexes into it as Python would.
fn value_message(function: &str, arguments: &Json, error: &ValidationError<'_>) -> String {
    let what = describe(error);
    let pointer = error.instance_path().as_str();
    let mut segments = pointer.split('/').skip(1).map(unescape);
    let Some(name) = segments.next() else {
        return format!("{function}() arguments do not match the tool's input schema: {what}");
    };
    let mut path = format!("'{name}'");
    let mut current = arguments.get(&name);
    for segment in segments {
        match current {
            Some(Json::Array(items)) if segment.parse::<usize>().is_ok() => {
                current = segment.parse::<usize>().ok().and_then(|i| items.get(i));
                let _ = write!(path, "[{segment}]");
            }
            _ => {
                current = current.and_then(|value| value.get(&segment));
                path.push('[');
                write_str_repr(&mut path, &segment);
                path.push(']');
            }
        }
    }
    format!("{function}() argument {path}: {what}")
}

/// What is wrong, short: the library's message with the value in Python's notation, cut.
pub(super) fn describe(error: &ValidationError<'_>) -> String {
    match error.kind() {
        ValidationErrorKind::Required { property } => match property {
            Json::String(key) => {
                let mut shown = String::new();
                write_str_repr(&mut shown, key);
                format!("missing required key {shown}")
            }
            other => format!("missing required key {other}"),
        },
        ValidationErrorKind::Enum { options } => {
            let options = options.as_array().map_or(&[][..], Vec::as_slice);
            let mut shown: Vec<String> = options.iter().take(MAX_OPTIONS).map(short_repr).collect();
            if options.len() > MAX_OPTIONS {
                shown.push(format!("{} others", options.len() - MAX_OPTIONS));
            }
            let listed = match shown.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, init)) => format!("{} or {last}", init.join(", ")),
                None => "nothing".to_owned(),
            };
            format!("{} is not one of {listed}", short_repr(error.instance()))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{} is not {}", short_repr(error.instance()), short_repr(expected_value))
        }
        _ => error.masked_with(short_repr(error.instance())).to_string(),
    }
}

/// A JSON Pointer segment with `~1` and `~0` undone.
fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn stats_schema() -> Json {
        json!({
            "type": "object",
            "properties": {
                "numbers": {"type": "array", "items": {"type": "number"}},
                "precision": {"type": "integer", "minimum": 0},
                "mode": {"enum": ["mean", "median"]},
                "config": {
                    "type": "object",
                    "properties": {"port": {"type": "integer"}, "host": {"type": "string"}},
                    "required": ["host"]
                }
            },
            "required": ["numbers"]
        })
    }

    fn check(schema: &Json, arguments: Json) -> Result<(), String> {
        let Json::Object(arguments) = arguments else { panic!("arguments must be an object") };
        check_arguments("ev__stats", schema, &arguments)
    }

    #[test]
    fn arguments_that_match_pass() {
        assert_eq!(check(&stats_schema(), json!({"numbers": [1, 2.5], "precision": 2, "mode": "mean"})), Ok(()));
    }

    #[test]
    fn a_missing_required_argument_is_named() {
        assert_eq!(
            check(&stats_schema(), json!({"precision": 2})),
            Err("ev__stats() missing required argument 'numbers'".to_owned())
        );
    }

    #[test]
    fn several_missing_arguments_are_listed_as_python_lists_them() {
        let schema = json!({"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "required": ["a", "b", "c"]});
        assert_eq!(
            check(&schema, json!({"c": 1})),
            Err("ev__stats() missing 2 required arguments: 'a' and 'b'".to_owned())
        );
        assert_eq!(
            check(&schema, json!({})),
            Err("ev__stats() missing 3 required arguments: 'a', 'b', and 'c'".to_owned())
        );
    }

    #[test]
    fn an_unknown_argument_is_refused_with_the_accepted_names() {
        assert_eq!(
            check(&stats_schema(), json!({"numbrs": [1]})),
            Err("ev__stats() got an unexpected keyword argument 'numbrs' (accepted: numbers, precision, mode, config)"
                .to_owned())
        );
    }

    #[test]
    fn an_unknown_argument_is_refused_when_additional_properties_is_false() {
        let schema = json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        assert_eq!(
            check(&schema, json!({"b": 1})),
            Err("ev__stats() got an unexpected keyword argument 'b' (accepted: a)".to_owned())
        );
    }

    #[test]
    fn a_tool_without_properties_listed_as_empty_takes_no_arguments() {
        let schema = json!({"type": "object", "properties": {}});
        assert_eq!(
            check(&schema, json!({"x": 1})),
            Err("ev__stats() got an unexpected keyword argument 'x' (it takes no arguments)".to_owned())
        );
    }

    #[test]
    fn extras_pass_where_the_schema_welcomes_them() {
        let open = json!({"type": "object", "properties": {"a": {}}, "additionalProperties": true});
        assert_eq!(check(&open, json!({"a": 1, "b": 2})), Ok(()));
        let typed = json!({"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}});
        assert_eq!(check(&typed, json!({"a": 1, "b": "x"})), Ok(()));
        assert_eq!(
            check(&typed, json!({"a": 1, "b": 2})),
            Err("ev__stats() argument 'b': 2 is not of type \"string\"".to_owned())
        );
        let patterned = json!({"type": "object", "properties": {"a": {}}, "patternProperties": {"^x_": {}}});
        assert_eq!(check(&patterned, json!({"x_1": 1})), Ok(()));
    }

    #[test]
    fn a_schema_without_properties_accepts_any_name() {
        assert_eq!(check(&json!({"type": "object"}), json!({"anything": 1})), Ok(()));
    }

    #[test]
    fn a_wrong_type_names_the_argument() {
        assert_eq!(
            check(&stats_schema(), json!({"numbers": "x"})),
            Err("ev__stats() argument 'numbers': 'x' is not of type \"array\"".to_owned())
        );
    }

    #[test]
    fn enum_const_and_minimum_violations_name_the_argument() {
        assert_eq!(
            check(&stats_schema(), json!({"numbers": [], "mode": "max"})),
            Err("ev__stats() argument 'mode': 'max' is not one of 'mean' or 'median'".to_owned())
        );
        let many =
            json!({"type": "object", "properties": {"n": {"enum": [1, 2, 3, 4, 5, 6, 7]}, "k": {"const": "on"}}});
        assert_eq!(
            check(&many, json!({"n": 0})),
            Err("ev__stats() argument 'n': 0 is not one of 1, 2, 3, 4, 5 or 2 others".to_owned())
        );
        assert_eq!(check(&many, json!({"k": "off"})), Err("ev__stats() argument 'k': 'off' is not 'on'".to_owned()));
        assert_eq!(
            check(&stats_schema(), json!({"numbers": [], "precision": -1})),
            Err("ev__stats() argument 'precision': -1 is less than the minimum of 0".to_owned())
        );
    }

    #[test]
    fn a_nested_violation_is_indexed_as_python_would() {
        assert_eq!(
            check(&stats_schema(), json!({"numbers": [1, "two"]})),
            Err("ev__stats() argument 'numbers'[1]: 'two' is not of type \"number\"".to_owned())
        );
        assert_eq!(
            check(&stats_schema(), json!({"numbers": [], "config": {"host": "h", "port": "80"}})),
            Err("ev__stats() argument 'config'['port']: '80' is not of type \"integer\"".to_owned())
        );
        assert_eq!(
            check(&stats_schema(), json!({"numbers": [], "config": {}})),
            Err("ev__stats() argument 'config': missing required key 'host'".to_owned())
        );
    }

    #[test]
    fn a_long_value_is_cut() {
        let long = "y".repeat(500);
        let message = check(&stats_schema(), json!({"numbers": long})).unwrap_err();
        assert_eq!(message, format!("ev__stats() argument 'numbers': '{}... is not of type \"array\"", "y".repeat(56)));
    }

    #[test]
    fn a_schema_that_does_not_compile_checks_nothing() {
        let invalid = json!({"type": "object", "properties": {"a": {"type": 5}}, "required": ["a"]});
        assert_eq!(check(&invalid, json!({"b": 1})), Ok(()));
        let remote = json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}});
        assert_eq!(check(&remote, json!({"b": 1})), Ok(()));
    }

    #[test]
    fn a_schema_that_is_not_an_object_schema_checks_nothing() {
        assert_eq!(check(&json!({"type": "string"}), json!({"b": 1})), Ok(()));
        assert_eq!(check(&json!(false), json!({"b": 1})), Ok(()));
    }

    #[test]
    fn an_older_draft_named_by_its_uri_compiles_without_fetching() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"a": {"type": "integer"}}
        });
        assert_eq!(
            check(&schema, json!({"a": "x"})),
            Err("ev__stats() argument 'a': 'x' is not of type \"integer\"".to_owned())
        );
    }

    #[test]
    fn a_compiled_check_serves_many_calls() {
        let check = ArgumentCheck::new(&stats_schema());
        let good = Map::from_iter([("numbers".to_owned(), json!([1]))]);
        let bad = Map::from_iter([("numbers".to_owned(), json!(1))]);
        assert_eq!(check.check("f", &good), Ok(()));
        assert_eq!(check.check("f", &bad), Err("f() argument 'numbers': 1 is not of type \"array\"".to_owned()));
    }
}
