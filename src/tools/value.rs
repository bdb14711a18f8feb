//! [`Value`]: the backend-neutral Python value that crosses the sandbox boundary, and its JSON
//! form for `--json` output.
//!
//! Every backend converts its own objects to and from this type, so tools never see Monty or
//! Wasm types and return the same results everywhere.

use serde_json::{Map, Number, Value as Json};

/// A Python value as the host sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// An integer beyond 64 bits, in decimal.
    BigInt(String),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Value>),
    Tuple(Vec<Value>),
    Set(Vec<Value>),
    /// Insertion-ordered pairs; keys need not be strings.
    Dict(Vec<(Value, Value)>),
    /// Anything else (functions, types, dates…), as its Python `repr`.
    Opaque(String),
}

impl Value {
    /// A dict with string keys, in the given order.
    #[must_use]
    pub(crate) fn dict<K: Into<String>>(pairs: impl IntoIterator<Item = (K, Value)>) -> Self {
        Self::Dict(pairs.into_iter().map(|(k, v)| (Self::Str(k.into()), v)).collect())
    }

    /// A list of strings.
    #[must_use]
    pub(crate) fn str_list(items: impl IntoIterator<Item = String>) -> Self {
        Self::List(items.into_iter().map(Self::Str).collect())
    }

    /// The Python type name, for `TypeError` messages.
    #[must_use]
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Self::None => "NoneType",
            Self::Bool(_) => "bool",
            Self::Int(_) | Self::BigInt(_) => "int",
            Self::Float(_) => "float",
            Self::Str(_) => "str",
            Self::Bytes(_) => "bytes",
            Self::List(_) => "list",
            Self::Tuple(_) => "tuple",
            Self::Set(_) => "set",
            Self::Dict(_) => "dict",
            Self::Opaque(_) => "object",
        }
    }

    /// Converts to JSON by the output contract: tuples and sets become arrays, bytes become
    /// (lossy UTF-8) strings, big ints become strings, NaN and infinities become null, and a dict
    /// with any non-string key becomes a list of `[key, value]` pairs.
    #[must_use]
    pub(crate) fn to_json(&self) -> Json {
        match self {
            Self::None => Json::Null,
            Self::Bool(b) => Json::Bool(*b),
            Self::Int(i) => Json::Number((*i).into()),
            Self::BigInt(digits) => Json::String(digits.clone()),
            Self::Float(f) => Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Self::Str(s) | Self::Opaque(s) => Json::String(s.clone()),
            Self::Bytes(b) => Json::String(String::from_utf8_lossy(b).into_owned()),
            Self::List(items) | Self::Tuple(items) | Self::Set(items) => {
                Json::Array(items.iter().map(Self::to_json).collect())
            }
            Self::Dict(pairs) => {
                if pairs.iter().all(|(k, _)| matches!(k, Self::Str(_))) {
                    let mut map = Map::with_capacity(pairs.len());
                    for (key, value) in pairs {
                        if let Self::Str(key) = key {
                            map.insert(key.clone(), value.to_json());
                        }
                    }
                    Json::Object(map)
                } else {
                    Json::Array(pairs.iter().map(|(k, v)| Json::Array(vec![k.to_json(), v.to_json()])).collect())
                }
            }
        }
    }

    /// Converts JSON into a Python value (objects become dicts with string keys).
    #[must_use]
    pub(crate) fn from_json(json: &Json) -> Self {
        match json {
            Json::Null => Self::None,
            Json::Bool(b) => Self::Bool(*b),
            Json::Number(n) => n
                .as_i64()
                .map_or_else(|| n.as_f64().map_or_else(|| Self::BigInt(n.to_string()), Self::Float), Self::Int),
            Json::String(s) => Self::Str(s.clone()),
            Json::Array(items) => Self::List(items.iter().map(Self::from_json).collect()),
            Json::Object(map) => Self::dict(map.iter().map(|(k, v)| (k.clone(), Self::from_json(v)))),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_conversion_follows_the_output_contract() {
        let value = Value::dict([
            ("tuple", Value::Tuple(vec![Value::Int(1), Value::Str("a".into())])),
            ("set", Value::Set(vec![Value::Int(2)])),
            ("bytes", Value::Bytes(b"hi\xff".to_vec())),
            ("big", Value::BigInt("100000000000000000000".into())),
            ("nan", Value::Float(f64::NAN)),
            ("inf", Value::Float(f64::INFINITY)),
            ("float", Value::Float(1.5)),
        ]);
        assert_eq!(
            value.to_json(),
            json!({"tuple": [1, "a"], "set": [2], "bytes": "hi\u{fffd}", "big": "100000000000000000000",
                   "nan": null, "inf": null, "float": 1.5})
        );
    }

    #[test]
    fn dicts_with_non_string_keys_become_pairs() {
        let value = Value::Dict(vec![(Value::Int(1), Value::Str("one".into())), (Value::Str("k".into()), Value::None)]);
        assert_eq!(value.to_json(), json!([[1, "one"], ["k", null]]));
    }
}
