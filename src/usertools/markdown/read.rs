//! Tool files read line by line, as agentschema reads them: the YAML frontmatter between `---`
//! lines, the sections under `## ` headings outside code fences, fenced code blocks, and the
//! cells of table rows. This reads shapes only; what a tool file must say is the rules' part
//! ([`super`]).

use std::fmt::Write as _;

use yaml_rust2::{Yaml, YamlLoader};

/// The text as agentschema reads it: without a byte-order mark, with `\n` line ends.
pub(super) fn normalized(text: &str) -> String {
    text.strip_prefix('\u{feff}').unwrap_or(text).replace("\r\n", "\n")
}

/// A file's frontmatter, read.
pub(super) struct Frontmatter<'a> {
    pub(super) map: yaml_rust2::yaml::Hash,
    /// Its lines, the `---` lines left out; the first is line 2 of the file.
    lines: Vec<&'a str>,
    /// The index of the first line after the closing `---`.
    pub(super) body_start: usize,
}

impl Frontmatter<'_> {
    pub(super) fn get(&self, key: &str) -> Option<&Yaml> {
        self.map.get(&Yaml::String(key.into()))
    }

    /// The line of `key:`, or 1.
    pub(super) fn line_of(&self, key: &str) -> usize {
        self.lines.iter().position(|l| l.starts_with(&format!("{key}:"))).map_or(1, |i| i + 2)
    }
}

/// A fenced code block.
#[derive(Debug, Clone)]
pub(super) struct Block {
    /// The index of the opening fence's line.
    pub(super) first_line: usize,
    pub(super) language: String,
    pub(super) source: String,
}

/// Why a file's frontmatter cannot be read: the problem's line, rule and message.
pub(super) struct Unread {
    pub(super) line: usize,
    pub(super) rule: &'static str,
    pub(super) message: String,
}

impl Unread {
    fn new(line: usize, rule: &'static str, message: String) -> Self {
        Self { line, rule, message }
    }
}

/// The frontmatter of a file split into `lines`, when there is one that reads as a YAML
/// mapping; else the problem that stops the reading.
pub(super) fn frontmatter<'t>(lines: &[&'t str]) -> Result<Frontmatter<'t>, Unread> {
    if lines.first() != Some(&"---") || lines.len() < 2 {
        return Err(Unread::new(
            1,
            "frontmatter-missing",
            "must start with YAML frontmatter between `---` lines: the first line is exactly `---`".into(),
        ));
    }
    let closing = |line: &&str| line.strip_prefix("---").is_some_and(|rest| rest.trim_matches([' ', '\t']).is_empty());
    let Some(end) = lines.iter().skip(1).position(closing).map(|i| i + 1) else {
        return Err(Unread::new(1, "frontmatter-unclosed", "the frontmatter is not closed with a `---` line".into()));
    };
    let yaml_lines = lines[1..end].to_vec();
    let docs = match YamlLoader::load_from_str(&yaml_lines.join("\n")) {
        Ok(docs) => docs,
        Err(err) => {
            return Err(Unread::new(err.marker().line() + 1, "yaml-invalid", format!("invalid YAML: {}", err.info())));
        }
    };
    let map = match docs.into_iter().next() {
        None | Some(Yaml::Null) => yaml_rust2::yaml::Hash::new(),
        Some(Yaml::Hash(map)) => map,
        Some(_) => {
            return Err(Unread::new(
                2,
                "frontmatter-not-mapping",
                "the frontmatter must be a YAML mapping (`key: value` lines)".into(),
            ));
        }
    };
    Ok(Frontmatter { map, lines: yaml_lines, body_start: end + 1 })
}

/// A file's body split into sections by their `## ` headings, fence-aware.
pub(super) struct Sections<'a> {
    /// Each title (lower case) with its lines (index, text); a later section of one title
    /// replaces an earlier one.
    by_title: Vec<(String, Vec<(usize, &'a str)>)>,
    /// The heading lines (1-based) of `## Code` sections that replaced an earlier one.
    pub(super) repeated_code: Vec<usize>,
}

impl<'a> Sections<'a> {
    pub(super) fn split(lines: &[&'a str], start: usize) -> Self {
        let mut sections = Self { by_title: Vec::new(), repeated_code: Vec::new() };
        let mut current: Option<usize> = None;
        let mut fence: Option<&str> = None;
        // The body is read trimmed: its first line starts at its first non-blank character.
        let first = (start..lines.len()).find(|&i| !lines[i].trim().is_empty());
        for (i, &raw) in lines.iter().enumerate().skip(start) {
            let line = if Some(i) == first { raw.trim_start() } else { raw };
            if let Some(marker) = fence_marker(line)
                && fence.is_none_or(|open| open == marker)
            {
                fence = if fence.is_some() { None } else { Some(marker) };
            }
            if let Some(title) = fence.is_none().then(|| heading(line)).flatten() {
                if let Some(at) = sections.by_title.iter().position(|(t, _)| *t == title) {
                    if title == "code" {
                        sections.repeated_code.push(i + 1);
                    }
                    sections.by_title[at].1.clear();
                    current = Some(at);
                } else {
                    sections.by_title.push((title, Vec::new()));
                    current = Some(sections.by_title.len() - 1);
                }
            } else if let Some(current) = current {
                sections.by_title[current].1.push((i, line));
            }
        }
        sections
    }

    pub(super) fn get(&self, title: &str) -> Option<&[(usize, &'a str)]> {
        self.by_title.iter().find(|(t, _)| t == title).map(|(_, lines)| lines.as_slice())
    }
}

/// The title of a `## ` heading, lower case: `##`, blanks, text (agentschema's
/// `^##\s+(.+?)\s*$`, under which `##` and two blanks is a heading whose title is a blank).
fn heading(line: &str) -> Option<String> {
    let rest = line.strip_prefix("##")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    match rest.trim() {
        "" if rest.chars().count() >= 2 => Some(" ".to_owned()),
        "" => None,
        title => Some(title.to_lowercase()),
    }
}

/// The fence a line opens or closes: three backticks or tildes at its very start.
fn fence_marker(line: &str) -> Option<&'static str> {
    ["```", "~~~"].into_iter().find(|marker| line.starts_with(marker))
}

/// The fenced blocks among `lines`: an opening fence, its language (letters, digits, `_`, `-`
/// after optional blanks; the rest of the info string is ignored), and the lines up to a line
/// holding only the same fence.
pub(super) fn blocks(lines: &[(usize, &str)]) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (index, line) = lines[i];
        // An opening fence needs a line after it.
        if let Some(marker) = fence_marker(line)
            && i + 1 < lines.len()
        {
            let closes = |l: &str| l.strip_prefix(marker).is_some_and(|rest| rest.trim_matches([' ', '\t']).is_empty());
            if let Some(close) = (i + 1..lines.len()).find(|&j| closes(lines[j].1)) {
                let info = line[marker.len()..].trim_start_matches([' ', '\t']);
                let language: String = info
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                    .collect::<String>()
                    .to_lowercase();
                let source = lines[i + 1..close].iter().fold(String::new(), |mut source, (_, l)| {
                    let _ = writeln!(source, "{l}");
                    source
                });
                blocks.push(Block { first_line: index, language, source });
                i = close + 1;
                continue;
            }
        }
        i += 1;
    }
    blocks
}

/// The cells of a table row: split at pipes not escaped with `\`, each trimmed, `\|`
/// unescaped, and one pair of surrounding backticks removed.
pub(super) fn cells(row: &str) -> Vec<String> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = row.strip_suffix('|').unwrap_or(row);
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut previous = None;
    for c in row.chars() {
        if c == '|' && previous != Some('\\') {
            cells.push(std::mem::take(&mut cell));
        } else {
            cell.push(c);
        }
        previous = Some(c);
    }
    cells.push(cell);
    cells
        .into_iter()
        .map(|cell| {
            let cell = cell.trim().replace("\\|", "|");
            match cell.strip_prefix('`').and_then(|c| c.strip_suffix('`')) {
                Some(inner) if cell.len() >= 2 => inner.to_owned(),
                _ => cell,
            }
        })
        .collect()
}

/// A YAML value as a message shows it.
pub(super) fn yaml_text(value: &Yaml) -> String {
    match value {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Null => "null".into(),
        Yaml::Array(_) => "a list".into(),
        Yaml::Hash(_) => "a mapping".into(),
        _ => "an unreadable value".into(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{ToolFile, parse_file};
    use super::*;

    const HEAD: &str = "---\ntype: custom\nname: t\ndescription: d\n---\n";

    #[test]
    fn cells_split_at_unescaped_pipes_and_lose_one_pair_of_backticks() {
        assert_eq!(cells("| `a` | Either `x` \\| `y` | ``raw`` |"), ["a", "Either `x` | `y`", "`raw`"]);
        assert_eq!(cells("|a|b"), ["a", "b"]);
        assert_eq!(cells("| `` |"), [""]);
    }

    #[test]
    fn sections_ignore_headings_inside_fences_and_the_last_code_wins() {
        let text = format!(
            "{HEAD}\n## Notes\n\n~~~markdown\n## Code\n\n```js\nmodule.exports = () => 'example';\n```\n~~~\n\n## Code\n\n```js\nmodule.exports = () => `\n## Result`;\n```\n"
        );
        let parsed = parse_file(Path::new("tools/t.md"), &text);
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        let Some(ToolFile::Custom(tool)) = parsed.tool else { panic!("no tool") };
        assert_eq!(tool.code.source, "module.exports = () => `\n## Result`;\n");
        assert_eq!(tool.code.first_line, 20);
    }

    #[test]
    fn a_bom_and_crlf_are_read_through() {
        let text = format!("\u{feff}{HEAD}## Code\n```js\nmodule.exports = () => 1;\n```\n").replace('\n', "\r\n");
        assert_eq!(parse_file(Path::new("tools/t.md"), &text).problems, []);
    }
}
