//! Binds a call's positional and keyword arguments to a [`ToolSpec`] once, with the `TypeError`s
//! Python itself would give, plus the list of accepted names so a model can fix the call.

use super::error::ToolError;
use super::spec::{Default, Kind, ToolSpec};
use super::value::Value;

/// Arguments bound to a tool's parameters, defaults filled in and types checked.
#[derive(Debug)]
pub struct Args {
    spec: &'static ToolSpec,
    values: Vec<Value>,
}

/// Binds `positional` and `keywords` to `spec`'s parameters.
pub fn bind(
    spec: &'static ToolSpec,
    positional: Vec<Value>,
    keywords: Vec<(String, Value)>,
) -> Result<Args, ToolError> {
    let name = spec.name;
    let params = spec.params;
    let positional_params = params.iter().filter(|p| p.kind != Kind::Kwargs).count();
    if positional.len() > positional_params {
        return Err(ToolError::type_error(format!(
            "{name}() takes at most {} positional arguments ({} given)",
            positional_params,
            positional.len()
        )));
    }
    let kwargs = params.iter().position(|p| p.kind == Kind::Kwargs);
    let mut extra = Vec::new();
    let mut slots: Vec<Option<Value>> = vec![None; params.len()];
    for (slot, value) in slots.iter_mut().zip(positional) {
        *slot = Some(value);
    }
    for (key, value) in keywords {
        let Some(index) = params.iter().position(|p| p.name == key && p.kind != Kind::Kwargs) else {
            if kwargs.is_some() {
                extra.push((Value::Str(key), value));
                continue;
            }
            let accepted: Vec<&str> = params.iter().map(|p| p.name).collect();
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
    let mut values = Vec::with_capacity(params.len());
    for (param, slot) in params.iter().zip(slots) {
        let value = match slot {
            Some(value) => value,
            None if param.default == Default::Required => {
                return Err(ToolError::type_error(format!("{name}() missing required argument '{}'", param.name)));
            }
            None => param.default.value(),
        };
        let null_ok = param.default == Default::None && value == Value::None;
        if !null_ok && !param.kind.accepts(&value) {
            let optional = if param.default == Default::None { " or None" } else { "" };
            return Err(ToolError::type_error(format!(
                "{name}() argument '{}' must be {}{optional}, not {}",
                param.name,
                param.kind.python_type(),
                value.type_name()
            )));
        }
        values.push(value);
    }
    Ok(Args { spec, values })
}

impl Args {
    /// The bound value of `name`; `None` for a parameter the spec lacks (a programming error
    /// that the registry's tests rule out).
    #[must_use]
    pub fn get(&self, name: &str) -> &Value {
        self.spec.params.iter().position(|p| p.name == name).and_then(|i| self.values.get(i)).unwrap_or(&Value::None)
    }

    /// A `str` argument.
    pub fn str(&self, name: &str) -> Result<&str, ToolError> {
        match self.get(name) {
            Value::Str(s) => Ok(s),
            other => Err(self.mismatch(name, "str", other)),
        }
    }

    /// An optional `str` argument.
    pub fn opt_str(&self, name: &str) -> Result<Option<&str>, ToolError> {
        match self.get(name) {
            Value::None => Ok(None),
            _ => self.str(name).map(Some),
        }
    }

    /// An `int` argument.
    pub fn int(&self, name: &str) -> Result<i64, ToolError> {
        match self.get(name) {
            Value::Int(i) => Ok(*i),
            other => Err(self.mismatch(name, "int", other)),
        }
    }

    /// A number argument, as a float.
    pub fn number(&self, name: &str) -> Result<f64, ToolError> {
        match self.get(name) {
            #[expect(clippy::cast_precision_loss, reason = "seconds and the like")]
            Value::Int(i) => Ok(*i as f64),
            Value::Float(f) => Ok(*f),
            other => Err(self.mismatch(name, "float", other)),
        }
    }

    /// A `bool` argument.
    pub fn bool(&self, name: &str) -> Result<bool, ToolError> {
        match self.get(name) {
            Value::Bool(b) => Ok(*b),
            other => Err(self.mismatch(name, "bool", other)),
        }
    }

    /// A `str | list[str]` argument, always as a list; `None` when absent.
    pub fn str_list(&self, name: &str) -> Result<Option<Vec<String>>, ToolError> {
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
        ToolError::type_error(format!(
            "{}() argument '{name}' must be {expected}, not {}",
            self.spec.name,
            got.type_name()
        ))
    }
}
