//! Binds a call's positional and keyword arguments to a [`Signature`] once, for every kind of
//! tool, with the `TypeError`s Python itself would give plus the list of accepted names, so a
//! model can fix the call.

use super::error::ToolError;
use super::spec::{Kind, Param, ParamDefault, Signature};
use super::value::Value;

/// Arguments bound to a tool's parameters, types checked.
#[derive(Debug)]
pub(crate) struct Args<'a> {
    name: &'a str,
    params: &'a [Param],
    /// Each parameter's value: what was passed, else its default.
    values: Vec<Value>,
    /// Whether each parameter was passed.
    given: Vec<bool>,
}

/// Binds `positional` and `keywords` to `signature`'s parameters.
pub(crate) fn bind<'a>(
    signature: &Signature<'a>,
    positional: Vec<Value>,
    keywords: Vec<(String, Value)>,
) -> Result<Args<'a>, ToolError> {
    let (name, params) = (signature.name, signature.params);
    let positional_params = params.iter().filter(|p| p.kind != Kind::Kwargs).count();
    if positional_params == 0 && !positional.is_empty() {
        return Err(ToolError::type_error(format!("{name}() takes keyword arguments only")));
    }
    if positional.len() > positional_params {
        return Err(ToolError::type_error(format!(
            "{name}() takes at most {positional_params} positional arguments ({} given)",
            positional.len()
        )));
    }
    let kwargs = params.iter().position(|p| p.kind == Kind::Kwargs);
    let mut extra = Vec::new();
    let mut slots: Vec<Option<Value>> = vec![None; params.len()];
    let given_positionally = positional.len();
    for (slot, value) in slots.iter_mut().zip(positional) {
        *slot = Some(value);
    }
    for (key, value) in keywords {
        let named = params.iter().position(|p| p.name == key && p.kind != Kind::Kwargs);
        // With `**`, what came positionally is positional-only, as in `def f(server, /, **kw)`:
        // a keyword of the same name is one of the `**` arguments (`mcp_call("s", "t", server=1)`).
        let named = named.filter(|&index| kwargs.is_none() || index >= given_positionally);
        let Some(index) = named else {
            if kwargs.is_some() {
                extra.push((Value::Str(key), value));
                continue;
            }
            let accepted: Vec<&str> = params.iter().map(|p| p.name.as_ref()).collect();
            return Err(ToolError::type_error(format!(
                "{name}() got an unexpected keyword argument '{key}' (accepted: {})",
                accepted.join(", ")
            )));
        };
        if slots[index].is_some() {
            return Err(ToolError::type_error(format!("{name}() got multiple values for argument '{key}'")));
        }
        slots[index] = Some(value);
    }
    if let Some(index) = kwargs {
        slots[index] = Some(Value::Dict(extra));
    }
    // An explicit `None` for a parameter with a default its kind cannot hold (`paths="."`)
    // means the default, as if left out: a program that passes an optional value through
    // (`grep(p, paths=where)` with `where = None`) gets what the signature promises.
    for (param, slot) in params.iter().zip(&mut slots) {
        if matches!(slot, Some(Value::None)) && param.default.is_literal() && !param.kind.accepts(&Value::None) {
            *slot = None;
        }
    }
    let missing: Vec<&str> = params
        .iter()
        .zip(&slots)
        .filter(|(param, slot)| slot.is_none() && param.default == ParamDefault::Required)
        .map(|(param, _)| param.name.as_ref())
        .collect();
    if !missing.is_empty() {
        return Err(ToolError::type_error(missing_arguments(name, &missing)));
    }
    for (param, slot) in params.iter().zip(&slots) {
        match slot {
            Some(Value::None) if param.default.accepts_none() => {}
            Some(value) if !param.kind.accepts(value) => {
                let optional = if param.default == ParamDefault::None { " or None" } else { "" };
                return Err(ToolError::type_error(format!(
                    "{name}() argument '{}' must be {}{optional}, not {}",
                    param.name,
                    param.kind.type_name(),
                    value.type_name()
                )));
            }
            _ => {}
        }
    }
    let given = slots.iter().map(Option::is_some).collect();
    let values = params.iter().zip(slots).map(|(p, slot)| slot.unwrap_or_else(|| p.default.value())).collect();
    Ok(Args { name, params, values, given })
}

/// `f() missing required argument 'a'`, or, as Python says it for several,
/// `f() missing 3 required arguments: 'a', 'b', and 'c'`: for every kind of tool.
#[must_use]
pub(crate) fn missing_arguments(function: &str, missing: &[&str]) -> String {
    let quoted: Vec<String> = missing.iter().map(|name| format!("'{name}'")).collect();
    match quoted.as_slice() {
        [one] => format!("{function}() missing required argument {one}"),
        [first, second] => format!("{function}() missing 2 required arguments: {first} and {second}"),
        [init @ .., last] => {
            format!("{function}() missing {} required arguments: {}, and {last}", quoted.len(), init.join(", "))
        }
        [] => format!("{function}() missing required arguments"),
    }
}

impl Args<'_> {
    /// The value of `name`: what was passed, else the parameter's default (`None` for a
    /// parameter the tool lacks, a programming error that the tools' tests rule out).
    #[must_use]
    pub(crate) fn get(&self, name: &str) -> &Value {
        self.params.iter().position(|p| p.name == name).and_then(|i| self.values.get(i)).unwrap_or(&Value::None)
    }

    /// Every argument that was passed, as a dict by name (a `**kwargs` parameter's keywords
    /// merged in, an optional one passed as `None` left out): what a tool that runs elsewhere
    /// receives.
    #[must_use]
    pub(crate) fn passed(self) -> Value {
        let mut pairs = Vec::new();
        for ((param, value), given) in self.params.iter().zip(self.values).zip(self.given) {
            match (param.kind, value) {
                (Kind::Kwargs, Value::Dict(extra)) => pairs.extend(extra),
                // An optional input given as `None` is left out, as if not passed: the tool's
                // own default applies (a JavaScript default parameter, say).
                (_, Value::None) if param.default == ParamDefault::Omitted => {}
                (_, value) if given => pairs.push((Value::Str(param.name.to_string()), value)),
                _ => {}
            }
        }
        Value::Dict(pairs)
    }

    /// The keywords a `**kwargs` parameter took, as a dict (empty when it has none).
    #[must_use]
    pub(crate) fn extra(&self) -> &Value {
        static EMPTY: Value = Value::Dict(Vec::new());
        self.params.iter().position(|p| p.kind == Kind::Kwargs).and_then(|i| self.values.get(i)).unwrap_or(&EMPTY)
    }

    /// A `str` argument.
    pub(crate) fn str(&self, name: &str) -> Result<&str, ToolError> {
        match self.get(name) {
            Value::Str(s) => Ok(s),
            other => Err(self.mismatch(name, "str", other)),
        }
    }

    /// An optional `str` argument.
    pub(crate) fn opt_str(&self, name: &str) -> Result<Option<&str>, ToolError> {
        match self.get(name) {
            Value::None => Ok(None),
            _ => self.str(name).map(Some),
        }
    }

    /// An `int` argument.
    pub(crate) fn int(&self, name: &str) -> Result<i64, ToolError> {
        match self.get(name) {
            Value::Int(i) => Ok(*i),
            other => Err(self.mismatch(name, "int", other)),
        }
    }

    /// A number argument, as a float.
    pub(crate) fn number(&self, name: &str) -> Result<f64, ToolError> {
        match self.get(name) {
            #[expect(clippy::cast_precision_loss, reason = "seconds and the like")]
            Value::Int(i) => Ok(*i as f64),
            Value::Float(f) => Ok(*f),
            other => Err(self.mismatch(name, "float", other)),
        }
    }

    /// A `bool` argument.
    pub(crate) fn bool(&self, name: &str) -> Result<bool, ToolError> {
        match self.get(name) {
            Value::Bool(b) => Ok(*b),
            other => Err(self.mismatch(name, "bool", other)),
        }
    }

    /// A `str | list[str]` argument, always as a list; `None` when absent.
    pub(crate) fn str_list(&self, name: &str) -> Result<Option<Vec<String>>, ToolError> {
        match self.get(name) {
            Value::None => Ok(None),
            Value::Str(s) => Ok(Some(vec![s.clone()])),
            Value::List(items) | Value::Tuple(items) => items
                .iter()
                .map(|item| match item {
                    Value::Str(s) => Ok(s.clone()),
                    other => Err(self.mismatch(name, "list[str]", other)),
                })
                .collect::<Result<_, _>>()
                .map(Some),
            other => Err(self.mismatch(name, "list[str]", other)),
        }
    }

    fn mismatch(&self, name: &str, expected: &str, got: &Value) -> ToolError {
        ToolError::type_error(format!("{}() argument '{name}' must be {expected}, not {}", self.name, got.type_name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::spec::{JsonBase, JsonType, KEYWORDS_ONLY};

    static PARAMS: [Param; 2] = [
        Param::required("text", Kind::Str, ""),
        Param::new("unique", Kind::Json(JsonType { base: JsonBase::Boolean, list: false }), ParamDefault::Omitted, ""),
    ];

    fn tool() -> Signature<'static> {
        Signature { name: "count", params: &PARAMS, returns: "Any" }
    }

    #[test]
    fn only_passed_arguments_are_passed_on() {
        let args = bind(&tool(), vec![Value::Str("a b".into())], Vec::new()).unwrap();
        assert_eq!(args.get("unique"), &Value::None);
        assert_eq!(args.passed(), Value::dict([("text", Value::Str("a b".into()))]));
        let args = bind(&tool(), vec![Value::Str("a b".into()), Value::None], Vec::new()).unwrap();
        assert_eq!(args.passed(), Value::dict([("text", Value::Str("a b".into()))]), "None means left out");
    }

    #[test]
    fn wrong_calls_raise_type_errors_naming_what_is_accepted() {
        let message = |positional, keywords| bind(&tool(), positional, keywords).unwrap_err().message;
        assert_eq!(message(Vec::new(), Vec::new()), "count() missing required argument 'text'");
        assert_eq!(
            message(Vec::new(), vec![("unique".into(), Value::Int(1))]),
            "count() missing required argument 'text'",
            "a missing argument is named before a wrong one"
        );
        assert_eq!(
            message(Vec::new(), vec![("txt".into(), Value::None)]),
            "count() got an unexpected keyword argument 'txt' (accepted: text, unique)"
        );
        assert_eq!(
            message(vec![Value::Str("a".into())], vec![("unique".into(), Value::Int(1))]),
            "count() argument 'unique' must be boolean, not int"
        );
        assert_eq!(
            message(vec![Value::Str("a".into())], vec![("text".into(), Value::Str("b".into()))]),
            "count() got multiple values for argument 'text'"
        );
    }

    #[test]
    fn none_for_a_parameter_with_a_default_value_means_the_default() {
        static SEARCH: [Param; 4] = [
            Param::required("pattern", Kind::Str, ""),
            Param::new("paths", Kind::Paths, ParamDefault::Str("."), ""),
            Param::new("ignore_case", Kind::Bool, ParamDefault::Bool(false), ""),
            Param::new("max_results", Kind::Int, ParamDefault::Int(1000), ""),
        ];
        let signature = Signature { name: "grep", params: &SEARCH, returns: "list[dict]" };
        let values = |positional: Vec<Value>, keywords: Vec<(&str, Value)>| {
            let keywords = keywords.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            let args = bind(&signature, positional, keywords).unwrap();
            SEARCH.iter().map(|p| args.get(&p.name).clone()).collect::<Vec<_>>()
        };
        let defaults = vec![Value::Str("x".into()), Value::Str(".".into()), Value::Bool(false), Value::Int(1000)];
        assert_eq!(values(vec![Value::Str("x".into())], Vec::new()), defaults);
        assert_eq!(values(vec![Value::Str("x".into())], vec![("paths", Value::None)]), defaults);
        assert_eq!(values(vec![Value::Str("x".into()), Value::None, Value::None, Value::None], Vec::new()), defaults);
        assert_eq!(
            values(
                Vec::new(),
                vec![
                    ("pattern", Value::Str("x".into())),
                    ("max_results", Value::None),
                    ("ignore_case", Value::None),
                    ("paths", Value::None),
                ]
            ),
            defaults
        );
        let args = bind(&signature, vec![Value::Str("x".into()), Value::None], Vec::new()).unwrap();
        assert_eq!(args.passed(), Value::dict([("pattern", Value::Str("x".into()))]), "None means left out");
        let err = bind(&signature, vec![Value::None], Vec::new()).unwrap_err();
        assert_eq!(err.message, "grep() argument 'pattern' must be str, not NoneType", "a required one takes no None");
    }

    #[test]
    fn keyword_only_tools_refuse_positional_arguments_and_take_any_keyword() {
        let signature = Signature { name: "pid", params: &KEYWORDS_ONLY, returns: "Any" };
        let err = bind(&signature, vec![Value::Int(1)], Vec::new()).unwrap_err();
        assert_eq!(err.message, "pid() takes keyword arguments only");
        let args = bind(&signature, Vec::new(), vec![("x".into(), Value::Int(1))]).unwrap();
        assert_eq!(args.passed(), Value::dict([("x", Value::Int(1))]));
    }
}
