//! `codeact instructions`: the Markdown tool reference a model reads.

use anyhow::{Context, Result};

use crate::backend;
use crate::cli::BackendArgs;
use crate::config::Config;
use crate::exit;
use crate::output;
use crate::render::Reference;
use crate::tools::Registry;

pub fn run(args: &BackendArgs) -> Result<u8> {
    let config = Config::load(&args.common)?;
    let backend = backend::select(config.backend)?;
    let registry = Registry::new(&config.tools);
    let binary = current_binary();
    let text = Reference { backend, registry: &registry, limits: &config.limits, binary: &binary }.reference()?;
    output::data(text.as_bytes()).context("failed to write to stdout")?;
    Ok(exit::SUCCESS)
}

/// The absolute path of this binary, as models should invoke it.
#[must_use]
pub fn current_binary() -> String {
    std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_or_else(|_| "codeact".to_owned(), |p| p.display().to_string())
}
