//! `codeact instructions`: the Markdown tool reference a model reads.

use anyhow::Result;

use super::reach;
use super::setup::{self, PROBE_TIME};
use crate::backend;
use crate::catalog::Discovery;
use crate::cli::BackendArgs;
use crate::exit;
use crate::output;
use crate::render::{Reference, Serving};
use crate::tools::github;

pub(crate) fn run(args: &BackendArgs) -> Result<u8> {
    let config = setup::config(&args.common, Some(&args.tools))?;
    let backend = backend::select(config.backend)?;
    let built =
        setup::catalog(&config, github::access(&config.workspace).as_ref(), Discovery::Probe(PROBE_TIME), false);
    let binary = reach::invocation();
    let route = reach::route(None);
    let text = Reference {
        backend,
        fallback: backend::fallback(config.backend),
        catalog: &built.catalog,
        limits: &config.limits,
        binary: &binary,
        route,
        serving: Serving::defaults(route),
    }
    .reference()?;
    output::text(&text)?;
    Ok(exit::SUCCESS)
}
