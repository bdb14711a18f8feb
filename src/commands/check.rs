//! `codeact check`: validate user tool files and config files; exit 4 when any has an error.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use serde_json::json;

use crate::backend::monty;
use crate::cli::CheckArgs;
use crate::usertools::Severity;
use crate::usertools::check::{Validators, check, default_targets};
use crate::{config, dirs, exit, output};

pub(crate) fn run(args: &CheckArgs) -> Result<u8> {
    let targets = if args.paths.is_empty() {
        let workspace = match &args.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().context("failed to read the current directory")?,
        };
        default_targets(dirs::config().as_deref(), &workspace)
    } else {
        args.paths.clone()
    };
    let problems = check(&targets, Validators { python: monty::syntax_error, config: config::check_text });
    let errors = problems.iter().filter(|p| p.severity == Severity::Error).count();
    if args.json {
        output::json(&json!({"ok": errors == 0, "problems": problems}))?;
    } else {
        let mut text = String::new();
        for problem in &problems {
            let prefix = if problem.severity == Severity::Warning { "warning: " } else { "" };
            let _ = writeln!(text, "{}:{}: {prefix}{}", problem.path.display(), problem.line, problem.message);
        }
        output::text(&text)?;
        let files = targets.len();
        output::diagnostic(&format!(
            "{errors} error(s), {} warning(s) in {files} location(s) checked",
            problems.len() - errors
        ));
    }
    Ok(if errors == 0 { exit::SUCCESS } else { exit::INVALID_CONFIG })
}
