//! JSON values as Python's `repr` shows them (`True`, `None`, `'text'`), cut to a length a
//! message can carry: how a `TypeError` or a schema mismatch quotes a value the program passed.

use std::fmt::Write as _;

use serde_json::Value as Json;

/// The longest rendering of a value in a message, in characters.
const MAX_SHOWN: usize = 60;

/// `value` as Python's `repr` would show it, cut to [`MAX_SHOWN`] characters.
pub(super) fn short_repr(value: &Json) -> String {
    let mut shown = String::new();
    write_repr(&mut shown, value);
    if shown.chars().count() <= MAX_SHOWN {
        return shown;
    }
    let mut cut: String = shown.chars().take(MAX_SHOWN - 3).collect();
    cut.push_str("...");
    cut
}

fn write_repr(out: &mut String, value: &Json) {
    match value {
        Json::Null => out.push_str("None"),
        Json::Bool(true) => out.push_str("True"),
        Json::Bool(false) => out.push_str("False"),
        Json::Number(n) => out.push_str(&n.to_string()),
        Json::String(s) => write_str_repr(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
                if out.len() > MAX_SHOWN * 4 {
                    break;
                }
            }
            out.push(']');
        }
        Json::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str_repr(out, key);
                out.push_str(": ");
                write_repr(out, item);
                if out.len() > MAX_SHOWN * 4 {
                    break;
                }
            }
            out.push('}');
        }
    }
}

/// A Python `str` repr: single quotes unless the text has one and no double quote.
pub(super) fn write_str_repr(out: &mut String, text: &str) {
    let quote = if text.contains('\'') && !text.contains('"') { '"' } else { '\'' };
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn values_are_shown_in_python_notation() {
        assert_eq!(
            short_repr(&json!({"a": [true, null, 1.5], "b": "it's"})),
            "{'a': [True, None, 1.5], 'b': \"it's\"}"
        );
        assert_eq!(short_repr(&json!("tab\there")), "'tab\\there'");
    }
}
