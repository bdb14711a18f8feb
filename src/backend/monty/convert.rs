//! Values across the boundary: Monty objects to and from host values, and the `repr` of a
//! program's result.
//!
//! Monty hands a value over as an arena of nodes in which a sub-object referenced twice is one
//! node referenced twice. A host value is a tree, so each reference becomes a copy: a list
//! doubled sixty times over is a few hundred nodes in the arena and 2^60 in a tree. Before
//! anything is copied, [`Shape`] measures what the tree would be, in one pass over the arena,
//! and a value too large or too deep is refused (see [`Shape::refusal`]).

use monty_types::unstable::{self, MontyNode, NodeId};
use monty_types::{MontyObject, ObjectRef};

use crate::limits::format_size;
use crate::tools::{ToolError, Value};

/// How deeply nested a value may be to cross into the host: as deep as Python's default
/// recursion limit lets a program build one recursively. Deeper values would make every walk
/// over a host value (copying, dropping, printing as JSON) a recursion too deep for its stack.
const MAX_DEPTH: usize = 1_000;

/// Bytes a node is counted for besides its text (as `crate::sandbox::memory` counts a value).
const PER_NODE: usize = 32;

/// What a value's tree would be: its nesting and roughly its bytes, each reference counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    pub(super) depth: usize,
    pub(super) bytes: usize,
}

impl Shape {
    /// The shape of the tree rooted at each node of `nodes`, by index. Nodes come children
    /// first, so one forward pass sees every child before the node that holds it.
    fn of_each(nodes: &[MontyNode]) -> Vec<Self> {
        let mut shapes: Vec<Self> = Vec::with_capacity(nodes.len());
        for node in nodes {
            let mut shape = Self { depth: 1, bytes: PER_NODE.saturating_add(text_len(node)) };
            node.for_each_child(|child| {
                let inner = shapes[child.index()];
                shape.depth = shape.depth.max(inner.depth.saturating_add(1));
                shape.bytes = shape.bytes.saturating_add(inner.bytes);
            });
            shapes.push(shape);
        }
        shapes
    }

    /// The shape of `value`.
    pub(super) fn of_object(value: &MontyObject) -> Self {
        let (graph, root) = unstable::graph_parts(value);
        Self::of_each(&graph.nodes()[..=root.index()])[root.index()]
    }

    /// Why a value of this shape cannot cross into the host when at most `max_bytes` may:
    /// `None` when it can.
    pub(super) fn refusal(self, max_bytes: usize) -> Option<String> {
        if self.depth > MAX_DEPTH {
            Some(format!("it is nested {} levels deep, more than {MAX_DEPTH}", self.depth))
        } else if self.bytes > max_bytes {
            Some(format!(
                "with each object it shares copied where it is referenced, it would take more than {}, the memory limit",
                format_size(max_bytes)
            ))
        } else {
            None
        }
    }
}

/// The bytes of text a node holds.
fn text_len(node: &MontyNode) -> usize {
    match node {
        MontyNode::String(text)
        | MontyNode::Path(text)
        | MontyNode::Repr(text)
        | MontyNode::Cycle(text)
        | MontyNode::Decimal(text) => text.len(),
        MontyNode::Bytes(bytes) => bytes.len(),
        MontyNode::BigInt(int) => usize::try_from(int.bits() / 3).unwrap_or(usize::MAX),
        _ => 0,
    }
}

/// The Python `repr` of a result. Values Monty cannot send across whole arrive as `Repr(text)`,
/// which Monty's own repr would print as `Repr('range(0, 3)')`; they are swapped for `Cycle`
/// placeholders, which Monty prints verbatim, so the text reads as Python wrote it. The caller
/// checks the [`Shape`] first: a repr writes each shared object as often as it is referenced.
pub(super) fn python_repr(value: MontyObject) -> String {
    let (mut graph, root) = unstable::into_graph_parts(value);
    for node in graph.nodes_mut() {
        if let MontyNode::Repr(text) = node {
            *node = MontyNode::Cycle(std::mem::take(text));
        }
    }
    match unstable::object_from_graph(graph, root) {
        Ok(value) => value.py_repr(),
        Err(err) => format!("<a value Monty could not hand over: {err}>"),
    }
}

/// A keyword's name: the string itself, else its `repr`.
pub(super) fn key_name(key: ObjectRef<'_>) -> String {
    key.as_str().map_or_else(|| key.py_repr(), str::to_owned)
}

/// A Monty value as a host value; the caller checked its [`Shape`].
pub(super) fn to_value(object: ObjectRef<'_>) -> Value {
    let all = |ids: &[NodeId]| ids.iter().map(|id| to_value(unstable::child(object, *id))).collect();
    match unstable::node(object) {
        MontyNode::None => Value::None,
        MontyNode::Bool(b) => Value::Bool(*b),
        MontyNode::Int(i) => Value::Int(*i),
        MontyNode::BigInt(i) => Value::BigInt(i.to_string()),
        MontyNode::Float(f) => Value::Float(*f),
        MontyNode::String(s) | MontyNode::Path(s) => Value::Str(s.clone()),
        MontyNode::Bytes(b) => Value::Bytes(b.clone()),
        MontyNode::List(ids) => Value::List(all(ids)),
        MontyNode::Tuple(ids) | MontyNode::NamedTuple { values: ids, .. } => Value::Tuple(all(ids)),
        MontyNode::Set(ids) | MontyNode::FrozenSet(ids) => Value::Set(all(ids)),
        MontyNode::Dict(pairs) => Value::Dict(
            pairs
                .iter()
                .map(|(k, v)| (to_value(unstable::child(object, *k)), to_value(unstable::child(object, *v))))
                .collect(),
        ),
        MontyNode::Repr(text) => Value::Opaque(text.clone()),
        MontyNode::Ellipsis
        | MontyNode::NotImplemented
        | MontyNode::Complex(_)
        | MontyNode::Date(_)
        | MontyNode::DateTime(_)
        | MontyNode::Time(_)
        | MontyNode::TimeDelta(_)
        | MontyNode::TimeZone(_)
        | MontyNode::Decimal(_)
        | MontyNode::Exception { .. }
        | MontyNode::Type(_)
        | MontyNode::BuiltinFunction(_)
        | MontyNode::FileHandle(_)
        | MontyNode::Function { .. }
        | MontyNode::Cycle(_)
        | MontyNode::ClassType(_)
        | MontyNode::ClassInstance { .. }
        | MontyNode::Module { .. } => Value::Opaque(object.py_repr()),
    }
}

/// A call's positional and keyword arguments as host values.
pub(super) type Arguments = (Vec<Value>, Vec<(String, Value)>);

/// The arguments of a call as host values, or why they cannot cross (a `ValueError` naming
/// `function`) when their trees would exceed `max_bytes` or [`MAX_DEPTH`].
pub(super) fn call_arguments(
    function: &str,
    args: &monty_types::CallArgs,
    max_bytes: usize,
) -> Result<Arguments, ToolError> {
    let (graph, positional, keywords) = unstable::call_args_parts(args);
    // One pass over the arena the arguments share, however many they are.
    let shapes = Shape::of_each(graph.nodes());
    let mut total = Shape { depth: 0, bytes: 0 };
    for id in positional.iter().chain(keywords.iter().map(|(_, value)| value)) {
        let shape = shapes[id.index()];
        total = Shape { depth: total.depth.max(shape.depth), bytes: total.bytes.saturating_add(shape.bytes) };
    }
    if let Some(why) = total.refusal(max_bytes) {
        return Err(ToolError::value(format!("the arguments of {function}() cannot be passed: {why}")));
    }
    let positional = args.args().map(to_value).collect();
    let keywords = args.kwargs().map(|(key, value)| (key_name(key), to_value(value))).collect();
    Ok((positional, keywords))
}

/// A host value as a Monty object.
pub(super) fn from_value(value: Value) -> MontyObject {
    match value {
        Value::None => MontyObject::none(),
        Value::Bool(b) => MontyObject::bool(b),
        Value::Int(i) => MontyObject::int(i),
        Value::Float(f) => MontyObject::float(f),
        Value::Str(s) | Value::BigInt(s) | Value::Opaque(s) => MontyObject::string(s),
        Value::Bytes(b) => MontyObject::bytes(b),
        Value::List(items) => MontyObject::list(items.into_iter().map(from_value)),
        Value::Tuple(items) => MontyObject::tuple(items.into_iter().map(from_value)),
        Value::Set(items) => MontyObject::set(items.into_iter().map(from_value)),
        Value::Dict(pairs) => MontyObject::dict(pairs.into_iter().map(|(k, v)| (from_value(k), from_value(v)))),
    }
}

#[cfg(test)]
mod tests {
    use monty_types::unstable::MontyGraph;

    use super::*;

    /// `[[…], […]]` doubled `times` times: a few nodes in the arena, 2^times in a tree.
    fn doubled(times: u32) -> MontyObject {
        let mut graph = MontyGraph::new();
        let mut id = graph.push(MontyNode::String("x".repeat(100)));
        for _ in 0..times {
            id = graph.push(MontyNode::List(vec![id, id]));
        }
        unstable::object_from_graph(graph, id).unwrap()
    }

    #[test]
    fn a_shared_object_is_counted_once_per_reference() {
        let shape = Shape::of_object(&doubled(3));
        assert_eq!(shape.depth, 4);
        assert_eq!(shape.bytes, 8 * (PER_NODE + 100) + 7 * PER_NODE);
        assert_eq!(to_value(doubled(3).as_ref()), {
            let leaf = Value::Str("x".repeat(100));
            let two = Value::List(vec![leaf.clone(), leaf]);
            let four = Value::List(vec![two.clone(), two]);
            Value::List(vec![four.clone(), four])
        });
    }

    #[test]
    fn a_value_that_doubles_sixty_times_is_refused_before_it_is_copied() {
        let shape = Shape::of_object(&doubled(60));
        assert_eq!(shape.bytes, usize::MAX, "the count saturates");
        let why = shape.refusal(1 << 30).unwrap();
        assert!(why.contains("more than 1 GiB, the memory limit"), "{why}");
    }

    #[test]
    fn a_value_nested_past_the_depth_limit_is_refused_whatever_its_size() {
        let mut graph = MontyGraph::new();
        let mut id = graph.push(MontyNode::None);
        for _ in 0..MAX_DEPTH {
            id = graph.push(MontyNode::Tuple(vec![id]));
        }
        let deep = unstable::object_from_graph(graph, id).unwrap();
        let why = Shape::of_object(&deep).refusal(usize::MAX).unwrap();
        assert!(why.contains(&format!("{} levels deep", MAX_DEPTH + 1)), "{why}");
    }

    #[test]
    fn host_values_come_back_as_the_same_python_values() {
        let value = Value::Dict(vec![
            (Value::Str("a".into()), Value::List(vec![Value::Int(1), Value::Float(2.5), Value::None])),
            (Value::Int(3), Value::Tuple(vec![Value::Bool(true), Value::Bytes(b"\x00".to_vec())])),
        ]);
        let object = from_value(value.clone());
        assert_eq!(object.py_repr(), "{'a': [1, 2.5, None], 3: (True, b'\\x00')}");
        assert_eq!(to_value(object.as_ref()), value);
    }

    #[test]
    fn a_repr_placeholder_prints_as_python_wrote_it() {
        let value = MontyObject::list([MontyObject::repr("range(0, 3)"), MontyObject::int(1)]);
        assert_eq!(python_repr(value), "[range(0, 3), 1]");
    }
}
