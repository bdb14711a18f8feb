//! Markdown tool files in the agentschema v0.2 tool format, read as agentschema reads them:
//! YAML frontmatter between `---` lines, then sections split at `## ` headings outside code
//! fences (the last section of a title counts). A custom tool (`type: custom`, `name`,
//! `description`) has an `## Input Schema` table and one `## Code` block whose language
//! decides where the code runs; a pre-built tool file (`type: agent_toolset_20260401`) names
//! one of the pre-built tools and nothing else. [`parse_file`] returns the tool and every
//! problem found, each with its line and rule, so `codeact check` can report them all at once.
//! The line-by-line reading itself is [`read`]'s; these are the rules over what it reads.

mod read;

use std::path::Path;

use read::{Block, Frontmatter, Sections, blocks, cells, yaml_text};
use yaml_rust2::Yaml;

use super::Problem;
use crate::tools::builtin::is_reserved;
use crate::tools::spec::{JsonBase, JsonType};

/// The `type` of a pre-built tool file.
pub(crate) const TOOLSET: &str = "agent_toolset_20260401";

/// The pre-built tools a `type: agent_toolset_20260401` file may name, and the codeact tool
/// each one is (`None`: codeact has none).
pub(crate) const PREBUILT: [(&str, Option<&str>); 8] = [
    ("bash", Some("bash")),
    ("edit", Some("edit")),
    ("glob", Some("glob")),
    ("grep", Some("grep")),
    ("read", Some("view")),
    ("web_fetch", Some("web_fetch")),
    ("web_search", None),
    ("write", Some("create")),
];

/// Tool names agentschema keeps for itself: a custom tool cannot start with one.
const RESERVED_PREFIXES: [&str; 2] = ["mcp__", "ant__"];

/// The longest tool name the API takes.
const MAX_NAME: usize = 64;

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

/// A custom tool file that parsed without errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MarkdownTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) inputs: Vec<Input>,
    pub(crate) code: Code,
}

/// What a tool file without errors declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolFile {
    Custom(MarkdownTool),
    /// A pre-built tool, by its agentschema name.
    Prebuilt(&'static str),
}

/// A custom tool's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Code {
    pub(crate) language: Language,
    pub(crate) source: String,
    /// The line of the code's first line in the file.
    pub(crate) first_line: usize,
}

/// What its frontmatter says a file is, whether or not the rest is right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Declared {
    Custom,
    Prebuilt,
}

/// A parsed tool file.
#[derive(Debug)]
pub(crate) struct Parsed {
    /// `None` when the frontmatter could not be read or names no known type.
    pub(crate) declared: Option<Declared>,
    /// `None` when there is an error among the problems.
    pub(crate) tool: Option<ToolFile>,
    /// A custom tool's code block, also when the file has other problems (its syntax is
    /// checked all the same).
    pub(crate) code: Option<Code>,
    pub(crate) problems: Vec<Problem>,
}

/// Parses `text`, the contents of the tool file `path`, whose file name is the tool's name.
#[must_use]
pub(crate) fn parse_file(path: &Path, text: &str) -> Parsed {
    let text = read::normalized(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut file = File { path, problems: Vec::new() };
    let Some(front) = file.frontmatter(&lines) else {
        return Parsed { declared: None, tool: None, code: None, problems: file.problems };
    };
    let sections = Sections::split(&lines, front.body_start);
    if let Some(&line) = sections.repeated_code.last() {
        file.warning(
            line,
            "code-section-duplicate",
            "more than one `## Code` section: the last one is used; remove the others".into(),
        );
    }
    // Structure problems count for every file, whatever its type, as agentschema reads the
    // sections of every tool file.
    let table = sections.get("input schema").map(|lines| file.table(lines));
    let block = sections.get("code").and_then(|lines| file.code_block(lines));

    let declared = file.declared(&front);
    let mut code_found = None;
    let tool = match declared {
        Some(Declared::Prebuilt) => {
            file.known_fields(&front, &["type"]);
            file.prebuilt(&stem).map(ToolFile::Prebuilt)
        }
        Some(Declared::Custom) => {
            file.known_fields(&front, &["type", "name", "description"]);
            let description = file.custom_header(&front, &stem);
            let inputs = file.inputs(table.flatten().unwrap_or_default());
            let code = match (sections.get("code"), block) {
                (None, _) => {
                    file.error(
                        lines.len() - usize::from(lines.last() == Some(&"")),
                        "code-missing",
                        "a `## Code` section with one JavaScript code block is required".into(),
                    );
                    None
                }
                (Some(_), None) => None,
                (Some(_), Some(block)) => file.language(&block).map(|language| (language, block)),
            };
            code_found =
                code.map(|(language, block)| Code { language, source: block.source, first_line: block.first_line + 2 });
            match (description, &code_found) {
                (Some(description), Some(code)) => {
                    Some(ToolFile::Custom(MarkdownTool { name: stem, description, inputs, code: code.clone() }))
                }
                _ => None,
            }
        }
        None => None,
    };
    let tool = tool.filter(|_| !file.problems.iter().any(|p| p.severity == super::Severity::Error));
    Parsed { declared, tool, code: code_found, problems: file.problems }
}

/// The codeact tool a pre-built tool is, if codeact has one.
#[must_use]
pub(crate) fn prebuilt_equivalent(name: &str) -> Option<&'static str> {
    PREBUILT.iter().find(|(prebuilt, _)| *prebuilt == name).and_then(|(_, ours)| *ours)
}

fn is_prebuilt(name: &str) -> bool {
    PREBUILT.iter().any(|(prebuilt, _)| *prebuilt == name)
}

fn prebuilt_names() -> String {
    PREBUILT.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
}

/// A file being parsed, and the problems found so far.
struct File<'a> {
    path: &'a Path,
    problems: Vec<Problem>,
}

impl File<'_> {
    fn error(&mut self, line: usize, rule: &'static str, message: String) {
        self.problems.push(Problem::error(self.path, line, rule, message));
    }

    fn warning(&mut self, line: usize, rule: &'static str, message: String) {
        self.problems.push(Problem::warning(self.path, line, rule, message));
    }

    /// The frontmatter, when there is one that reads as a YAML mapping.
    fn frontmatter<'t>(&mut self, lines: &[&'t str]) -> Option<Frontmatter<'t>> {
        read::frontmatter(lines).map_err(|unread| self.error(unread.line, unread.rule, unread.message)).ok()
    }

    /// The kind of tool `type` declares; a problem when it names none.
    fn declared(&mut self, front: &Frontmatter<'_>) -> Option<Declared> {
        match front.get("type") {
            Some(Yaml::String(ty)) if ty == "custom" => return Some(Declared::Custom),
            Some(Yaml::String(ty)) if ty == TOOLSET => return Some(Declared::Prebuilt),
            _ => {}
        }
        let not = front.get("type").map(|ty| format!(", not `{}`", yaml_text(ty))).unwrap_or_default();
        self.error(
            front.line_of("type"),
            "type-invalid",
            format!("`type` must be `{TOOLSET}` (a pre-built tool) or `custom`{not}"),
        );
        None
    }

    /// A problem for each frontmatter field not in `allowed`.
    fn known_fields(&mut self, front: &Frontmatter<'_>, allowed: &[&str]) {
        for key in front.map.keys() {
            let key = yaml_text(key);
            if !allowed.contains(&key.as_str()) {
                let fields = allowed.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ");
                self.error(front.line_of(&key), "field-unknown", format!("unknown field `{key}` (allowed: {fields})"));
            }
        }
    }

    /// The pre-built tool a pre-built file names.
    fn prebuilt(&mut self, stem: &str) -> Option<&'static str> {
        let known = PREBUILT.iter().map(|(name, _)| *name).find(|name| *name == stem);
        if known.is_none() {
            self.error(
                1,
                "prebuilt-unknown",
                format!("`{stem}` is not a pre-built tool; name the file after one of: {}", prebuilt_names()),
            );
        }
        known
    }

    /// Checks a custom tool's name (its file name) and description; returns the description.
    fn custom_header(&mut self, front: &Frontmatter<'_>, stem: &str) -> Option<String> {
        let name_line = front.line_of("name");
        match front.get("name") {
            Some(Yaml::String(name)) if name == stem => {}
            Some(name) => self.error(
                name_line,
                "name-mismatch",
                format!("`name` is `{}` but the file is `{stem}.md`; they must match", yaml_text(name)),
            ),
            None => self.error(1, "name-mismatch", format!("the frontmatter needs `name: {stem}`, the file's name")),
        }
        let valid = (1..=MAX_NAME).contains(&stem.chars().count())
            && stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            self.error(
                name_line,
                "name-invalid",
                format!(
                    "`{stem}` is not a valid tool name: use letters, digits, `_` and `-`, up to {MAX_NAME} characters"
                ),
            );
        }
        if is_prebuilt(stem) {
            self.error(
                name_line,
                "name-prebuilt",
                format!("`{stem}` is a pre-built tool's name, which the API refuses for a custom tool; rename the file and its `name`"),
            );
        } else if is_reserved(stem) {
            self.error(
                name_line,
                "name-reserved",
                format!("`{stem}` is taken: a codeact tool or Python name; rename the file and its `name`"),
            );
        }
        if let Some(prefix) = RESERVED_PREFIXES.iter().find(|prefix| stem.starts_with(**prefix)) {
            self.error(name_line, "name-prefix", format!("custom tool names cannot start with `{prefix}`"));
        }
        let description = match front.get("description") {
            Some(Yaml::String(text)) if !text.trim().is_empty() => Some(text.trim().to_owned()),
            _ => None,
        };
        if description.is_none() {
            self.error(
                front.line_of("description"),
                "description-missing",
                "the frontmatter needs a non-empty `description`: it is how a model learns when to call the tool"
                    .into(),
            );
        }
        description
    }

    /// The rows of the `## Input Schema` table, `None` when its header is wrong. Rows are the
    /// lines that start with `|`; the two first are the header and its separator. A section
    /// without a table declares no inputs.
    fn table(&mut self, lines: &[(usize, &str)]) -> Option<Vec<(usize, Vec<String>)>> {
        let rows: Vec<(usize, Vec<String>)> =
            lines.iter().filter(|(_, l)| l.trim().starts_with('|')).map(|(i, l)| (i + 1, cells(l))).collect();
        let Some((header_line, header)) = rows.first() else { return Some(Vec::new()) };
        let wanted = ["name", "type", "description", "required"];
        let matches =
            wanted.iter().enumerate().all(|(i, want)| header.get(i).is_some_and(|c| c.to_lowercase() == *want));
        if !matches {
            self.error(
                *header_line,
                "table-columns",
                "the Input Schema table's columns must be `| Name | Type | Description | Required |`".into(),
            );
            return None;
        }
        Some(rows.into_iter().skip(2).collect())
    }

    /// The inputs the table's rows declare.
    fn inputs(&mut self, rows: Vec<(usize, Vec<String>)>) -> Vec<Input> {
        let mut inputs: Vec<Input> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for (line, cols) in rows {
            let cell = |i: usize| cols.get(i).cloned().unwrap_or_default();
            let (name, ty, description, required) = (cell(0), cell(1), cell(2), cell(3));
            let name_ok = if name.is_empty() {
                self.error(line, "input-no-name", "an Input Schema row has no name".into());
                false
            } else if seen.contains(&name) {
                self.error(line, "input-duplicate", format!("input `{name}` is listed twice"));
                false
            } else {
                seen.push(name.clone());
                true
            };
            let parsed = JsonType::parse(&ty);
            if parsed.is_none() {
                let types: Vec<&str> = JsonBase::ALL.iter().map(|t| t.name()).collect();
                self.error(
                    line,
                    "input-type",
                    format!(
                        "input `{name}` has type `{ty}`; use {}, or one of them followed by `[]`",
                        types.join(", ")
                    ),
                );
            }
            let required = match required.to_lowercase().as_str() {
                "true" => true,
                "false" => false,
                other => {
                    self.error(
                        line,
                        "input-required",
                        format!("input `{name}`: Required must be `true` or `false`, not `{other}`"),
                    );
                    false
                }
            };
            if let (true, Some(ty)) = (name_ok, parsed) {
                inputs.push(Input { name, ty, description, required });
            }
        }
        inputs
    }

    /// The one fenced block of the `## Code` section.
    fn code_block(&mut self, lines: &[(usize, &str)]) -> Option<Block> {
        let blocks = blocks(lines);
        if let [block] = blocks.as_slice() {
            return Some(block.clone());
        }
        let line = blocks.get(1).map_or_else(|| lines.first().map_or(1, |(i, _)| i + 1), |b| b.first_line + 1);
        let found = match blocks.len() {
            0 => "none (a fence is ``` or ~~~ at the start of a line, closed by the same)".to_owned(),
            n => n.to_string(),
        };
        self.error(
            line,
            "code-blocks",
            format!("the Code section must hold exactly one fenced code block, not {found}"),
        );
        None
    }

    /// Where the block's code runs: JavaScript as agentschema runs it, or one of codeact's own.
    fn language(&mut self, block: &Block) -> Option<Language> {
        let language = match block.language.as_str() {
            "javascript" | "js" => Language::JavaScript,
            "python" | "py" => Language::Python,
            "sh" | "bash" | "shell" => Language::Shell,
            other => {
                let given =
                    if other.is_empty() { "a block without a language".to_owned() } else { format!("`{other}`") };
                self.error(
                    block.first_line + 1,
                    "code-language",
                    format!(
                        "the code must be JavaScript (```javascript), not {given}; codeact also runs ```python, ```sh and ```bash"
                    ),
                );
                return None;
            }
        };
        Some(language)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<&'static str> {
        parse_file(Path::new("tools/t.md"), text).problems.iter().map(|p| p.rule).collect()
    }

    const HEAD: &str = "---\ntype: custom\nname: t\ndescription: d\n---\n";

    #[test]
    fn two_code_sections_use_the_last_with_a_warning() {
        let text = format!(
            "{HEAD}## Code\n```js\nmodule.exports = () => 1;\n```\n##   Code\n~~~javascript title=\"x\"\nmodule.exports = () => 2;\n~~~\n"
        );
        let parsed = parse_file(Path::new("tools/t.md"), &text);
        assert_eq!(parsed.problems.iter().map(|p| p.rule).collect::<Vec<_>>(), ["code-section-duplicate"]);
        let Some(ToolFile::Custom(tool)) = parsed.tool else { panic!("no tool") };
        assert_eq!(
            (tool.code.source.as_str(), tool.code.language),
            ("module.exports = () => 2;\n", Language::JavaScript)
        );
    }

    #[test]
    fn tables_allow_prose_escaped_pipes_and_extra_columns() {
        let text = format!(
            "{HEAD}## Input Schema\n\nSome prose.\n\n| Name | Type | Description | Required | Default |\n|---|---|---|---|---|\n| `filePath` | `string` | a \\| b | `TRUE` | - |\n| `file-path` | `integer[]` | | false |\n\nMore prose.\n\n## Code\n```js\nmodule.exports = (i) => i;\n```\n"
        );
        let parsed = parse_file(Path::new("tools/t.md"), &text);
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        let Some(ToolFile::Custom(tool)) = parsed.tool else { panic!("no tool") };
        let names: Vec<(&str, &str, bool)> =
            tool.inputs.iter().map(|i| (i.name.as_str(), i.description.as_str(), i.required)).collect();
        assert_eq!(names, [("filePath", "a | b", true), ("file-path", "", false)]);
    }

    #[test]
    fn an_input_schema_without_a_table_declares_no_inputs() {
        let text = format!("{HEAD}## Input Schema\n\n_No input._\n\n## Code\n```js\nmodule.exports = () => 1;\n```\n");
        assert_eq!(rules(&text), Vec::<&str>::new());
    }

    #[test]
    fn the_rules_agentschema_checks() {
        let code = "## Code\n```js\nmodule.exports = () => 1;\n```\n";
        let cases: Vec<(String, &str, Vec<&str>)> = vec![
            (format!("--- \ntype: custom\n---\n{code}"), "t", vec!["frontmatter-missing"]),
            ("---\ntype: custom\n".into(), "t", vec!["frontmatter-unclosed"]),
            (
                format!("---\ntype: custom\nname: t\ndescription: d\nversion: 2\n---\n{code}"),
                "t",
                vec!["field-unknown"],
            ),
            (format!("---\ntype: function\n---\n{code}"), "t", vec!["type-invalid"]),
            ("---\ntype: agent_toolset_20260401\n---\n".into(), "read", vec![]),
            ("---\ntype: agent_toolset_20260401\npermission: x\n---\n".into(), "glob", vec!["field-unknown"]),
            ("---\ntype: agent_toolset_20260401\n---\n".into(), "python", vec!["prebuilt-unknown"]),
            (format!("---\ntype: custom\nname: write\ndescription: d\n---\n{code}"), "write", vec!["name-prebuilt"]),
            (format!("---\ntype: custom\nname: view\ndescription: d\n---\n{code}"), "view", vec!["name-reserved"]),
            (format!("---\ntype: custom\nname: mcp__x\ndescription: d\n---\n{code}"), "mcp__x", vec!["name-prefix"]),
            (format!("---\ntype: custom\nname: a.b\ndescription: d\n---\n{code}"), "a.b", vec!["name-invalid"]),
            (format!("---\ntype: custom\nname: read-file\ndescription: d\n---\n{code}"), "read-file", vec![]),
            (format!("---\ntype: custom\nname: ReadFile\ndescription: d\n---\n{code}"), "ReadFile", vec![]),
            (
                format!(
                    "{HEAD}## Input Schema\n| Name | Type | Description | Required |\n|-|-|-|-|\n| g | string[][] | d | true |\n{code}"
                ),
                "t",
                vec!["input-type"],
            ),
            (format!("{HEAD}## Code\n  ```js\n  module.exports = () => 1;\n  ```\n"), "t", vec!["code-blocks"]),
            (format!("{HEAD}## Code\n```typescript\nexport {{}};\n```\n"), "t", vec!["code-language"]),
            (format!("{HEAD}## Code\n```node\nmodule.exports = () => 1;\n```\n"), "t", vec!["code-language"]),
            (format!("{HEAD}## Notes\nnone\n"), "t", vec!["code-missing"]),
        ];
        for (text, stem, want) in cases {
            let parsed = parse_file(Path::new(&format!("tools/{stem}.md")), &text);
            let got: Vec<&str> = parsed.problems.iter().map(|p| p.rule).collect();
            assert_eq!(got, want, "{text}");
        }
        let long = "x".repeat(65);
        let text = format!("---\ntype: custom\nname: {long}\ndescription: d\n---\n{code}");
        let parsed = parse_file(Path::new(&format!("tools/{long}.md")), &text);
        assert_eq!(parsed.problems.iter().map(|p| p.rule).collect::<Vec<_>>(), ["name-invalid"]);
    }
}
