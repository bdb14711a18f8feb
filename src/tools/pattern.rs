//! Glob patterns for `glob` and `grep(glob=…)`: full (nested) brace expansion, then globset
//! matchers where `*` stays within one path segment and `**` crosses directories.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::error::ToolError;

/// Most alternatives one pattern may expand to.
const MAX_EXPANSIONS: usize = 1024;

/// Expands `{a,b}` groups, nested or not: `**/*.{py,{md,rst}}` → three patterns. A brace with
/// no top-level comma, or an unbalanced one, stays literal.
pub(crate) fn expand_braces(pattern: &str) -> Result<Vec<String>, ToolError> {
    let mut done = Vec::new();
    let mut todo = vec![pattern.to_owned()];
    while let Some(current) = todo.pop() {
        match find_group(&current) {
            None => done.push(current),
            Some((open, close, commas)) => {
                let mut start = open + 1;
                for cut in commas.into_iter().chain(std::iter::once(close)) {
                    todo.push(format!("{}{}{}", &current[..open], &current[start..cut], &current[close + 1..]));
                    start = cut + 1;
                }
            }
        }
        if done.len() + todo.len() > MAX_EXPANSIONS {
            return Err(ToolError::value(format!(
                "pattern {pattern:?} expands to more than {MAX_EXPANSIONS} alternatives"
            )));
        }
    }
    done.reverse();
    done.dedup();
    Ok(done)
}

/// The first brace group with a top-level comma: (open, close, comma positions).
fn find_group(text: &str) -> Option<(usize, usize, Vec<usize>)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'{' => {
                let mut depth = 0usize;
                let mut commas = Vec::new();
                let mut j = i;
                while j < bytes.len() {
                    match bytes[j] {
                        b'\\' => j += 1,
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                if !commas.is_empty() {
                                    return Some((i, j, commas));
                                }
                                break;
                            }
                        }
                        b',' if depth == 1 => commas.push(j),
                        _ => {}
                    }
                    j += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Builds one matcher from every expansion of `pattern`.
pub(crate) fn compile(pattern: &str) -> Result<(GlobSet, Vec<String>), ToolError> {
    let expanded = expand_braces(pattern)?;
    let mut builder = GlobSetBuilder::new();
    for alternative in &expanded {
        let glob = GlobBuilder::new(alternative)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|e| ToolError::value(format!("invalid glob pattern {pattern:?}: {}", e.kind())))?;
        builder.add(glob);
    }
    let set = builder.build().map_err(|e| ToolError::value(format!("invalid glob pattern {pattern:?}: {e}")))?;
    Ok((set, expanded))
}

/// The directory part of a pattern that has no wildcard (`src/app/**/*.py` → `src/app`), and
/// how many more path segments the pattern can match below it (`None` when `**` is present).
#[must_use]
pub(crate) fn literal_prefix(pattern: &str) -> (String, Option<usize>) {
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty() && *s != ".").collect();
    let is_literal = |s: &str| !s.contains(['*', '?', '[', '{', '\\']);
    let literal = segments.iter().take(segments.len().saturating_sub(1)).take_while(|s| is_literal(s)).count();
    let prefix = segments[..literal].join("/");
    let rest = &segments[literal..];
    let depth = if rest.contains(&"**") || rest.iter().any(|s| s.contains("**")) { None } else { Some(rest.len()) };
    (prefix, depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_fully_and_in_order() {
        assert_eq!(
            expand_braces("**/*.{py,{md,rst}}").ok(),
            Some(vec!["**/*.py".into(), "**/*.md".into(), "**/*.rst".into()])
        );
        assert_eq!(expand_braces("{a,b}/{c,d}").ok().map(|v| v.len()), Some(4));
        assert_eq!(expand_braces("plain{x}").ok(), Some(vec!["plain{x}".into()]));
        assert_eq!(expand_braces("open{a,b").ok(), Some(vec!["open{a,b".into()]));
    }

    #[test]
    fn brace_bombs_are_refused() {
        assert!(expand_braces(&"{a,b,c,d}".repeat(8)).is_err());
    }

    #[test]
    fn star_stays_in_one_segment_and_double_star_crosses() {
        let (set, _) = compile("src/*.py").unwrap();
        assert!(set.is_match("src/a.py"));
        assert!(!set.is_match("src/x/a.py"));
        let (set, _) = compile("**/*.py").unwrap();
        assert!(set.is_match("a.py") && set.is_match("src/x/a.py"));
    }

    #[test]
    fn literal_prefixes_bound_the_walk() {
        assert_eq!(literal_prefix("src/app/**/*.py"), ("src/app".into(), None));
        assert_eq!(literal_prefix("*.py"), (String::new(), Some(1)));
        assert_eq!(literal_prefix("src/*/x.py"), ("src".into(), Some(2)));
        assert_eq!(literal_prefix("./a.py"), (String::new(), Some(1)));
    }
}
