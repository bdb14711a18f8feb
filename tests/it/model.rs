//! A scripted model server for end-to-end tests with real agent CLIs (Copilot CLI, Codex CLI,
//! Gemini CLI, OpenCode, Qwen Code): it speaks the `OpenAI` chat-completions and Responses wire
//! formats and Gemini's `generateContent` (streamed as server-sent events where the CLI asks) on
//! 127.0.0.1 only, answers each request with the next step of a script, and records every
//! request body so tests can assert on what the CLI sent back to the model.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// One scripted model turn.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Call a tool with these arguments.
    Tool(&'static str, Value),
    /// Call several tools in one turn: a parallel batch.
    Batch(Vec<(&'static str, Value)>),
    /// Call codeact's `run` tool with these arguments, by the name the request offers it under
    /// ([`codeact_run`]): each CLI names a server's tools its own way.
    Run(Value),
    /// Run this program through `bash` with the codeact command line the instructions in the
    /// request name (the line of their example that opens a `<<'PY'` here-document).
    Codeact(&'static str),
    /// Run what a hook's answer to the last call suggested, as it stands: its command through
    /// `bash`, or its program through codeact's MCP `run` tool.
    Follow,
    /// Answer with text and stop.
    Say(&'static str),
}

/// What a step asks of the CLI: tool calls (name, arguments), or an answer.
enum Turn {
    Calls(Vec<(String, Value)>),
    Say(String),
}

/// The turn for `step`, given the request that asks for it.
fn turn(step: &Step, body: &Value) -> Turn {
    let bash = |command: String| {
        Turn::Calls(vec![("bash".to_owned(), json!({"command": command, "description": "run a codeact program"}))])
    };
    match step {
        Step::Tool(name, args) => Turn::Calls(vec![((*name).to_owned(), args.clone())]),
        Step::Batch(calls) => {
            Turn::Calls(calls.iter().map(|(name, args)| ((*name).to_owned(), args.clone())).collect())
        }
        Step::Run(args) => match codeact_run(body) {
            Some(name) => Turn::Calls(vec![(name, args.clone())]),
            None => Turn::Say("codeact's run tool is not offered".to_owned()),
        },
        Step::Codeact(program) => match instructed_command(&request_text(body)) {
            Some(command) => bash(format!("{command} <<'PY'\n{program}\nPY")),
            None => Turn::Say("no codeact command in the request".to_owned()),
        },
        Step::Follow => match last_result(body).as_deref().and_then(suggestion) {
            Some(Suggestion::Shell(command)) => bash(command),
            Some(Suggestion::Mcp(code)) => Turn::Calls(vec![("codeact-run".to_owned(), json!({"code": code}))]),
            None => Turn::Say("no suggestion in the last result".to_owned()),
        },
        Step::Say(text) => Turn::Say((*text).to_owned()),
    }
}

/// The name of every tool a request offers, as the model calls it: a chat-completions or
/// Responses function's name, a Gemini function declaration's, and for a tool in a Responses
/// `namespace` (how Codex CLI groups an MCP server's tools) the namespace and its name joined
/// by `__`, as Codex spells it (`mcp__codeact__run`).
pub(crate) fn offered_tools(body: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        if let Some(name) = tool["function"]["name"].as_str() {
            names.push(name.to_owned());
        } else if let Some(declarations) = tool["functionDeclarations"].as_array() {
            names.extend(declarations.iter().filter_map(|d| d["name"].as_str()).map(str::to_owned));
        } else if tool["type"] == "namespace" {
            let namespace = tool["name"].as_str().unwrap_or_default();
            let inner = tool["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str());
            names.extend(inner.map(|name| format!("{namespace}__{name}")));
        } else if let Some(name) = tool["name"].as_str() {
            names.push(name.to_owned());
        }
    }
    names
}

/// The name a request offers codeact's `run` tool under: the one tool whose name, in words
/// split at `_` and `-`, has `codeact` among them and ends in `run` (`mcp__codeact__run`,
/// `mcp_codeact_run`, `codeact_run`, `codeact-run`).
pub(crate) fn codeact_run(body: &Value) -> Option<String> {
    let is_run = |name: &str| {
        let words: Vec<&str> = name.split(['_', '-']).filter(|w| !w.is_empty()).collect();
        words.contains(&"codeact") && words.last() == Some(&"run")
    };
    let found: Vec<String> = offered_tools(body).into_iter().filter(|name| is_run(name)).collect();
    match found.as_slice() {
        [name] => Some(name.clone()),
        _ => None,
    }
}

/// What the CLI returned for each tool call, in the order of the conversation: the tool
/// messages of chat completions, the `function_call_output` items of Responses, the
/// `functionResponse` parts of Gemini (their `output` or `error`, else their JSON).
pub(crate) fn tool_results(body: &Value) -> Vec<String> {
    if let Some(messages) = body["messages"].as_array() {
        return messages.iter().filter(|m| m["role"] == "tool").map(|m| text_of(&m["content"])).collect();
    }
    if let Some(items) = body["input"].as_array() {
        return items.iter().filter(|i| i["type"] == "function_call_output").map(|i| text_of(&i["output"])).collect();
    }
    let parts =
        body["contents"].as_array().into_iter().flatten().flat_map(|c| c["parts"].as_array().into_iter().flatten());
    parts
        .filter_map(|part| part.get("functionResponse"))
        .map(|answer| {
            let response = &answer["response"];
            response["output"]
                .as_str()
                .or_else(|| response["error"].as_str())
                .map_or_else(|| response.to_string(), str::to_owned)
        })
        .collect()
}

/// Every text of a request: instructions, message contents, tool results.
pub(crate) fn request_text(body: &Value) -> String {
    let mut text = body["instructions"].as_str().unwrap_or_default().to_owned();
    let items = body["messages"].as_array().or_else(|| body["input"].as_array()).cloned().unwrap_or_default();
    for item in items {
        text.push_str(&text_of(&item["content"]));
        text.push_str(&text_of(&item["output"]));
        text.push('\n');
    }
    text
}

/// A message content as text, whether a string or a list of parts.
pub(crate) fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    }
}

/// The command line before ` <<'PY'` in the first fenced `bash` example of `text`.
fn instructed_command(text: &str) -> Option<String> {
    let after = text.split("```bash\n").nth(1)?;
    let line = after.lines().next()?;
    line.strip_suffix(" <<'PY'").map(str::to_owned)
}

/// The last tool result of a request.
fn last_result(body: &Value) -> Option<String> {
    let messages = body["messages"].as_array()?;
    messages.iter().rev().find(|m| m["role"] == "tool").map(|m| text_of(&m["content"]))
}

/// What a hook's suggestion asks the model to run.
enum Suggestion {
    /// A whole `… <<'PY'` … `PY` command, for `bash`.
    Shell(String),
    /// A program for codeact's MCP `run` tool, from the suggestion's fenced `python` block.
    Mcp(String),
}

fn suggestion(text: &str) -> Option<Suggestion> {
    if text.contains("codeact's `run` tool") {
        let code = text.split("```python\n").nth(1)?.split("\n```").next()?;
        return Some(Suggestion::Mcp(code.to_owned()));
    }
    suggested_program(text).map(Suggestion::Shell)
}

/// The whole `… <<'PY'` … `PY` command in a hook's suggestion.
fn suggested_program(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.ends_with(" <<'PY'"))?;
    let end = start + lines[start..].iter().position(|l| *l == "PY")?;
    Some(lines[start..=end].join("\n"))
}

/// A running server; it stops when the test process ends.
pub(crate) struct ModelServer {
    pub(crate) port: u16,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl ModelServer {
    pub(crate) fn start(script: Vec<Step>) -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        let port = serve_loopback(move |stream| serve(stream, &script, &log));
        Self { port, requests }
    }

    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Every request body that asked for a model turn (those that offered tools).
    pub(crate) fn turns(&self) -> Vec<Value> {
        self.requests.lock().unwrap().iter().filter(|r| r.get("tools").is_some_and(|t| !t.is_null())).cloned().collect()
    }
}

/// Serves every connection to a free port of 127.0.0.1 with `handle`, each on a thread of its
/// own, for as long as the test process runs; returns the port.
pub(crate) fn serve_loopback(handle: impl Fn(TcpStream) + Send + Sync + 'static) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = Arc::new(handle);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let handle = handle.clone();
            std::thread::spawn(move || handle(stream));
        }
    });
    port
}

/// One HTTP/1.1 request, read as the scripted servers need it: its request line and its body
/// (by `content-length`); `None` when the connection closed first.
pub(crate) fn read_request(stream: &TcpStream) -> Option<(String, Vec<u8>)> {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    Some((request_line, body))
}

fn serve(mut stream: TcpStream, script: &[Step], log: &Mutex<Vec<Value>>) {
    let Some((request_line, body)) = read_request(&stream) else { return };
    let path = request_line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    if request_line.starts_with("GET") {
        let models = json!({"object": "list", "data": [{"id": "gpt-4.1", "object": "model"}, {"id": "gpt-5.4", "object": "model"}]});
        let text = models.to_string();
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
            text.len()
        );
        return;
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    log.lock().unwrap().push(body.clone());
    // Gemini's API: `models/M:generateContent` answers in one JSON object,
    // `models/M:streamGenerateContent?alt=sse` in events of the same objects.
    if path.contains(":generateContent") {
        let text = gemini(&body, script).to_string();
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
            text.len()
        );
        return;
    }
    let events = if path.contains(":streamGenerateContent") {
        vec![format!("data: {}\n\n", gemini(&body, script))]
    } else if path.ends_with("/responses") {
        responses(&body, script)
    } else {
        chat(&body, script)
    };
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
    );
    for event in events {
        let _ = stream.write_all(event.as_bytes());
    }
    let _ = stream.flush();
}

/// The script step a request asks for: one per model turn already in the conversation.
fn step(script: &[Step], done: usize) -> &Step {
    script.get(done).unwrap_or(&Step::Say("done"))
}

fn chat(body: &Value, script: &[Step]) -> Vec<String> {
    let data = |value: Value| format!("data: {value}\n\n");
    let chunk = |choices: Value| json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1", "choices": choices});
    let mut events = vec![data(chunk(json!([{"index": 0, "delta": {"role": "assistant"}}])))];
    let has_tools = body.get("tools").is_some_and(|t| !t.is_null());
    let done = body["messages"].as_array().map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count());
    let finish = match if has_tools { turn(step(script, done), body) } else { Turn::Say("codeact test".to_owned()) } {
        Turn::Calls(calls) => {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({"index": i, "id": format!("call_{done}_{i}"), "type": "function", "function": {"name": name, "arguments": args.to_string()}})
                })
                .collect();
            events.push(data(chunk(json!([{"index": 0, "delta": {"tool_calls": calls}}]))));
            "tool_calls"
        }
        Turn::Say(text) => {
            events.push(data(chunk(json!([{"index": 0, "delta": {"content": text}}]))));
            "stop"
        }
    };
    events.push(data(chunk(json!([{"index": 0, "delta": {}, "finish_reason": finish}]))));
    events.push(data(
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1", "choices": [],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}),
    ));
    events.push("data: [DONE]\n\n".to_owned());
    events
}

fn responses(body: &Value, script: &[Step]) -> Vec<String> {
    let event = |kind: &str, value: Value| format!("event: {kind}\ndata: {value}\n\n");
    let has_tools = body.get("tools").is_some_and(|t| !t.is_null());
    let done = body["input"]
        .as_array()
        .map_or(0, |items| items.iter().filter(|i| i["type"] == "function_call_output").count());
    let item = match if has_tools { turn(step(script, done), body) } else { Turn::Say("codeact test".to_owned()) } {
        Turn::Calls(calls) => {
            // One call a turn on this wire format: the tests that use it need no more.
            let (name, args) = &calls[0];
            let mut item = json!({"type": "function_call", "id": format!("fc_{done}"), "call_id": format!("call_{done}"),
                                  "name": name, "arguments": args.to_string(), "status": "completed"});
            // A tool of a namespace is called by its own name, with the namespace beside it.
            if let Some((namespace, tool)) = namespaced(body, name) {
                item["namespace"] = json!(namespace);
                item["name"] = json!(tool);
            }
            item
        }
        Turn::Say(text) => {
            json!({"type": "message", "id": format!("msg_{done}"), "role": "assistant", "status": "completed",
                                   "content": [{"type": "output_text", "text": text, "annotations": []}]})
        }
    };
    let response = |status: &str, output: Value| {
        json!({"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5.4", "status": status, "output": output,
               "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}})
    };
    let mut events = vec![event(
        "response.created",
        json!({"type": "response.created", "response": response("in_progress", json!([]))}),
    )];
    events.push(event(
        "response.output_item.added",
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
    ));
    if item["type"] == "function_call" {
        events.push(event(
            "response.function_call_arguments.done",
            json!({"type": "response.function_call_arguments.done", "item_id": item["id"], "output_index": 0, "arguments": item["arguments"]}),
        ));
    } else {
        let text = &item["content"][0]["text"];
        events.push(event(
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": text}),
        ));
        events.push(event(
            "response.output_text.done",
            json!({"type": "response.output_text.done", "item_id": item["id"], "output_index": 0, "content_index": 0, "text": text}),
        ));
    }
    events.push(event(
        "response.output_item.done",
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    ));
    events.push(event(
        "response.completed",
        json!({"type": "response.completed", "response": response("completed", json!([item]))}),
    ));
    events
}

/// The namespace and the tool's own name of a Responses tool the model calls `name`
/// ([`offered_tools`]); `None` for a tool in no namespace.
fn namespaced(body: &Value, name: &str) -> Option<(String, String)> {
    body["tools"].as_array()?.iter().filter(|t| t["type"] == "namespace").find_map(|namespace| {
        let space = namespace["name"].as_str()?;
        let tool = name.strip_prefix(space)?.strip_prefix("__")?;
        let inner = namespace["tools"].as_array()?;
        inner.iter().any(|t| t["name"] == tool).then(|| (space.to_owned(), tool.to_owned()))
    })
}

/// Gemini's answer to a request, one `GenerateContentResponse`: where the request asks for JSON
/// by a schema (Gemini CLI's routing classifier, before each turn), a value that satisfies it;
/// else the script's turn, one per `model` turn already in the conversation.
fn gemini(body: &Value, script: &[Step]) -> Value {
    let config = &body["generationConfig"];
    let schema = config.get("responseJsonSchema").or_else(|| config.get("responseSchema"));
    let parts = if let Some(schema) = schema {
        json!([{"text": satisfying(schema).to_string()}])
    } else {
        let has_tools = body.get("tools").is_some_and(|t| !t.is_null());
        let done = body["contents"].as_array().map_or(0, |c| c.iter().filter(|c| c["role"] == "model").count());
        match if has_tools { turn(step(script, done), body) } else { Turn::Say("codeact test".to_owned()) } {
            Turn::Calls(calls) => {
                calls.iter().map(|(name, args)| json!({"functionCall": {"name": name, "args": args}})).collect()
            }
            Turn::Say(text) => json!([{"text": text}]),
        }
    };
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
           "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
           "modelVersion": "scripted"})
}

/// A value that satisfies a response schema (Gemini spells its types in capitals): an `enum`'s
/// first value, a number's `minimum` (else 1), an object with every property.
fn satisfying(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].get(0) {
        return first.clone();
    }
    match schema["type"].as_str().unwrap_or_default().to_ascii_lowercase().as_str() {
        "object" => {
            let properties = schema["properties"].as_object().cloned().unwrap_or_default();
            Value::Object(properties.iter().map(|(key, property)| (key.clone(), satisfying(property))).collect())
        }
        "array" => json!([]),
        "integer" | "number" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "boolean" => json!(false),
        _ => json!("scripted"),
    }
}
