//! `codeact preflight`: can the chosen backend run here? Exit 0 or 3, each failed check with
//! a one-line fix.

use std::fmt::Write as _;

use anyhow::Result;
use serde_json::json;

use super::{pairing, reach, setup};
use crate::backend::{self, Check};
use crate::cli::PreflightArgs;
use crate::exit;
use crate::output;

pub(crate) fn run(args: &PreflightArgs) -> Result<u8> {
    let config = setup::config(&args.common, None)?;
    let (choice, checks) = backend::preflight(config.backend);
    let ok = checks.iter().all(|c| c.ok);
    // Not a failed check (the backend runs), but the model would be told to run what is gone.
    if let Some((path, missing)) = reach::stale_instructions(&config.workspace) {
        output::warning(&format!(
            "the instructions in `{}` name `{missing}`, which no longer exists; run `codeact install` again to \
             rewrite them",
            path.display()
        ));
    }
    if let Some(mismatch) = pairing::plugin_mismatch() {
        output::warning(&mismatch.message());
    }
    if args.json {
        output::json(&json!({"backend": choice.name(), "ok": ok, "checks": checks}))?;
    } else {
        output::text(&report(choice.name(), &checks))?;
    }
    Ok(if ok { exit::SUCCESS } else { exit::BACKEND_UNAVAILABLE })
}

/// The text report: one line per check, a `fix:` line under each failure.
#[must_use]
pub(crate) fn report(name: &str, checks: &[Check]) -> String {
    let mut text = format!("preflight for backend {name}:\n");
    for check in checks {
        let mark = if check.ok { "ok" } else { "FAIL" };
        let _ = writeln!(text, "  {mark:<5} {}: {}", check.name, check.detail);
        if let Some(fix) = check.fix.as_ref().filter(|_| !check.ok) {
            let _ = writeln!(text, "        fix: {fix}");
        }
    }
    text
}
