//! `grep`: regex search in-process with ripgrep's crates. Respects `.gitignore` (inside the
//! workspace only), skips hidden and binary files, and never runs an external program, so a
//! pattern can never be an option. The walk ([`super::walk`]) and every file read go through
//! directory handles opened beneath the root. A search looks at the deadline as it reads each
//! chunk of a file and spends a per-call byte budget, so one huge file cannot outlast the run.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc;
use std::time::Instant;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use super::args::Args;
use super::context::{ToolContext, check_deadline, timed_out};
use super::error::ToolError;
use super::handler::Builtin;
use super::pattern;
use super::spec::{Kind, Param, ParamDefault, ToolSpec};
use super::value::Value;
use super::walk::{self, Flow};
use super::workspace::{Confined, Entry, Listed};

/// Characters of one matched line kept in a result.
const MAX_LINE_CHARS: usize = 1000;

/// Bytes one call reads at most, over all its files.
const MAX_SEARCH_BYTES: u64 = 512 * 1024 * 1024;

/// The longest line searched; a file with a longer one is skipped with a warning.
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Lines handed to the result collector between two looks at the deadline.
const DEADLINE_EVERY: usize = 1024;

/// Files larger than this are searched on a worker thread bounded by the deadline.
const WORKER_ABOVE: u64 = 256 * 1024;

pub(crate) static GREP: Builtin = Builtin {
    spec: ToolSpec {
        name: "grep",
        description: "Regex search respecting .gitignore; each match is `{path, line, text}` (+ `context` list).",
        params: &[
            Param::required("pattern", Kind::Str, "Regular expression"),
            Param::new("paths", Kind::Paths, ParamDefault::Str("."), "Files or directories to search"),
            Param::optional("glob", Kind::Str, "Only files matching this glob, e.g. `*.py` or `src/**/*.{ts,tsx}`"),
            Param::new("ignore_case", Kind::Bool, ParamDefault::Bool(false), "Case-insensitive match"),
            Param::new(
                "context_lines",
                Kind::Int,
                ParamDefault::Int(0),
                "Lines of context before and after each match",
            ),
            Param::new("max_results", Kind::Int, ParamDefault::Int(1000), "Stop after this many matches"),
        ],
        returns: "list[dict]",
        risk: None,
    },
    handler: grep,
};

fn grep(ctx: &mut ToolContext, args: &Args<'_>) -> Result<Value, ToolError> {
    let regex = args.str("pattern")?;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.bool("ignore_case")?)
        .build(regex)
        .map_err(|e| ToolError::value(format!("invalid regular expression {regex:?}: {e}")))?;
    let context = usize::try_from(args.int("context_lines")?)
        .map_err(|_| ToolError::value("grep() context_lines must be >= 0"))?
        .min(100);
    let max_results = usize::try_from(args.int("max_results")?)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| ToolError::value("grep() max_results must be >= 1"))?;
    // A glob without `/` matches file names; with one, paths relative to the search root.
    let filter = match args.opt_str("glob")? {
        Some(glob) => Some((pattern::compile(glob)?.0, !glob.contains('/'))),
        None => None,
    };
    let searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .before_context(context)
        .after_context(context)
        .heap_limit(Some(MAX_LINE_BYTES))
        .build();
    let mut search = Search {
        searcher,
        matcher,
        context,
        max_results,
        results: Vec::new(),
        warnings: Vec::new(),
        deadline: ctx.deadline,
        budget: MAX_SEARCH_BYTES,
    };
    let roots = args.str_list("paths")?.unwrap_or_else(|| vec![".".into()]);
    let ws = &ctx.workspace;
    'roots: for root in &roots {
        let root_rel = ws.resolve(root)?;
        let entry = ws.entry(&root_rel)?;
        if entry == Entry::File {
            // A file named in paths is searched whatever the filters say.
            let Ok((handle, len)) = ws.open_regular(&root_rel) else { continue };
            if search.file(&root_rel, handle, len)? == Flow::Stop {
                break 'roots;
            }
            continue;
        }
        if entry != Entry::Dir {
            continue;
        }
        let options =
            walk::Options { max_depth: None, excludes: &[], filters: true, deadline: ctx.deadline, tool: "grep" };
        let mut stopped = false;
        walk::walk(ws, &root_rel, &options, |found| {
            if found.kind != Listed::File {
                return Ok(Flow::Continue);
            }
            if let Some((filter, name_only)) = &filter {
                let under = found.rel.below(&root_rel).unwrap_or(found.rel.as_path());
                let candidate = if *name_only { Path::new(under.file_name().unwrap_or_default()) } else { under };
                if !filter.is_match(candidate) {
                    return Ok(Flow::Continue);
                }
            }
            let Ok((handle, len)) = found.dir.open_file(found.name) else { return Ok(Flow::Continue) };
            let flow = search.file(&found.rel, handle, len)?;
            stopped = flow == Flow::Stop;
            Ok(flow)
        })?;
        if stopped {
            break;
        }
    }
    for warning in &search.warnings {
        ctx.warn(warning);
    }
    if search.results.len() >= max_results {
        ctx.warn(&format!(
            "grep({regex:?}): stopped at max_results={max_results}; narrow the pattern or paths, or raise max_results"
        ));
    } else if search.budget == 0 {
        ctx.warn(&format!(
            "grep({regex:?}): stopped after searching {} MiB, the most one call searches; narrow paths or glob",
            MAX_SEARCH_BYTES / (1024 * 1024)
        ));
    }
    Ok(Value::List(search.results))
}

/// One call's search: the matcher, what it found, and what it may still spend.
struct Search {
    searcher: Searcher,
    matcher: RegexMatcher,
    context: usize,
    max_results: usize,
    results: Vec<Value>,
    warnings: Vec<String>,
    deadline: Instant,
    /// Bytes this call may still read.
    budget: u64,
}

impl Search {
    /// Searches one opened file of `len` bytes; `Stop` once `max_results` or the byte budget is
    /// reached. A file larger than [`WORKER_ABOVE`] is searched on a worker thread that is given
    /// up on at the deadline: the searcher looks at the deadline only between reads, and one
    /// long line is searched in one go.
    fn file(&mut self, rel: &Confined, handle: cap_std::fs::File, len: u64) -> Result<Flow, ToolError> {
        check_deadline(self.deadline, "grep")?;
        let room = self.max_results - self.results.len();
        let file = handle.into_std();
        let outcome = if len > WORKER_ABOVE {
            self.on_worker(file, room)?
        } else {
            search_file(&mut self.searcher, &self.matcher, file, room, self.deadline, self.budget)
        };
        self.budget = self.budget.saturating_sub(outcome.read);
        match outcome.stop {
            Some(Stop::Deadline) => return Err(timed_out("grep")),
            Some(Stop::Budget) | None => {}
        }
        if let Err(err) = &outcome.searched
            && outcome.stop.is_none()
        {
            if err.to_string().contains("allocation limit") {
                self.warnings.push(format!(
                    "grep(): skipped '{}': a line is longer than {} MiB",
                    rel.shown(),
                    MAX_LINE_BYTES / (1024 * 1024)
                ));
            }
            return Ok(Flow::Continue);
        }
        let path = rel.shown();
        let context = self.context;
        for line in &outcome.matches {
            let line = *line;
            let text = outcome.lines.get(&line).cloned().unwrap_or_default();
            let mut fields = vec![
                ("path", Value::Str(path.clone())),
                ("line", Value::Int(to_i64(line))),
                ("text", Value::Str(text)),
            ];
            if context > 0 {
                let around = outcome
                    .lines
                    .range(line.saturating_sub(to_u64(context))..=line + to_u64(context))
                    .filter(|(n, _)| **n != line)
                    .map(|(n, t)| Value::dict([("line", Value::Int(to_i64(*n))), ("text", Value::Str(t.clone()))]))
                    .collect();
                fields.push(("context", Value::List(around)));
            }
            self.results.push(Value::dict(fields));
        }
        let full = self.results.len() >= self.max_results || outcome.stop == Some(Stop::Budget);
        Ok(if full { Flow::Stop } else { Flow::Continue })
    }

    /// [`search_file`] on a thread of its own, waited for until the deadline. A search given
    /// up on runs to its end in the background, or ends with the process.
    fn on_worker(&self, file: std::fs::File, room: usize) -> Result<Outcome, ToolError> {
        let (mut searcher, matcher) = (self.searcher.clone(), self.matcher.clone());
        let (deadline, budget) = (self.deadline, self.budget);
        let (send, receive) = mpsc::channel();
        std::thread::Builder::new()
            .name("grep-file".into())
            .spawn(move || {
                let _ = send.send(search_file(&mut searcher, &matcher, file, room, deadline, budget));
            })
            .map_err(|e| ToolError::runtime(format!("grep() could not start a search: {e}")))?;
        receive.recv_timeout(deadline.saturating_duration_since(Instant::now())).map_err(|err| match err {
            mpsc::RecvTimeoutError::Timeout => timed_out("grep"),
            mpsc::RecvTimeoutError::Disconnected => ToolError::runtime("grep() search failed"),
        })
    }
}

/// What searching one file found, and how it ended.
struct Outcome {
    searched: std::io::Result<()>,
    stop: Option<Stop>,
    /// Bytes read.
    read: u64,
    lines: BTreeMap<u64, String>,
    matches: Vec<u64>,
}

/// Searches `file`, keeping at most `room` matches and reading at most `budget` bytes.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: std::fs::File,
    room: usize,
    deadline: Instant,
    budget: u64,
) -> Outcome {
    let stop = Cell::new(None);
    let mut left = budget;
    let mut sink = Collect { lines: BTreeMap::new(), matches: Vec::new(), room, calls: 0, deadline, stop: &stop };
    let reader = Metered { inner: file, deadline, left: &mut left, stop: &stop };
    let searched = searcher.search_reader(matcher, reader, &mut sink);
    let Collect { lines, matches, .. } = sink;
    Outcome { searched, stop: stop.get(), read: budget - left, lines, matches }
}

/// Why a search stopped before the end of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Deadline,
    Budget,
}

/// A file as the searcher reads it, chunk by chunk: each read looks at the deadline and spends
/// the call's byte budget, so one huge file, or a slow pattern over it, stops in time.
struct Metered<'a, R> {
    inner: R,
    deadline: Instant,
    left: &'a mut u64,
    stop: &'a Cell<Option<Stop>>,
}

impl<R: Read> Read for Metered<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if Instant::now() >= self.deadline {
            self.stop.set(Some(Stop::Deadline));
            return Err(std::io::Error::other("the run's time limit was reached"));
        }
        if *self.left == 0 {
            self.stop.set(Some(Stop::Budget));
            return Err(std::io::Error::other("the call's byte budget is spent"));
        }
        let room = usize::try_from(*self.left).unwrap_or(usize::MAX).min(buf.len());
        let read = self.inner.read(&mut buf[..room])?;
        *self.left -= read as u64;
        Ok(read)
    }
}

/// Collects matched and context lines of one file, stopping when there is no more room.
struct Collect<'a> {
    lines: BTreeMap<u64, String>,
    matches: Vec<u64>,
    room: usize,
    /// Lines handed over so far, to look at the deadline every [`DEADLINE_EVERY`].
    calls: usize,
    deadline: Instant,
    stop: &'a Cell<Option<Stop>>,
}

impl Collect<'_> {
    /// Fails once the deadline has passed, looking every [`DEADLINE_EVERY`] lines.
    fn tick(&mut self) -> Result<(), std::io::Error> {
        self.calls += 1;
        if self.calls.is_multiple_of(DEADLINE_EVERY) && Instant::now() >= self.deadline {
            self.stop.set(Some(Stop::Deadline));
            return Err(std::io::Error::other("the run's time limit was reached"));
        }
        Ok(())
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.tick()?;
        // A multi-line match reports its lines together; each starts a result of its own.
        let first = found.line_number().unwrap_or(0);
        for (offset, line) in found.lines().enumerate() {
            let number = first + offset as u64;
            self.lines.insert(number, clean(line));
            self.matches.push(number);
            if self.matches.len() >= self.room {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.tick()?;
        if let Some(number) = context.line_number() {
            self.lines.insert(number, clean(context.bytes()));
        }
        Ok(true)
    }
}

/// A line as text: no line terminator, lossy UTF-8, at most [`MAX_LINE_CHARS`] characters.
fn clean(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches(['\n', '\r']);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}
