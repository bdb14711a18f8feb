//! Values across the boundary: Monty objects to and from host values, and the `repr` of a
//! program's result.

use monty_types::MontyObject;

use crate::tools::Value;

/// The Python `repr` of a result. Values Monty cannot send across whole arrive as `Repr(text)`,
/// which Monty's own repr would print as `Repr('range(0, 3)')`; they are swapped for `Cycle`
/// placeholders, which Monty prints verbatim, so the text reads as Python wrote it.
pub(super) fn python_repr(value: &MontyObject) -> String {
    fn verbatim(object: &MontyObject) -> MontyObject {
        let all = |items: &[MontyObject]| items.iter().map(verbatim).collect();
        match object {
            MontyObject::Repr(text) => MontyObject::Cycle(usize::MAX, text.clone()),
            MontyObject::List(items) => MontyObject::List(all(items)),
            MontyObject::Tuple(items) => MontyObject::Tuple(all(items)),
            MontyObject::Set(items) => MontyObject::Set(all(items)),
            MontyObject::FrozenSet(items) => MontyObject::FrozenSet(all(items)),
            MontyObject::NamedTuple { type_name, field_names, values } => MontyObject::NamedTuple {
                type_name: type_name.clone(),
                field_names: field_names.clone(),
                values: all(values),
            },
            MontyObject::Dict(pairs) => {
                MontyObject::dict(pairs.iter().map(|(k, v)| (verbatim(k), verbatim(v))).collect::<Vec<_>>())
            }
            other => other.clone(),
        }
    }
    verbatim(value).py_repr()
}

pub(super) fn key_name(key: MontyObject) -> String {
    match key {
        MontyObject::String(s) => s,
        other => other.py_repr(),
    }
}

/// A Monty object as a host value.
pub(super) fn to_value(object: MontyObject) -> Value {
    match object {
        MontyObject::None => Value::None,
        MontyObject::Bool(b) => Value::Bool(b),
        MontyObject::Int(i) => Value::Int(i),
        MontyObject::BigInt(i) => Value::BigInt(i.to_string()),
        MontyObject::Float(f) => Value::Float(f),
        MontyObject::String(s) | MontyObject::Path(s) => Value::Str(s),
        MontyObject::Bytes(b) => Value::Bytes(b),
        MontyObject::List(items) => Value::List(items.into_iter().map(to_value).collect()),
        MontyObject::Tuple(items) | MontyObject::NamedTuple { values: items, .. } => {
            Value::Tuple(items.into_iter().map(to_value).collect())
        }
        MontyObject::Set(items) | MontyObject::FrozenSet(items) => {
            Value::Set(items.into_iter().map(to_value).collect())
        }
        MontyObject::Dict(pairs) => Value::Dict(pairs.into_iter().map(|(k, v)| (to_value(k), to_value(v))).collect()),
        other @ (MontyObject::Ellipsis
        | MontyObject::NotImplemented
        | MontyObject::Date(_)
        | MontyObject::DateTime(_)
        | MontyObject::Time(_)
        | MontyObject::TimeDelta(_)
        | MontyObject::TimeZone(_)
        | MontyObject::Exception { .. }
        | MontyObject::Type(_)
        | MontyObject::BuiltinFunction(_)
        | MontyObject::FileHandle(_)
        | MontyObject::ClassInstance(_)
        | MontyObject::Function { .. }
        | MontyObject::Cycle(..)) => Value::Opaque(other.py_repr()),
        MontyObject::Repr(text) => Value::Opaque(text),
    }
}

/// A host value as a Monty object.
pub(super) fn from_value(value: Value) -> MontyObject {
    match value {
        Value::None => MontyObject::None,
        Value::Bool(b) => MontyObject::Bool(b),
        Value::Int(i) => MontyObject::Int(i),
        Value::Float(f) => MontyObject::Float(f),
        Value::Str(s) | Value::BigInt(s) | Value::Opaque(s) => MontyObject::String(s),
        Value::Bytes(b) => MontyObject::Bytes(b),
        Value::List(items) => MontyObject::List(items.into_iter().map(from_value).collect()),
        Value::Tuple(items) => MontyObject::Tuple(items.into_iter().map(from_value).collect()),
        Value::Set(items) => MontyObject::Set(items.into_iter().map(from_value).collect()),
        Value::Dict(pairs) => {
            MontyObject::dict(pairs.into_iter().map(|(k, v)| (from_value(k), from_value(v))).collect::<Vec<_>>())
        }
    }
}
