//! `grep`: regex search in-process with ripgrep's crates. Respects `.gitignore`, skips hidden
//! and binary files, and never runs an external program, so a pattern can never be an option.

use std::collections::BTreeMap;
use std::path::Path;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkBuilder;

use super::args::Args;
use super::builtin::Builtin;
use super::context::ToolContext;
use super::error::ToolError;
use super::pattern;
use super::spec::{Kind, Param, ParamDefault, ToolSpec};
use super::value::Value;
use super::workspace::{Confined, Entry};

/// Characters of one matched line kept in a result.
const MAX_LINE_CHARS: usize = 1000;

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
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .before_context(context)
        .after_context(context)
        .build();
    let mut results = Vec::new();
    let roots = args.str_list("paths")?.unwrap_or_else(|| vec![".".into()]);
    'roots: for root in &roots {
        let root_rel = ctx.workspace.resolve(root)?;
        for file in files_under(ctx, &root_rel)? {
            if let Some((filter, name_only)) = &filter {
                let under = file.below(&root_rel).unwrap_or(file.as_path());
                let candidate = if *name_only { Path::new(under.file_name().unwrap_or_default()) } else { under };
                if !filter.is_match(candidate) {
                    continue;
                }
            }
            ctx.check_deadline("grep")?;
            let Ok((handle, _)) = ctx.workspace.open_regular(&file) else { continue };
            let mut sink = Collect { lines: BTreeMap::new(), matches: Vec::new(), room: max_results - results.len() };
            if searcher.search_file(&matcher, &handle.into_std(), &mut sink).is_err() {
                continue;
            }
            let path = file.shown();
            for line in sink.matches {
                let text = sink.lines.get(&line).cloned().unwrap_or_default();
                let mut fields = vec![
                    ("path", Value::Str(path.clone())),
                    ("line", Value::Int(to_i64(line))),
                    ("text", Value::Str(text)),
                ];
                if context > 0 {
                    let around = sink
                        .lines
                        .range(line.saturating_sub(to_u64(context))..=line + to_u64(context))
                        .filter(|(n, _)| **n != line)
                        .map(|(n, t)| Value::dict([("line", Value::Int(to_i64(*n))), ("text", Value::Str(t.clone()))]))
                        .collect();
                    fields.push(("context", Value::List(around)));
                }
                results.push(Value::dict(fields));
            }
            if results.len() >= max_results {
                ctx.warn(&format!(
                    "grep({regex:?}): stopped at max_results={max_results}; narrow the pattern or paths, or raise max_results"
                ));
                break 'roots;
            }
        }
    }
    Ok(Value::List(results))
}

/// The files to search under `root` (or `root` itself when it is a file), in a stable order.
fn files_under(ctx: &ToolContext, root: &Confined) -> Result<Vec<Confined>, ToolError> {
    let ws = &ctx.workspace;
    match ws.entry(root)? {
        Entry::File => return Ok(vec![root.clone()]),
        Entry::Special => return Ok(Vec::new()),
        Entry::Dir => {}
    }
    let host_root = ws.host_dir(root)?;
    let walker = WalkBuilder::new(&host_root)
        .standard_filters(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(std::cmp::Ord::cmp)
        .build();
    let mut files = Vec::new();
    for (seen, entry) in walker.enumerate() {
        if seen % 2048 == 0 {
            ctx.check_deadline("grep")?;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if let Some(file) = entry.path().strip_prefix(&host_root).ok().and_then(|under| root.join(under)) {
            files.push(file);
        }
    }
    Ok(files)
}

/// Collects matched and context lines of one file, stopping when there is no more room.
struct Collect {
    lines: BTreeMap<u64, String>,
    matches: Vec<u64>,
    room: usize,
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
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
