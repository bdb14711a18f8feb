//! A tool's result against its output schema: structured content, when a result has it, is the
//! value, checked against the schema and unwrapped from the Python SDK's `{"result": …}`;
//! without it, the content blocks are (see [`content::content_value`]).

use jsonschema::Validator;
use serde_json::{Value as Json, json};

use super::{content, schema};
use crate::tools::Value;

/// Validation errors quoted when structured content does not match its schema.
const ERRORS_SHOWN: usize = 2;

/// The Python SDK's wrapping of a plain return value (`-> int`, `-> str`…): an object schema
/// whose only property, and only required one, is `result`. Its `title` usually ends in
/// `Output`, which is not relied on.
#[must_use]
pub(crate) fn is_result_wrapper(output_schema: &Json) -> bool {
    let object = output_schema.get("type").is_none_or(|kind| kind == "object");
    let properties = output_schema.get("properties").and_then(Json::as_object);
    object
        && properties.is_some_and(|properties| properties.len() == 1 && properties.contains_key("result"))
        && output_schema.get("required") == Some(&json!(["result"]))
}

/// A tool's output schema, compiled once: hold one per tool and call
/// [`OutputCheck::tool_result`] for every call.
///
/// A schema that does not compile (invalid, or with a `$ref` that cannot be resolved offline) is
/// treated as absent, wrapper or not: a server's broken schema must not fail its calls.
#[derive(Debug, Clone, Default)]
pub(crate) struct OutputCheck {
    validator: Option<Validator>,
    wrapper: bool,
}

impl OutputCheck {
    #[must_use]
    pub(crate) fn new(output_schema: Option<&Json>) -> Self {
        let Some((schema, validator)) = output_schema.and_then(|s| schema::compile(s).map(|v| (s, v))) else {
            return Self::default();
        };
        Self { validator: Some(validator), wrapper: is_result_wrapper(schema) }
    }

    /// The value of a tool result that is not `isError`.
    ///
    /// Structured content, when present, is the value: checked against the output schema (a
    /// mismatch is `Err` with the first errors), and unwrapped from `{"result": …}` when the
    /// schema is [the SDK's wrapper](is_result_wrapper). Otherwise the content blocks: their
    /// text joined by newlines when all are text (or there are none), else a list of one dict
    /// per block (see [`content::content_value`]).
    pub(crate) fn tool_result(&self, result: &Json) -> Result<Value, String> {
        match result.get("structuredContent") {
            Some(structured) if !structured.is_null() => {
                if let Some(validator) = &self.validator {
                    mismatch(validator, structured)?;
                }
                let unwrapped = if self.wrapper { structured.get("result") } else { None };
                Ok(Value::from_json(unwrapped.unwrap_or(structured)))
            }
            _ => Ok(content::content_value(result)),
        }
    }
}

/// [`OutputCheck::tool_result`] with the schema compiled for this one call.
#[cfg(test)]
pub(crate) fn tool_result(result: &Json, output_schema: Option<&Json>) -> Result<Value, String> {
    OutputCheck::new(output_schema).tool_result(result)
}

/// `Err` with the first errors of `structured` against the output schema, each as
/// `<JSON pointer>: <what>` (the pointer left out at the top level).
fn mismatch(validator: &Validator, structured: &Json) -> Result<(), String> {
    if validator.is_valid(structured) {
        return Ok(());
    }
    let errors: Vec<String> = validator
        .iter_errors(structured)
        .map(|error| {
            let what = schema::describe(&error);
            match error.instance_path().as_str() {
                "" => what,
                pointer => format!("{pointer}: {what}"),
            }
        })
        .collect();
    let mut shown: Vec<String> = errors.iter().take(ERRORS_SHOWN).cloned().collect();
    if errors.len() > ERRORS_SHOWN {
        shown.push(format!("and {} more", errors.len() - ERRORS_SHOWN));
    }
    let shown = shown.join("; ");
    Err(format!("returned structured content that does not match its output schema: {shown}"))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn str(text: &str) -> Value {
        Value::Str(text.into())
    }

    #[test]
    fn the_python_sdk_wrapper_is_recognised() {
        let wrapper = json!({"type": "object", "title": "addOutput", "properties": {"result": {"type": "integer"}},
                             "required": ["result"]});
        assert!(is_result_wrapper(&wrapper));
        assert!(is_result_wrapper(&json!({"properties": {"result": {}}, "required": ["result"]})));
        assert!(!is_result_wrapper(&json!({"type": "object", "properties": {"result": {}}})));
        assert!(!is_result_wrapper(&json!({"type": "object", "properties": {"result": {}, "n": {}},
                                           "required": ["result"]})));
        assert!(!is_result_wrapper(&json!({"type": "array", "properties": {"result": {}}, "required": ["result"]})));
    }

    #[test]
    fn wrapped_structured_content_is_unwrapped() {
        let schema = json!({"type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"]});
        let result = json!({"content": [{"type": "text", "text": "\"HI\""}], "structuredContent": {"result": "HI"}});
        assert_eq!(tool_result(&result, Some(&schema)), Ok(str("HI")));
        let none = json!({"content": [], "structuredContent": {"result": null}});
        assert_eq!(tool_result(&none, Some(&schema)), Err(
            "returned structured content that does not match its output schema: /result: None is not of type \"string\""
                .to_owned()
        ));
    }

    #[test]
    fn structured_content_without_a_schema_is_returned_as_it_is() {
        let result = json!({"content": [], "structuredContent": {"result": 5}});
        assert_eq!(tool_result(&result, None), Ok(Value::dict([("result", Value::Int(5))])));
    }

    #[test]
    fn structured_content_that_matches_its_schema_is_the_value() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let result = json!({"content": [{"type": "text", "text": "{\"n\": 1}"}], "structuredContent": {"n": 1}});
        assert_eq!(tool_result(&result, Some(&schema)), Ok(Value::dict([("n", Value::Int(1))])));
    }

    #[test]
    fn structured_content_that_breaks_its_schema_is_an_error() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}, "m": {"type": "integer"}},
                            "required": ["n", "m", "k"]});
        let result = json!({"structuredContent": {"n": "not an int", "m": "x"}});
        assert_eq!(
            tool_result(&result, Some(&schema)),
            Err("returned structured content that does not match its output schema: \
                 missing required key 'k'; /n: 'not an int' is not of type \"integer\"; and 1 more"
                .to_owned())
        );
    }

    #[test]
    fn an_output_schema_that_does_not_compile_is_ignored() {
        let invalid =
            json!({"type": "object", "properties": {"result": {"type": "no such type"}}, "required": ["result"]});
        let result = json!({"structuredContent": {"result": 5}});
        assert_eq!(tool_result(&result, Some(&invalid)), Ok(Value::dict([("result", Value::Int(5))])));
        let remote = json!({"$ref": "http://example.com/schema.json"});
        assert_eq!(tool_result(&result, Some(&remote)), Ok(Value::dict([("result", Value::Int(5))])));
    }
}
