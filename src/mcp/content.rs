//! What MCP results mean as Python values: the entries of the lists a program gets
//! (resources, resource templates, prompts), a tool's content blocks, the text of a failed
//! call, a read resource and a fetched prompt.
//!
//! Pure functions over JSON as rmcp serializes it (camelCase, as on the wire); no I/O. The
//! shapes follow three rules:
//! - keys are in snake case (`mime_type`, `input_schema`, `uri_template`), always present, in a
//!   fixed order;
//! - an optional field the server left out is `None`, except `description` in a list entry,
//!   which is `""` so it can be printed or searched as it is;
//! - binary data (an image's, audio's or blob's) is `bytes`, base64-decoded; data that does not
//!   decode stays the `str` the server sent.

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_json::{Value as Json, json};

use crate::tools::Value;

/// One entry of a server's resources: `{"uri", "name", "title", "description", "mime_type"}`.
#[must_use]
pub(crate) fn resource_entry(resource: &Json) -> Value {
    Value::from_json(&json!({
        "uri": resource["uri"],
        "name": resource["name"],
        "title": field(resource, "title"),
        "description": description(resource),
        "mime_type": field(resource, "mimeType"),
    }))
}

/// One entry of a server's resource templates: `{"uri_template", "name", "title",
/// "description", "mime_type"}`.
#[must_use]
pub(crate) fn template_entry(template: &Json) -> Value {
    Value::from_json(&json!({
        "uri_template": template["uriTemplate"],
        "name": template["name"],
        "title": field(template, "title"),
        "description": description(template),
        "mime_type": field(template, "mimeType"),
    }))
}

/// One entry of a server's prompts: `{"name", "title", "description", "arguments": [{"name",
/// "description", "required"}]}`; an argument is not required unless it says so.
#[must_use]
pub(crate) fn prompt_entry(prompt: &Json) -> Value {
    let arguments: Vec<Json> = prompt["arguments"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|argument| {
            json!({
                "name": argument["name"],
                "description": description(argument),
                "required": argument["required"].as_bool().unwrap_or(false),
            })
        })
        .collect();
    Value::from_json(&json!({
        "name": prompt["name"],
        "title": field(prompt, "title"),
        "description": description(prompt),
        "arguments": arguments,
    }))
}

/// A result's content blocks as a value: their text joined by newlines when all are text (or
/// there are none), else a list of one dict per block (see [`block`]).
#[must_use]
pub(crate) fn content_value(result: &Json) -> Value {
    let blocks = blocks(result);
    if blocks.iter().all(|b| b["type"] == "text") {
        let texts: Vec<&str> = blocks.iter().map(|b| b["text"].as_str().unwrap_or_default()).collect();
        Value::Str(texts.join("\n"))
    } else {
        Value::List(blocks.iter().map(|b| block(b, false)).collect())
    }
}

/// A tool result as one text, for the message of a call that failed (`isError`): text blocks as
/// they are, an embedded text resource as its text, anything else named briefly
/// (`[image image/png, 70 bytes]`), joined by newlines. A result without blocks shows its
/// structured content as JSON.
#[must_use]
pub(crate) fn text_of(result: &Json) -> String {
    let blocks = blocks(result);
    if blocks.is_empty()
        && let Some(structured) = result.get("structuredContent").filter(|s| !s.is_null())
    {
        return structured.to_string();
    }
    let parts: Vec<String> = blocks.iter().filter_map(summary).collect();
    parts.join("\n")
}

/// A `resources/read` result as a list of `{"uri", "mime_type", "text"}` or `{"uri",
/// "mime_type", "data": bytes}` dicts.
#[must_use]
pub(crate) fn resource_contents(result: &Json) -> Value {
    let contents = result["contents"].as_array().into_iter().flatten();
    Value::List(contents.map(|contents| Value::dict(resource(contents))).collect())
}

/// A `prompts/get` result as `{"description", "messages": [{"role", "content"}]}`: a text
/// block's content is its `str`, any other block a dict as in a tool result.
#[must_use]
pub(crate) fn prompt_messages(result: &Json) -> Value {
    let messages = result["messages"].as_array().into_iter().flatten().map(|message| {
        let content = match &message["content"] {
            Json::Array(blocks) => Value::List(blocks.iter().map(|b| block(b, true)).collect()),
            single => block(single, true),
        };
        Value::dict([("role", Value::from_json(&message["role"])), ("content", content)])
    });
    Value::dict([
        ("description", Value::from_json(&field(result, "description"))),
        ("messages", Value::List(messages.collect())),
    ])
}

/// The content blocks of a result (none when `content` is missing).
fn blocks(result: &Json) -> &[Json] {
    result["content"].as_array().map_or(&[], Vec::as_slice)
}

/// One content block as a dict: `{"type": "text", "text"}` (or the `str` alone with
/// `text_as_str`); `{"type", "mime_type", "data"}` for an image or audio;
/// `{"type": "resource", "uri", "mime_type", "text" or "data"}` for an embedded resource;
/// `{"type": "resource_link", "uri", "name", "mime_type", "title", "description"}` for a link.
/// A block of another type is its JSON as a dict.
fn block(block: &Json, text_as_str: bool) -> Value {
    let text = |key: &str| Value::from_json(&field(block, key));
    match block["type"].as_str() {
        Some("text") if text_as_str => text("text"),
        Some("text") => Value::dict([("type", Value::Str("text".into())), ("text", text("text"))]),
        Some(kind @ ("image" | "audio")) => Value::dict([
            ("type", Value::Str(kind.into())),
            ("mime_type", text("mimeType")),
            ("data", binary(&block["data"])),
        ]),
        Some("resource") => {
            let mut pairs = vec![("type", Value::Str("resource".into()))];
            pairs.extend(resource(&block["resource"]));
            Value::dict(pairs)
        }
        Some("resource_link") => Value::dict([
            ("type", Value::Str("resource_link".into())),
            ("uri", text("uri")),
            ("name", text("name")),
            ("mime_type", text("mimeType")),
            ("title", text("title")),
            ("description", text("description")),
        ]),
        _ => Value::from_json(block),
    }
}

/// The fields of resource contents: `uri`, `mime_type`, then `data` for a blob, else `text`.
fn resource(contents: &Json) -> Vec<(&'static str, Value)> {
    let mut pairs = vec![
        ("uri", Value::from_json(&field(contents, "uri"))),
        ("mime_type", Value::from_json(&field(contents, "mimeType"))),
    ];
    match contents.get("blob") {
        Some(blob) if !blob.is_null() => pairs.push(("data", binary(blob))),
        _ => pairs.push(("text", Value::from_json(&field(contents, "text")))),
    }
    pairs
}

/// A block named briefly for a message, or `None` for one without a type.
fn summary(block: &Json) -> Option<String> {
    let kind = block["type"].as_str()?;
    let described = |name: &str, mime: &Json, data: &Json| {
        let mut parts = vec![name.to_owned()];
        parts.extend(mime.as_str().map(str::to_owned));
        let size = data.as_str().and_then(decode_base64).map(|bytes| format!("{} bytes", bytes.len()));
        match size {
            Some(size) => format!("[{}, {size}]", parts.join(" ")),
            None => format!("[{}]", parts.join(" ")),
        }
    };
    Some(match kind {
        "text" => block["text"].as_str().unwrap_or_default().to_owned(),
        "image" | "audio" => described(kind, &block["mimeType"], &block["data"]),
        "resource" => {
            let resource = &block["resource"];
            resource["text"].as_str().map_or_else(
                || {
                    let uri = resource["uri"].as_str().unwrap_or_default();
                    described(&format!("resource {uri}"), &resource["mimeType"], &resource["blob"])
                },
                str::to_owned,
            )
        }
        "resource_link" => format!("[resource_link {}]", block["uri"].as_str().unwrap_or_default()),
        other => format!("[{other} content]"),
    })
}

/// `object[key]`, or `null` when missing.
fn field(object: &Json, key: &str) -> Json {
    object.get(key).cloned().unwrap_or(Json::Null)
}

/// A list entry's description: `""` when absent.
fn description(object: &Json) -> Json {
    match object.get("description") {
        Some(Json::String(text)) => Json::String(text.clone()),
        _ => Json::String(String::new()),
    }
}

/// Base64 `data` as bytes; anything that does not decode stays as the server sent it.
fn binary(data: &Json) -> Value {
    match data.as_str() {
        Some(text) => decode_base64(text).map_or_else(|| Value::Str(text.to_owned()), Value::Bytes),
        None => Value::from_json(data),
    }
}

/// Base64 as MCP servers write it: RFC 4648's standard alphabet, padding optional, and bits
/// left over after the last byte not checked.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Decodes base64 (RFC 4648, standard or URL-safe alphabet), padding optional, ASCII whitespace
/// skipped; `None` for anything else. URL-safe characters are read as their standard twins, so
/// either alphabet decodes.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let standard: Vec<u8> = text
        .bytes()
        .filter(|byte| !byte.is_ascii_whitespace())
        .map(|byte| match byte {
            b'-' => b'+',
            b'_' => b'/',
            other => other,
        })
        .collect();
    BASE64.decode(standard).ok()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::mcp::output::tool_result;

    /// A real 1×1 PNG (70 bytes).
    const PIXEL: &str =
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

    fn str(text: &str) -> Value {
        Value::Str(text.into())
    }

    #[test]
    fn text_blocks_are_joined() {
        let result = json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        assert_eq!(tool_result(&result, None), Ok(str("a\nb")));
        assert_eq!(tool_result(&json!({"content": []}), None), Ok(str("")));
        assert_eq!(tool_result(&json!({"structuredContent": null}), None), Ok(str("")));
    }

    #[test]
    fn an_image_comes_back_as_bytes_beside_its_caption() {
        let result = json!({"content": [
            {"type": "text", "text": "a red pixel"},
            {"type": "image", "mimeType": "image/png", "data": PIXEL}
        ]});
        let Ok(Value::List(blocks)) = tool_result(&result, None) else { panic!("expected a list") };
        assert_eq!(blocks[0], Value::dict([("type", str("text")), ("text", str("a red pixel"))]));
        let Value::Dict(image) = &blocks[1] else { panic!("expected a dict") };
        assert_eq!(image[0], (str("type"), str("image")));
        assert_eq!(image[1], (str("mime_type"), str("image/png")));
        let Value::Bytes(png) = &image[2].1 else { panic!("expected bytes") };
        assert_eq!(png.len(), 70);
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert!(png.ends_with(b"IEND\xaeB`\x82"));
    }

    #[test]
    fn audio_that_does_not_decode_keeps_its_str() {
        let result = json!({"content": [{"type": "audio", "mimeType": "audio/wav", "data": "not base64!"}]});
        assert_eq!(
            tool_result(&result, None),
            Ok(Value::List(vec![Value::dict([
                ("type", str("audio")),
                ("mime_type", str("audio/wav")),
                ("data", str("not base64!")),
            ])]))
        );
    }

    #[test]
    fn resources_and_links_keep_their_uri_and_text() {
        let result = json!({"content": [
            {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAE="}},
            {"type": "resource_link", "uri": "file:///b.txt", "name": "b"},
            {"type": "hologram", "depth": 3}
        ]});
        assert_eq!(
            tool_result(&result, None),
            Ok(Value::List(vec![
                Value::dict([
                    ("type", str("resource")),
                    ("uri", str("file:///a.txt")),
                    ("mime_type", str("text/plain")),
                    ("text", str("hello")),
                ]),
                Value::dict([
                    ("type", str("resource")),
                    ("uri", str("file:///a.bin")),
                    ("mime_type", Value::None),
                    ("data", Value::Bytes(vec![0, 1])),
                ]),
                Value::dict([
                    ("type", str("resource_link")),
                    ("uri", str("file:///b.txt")),
                    ("name", str("b")),
                    ("mime_type", Value::None),
                    ("title", Value::None),
                    ("description", Value::None),
                ]),
                Value::dict([("type", str("hologram")), ("depth", Value::Int(3))]),
            ]))
        );
    }

    #[test]
    fn the_text_of_a_failed_call_names_what_is_not_text() {
        let result = json!({"isError": true, "content": [
            {"type": "text", "text": "boom"},
            {"type": "image", "mimeType": "image/png", "data": PIXEL},
            {"type": "resource", "resource": {"uri": "file:///log", "text": "line 1"}},
            {"type": "resource", "resource": {"uri": "file:///core", "mimeType": "application/octet-stream", "blob": "AAE="}},
            {"type": "resource_link", "uri": "file:///b.txt", "name": "b"},
            {"type": "hologram"}
        ]});
        assert_eq!(
            text_of(&result),
            "boom\n[image image/png, 70 bytes]\nline 1\n[resource file:///core application/octet-stream, 2 bytes]\n\
             [resource_link file:///b.txt]\n[hologram content]"
        );
        assert_eq!(text_of(&json!({"isError": true, "structuredContent": {"error": "bad"}})), "{\"error\":\"bad\"}");
    }

    #[test]
    fn read_resources_are_dicts() {
        let result = json!({"contents": [
            {"uri": "mem://a", "mimeType": "text/plain", "text": "A"},
            {"uri": "mem://b", "mimeType": "image/png", "blob": PIXEL}
        ]});
        let Value::List(contents) = resource_contents(&result) else { panic!("expected a list") };
        assert_eq!(
            contents[0],
            Value::dict([("uri", str("mem://a")), ("mime_type", str("text/plain")), ("text", str("A"))])
        );
        let Value::Dict(blob) = &contents[1] else { panic!("expected a dict") };
        assert_eq!(blob[2].0, str("data"));
        assert!(matches!(&blob[2].1, Value::Bytes(png) if png.len() == 70));
    }

    #[test]
    fn prompt_messages_have_text_as_str_and_other_blocks_as_dicts() {
        let result = json!({"description": "A review", "messages": [
            {"role": "user", "content": {"type": "text", "text": "Review this"}},
            {"role": "assistant", "content": {"type": "resource_link", "uri": "file:///x", "name": "x"}}
        ]});
        let link = Value::dict([
            ("type", str("resource_link")),
            ("uri", str("file:///x")),
            ("name", str("x")),
            ("mime_type", Value::None),
            ("title", Value::None),
            ("description", Value::None),
        ]);
        assert_eq!(
            prompt_messages(&result),
            Value::dict([
                ("description", str("A review")),
                (
                    "messages",
                    Value::List(vec![
                        Value::dict([("role", str("user")), ("content", str("Review this"))]),
                        Value::dict([("role", str("assistant")), ("content", link)]),
                    ])
                ),
            ])
        );
        assert_eq!(
            prompt_messages(&json!({"messages": []})),
            Value::dict([("description", Value::None), ("messages", Value::List(Vec::new()))])
        );
    }

    #[test]
    fn list_entries_have_every_key() {
        assert_eq!(
            resource_entry(&json!({"uri": "file:///a", "name": "a", "mimeType": "text/plain", "size": 3})),
            Value::from_json(&json!({"uri": "file:///a", "name": "a", "title": null, "description": "",
                                     "mime_type": "text/plain"}))
        );
        assert_eq!(
            template_entry(&json!({"uriTemplate": "file:///{path}", "name": "file", "title": "File",
                                   "description": "Any file"})),
            Value::from_json(&json!({"uri_template": "file:///{path}", "name": "file", "title": "File",
                                     "description": "Any file", "mime_type": null}))
        );
        assert_eq!(
            prompt_entry(&json!({"name": "review", "arguments": [{"name": "code", "required": true}, {"name": "style",
                                 "description": "Tone"}]})),
            Value::from_json(&json!({"name": "review", "title": null, "description": "", "arguments": [
                {"name": "code", "description": "", "required": true},
                {"name": "style", "description": "Tone", "required": false}
            ]}))
        );
        assert_eq!(
            prompt_entry(&json!({"name": "bare"})),
            Value::from_json(&json!({"name": "bare", "title": null, "description": "", "arguments": []}))
        );
    }

    #[test]
    fn base64_decodes_with_or_without_padding() {
        assert_eq!(decode_base64("aGVsbG8="), Some(b"hello".to_vec()));
        assert_eq!(decode_base64("aGVsbG8"), Some(b"hello".to_vec()));
        assert_eq!(decode_base64("aGVs\nbG8h"), Some(b"hello!".to_vec()));
        assert_eq!(decode_base64("-_8="), Some(vec![0xfb, 0xff]));
        assert_eq!(decode_base64(""), Some(Vec::new()));
    }

    #[test]
    fn base64_takes_whitespace_anywhere_and_bits_left_over() {
        assert_eq!(decode_base64(" aGVs\r\n bG8=\n"), Some(b"hello".to_vec()));
        assert_eq!(decode_base64("aGVsbG8=\t"), Some(b"hello".to_vec()));
        // The last character's bits beyond the last byte need not be zero (`9` where `8` would do).
        assert_eq!(decode_base64("aGVsbG9="), Some(b"hello".to_vec()));
        assert_eq!(decode_base64("aGVsbG9"), Some(b"hello".to_vec()));
        // Either alphabet, or both at once.
        assert_eq!(decode_base64("+/8="), Some(vec![0xfb, 0xff]));
        assert_eq!(decode_base64("+_8"), Some(vec![0xfb, 0xff]));
    }

    #[test]
    fn base64_refuses_what_is_not_base64() {
        assert_eq!(decode_base64("a"), None);
        assert_eq!(decode_base64("aGVs*G8="), None);
        assert_eq!(decode_base64("aG=Vs"), None);
        assert_eq!(decode_base64("aGVsbG8=="), None);
        assert_eq!(decode_base64("aGVs="), None);
        assert_eq!(decode_base64("a==="), None);
        assert_eq!(decode_base64("aGVsbG8=a"), None);
    }
}
