//! The commands a PowerShell line may use and still only read, by every name it may give them,
//! and the parameters that would make them write or run something.
//!
//! PowerShell matches names and parameters case-insensitively, and takes any unambiguous prefix
//! of a parameter's name (`-OutV` is `-OutVariable`): a parameter is refused when what is
//! written starts any name in the list, whatever else it might also start.

/// The common parameters every cmdlet has that write: each sets a variable of the session, which
/// can change what later commands do (`-OutVariable PSDefaultParameterValues`).
const COMMON_WRITES: &[&str] = &[
    "outvariable",
    "ov",
    "errorvariable",
    "ev",
    "warningvariable",
    "wv",
    "informationvariable",
    "iv",
    "pipelinevariable",
    "pv",
];

/// How a read-only command's arguments are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reader {
    /// A cmdlet, with the parameters of its own (besides [`COMMON_WRITES`]) that are refused.
    Cmdlet(&'static [&'static str]),
    /// ripgrep: `--pre` runs a program on every file it searches.
    Ripgrep,
}

/// The read-only commands, each by its names (lowercase): the cmdlet and its aliases in every
/// PowerShell, and `rg`. `sort` is no alias of `Sort-Object` outside Windows (it is the system's
/// `sort`, whose `-o` writes a file): only `Sort-Object` is listed. No command whose arguments
/// may run code is: `ForEach-Object` calls methods by name (`% Delete`), `Invoke-*` and
/// `Start-*` run programs.
const READ_ONLY: &[(&[&str], Reader)] = &[
    (&["get-content", "gc", "cat", "type"], Reader::Cmdlet(&[])),
    (&["select-string", "sls"], Reader::Cmdlet(&[])),
    (&["get-childitem", "gci", "ls", "dir"], Reader::Cmdlet(&[])),
    (&["get-item", "gi"], Reader::Cmdlet(&[])),
    (&["test-path"], Reader::Cmdlet(&[])),
    (&["resolve-path", "rvpa"], Reader::Cmdlet(&[])),
    (&["get-location", "gl", "pwd"], Reader::Cmdlet(&[])),
    (&["measure-object", "measure"], Reader::Cmdlet(&[])),
    (&["select-object", "select"], Reader::Cmdlet(&[])),
    (&["sort-object"], Reader::Cmdlet(&[])),
    // The simplified syntax only (`Where-Object Length -gt 0`): a script block is never lexed.
    // `-Is` and `-IsNot` look a type up by name.
    (&["where-object", "where", "?"], Reader::Cmdlet(&["is", "isnot"])),
    (&["format-table", "ft"], Reader::Cmdlet(&[])),
    (&["format-list", "fl"], Reader::Cmdlet(&[])),
    (&["format-wide", "fw"], Reader::Cmdlet(&[])),
    (&["out-string"], Reader::Cmdlet(&[])),
    (&["rg"], Reader::Ripgrep),
];

/// The read-only command `name` names, if it is one.
pub(super) fn reader(name: &str) -> Option<Reader> {
    let name = name.to_ascii_lowercase();
    READ_ONLY.iter().find(|(names, _)| names.contains(&name.as_str())).map(|(_, reader)| *reader)
}

/// Whether the unquoted `word` is a parameter that could start one of `refused` or of
/// [`COMMON_WRITES`]: `-Name` or `-Name:value`, any prefix of the name, in any case. A bare `-`
/// or a parameter without a name starts them all.
pub(super) fn is_refused_parameter(word: &str, refused: &[&str]) -> bool {
    let Some(parameter) = word.strip_prefix('-') else { return false };
    let name = parameter.trim_start_matches('-').split(':').next().unwrap_or_default().to_ascii_lowercase();
    COMMON_WRITES.iter().chain(refused).any(|refused| refused.starts_with(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_in_any_case() {
        for name in ["Get-Content", "GET-CONTENT", "gc", "Cat", "tYpE", "Sls", "?", "Where"] {
            assert!(reader(name).is_some(), "{name}");
        }
        for name in ["sort", "foreach-object", "%", "Set-Content", "Get-Content2", ""] {
            assert_eq!(reader(name), None, "{name}");
        }
    }

    #[test]
    fn a_parameter_is_refused_by_any_prefix_of_a_name_that_writes() {
        for word in
            ["-OutVariable", "-outv", "-O", "-ov", "-OV:x", "-PipelineVariable", "-pv", "-e", "-", "--ov", "-:x"]
        {
            assert!(is_refused_parameter(word, &[]), "{word}");
        }
        assert!(is_refused_parameter("-Is", &["is", "isnot"]));
        assert!(is_refused_parameter("-i", &["is", "isnot"]));
        // A whole name of the cmdlet's own is refused too when it starts one that writes:
        // `Where-Object -In` starts `-InformationVariable`.
        assert!(is_refused_parameter("-In", &["is", "isnot"]));
        for word in ["-Path", "-Raw", "-ErrorAction", "-ea", "-Tail:5", "5", "-5", "x-ov"] {
            assert!(!is_refused_parameter(word, &[]), "{word}");
        }
        assert!(!is_refused_parameter("-NotIn", &["is", "isnot"]));
    }
}
