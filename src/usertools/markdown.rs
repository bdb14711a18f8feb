//! Markdown tool files in the agentschema v0.2 tool format: YAML frontmatter (`type: custom`,
//! `name`, `description`), an `## Input Schema` table, and one `## Code` block whose language
//! decides where the code runs. [`parse`] returns the tool and every problem it found, each with
//! its line, so `codeact check` can report them all at once.

use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

use super::{Problem, is_identifier};
use crate::tools::spec::{JsonBase, JsonType};

/// Where a tool's code runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Language {
    /// Inside the sandbox, with the other tools.
    Python,
    /// On the host under `node`.
    JavaScript,
    /// On the host under `sh`, the input as JSON on stdin.
    Shell,
}

/// One declared input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Input {
    pub(crate) name: String,
    pub(crate) ty: JsonType,
    pub(crate) description: String,
    pub(crate) required: bool,
}

/// A tool file that parsed without errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MarkdownTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) inputs: Vec<Input>,
    pub(crate) language: Language,
    pub(crate) code: String,
    /// The line of the code's first line in the file.
    pub(crate) code_line: usize,
}

/// Parses `text`, the contents of the tool file `path`.
#[must_use]
pub(crate) fn parse(path: &Path, text: &str) -> (Option<MarkdownTool>, Vec<Problem>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut file = File { path, lines: &lines, problems: Vec::new() };
    let (body_start, name, description) = file.frontmatter();
    let inputs = file.section("Input Schema", body_start).map(|start| file.inputs(start)).unwrap_or_default();
    let code = match file.section("Code", body_start) {
        None => {
            file.error(lines.len(), "missing `## Code` section with one fenced code block".into());
            None
        }
        Some(start) => file.code(start),
    };
    let problems = file.problems;
    let tool = match (name, description, code) {
        (Some(name), Some(description), Some((language, code, code_line))) if problems.is_empty() => {
            Some(MarkdownTool { name, description, inputs, language, code, code_line })
        }
        _ => None,
    };
    (tool, problems)
}

/// A file being parsed, and the problems found so far.
struct File<'a> {
    path: &'a Path,
    lines: &'a [&'a str],
    problems: Vec<Problem>,
}

impl File<'_> {
    fn error(&mut self, line: usize, message: String) {
        self.problems.push(Problem::error(self.path, line, message));
    }

    /// Checks the frontmatter; returns where the body starts, the name and the description.
    fn frontmatter(&mut self) -> (usize, Option<String>, Option<String>) {
        let lines = self.lines;
        if lines.first().map(|l| l.trim_end()) != Some("---") {
            self.error(
                1,
                "missing frontmatter: start the file with `---`, then `type: custom`, `name` and `description`".into(),
            );
            return (0, None, None);
        }
        let Some(end) = lines.iter().skip(1).position(|l| l.trim_end() == "---") else {
            self.error(1, "unclosed frontmatter: add a `---` line after it".into());
            return (lines.len(), None, None);
        };
        let yaml = lines[1..=end].join("\n");
        let docs = match YamlLoader::load_from_str(&yaml) {
            Ok(docs) => docs,
            Err(err) => {
                self.error(err.marker().line() + 1, format!("invalid YAML in the frontmatter: {}", err.info()));
                return (end + 2, None, None);
            }
        };
        let Some(Yaml::Hash(map)) = docs.first() else {
            self.error(2, "the frontmatter must be a YAML mapping (`key: value` lines)".into());
            return (end + 2, None, None);
        };
        let get = |key: &str| map.get(&Yaml::String(key.into()));
        let line_of =
            |key: &str| lines[1..=end].iter().position(|l| l.starts_with(&format!("{key}:"))).map_or(1, |i| i + 2);
        match get("type").and_then(Yaml::as_str) {
            Some("custom") => {}
            Some(other) => self.error(line_of("type"), format!("`type` must be `custom`, not `{other}`")),
            None => self.error(1, "the frontmatter needs `type: custom`".into()),
        }
        let stem = self.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let name = get("name").and_then(Yaml::as_str).map(str::to_owned);
        match &name {
            None => self.error(1, "the frontmatter needs a `name`".into()),
            Some(n) => {
                if !is_identifier(n) {
                    self.error(
                        line_of("name"),
                        format!("`{n}` is not a valid tool name: use lowercase letters, digits and `_`, starting with a letter"),
                    );
                }
                if *n != stem {
                    self.error(
                        line_of("name"),
                        format!("`name` is `{n}` but the file is `{stem}.md`; they must match"),
                    );
                }
            }
        }
        let description = get("description").and_then(Yaml::as_str).map(str::trim).filter(|d| !d.is_empty());
        if description.is_none() {
            self.error(
                1,
                "the frontmatter needs a non-empty `description`: it is how a model learns when to call the tool"
                    .into(),
            );
        }
        (end + 2, name, description.map(str::to_owned))
    }

    /// The line index of `## title` at or after `from`.
    fn section(&self, title: &str, from: usize) -> Option<usize> {
        let heading = format!("## {title}");
        self.lines.iter().enumerate().skip(from).find(|(_, l)| l.trim().eq_ignore_ascii_case(&heading)).map(|(i, _)| i)
    }

    /// The line index where the section starting at `start` ends.
    fn section_end(&self, start: usize) -> usize {
        self.lines
            .iter()
            .enumerate()
            .skip(start + 1)
            .find(|(_, l)| l.starts_with("## "))
            .map_or(self.lines.len(), |(i, _)| i)
    }

    /// The rows of the input table in the section at `start`.
    fn inputs(&mut self, start: usize) -> Vec<Input> {
        let rows: Vec<(usize, &str)> = (start + 1..self.section_end(start))
            .map(|i| (i + 1, self.lines[i].trim()))
            .filter(|(_, l)| !l.is_empty())
            .collect();
        let cells = |row: &str| -> Vec<String> {
            row.trim_matches('|').split('|').map(|c| c.trim().trim_matches('`').trim().to_owned()).collect()
        };
        let Some(((header_line, header), rest)) = rows.split_first() else {
            self.error(start + 1, "the `## Input Schema` section has no table".into());
            return Vec::new();
        };
        let header: Vec<String> = cells(header).iter().map(|c| c.to_ascii_lowercase()).collect();
        if header != ["name", "type", "description", "required"] {
            self.error(
                *header_line,
                "the input table must have the columns `| Name | Type | Description | Required |`".into(),
            );
            return Vec::new();
        }
        let mut inputs: Vec<Input> = Vec::new();
        for (line, row) in rest {
            if row.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')) {
                continue;
            }
            let cols = cells(row);
            if !row.starts_with('|') || cols.len() != 4 {
                self.error(*line, "malformed table row: expected `| name | type | description | required |`".into());
                continue;
            }
            let (input, ty, about, required) = (&cols[0], &cols[1], &cols[2], &cols[3]);
            if !is_identifier(input) {
                self.error(*line, format!("`{input}` is not a valid input name"));
            }
            if inputs.iter().any(|i| &i.name == input) {
                self.error(*line, format!("input `{input}` is declared twice"));
            }
            let parsed = JsonType::parse(ty);
            if parsed.is_none() {
                let types: Vec<&str> = JsonBase::ALL.iter().map(|t| t.name()).collect();
                self.error(
                    *line,
                    format!("input `{input}` has type `{ty}`; use one of {} (or one of them + `[]`)", types.join(", ")),
                );
            }
            let required = match required.to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                other => {
                    self.error(*line, format!("Required must be `true` or `false`, not `{other}`"));
                    false
                }
            };
            let ty = parsed.unwrap_or(JsonType { base: JsonBase::String, list: false });
            inputs.push(Input { name: input.clone(), ty, description: about.clone(), required });
        }
        inputs
    }

    /// The one fenced block of the `## Code` section at `start`: language, code, first line.
    fn code(&mut self, start: usize) -> Option<(Language, String, usize)> {
        let lines = self.lines;
        let mut blocks = Vec::new();
        let mut open: Option<(usize, String)> = None;
        for i in start + 1..self.section_end(start) {
            let fence = lines[i].trim_start().strip_prefix("```");
            match (&open, fence) {
                (None, Some(info)) => open = Some((i + 1, info.trim().to_ascii_lowercase())),
                (Some((first, language)), Some(_)) => {
                    blocks.push((*first, language.clone(), lines[*first..i].join("\n")));
                    open = None;
                }
                _ => {}
            }
        }
        if let Some((first, _)) = open {
            self.error(first, "the code block is not closed with ```".into());
        }
        match blocks.as_slice() {
            [(first, language, body)] => {
                let language = match language.as_str() {
                    "python" | "py" => Language::Python,
                    "javascript" | "js" | "node" => Language::JavaScript,
                    "sh" | "bash" | "shell" => Language::Shell,
                    "" => {
                        self.error(
                            *first,
                            "the code block has no language: write ```python, ```javascript, ```sh or ```bash".into(),
                        );
                        return None;
                    }
                    other => {
                        self.error(
                            *first,
                            format!("unsupported language `{other}`: use python, javascript, sh or bash"),
                        );
                        return None;
                    }
                };
                Some((language, body.clone(), first + 1))
            }
            [] => {
                self.error(start + 1, "the `## Code` section needs one fenced code block".into());
                None
            }
            [_, (second, ..), ..] => {
                self.error(
                    *second,
                    format!("the `## Code` section has {} code blocks; keep exactly one", blocks.len()),
                );
                None
            }
        }
    }
}
