//! A configuration file edited in place: one key, at a path of object keys, read, set or
//! removed, and everything else in the file kept as it was written — comments, order, spacing
//! (JSON with comments through jsonc-parser's syntax tree, TOML through `toml_edit`).

use anyhow::{Context as _, Result, anyhow};
use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

/// How a file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    /// JSON, with the comments and trailing commas the agents' settings files allow.
    Json,
    /// TOML.
    Toml,
}

/// A file's text, parsed so that it can be edited without rewriting the rest.
pub(super) enum Document {
    Json(CstRootNode),
    Toml(toml_edit::DocumentMut),
}

impl Document {
    /// `text` as `format`; an empty (or all-blank) text is an empty document.
    pub(super) fn parse(format: Format, text: &str) -> Result<Self> {
        match format {
            Format::Json => {
                let text = if text.trim().is_empty() { "{}\n" } else { text };
                let root = CstRootNode::parse(text, &ParseOptions::default()).map_err(|err| anyhow!("{err}"))?;
                if root.value().is_some() && root.object_value().is_none() {
                    return Err(anyhow!("the file holds no JSON object"));
                }
                Ok(Self::Json(root))
            }
            Format::Toml => Ok(Self::Toml(text.parse().context("not TOML")?)),
        }
    }

    /// The value at `path`, when there is one.
    pub(super) fn get(&self, path: &[&str]) -> Option<Value> {
        let (last, parents) = path.split_last()?;
        match self {
            Self::Json(root) => {
                let object = json_object(root, parents)?;
                object.get(last)?.value()?.to_serde_value()
            }
            Self::Toml(doc) => {
                let mut item = doc.as_item();
                for key in path {
                    item = item.get(key)?;
                }
                toml_to_json(item)
            }
        }
    }

    /// How many of the objects on the way to `path` are missing.
    pub(super) fn missing_parents(&self, path: &[&str]) -> usize {
        let parents = &path[..path.len().saturating_sub(1)];
        let present = (1..=parents.len()).take_while(|&depth| self.get(&parents[..depth]).is_some()).count();
        parents.len() - present
    }

    /// Sets `path` to `value`, making the objects on the way.
    pub(super) fn set(&mut self, path: &[&str], value: &Value) {
        let Some((last, parents)) = path.split_last() else { return };
        match self {
            Self::Json(root) => {
                let mut object = root.object_value_or_set();
                for key in parents {
                    object = object.object_value_or_set(key);
                }
                match object.get(last) {
                    Some(prop) => prop.set_value(json_input(value)),
                    None => {
                        object.append(last, json_input(value));
                    }
                }
            }
            Self::Toml(doc) => {
                let mut table = doc.as_table_mut();
                for key in parents {
                    let item = table.entry(key).or_insert_with(|| {
                        let mut made = toml_edit::Table::new();
                        made.set_implicit(true);
                        toml_edit::Item::Table(made)
                    });
                    if !item.is_table() {
                        *item = toml_edit::Item::Table(toml_edit::Table::new());
                    }
                    let Some(next) = item.as_table_mut() else { return };
                    table = next;
                }
                table.insert(last, json_to_toml(value, true));
            }
        }
    }

    /// Removes `path`, then the `prune` innermost objects on the way when that left them empty.
    pub(super) fn remove(&mut self, path: &[&str], prune: usize) {
        self.remove_key(path);
        for depth in (path.len().saturating_sub(prune).max(1)..path.len()).rev() {
            let parent = &path[..depth];
            if !self.get(parent).is_some_and(|value| value.as_object().is_some_and(serde_json::Map::is_empty)) {
                break;
            }
            self.remove_key(parent);
        }
    }

    fn remove_key(&mut self, path: &[&str]) {
        let Some((last, parents)) = path.split_last() else { return };
        match self {
            Self::Json(root) => {
                if let Some(prop) = json_object(root, parents).and_then(|object| object.get(last)) {
                    prop.remove();
                }
            }
            Self::Toml(doc) => {
                let mut table = doc.as_table_mut();
                for key in parents {
                    let Some(next) = table.get_mut(key).and_then(toml_edit::Item::as_table_mut) else { return };
                    table = next;
                }
                table.remove(last);
            }
        }
    }

    /// Whether the document holds nothing.
    pub(super) fn is_empty(&self) -> bool {
        match self {
            Self::Json(root) => root.object_value().is_none_or(|object| object.properties().is_empty()),
            Self::Toml(doc) => doc.as_table().is_empty(),
        }
    }

    /// The document's text.
    pub(super) fn render(&self) -> String {
        match self {
            Self::Json(root) => root.to_string(),
            Self::Toml(doc) => doc.to_string(),
        }
    }
}

/// The object at `path` beneath the root object.
fn json_object(root: &CstRootNode, path: &[&str]) -> Option<CstObject> {
    let mut object = root.object_value()?;
    for key in path {
        object = object.get(key)?.object_value()?;
    }
    Some(object)
}

/// `value` as jsonc-parser inserts it, keys in their order.
fn json_input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(json_input).collect()),
        Value::Object(map) => CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), json_input(v))).collect()),
    }
}

/// A TOML item as JSON (dates as their text).
fn toml_to_json(item: &toml_edit::Item) -> Option<Value> {
    match item {
        toml_edit::Item::None => None,
        toml_edit::Item::Value(value) => Some(toml_value_to_json(value)),
        toml_edit::Item::Table(table) => {
            Some(Value::Object(table.iter().filter_map(|(k, v)| Some((k.to_owned(), toml_to_json(v)?))).collect()))
        }
        toml_edit::Item::ArrayOfTables(tables) => {
            Some(Value::Array(tables.iter().filter_map(|t| toml_to_json(&toml_edit::Item::Table(t.clone()))).collect()))
        }
    }
}

fn toml_value_to_json(value: &toml_edit::Value) -> Value {
    match value {
        toml_edit::Value::String(s) => Value::String(s.value().clone()),
        toml_edit::Value::Integer(i) => Value::from(*i.value()),
        toml_edit::Value::Float(f) => serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
        toml_edit::Value::Datetime(d) => Value::String(d.value().to_string()),
        toml_edit::Value::Array(items) => Value::Array(items.iter().map(toml_value_to_json).collect()),
        toml_edit::Value::InlineTable(table) => {
            Value::Object(table.iter().map(|(k, v)| (k.to_owned(), toml_value_to_json(v))).collect())
        }
    }
}

/// `value` as a TOML item: an object as a table of its own at the top (`[a.b]`), inline below.
fn json_to_toml(value: &Value, top: bool) -> toml_edit::Item {
    match value {
        Value::Object(map) if top => {
            let mut table = toml_edit::Table::new();
            for (key, value) in map {
                table.insert(key, json_to_toml(value, false));
            }
            toml_edit::Item::Table(table)
        }
        other => toml_edit::Item::Value(json_to_toml_value(other)),
    }
}

fn json_to_toml_value(value: &Value) -> toml_edit::Value {
    match value {
        Value::Null => toml_edit::Value::from(""),
        Value::Bool(b) => toml_edit::Value::from(*b),
        Value::Number(n) => {
            n.as_i64().map_or_else(|| toml_edit::Value::from(n.as_f64().unwrap_or(0.0)), toml_edit::Value::from)
        }
        Value::String(s) => toml_edit::Value::from(s.as_str()),
        Value::Array(items) => toml_edit::Value::Array(items.iter().map(json_to_toml_value).collect()),
        Value::Object(map) => {
            toml_edit::Value::InlineTable(map.iter().map(|(k, v)| (k.as_str(), json_to_toml_value(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const PATH: [&str; 2] = ["mcpServers", "codeact"];

    #[test]
    fn a_json_file_keeps_its_comments_order_and_other_keys() {
        let text = "{\n  // the user's own\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}, // keep\n  },\n}\n";
        let mut doc = Document::parse(Format::Json, text).unwrap();
        assert_eq!(doc.missing_parents(&PATH), 0);
        doc.set(&PATH, &json!({"command": "codeact", "args": ["mcp", "serve"]}));
        let written = doc.render();
        assert!(written.starts_with("{\n  // the user's own\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}, // keep\n"), "{written}");
        let again = Document::parse(Format::Json, &written).unwrap();
        assert_eq!(again.get(&PATH), Some(json!({"command": "codeact", "args": ["mcp", "serve"]})));
        assert_eq!(again.get(&["theme"]), Some(json!("dark")));
        let mut doc = again;
        doc.remove(&PATH, 0);
        assert_eq!(doc.get(&PATH), None);
        assert_eq!(doc.get(&["mcpServers", "other"]), Some(json!({"command": "x"})));
    }

    #[test]
    fn objects_setup_made_are_pruned_and_an_empty_file_starts_empty() {
        let mut doc = Document::parse(Format::Json, "").unwrap();
        assert_eq!(doc.missing_parents(&PATH), 1);
        doc.set(&PATH, &json!({"command": "codeact"}));
        assert_eq!(doc.get(&PATH), Some(json!({"command": "codeact"})));
        doc.remove(&PATH, 1);
        assert!(doc.is_empty(), "{}", doc.render());
        // An object that was there stays, empty.
        let mut doc = Document::parse(Format::Json, "{\"mcpServers\": {}}").unwrap();
        doc.set(&PATH, &json!({"command": "codeact"}));
        doc.remove(&PATH, 0);
        assert_eq!(doc.get(&["mcpServers"]), Some(json!({})));
        assert!(Document::parse(Format::Json, "[1]").is_err());
        assert!(Document::parse(Format::Json, "{").is_err());
    }

    #[test]
    fn a_toml_file_gets_a_table_of_its_own_and_keeps_the_rest() {
        let text = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\" # keep\n";
        let path = ["mcp_servers", "codeact"];
        let mut doc = Document::parse(Format::Toml, text).unwrap();
        doc.set(
            &path,
            &json!({"command": "codeact", "args": ["mcp", "serve"], "default_tools_approval_mode": "approve"}),
        );
        let written = doc.render();
        assert!(written.starts_with(text), "{written}");
        assert!(
            written.contains("[mcp_servers.codeact]\ncommand = \"codeact\"\nargs = [\"mcp\", \"serve\"]\n"),
            "{written}"
        );
        let mut again = Document::parse(Format::Toml, &written).unwrap();
        assert_eq!(again.get(&path).unwrap()["default_tools_approval_mode"], "approve");
        again.remove(&path, 0);
        assert_eq!(again.render(), text);
        let mut fresh = Document::parse(Format::Toml, "").unwrap();
        assert_eq!(fresh.missing_parents(&path), 1);
        fresh.set(&path, &json!({"command": "codeact"}));
        assert_eq!(fresh.render(), "[mcp_servers.codeact]\ncommand = \"codeact\"\n");
        fresh.remove(&path, 1);
        assert!(fresh.is_empty(), "{}", fresh.render());
    }
}
