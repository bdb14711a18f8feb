//! A scripted model server for end-to-end tests with the real Claude Code CLI: it speaks the
//! Anthropic Messages wire format (`POST /v1/messages`, streamed as server-sent events) on
//! 127.0.0.1 only, answers each request for a model turn with the next step of a script, and
//! records every request so tests can assert on what the CLI sent the model.
//!
//! It answers `/v1/messages/count_tokens` too, and a request with `"stream": false` with one JSON
//! message, so that nothing the CLI asks for on the side goes unanswered; every other path gets
//! the API's 404 error. It never reaches anything beyond the test's own connections.

use std::io::Write;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::model::{read_request, serve_loopback, text_of};

/// One scripted model turn.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Call a tool with this input.
    Tool(&'static str, Value),
    /// Answer with text and stop.
    Say(&'static str),
}

/// One request the server received.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// The request target, query included (`/v1/messages?beta=true`).
    pub(crate) path: String,
    /// The JSON body, or `null` when there was none.
    pub(crate) body: Value,
}

/// A running server; it stops when the test process ends.
pub(crate) struct MessagesServer {
    port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl MessagesServer {
    /// Serves `script` on a free port of 127.0.0.1, one thread per connection.
    pub(crate) fn start(script: Vec<Step>) -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        let port = serve_loopback(move |stream| serve(stream, &script, &log));
        Self { port, requests }
    }

    /// The value for `ANTHROPIC_BASE_URL`: the CLI appends `/v1/messages` itself.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request received, in order.
    pub(crate) fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// Every request body that asked for a model turn (a message request that offered tools).
    pub(crate) fn turns(&self) -> Vec<Value> {
        self.requests().into_iter().filter(|r| is_turn(&r.path, &r.body)).map(|r| r.body).collect()
    }
}

/// Whether a request asks for a scripted model turn, rather than a side request of the CLI's.
fn is_turn(path: &str, body: &Value) -> bool {
    messages_path(path) == Some("") && offers_tools(body)
}

/// Whether a message request offers the model tools, as every request of a conversation does.
fn offers_tools(body: &Value) -> bool {
    body.get("tools").is_some_and(|t| !t.is_null())
}

/// What follows `/v1/messages` in `path` (`""`, `"/count_tokens"`), without the query.
fn messages_path(path: &str) -> Option<&str> {
    path.split('?').next().unwrap_or_default().strip_prefix("/v1/messages")
}

/// All the text a request shows the model: the system prompt and every text part of every
/// message, system-role messages included (tool results are not text parts: see
/// [`tool_results`]).
pub(crate) fn request_text(body: &Value) -> String {
    let mut text = text_of(&body["system"]);
    for message in body["messages"].as_array().into_iter().flatten() {
        text.push('\n');
        text.push_str(&text_of(&message["content"]));
    }
    text
}

/// The `tool_result` blocks of a request's messages, in order.
pub(crate) fn tool_results(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().into_iter().flatten();
    let blocks = messages.filter_map(|m| m["content"].as_array()).flatten();
    blocks.filter(|b| b["type"] == "tool_result").cloned().collect()
}

fn serve(mut stream: TcpStream, script: &[Step], log: &Mutex<Vec<Request>>) {
    let Some((request_line, body)) = read_request(&stream) else { return };
    let path = request_line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    log.lock().unwrap().push(Request { path: path.clone(), body: body.clone() });
    let post = request_line.starts_with("POST ");
    let (status, kind, text) = match messages_path(&path) {
        Some("/count_tokens") if post => ("200 OK", "application/json", json!({"input_tokens": 10}).to_string()),
        Some("") if post => {
            let message = answer(&body, script);
            if body["stream"] == true {
                ("200 OK", "text/event-stream", events(&message).concat())
            } else {
                ("200 OK", "application/json", message.to_string())
            }
        }
        _ => {
            let error =
                json!({"type": "error", "error": {"type": "not_found_error", "message": format!("no {path} here")}});
            ("404 Not Found", "application/json", error.to_string())
        }
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncache-control: no-cache\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = stream.flush();
}

/// The whole assistant message that answers `body`: the script step for a model turn (one per
/// assistant message already in the conversation), a fixed text for anything else.
fn answer(body: &Value, script: &[Step]) -> Value {
    let done = body["messages"].as_array().map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count());
    let step =
        if offers_tools(body) { script.get(done).unwrap_or(&Step::Say("done")) } else { &Step::Say("codeact test") };
    // Ids must differ between turns: the CLI merges the parts of messages that share an id.
    let (content, stop) = match step {
        Step::Tool(name, input) => {
            (json!([{"type": "tool_use", "id": format!("toolu_{done}"), "name": name, "input": input}]), "tool_use")
        }
        Step::Say(text) => (json!([{"type": "text", "text": text}]), "end_turn"),
    };
    json!({"id": format!("msg_{done}"), "type": "message", "role": "assistant", "model": body["model"],
           "content": content, "stop_reason": stop, "stop_sequence": null,
           "usage": {"input_tokens": 10, "output_tokens": 2}})
}

/// `message` as the stream of server-sent events the API sends for it. A tool's input comes in
/// two `input_json_delta` pieces, so that the CLI has to join them.
fn events(message: &Value) -> Vec<String> {
    let event = |value: Value| format!("event: {}\ndata: {value}\n\n", value["type"].as_str().unwrap());
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    let mut events = vec![event(json!({"type": "message_start", "message": start}))];
    for (index, block) in message["content"].as_array().unwrap().iter().enumerate() {
        if block["type"] == "tool_use" {
            let mut opened = block.clone();
            opened["input"] = json!({});
            events.push(event(json!({"type": "content_block_start", "index": index, "content_block": opened})));
            let input = block["input"].to_string();
            let middle = input.char_indices().nth(input.chars().count() / 2).map_or(0, |(at, _)| at);
            let (head, tail) = input.split_at(middle);
            for piece in [head, tail] {
                let delta = json!({"type": "input_json_delta", "partial_json": piece});
                events.push(event(json!({"type": "content_block_delta", "index": index, "delta": delta})));
            }
        } else {
            let opened = json!({"type": "text", "text": ""});
            events.push(event(json!({"type": "content_block_start", "index": index, "content_block": opened})));
            let delta = json!({"type": "text_delta", "text": block["text"]});
            events.push(event(json!({"type": "content_block_delta", "index": index, "delta": delta})));
        }
        events.push(event(json!({"type": "content_block_stop", "index": index})));
    }
    let delta = json!({"stop_reason": message["stop_reason"], "stop_sequence": null});
    events.push(event(json!({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 2}})));
    events.push(event(json!({"type": "message_stop"})));
    events
}
