//! A call's keyword arguments as the JSON an MCP server receives. Unlike [`Value::to_json`],
//! which turns an int beyond 64 bits into its decimal string, an int the wire cannot carry
//! exactly is refused, naming the argument, since a server would receive a string it did not
//! ask for.

use serde_json::{Map, Value as Json};

use crate::tools::Value;

/// The JSON arguments of a call to `function` from its `**arguments` (a dict, as `Args::extra`
/// gives it).
///
/// Unlike [`Value::to_json`], which turns an int beyond 64 bits into its decimal string, this
/// refuses one anywhere inside (a server would receive a string it did not ask for); an int up to
/// 2⁶⁴−1 goes as a JSON number.
pub(crate) fn json_arguments(function: &str, keywords: &Value) -> Result<Map<String, Json>, String> {
    let Value::Dict(pairs) = keywords else {
        return Err(format!("{function}() takes keyword arguments only"));
    };
    let mut map = Map::with_capacity(pairs.len());
    for (key, value) in pairs {
        let Value::Str(name) = key else {
            return Err(format!("{function}() keywords must be strings, not {}", key.type_name()));
        };
        let json = exact_json(value).map_err(|digits| {
            format!(
                "{function}() argument '{name}': {} does not fit in 64 bits; pass it as a str or a float",
                shorten_digits(&digits)
            )
        })?;
        map.insert(name.clone(), json);
    }
    Ok(map)
}

/// [`Value::to_json`], except that an int beyond 64 bits is refused: `Err` carries its digits.
fn exact_json(value: &Value) -> Result<Json, String> {
    match value {
        Value::BigInt(digits) => digits.parse::<u64>().map(Json::from).map_err(|_| digits.clone()),
        Value::List(items) | Value::Tuple(items) | Value::Set(items) => {
            items.iter().map(exact_json).collect::<Result<_, _>>().map(Json::Array)
        }
        Value::Dict(pairs) if pairs.iter().all(|(key, _)| matches!(key, Value::Str(_))) => {
            let mut map = Map::with_capacity(pairs.len());
            for (key, item) in pairs {
                if let Value::Str(key) = key {
                    map.insert(key.clone(), exact_json(item)?);
                }
            }
            Ok(Json::Object(map))
        }
        Value::Dict(pairs) => pairs
            .iter()
            .map(|(key, item)| Ok(Json::Array(vec![exact_json(key)?, exact_json(item)?])))
            .collect::<Result<_, _>>()
            .map(Json::Array),
        other => Ok(other.to_json()),
    }
}

/// The digits of a huge int, cut: `10715086071862673209... (302 digits)`.
fn shorten_digits(digits: &str) -> String {
    if digits.len() <= 30 { digits.to_owned() } else { format!("{}... ({} digits)", &digits[..20], digits.len()) }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn keywords_become_json_and_small_big_ints_become_numbers() {
        let keywords = Value::dict([
            ("n", Value::Int(3)),
            ("big", Value::BigInt("18446744073709551615".into())),
            ("pairs", Value::Dict(vec![(Value::Int(1), Value::Str("one".into()))])),
        ]);
        assert_eq!(
            json_arguments("ev__echo", &keywords),
            Ok(Map::from_iter([
                ("n".to_owned(), json!(3)),
                ("big".to_owned(), json!(18_446_744_073_709_551_615_u64)),
                ("pairs".to_owned(), json!([[1, "one"]])),
            ]))
        );
    }

    #[test]
    fn an_int_beyond_64_bits_is_refused_naming_the_argument() {
        let keywords = Value::dict([("value", Value::BigInt("1180591620717411303424".into()))]);
        assert_eq!(
            json_arguments("ev__echo", &keywords),
            Err("ev__echo() argument 'value': 1180591620717411303424 does not fit in 64 bits; pass it as a str or a float"
                .to_owned())
        );
    }

    #[test]
    fn an_int_beyond_64_bits_is_refused_deep_inside_too() {
        let negative = Value::BigInt("-9223372036854775809".into());
        let keywords = Value::dict([("rows", Value::List(vec![Value::dict([("id", negative)])]))]);
        assert_eq!(
            json_arguments("ev__echo", &keywords),
            Err(
                "ev__echo() argument 'rows': -9223372036854775809 does not fit in 64 bits; pass it as a str or a float"
                    .to_owned()
            )
        );
        let huge = Value::BigInt(format!("1{}", "0".repeat(301)));
        let keywords = Value::dict([("k", Value::Tuple(vec![huge]))]);
        assert_eq!(
            json_arguments("f", &keywords),
            Err("f() argument 'k': 10000000000000000000... (302 digits) does not fit in 64 bits; pass it as a str or a float"
                .to_owned())
        );
    }

    #[test]
    fn keywords_must_be_a_dict_of_strings() {
        assert_eq!(json_arguments("f", &Value::Int(1)), Err("f() takes keyword arguments only".to_owned()));
        assert_eq!(
            json_arguments("f", &Value::Dict(vec![(Value::Int(1), Value::None)])),
            Err("f() keywords must be strings, not int".to_owned())
        );
    }
}
