//! How much interpreter memory a tool's result will take once it crosses into the program:
//! a backend refuses a result that cannot fit in what is left of the memory limit *before*
//! converting it, so a 600 MB query result ends the run with `MemoryError` instead of
//! being copied, counted, and aborting the process. Tool memory itself (the buffers a tool
//! fills on the host) is not counted against the limit.

use crate::tools::Value;

/// Bytes an interpreter spends on one value beyond its text: object header, reference,
/// hash-table slot. A rough, generous figure: the estimate decides refusals, not accounting.
const PER_VALUE: usize = 64;

/// Roughly how many bytes `value` takes as interpreter objects (strings and bytes by length,
/// every value its overhead). Walks the value without recursion.
#[must_use]
pub(crate) fn estimate(value: &Value) -> usize {
    walk(value, 1)
}

/// Roughly how many bytes a CPython guest needs to take `value` in: its JSON text, copied into
/// the guest, and the objects parsed from it. Bytes travel as lossy UTF-8 text, up to three
/// bytes (one U+FFFD) for each.
#[must_use]
pub(crate) fn estimate_in_guest(value: &Value) -> usize {
    walk(value, 3).saturating_mul(2)
}

/// The size of `value` with each byte of a `bytes` counted `per_byte` times.
fn walk(value: &Value, per_byte: usize) -> usize {
    let mut total = 0_usize;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        total = total.saturating_add(PER_VALUE);
        match value {
            Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {}
            Value::BigInt(text) | Value::Str(text) | Value::Opaque(text) => total = total.saturating_add(text.len()),
            Value::Bytes(bytes) => total = total.saturating_add(bytes.len().saturating_mul(per_byte)),
            Value::List(items) | Value::Tuple(items) | Value::Set(items) => pending.extend(items),
            Value::Dict(pairs) => {
                for (key, item) in pairs {
                    pending.push(key);
                    pending.push(item);
                }
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_counts_by_length_and_containers_by_their_items() {
        assert_eq!(estimate(&Value::Str("x".repeat(1000))), 1000 + PER_VALUE);
        let rows = Value::List(vec![Value::dict([("b", Value::Bytes(vec![0; 500]))]); 3]);
        assert_eq!(estimate(&rows), 3 * (500 + 3 * PER_VALUE + 1) + PER_VALUE);
    }

    #[test]
    fn a_guest_needs_the_json_text_and_its_parse() {
        assert_eq!(estimate_in_guest(&Value::Bytes(vec![0xff; 100])), 2 * (300 + PER_VALUE));
        assert_eq!(estimate_in_guest(&Value::Str("x".repeat(100))), 2 * (100 + PER_VALUE));
    }
}
