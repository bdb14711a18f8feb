//! The two tools the server offers: `run`, which runs a program as one `codeact run` of its own
//! or in its session's worker ([`child`]) once a slot is free, reporting progress and stopping
//! it when the call is cancelled or its HTTP client is gone, and `describe`, which gives the
//! tool reference or the documentation of the tools named.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam, Tool, ToolAnnotations};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value as Json, json};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::child::{self, Failed, RunEnded};
use super::http;
use super::running::Running;
use super::sandbox;
use super::server::CodeactServer;
use crate::limits::{self, format_seconds};

/// How often a running program's call reports progress, when its client asked for progress.
pub(super) const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How long a call's program goes on once its HTTP client is gone: a run about to end still
/// ends with its report.
pub(super) const GONE_GRACE: Duration = Duration::from_secs(3);

/// The `run` tool. Its description is short, since every client shows it on every request: the
/// signatures are in the server's instructions, and `describe` gives them to a client that does
/// not pass those on.
pub(super) fn run_tool(text_only: bool) -> Tool {
    let description = "Run a Python program that calls the workspace's tools as functions (see the codeact \
                       reference, or `describe`); returns what it prints and its last expression.";
    let input = json!({
        "type": "object",
        "properties": {
            "code": {"type": "string"},
            // Seconds. The bounds are checked on the call, with a message: in the schema, every
            // client would show them to the model on every request.
            "timeout": {"type": "number"},
            "yield_after": {"type": "number"},
            // A run still running at its yield time, to wait for again (or `stop`).
            "wait": {"type": "integer"},
            "stop": {"type": "boolean"}
        }
        // `code` or `wait` is required, and unknown arguments are refused, on the call, with a
        // message, not in every request.
    });
    let output = json!({
        "type": "object",
        "properties": {
            "success": {"type": "boolean"},
            "stdout": {"type": "string"},
            "stderr": {"type": "string"},
            "return_value": {"description": "The last expression's value, as JSON (its repr when too large)."},
            "error": {
                "type": ["object", "null"],
                "properties": {
                    "type": {"type": "string"},
                    "message": {"type": "string"},
                    "line": {"type": ["integer", "null"]},
                    "traceback": {"type": "string"}
                }
            },
            "backend": {"type": "string"},
            "duration_ms": {"type": "integer"},
            "tool_calls": {"type": "integer"},
            "truncated": {"type": "boolean"},
            "guest_cache": {"type": "string"},
            "running": {"type": "integer"}
        },
        "required": ["success", "stdout", "stderr", "return_value", "error", "backend", "duration_ms", "tool_calls", "truncated"]
    });
    let tool = Tool::new("run", description, object(input))
        .with_title("Run a codeact program")
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(true).idempotent(false).open_world(true));
    if text_only { tool } else { tool.with_raw_output_schema(Arc::new(object(output))) }
}

/// The `describe` tool.
pub(super) fn describe_tool() -> Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "names": {"type": "array", "items": {"type": "string"}},
            "query": {"type": "string"}
        },
        "additionalProperties": false
    });
    Tool::new(
        "describe",
        "The full documentation (signature, parameters, result) of the named functions of codeact programs, or \
         of those whose name or description has every word of `query`; without either, the reference of all.",
        object(input),
    )
    .with_title("Describe codeact's tools")
    .with_annotations(ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(false))
}

fn object(value: Json) -> JsonObject {
    match value {
        Json::Object(map) => map,
        _ => JsonObject::new(),
    }
}

impl CodeactServer {
    pub(super) async fn call_run(
        &self,
        arguments: &JsonObject,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let asked = Asked::read(arguments)?;
        let cancel = context.ct.child_token();
        let _watching = stop_when_gone(&context, &cancel);
        let (running, note) = match asked.what {
            What::Code(code) => {
                let timeout = asked.timeout.unwrap_or(self.shared.default_timeout);
                // A run is read-only when the agent says it runs read-only (`sandbox`).
                let read_only = sandbox::says_read_only(&context.meta);
                self.start(code, timeout, read_only, &cancel).await?
            }
            What::Wait(id) => {
                let running = self.runs.get(id).ok_or_else(|| {
                    McpError::invalid_params(
                        format!("no run {id} is waiting: its result was given, or it is not this client's"),
                        None,
                    )
                })?;
                running.waited();
                (running, None)
            }
        };
        // One call at a time waits for a run, and gives its result; a stop is never refused.
        let waiting = running.wait_alone();
        if waiting.is_none() && !asked.stop {
            let id = running.id;
            return Err(McpError::invalid_params(
                format!(
                    "another call is waiting for run {id} already; its answer gives what the run printed, or \
                     run(wait={id}, stop=true) ends it"
                ),
                None,
            ));
        }
        // A run that has ended already gives its result, stopped or not.
        if asked.stop
            && running.wait(Some(tokio::time::Instant::now())).await.is_none()
            && let Some(stopped) = self.stop(&running).await
        {
            return Ok(stopped);
        }
        let yield_after = asked.yield_after.unwrap_or(self.shared.yield_after);
        self.answer(&running, yield_after, note, &cancel, &context).await
    }

    /// Starts `code` once a slot is free; the run and the note its session gives, if any.
    async fn start(
        &self,
        code: String,
        timeout: Duration,
        read_only: bool,
        cancel: &CancellationToken,
    ) -> Result<(Arc<Running>, Option<String>), McpError> {
        let slot = if let Ok(slot) = Arc::clone(&self.shared.slots).try_acquire_owned() {
            slot
        } else {
            // Waiting for a slot that this client's own runs hold would wait for them.
            let mine = self.runs.still_running();
            if !mine.is_empty() {
                let ids: Vec<String> = mine.iter().map(u64::to_string).collect();
                return Err(McpError::invalid_request(
                    format!(
                        "every slot is taken, your runs {} among them: run(wait=ID) waits for one, \
                         run(wait=ID, stop=true) ends it",
                        ids.join(", ")
                    ),
                    None,
                ));
            }
            tokio::select! {
                slot = Arc::clone(&self.shared.slots).acquire_owned() => {
                    slot.map_err(|_| McpError::internal_error("the server is stopping", None))?
                }
                () = cancel.cancelled() => return Err(McpError::internal_error("cancelled", None)),
            }
        };
        let turn = match &self.session {
            Some(session) => Some(session.turn().await),
            None => None,
        };
        let note = turn.as_ref().and_then(|turn| turn.note.clone());
        let request = child::Request { code, timeout, read_only };
        let running = Running::start(self.shared.launch.clone(), request, turn, self.shared.max_output, slot);
        self.runs.add(&running);
        Ok((running, note))
    }

    /// Waits for `running` until it ends or `yield_after` passes (0: until it ends), reporting
    /// progress when the call asked for it, and answers with what it printed since the last
    /// answer: its result, or that it still runs. A cancelled call stops the program.
    async fn answer(
        &self,
        running: &Arc<Running>,
        yield_after: Duration,
        note: Option<String>,
        cancel: &CancellationToken,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let until = (!yield_after.is_zero()).then(|| tokio::time::Instant::now() + yield_after);
        let progress_token = context.meta.get_progress_token();
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
        let mut sent = Vec::new();
        let ended = loop {
            tokio::select! {
                ended = running.wait(until) => break ended,
                _ = ticks.tick() => {
                    let Some(token) = progress_token.clone() else { continue };
                    let elapsed = running.started.elapsed();
                    let mut param = ProgressNotificationParam::new(token, elapsed.as_secs_f64().floor());
                    param.total = Some(running.timeout.as_secs_f64());
                    param.message =
                        Some(format!("running for {}", format_seconds(Duration::from_secs(elapsed.as_secs()))));
                    let peer = context.peer.clone();
                    sent.push(tokio::spawn(async move {
                        let _ = peer.notify_progress(param).await;
                    }));
                }
                () = cancel.cancelled() => {
                    let ended_already = running.stop_and_wait().await;
                    self.runs.remove(running.id);
                    let message = if ended_already {
                        "cancelled: the program had ended already"
                    } else {
                        "cancelled: the program was stopped"
                    };
                    return Err(McpError::internal_error(message, None));
                }
            }
        };
        // No progress may follow the result.
        for notification in sent {
            let _ = notification.await;
        }
        let Some(ended) = ended else { return Ok(self.still_running(running, note)) };
        self.runs.remove(running.id);
        let yielded = running.yielded();
        match &*ended {
            Ok(RunEnded { result, text, after, success }) => {
                // After a yield, the answers before showed the output as it was printed: this
                // one shows what they did not, then what follows the output; so does its
                // structured `stdout`.
                let mut result = result.clone();
                let mut text = if yielded {
                    let unread = running.take_unread();
                    result["stdout"] = Json::String(unread.clone());
                    unread + after
                } else {
                    text.clone()
                };
                if let Some(note) = note {
                    text.push_str(&note);
                    text.push('\n');
                }
                let text = ContentBlock::text(if text.is_empty() { "(no output)".to_owned() } else { text });
                let mut answer = if self.shared.text_only {
                    CallToolResult::success(Vec::new())
                } else {
                    CallToolResult::structured(result)
                };
                answer.content = vec![text];
                answer.is_error = Some(!success);
                Ok(answer)
            }
            Err(Failed::Cancelled) => {
                let printed = if yielded { running.take_unread() } else { String::new() };
                Ok(stopped(running.id, printed))
            }
            Err(Failed::NoReport(why)) => Ok(CallToolResult::error(vec![ContentBlock::text(why.clone())])),
        }
    }

    /// Stops `running`, answering with what it printed since the last answer; `None` when it
    /// ended on its own before the stop reached it: its result is the answer.
    async fn stop(&self, running: &Running) -> Option<CallToolResult> {
        if running.stop_and_wait().await {
            return None;
        }
        let printed = running.take_unread();
        self.runs.remove(running.id);
        Some(stopped(running.id, printed))
    }

    /// The answer for a run still running at its yield time: what it printed so far, and how
    /// to go on.
    fn still_running(&self, running: &Arc<Running>, note: Option<String>) -> CallToolResult {
        running.set_yielded();
        let printed = running.take_unread();
        running.watch_unwaited(Arc::downgrade(&self.runs));
        let elapsed = running.started.elapsed();
        let mut text = printed.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if let Some(note) = note {
            text.push_str(&note);
            text.push('\n');
        }
        // codeact's own line, in a block of its own: no line the program prints is taken for it.
        let tenths = Duration::from_millis(u64::try_from(elapsed.as_millis() / 100 * 100).unwrap_or(u64::MAX));
        let status = format!(
            "[still running after {}: run(wait={id}) waits for more; run(wait={id}, stop=true) ends it]",
            format_seconds(tenths),
            id = running.id
        );
        let mut answer = if self.shared.text_only {
            CallToolResult::success(Vec::new())
        } else {
            CallToolResult::structured(json!({
                "success": true, "stdout": printed, "stderr": "", "return_value": null, "error": null,
                "backend": self.shared.backend, "duration_ms": u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                "tool_calls": 0, "truncated": false, "running": running.id,
            }))
        };
        answer.content = if text.is_empty() {
            vec![ContentBlock::text(status)]
        } else {
            vec![ContentBlock::text(text), ContentBlock::text(status)]
        };
        answer.is_error = Some(false);
        answer
    }

    /// The documentation of each tool named, once, in the order first named. More names than
    /// there are tools is refused, so an answer is never larger than all the documentation.
    pub(super) fn call_describe(&self, arguments: &JsonObject) -> Result<CallToolResult, McpError> {
        if let Some(unknown) = arguments.keys().find(|key| !matches!(key.as_str(), "names" | "query")) {
            return Err(McpError::invalid_params(
                format!("`describe` takes `names` or `query`, not `{}`", clip(unknown)),
                None,
            ));
        }
        match arguments.get("query") {
            None | Some(Json::Null) => {}
            Some(Json::String(query)) => return Ok(self.search(query)),
            Some(_) => return Err(McpError::invalid_params("`query` is a string of words", None)),
        }
        let names: Vec<&str> = match arguments.get("names") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(items)) => {
                items.iter().map(Json::as_str).collect::<Option<_>>().ok_or_else(names_are_strings)?
            }
            Some(_) => return Err(names_are_strings()),
        };
        if names.is_empty() {
            return Ok(CallToolResult::success(vec![ContentBlock::text(self.shared.instructions.clone())]));
        }
        let docs = &self.shared.docs;
        if names.len() > docs.len() {
            return Err(McpError::invalid_params(
                format!(
                    "`names` lists {} names, and there are {} tools: name each at most once",
                    names.len(),
                    docs.len()
                ),
                None,
            ));
        }
        let mut found: Vec<&Json> = Vec::new();
        for name in names {
            let Some(doc) = docs.iter().find(|doc| doc["name"] == name) else {
                let known: Vec<&str> = docs.iter().filter_map(|doc| doc["name"].as_str()).collect();
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "no tool `{}`; the tools are: {}",
                    clip(name),
                    known.join(", ")
                ))]));
            };
            if !found.iter().any(|seen| std::ptr::eq(*seen, doc)) {
                found.push(doc);
            }
        }
        // Compact: a model reads every byte, and Copilot CLI compacts it anyway.
        let text = serde_json::to_string(&found).unwrap_or_default();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }
}

impl CodeactServer {
    /// The documentation of the functions whose name or description has every word of `query`
    /// (in any case), the first [`FOUND`] of them, with how many more there are.
    fn search(&self, query: &str) -> CallToolResult {
        /// The most functions one search documents: an answer stays small.
        const FOUND: usize = 20;
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let matches = |doc: &&Json| {
            let text = format!(
                "{} {}",
                doc["name"].as_str().unwrap_or_default(),
                doc["description"].as_str().unwrap_or_default()
            )
            .to_lowercase();
            !words.is_empty() && words.iter().all(|word| text.contains(word.as_str()))
        };
        let found: Vec<&Json> = self.shared.docs.iter().filter(matches).collect();
        if found.is_empty() {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "no function's name or description has every word of `{}`",
                clip(query)
            ))]);
        }
        let mut text = serde_json::to_string(&found[..found.len().min(FOUND)]).unwrap_or_default();
        if found.len() > FOUND {
            text = format!("{text}\n({} more: give more words)", found.len() - FOUND);
        }
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

/// The answer for run `id`, stopped after it printed `printed`: codeact's own line in a block
/// of its own.
fn stopped(id: u64, printed: String) -> CallToolResult {
    let mut content = Vec::new();
    if !printed.is_empty() {
        content.push(ContentBlock::text(printed));
    }
    content.push(ContentBlock::text(format!("codeact: run {id} was stopped, with the commands it started")));
    CallToolResult::error(content)
}

/// What a `run` call asks for.
struct Asked {
    what: What,
    timeout: Option<Duration>,
    yield_after: Option<Duration>,
    stop: bool,
}

enum What {
    /// Run this program.
    Code(String),
    /// Wait again for this run.
    Wait(u64),
}

impl Asked {
    fn read(arguments: &JsonObject) -> Result<Self, McpError> {
        let refuse = |message: String| McpError::invalid_params(message, None);
        if let Some(unknown) =
            arguments.keys().find(|key| !matches!(key.as_str(), "code" | "timeout" | "wait" | "stop" | "yield_after"))
        {
            return Err(refuse(format!(
                "`run` takes `code`, `timeout`, `yield_after`, `wait` and `stop`, not `{}`",
                clip(unknown)
            )));
        }
        // Seconds; 0 only where `zero` allows it.
        let seconds = |name: &str, zero: bool| -> Result<Option<Duration>, McpError> {
            match arguments.get(name) {
                None | Some(Json::Null) => Ok(None),
                Some(Json::Number(seconds)) if zero && seconds.as_f64() == Some(0.0) => Ok(Some(Duration::ZERO)),
                Some(Json::Number(seconds)) => seconds
                    .as_f64()
                    .ok_or_else(|| "not a number".to_owned())
                    .and_then(limits::parse_timeout)
                    .map(Some)
                    .map_err(|why| refuse(format!("`{name}`: {why}"))),
                Some(_) => Err(refuse(format!("`{name}` is a number of seconds"))),
            }
        };
        // A yield time of 0 waits until the program ends.
        let (timeout, yield_after) = (seconds("timeout", false)?, seconds("yield_after", true)?);
        let stop = match arguments.get("stop") {
            None | Some(Json::Null) => false,
            Some(Json::Bool(stop)) => *stop,
            Some(_) => return Err(refuse("`stop` is true or false".into())),
        };
        let what = match (arguments.get("code"), arguments.get("wait")) {
            (Some(Json::String(code)), None | Some(Json::Null)) => What::Code(code.clone()),
            (None | Some(Json::Null), Some(Json::Number(id))) => {
                What::Wait(id.as_u64().ok_or_else(|| refuse("`wait` is the id of a run".into()))?)
            }
            (Some(_), Some(wait)) if !wait.is_null() => {
                return Err(refuse(
                    "`run` takes `code` to start a program or `wait` to go on with one, not both".into(),
                ));
            }
            (None | Some(Json::Null), Some(_)) => return Err(refuse("`wait` is the id of a run".into())),
            _ => return Err(refuse("`run` needs `code`: the Python program, as a string".into())),
        };
        match what {
            What::Code(_) if stop => Err(refuse("`stop` goes with `wait`: the run to end".into())),
            What::Wait(_) if timeout.is_some() => {
                Err(refuse("`timeout` goes with `code`: a run keeps the timeout it started with".into()))
            }
            what => Ok(Self { what, timeout, yield_after, stop }),
        }
    }
}

fn names_are_strings() -> McpError {
    McpError::invalid_params("`names` is a list of tool names", None)
}

/// A name the client sent, shortened for a message: the answer to a refused request stays
/// small whatever the request held.
pub(super) fn clip(name: &str) -> String {
    const KEPT: usize = 64;
    match name.char_indices().nth(KEPT) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_owned(),
    }
}

/// Cancels `stop` once the HTTP client of the call is gone (its connection closed before the
/// answer's end) and [`GONE_GRACE`] has passed, so that a client that dropped its connection
/// does not hold a slot until the run's own timeout, which may be a day. Watches until the
/// guard it returns is dropped.
fn stop_when_gone(context: &RequestContext<RoleServer>, stop: &CancellationToken) -> Option<DropGuard> {
    let gone = context.extensions.get::<::http::request::Parts>()?.extensions.get::<http::ClientGone>()?.0.clone();
    let done = CancellationToken::new();
    let watching = done.clone();
    let stop = stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = watching.cancelled() => {}
            () = async {
                gone.cancelled().await;
                tokio::time::sleep(GONE_GRACE).await;
            } => stop.cancel(),
        }
    });
    Some(done.drop_guard())
}
