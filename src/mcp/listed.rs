//! A server's tool as `tools/list` gave it, read once into a [`ListedTool`]: what `mcp_tools`
//! gives a program, what the catalogue offers as a function, and what a call's arguments and
//! result are checked against. The server's JSON is read here only, tool by tool, so one
//! malformed tool does not cost its server the others.

use serde_json::{Value as Json, json};

/// One tool of a server, as listed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ListedTool {
    /// Its name on its server.
    pub(crate) name: String,
    /// The function a program calls it by (`server__tool`), or `None` when another tool (or
    /// server) took that function: it is then reached through `mcp_call` only.
    pub(crate) function: Option<String>,
    /// Its display name as the server sent it: `title`, else `annotations.title`, else `null`.
    pub(crate) title: Json,
    /// What it does; `""` when the server says nothing.
    pub(crate) description: String,
    /// The JSON Schema of its arguments; `{"type": "object"}` when it has none, since one such
    /// tool must not disable its server.
    pub(crate) input_schema: Json,
    /// The JSON Schema of its structured results as sent, `null` when absent.
    pub(crate) output_schema: Json,
    /// Its annotations as sent, `null` when absent.
    pub(crate) annotations: Json,
}

impl ListedTool {
    /// A tool of a `tools/list` result, with no function yet; `None` when it has no name.
    #[must_use]
    pub(crate) fn read(tool: &Json) -> Option<Self> {
        let name = tool.get("name")?.as_str()?.to_owned();
        let field = |object: &Json, key: &str| object.get(key).cloned().unwrap_or(Json::Null);
        let title = match tool.get("title") {
            Some(title) if !title.is_null() => title.clone(),
            _ => field(&tool["annotations"], "title"),
        };
        let input_schema = match tool.get("inputSchema") {
            Some(schema) if schema.is_object() => schema.clone(),
            _ => json!({"type": "object"}),
        };
        Some(Self {
            name,
            function: None,
            title,
            description: tool.get("description").and_then(Json::as_str).unwrap_or_default().to_owned(),
            input_schema,
            output_schema: field(tool, "outputSchema"),
            annotations: field(tool, "annotations"),
        })
    }

    /// Whether its server marks it as changing nothing (`annotations.readOnlyHint: true`).
    #[must_use]
    pub(crate) fn read_only(&self) -> bool {
        self.annotations.get("readOnlyHint").and_then(Json::as_bool) == Some(true)
    }

    /// The output schema, when it is one (an object).
    #[must_use]
    pub(crate) fn output_schema(&self) -> Option<&Json> {
        Some(&self.output_schema).filter(|schema| schema.is_object())
    }

    /// The entry `mcp_tools(server)` gives: `{"name", "function", "title", "description",
    /// "input_schema", "output_schema", "annotations"}`, in that order.
    #[must_use]
    pub(crate) fn entry(&self) -> Json {
        json!({
            "name": self.name,
            "function": self.function,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "annotations": self.annotations,
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_tool_entry_has_every_key_in_order() {
        let tool = json!({
            "name": "add", "title": "Add", "description": "Adds.",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}},
            "outputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}
        });
        let listed = ListedTool::read(&tool).unwrap();
        assert_eq!(
            listed,
            ListedTool {
                name: "add".into(),
                function: None,
                title: json!("Add"),
                description: "Adds.".into(),
                input_schema: json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
                output_schema: json!({"type": "object"}),
                annotations: json!({"readOnlyHint": true}),
            }
        );
        let entry = ListedTool { function: Some("s__add".into()), ..listed }.entry();
        assert_eq!(
            entry,
            json!({
                "name": "add", "function": "s__add", "title": "Add", "description": "Adds.",
                "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}}},
                "output_schema": {"type": "object"}, "annotations": {"readOnlyHint": true}
            })
        );
        let keys: Vec<&String> = entry.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["name", "function", "title", "description", "input_schema", "output_schema", "annotations"]);
    }

    #[test]
    fn a_tool_without_schema_or_description_gets_defaults() {
        assert_eq!(
            ListedTool::read(&json!({"name": "ping", "description": 3})).map(|tool| tool.entry()),
            Some(json!({"name": "ping", "function": null, "title": null, "description": "",
                        "input_schema": {"type": "object"}, "output_schema": null, "annotations": null}))
        );
        assert_eq!(ListedTool::read(&json!({"description": "no name"})), None);
    }

    #[test]
    fn a_tool_title_falls_back_to_its_annotations() {
        let listed = ListedTool::read(&json!({"name": "ping", "annotations": {"title": "Ping"}})).unwrap();
        assert_eq!(listed.title, "Ping");
    }
}
