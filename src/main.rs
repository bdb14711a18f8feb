//! The `codeact` executable: installs the memory-counting allocator and hands over to the library.

use std::process::ExitCode;

/// Counts every allocation so the sandbox's memory limit can be enforced (see `sandbox::limits`).
#[global_allocator]
static ALLOCATOR: monty_alloc::LimitedAllocator = monty_alloc::LimitedAllocator;

fn main() -> ExitCode {
    codeact::run(std::env::args_os())
}
