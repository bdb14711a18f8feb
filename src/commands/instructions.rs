//! `codeact instructions`: the Markdown tool reference a model reads.

use anyhow::{Context, Result};

use crate::backend;
use crate::cli::BackendArgs;
use crate::config::Config;
use crate::exit;
use crate::output;
use crate::render;
use crate::tools::Registry;

pub fn run(args: &BackendArgs) -> Result<u8> {
    let config = Config::load(&args.common)?;
    let backend = backend::select(config.backend)?;
    let registry = Registry::new(&config.tools);
    let binary = std::env::current_exe().map_or_else(|_| "codeact".to_owned(), |p| p.display().to_string());
    let text = render::instructions(backend, &registry, &config.limits, &binary)?;
    output::data(text.as_bytes()).context("failed to write to stdout")?;
    Ok(exit::SUCCESS)
}
