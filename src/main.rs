//! The `codeact` executable: installs the memory-counting allocator and hands over to the library.

use std::process::ExitCode;

/// Counts every allocation so the sandbox's memory limit can be enforced (see `sandbox::limits`).
#[global_allocator]
static ALLOCATOR: monty_alloc::LimitedAllocator = monty_alloc::LimitedAllocator;

fn main() -> ExitCode {
    // hyperlight-host starts a pool of 512 surrogate processes for the first micro-VM on
    // Windows unless told how many; a run needs one, and more are started as they are needed.
    #[cfg(all(hyperlight, windows))]
    if std::env::var_os("HYPERLIGHT_INITIAL_SURROGATES").is_none() {
        #[expect(unsafe_code, reason = "the environment is set before any thread starts")]
        // SAFETY: nothing else runs yet to read the environment: no thread has started.
        unsafe {
            std::env::set_var("HYPERLIGHT_INITIAL_SURROGATES", "1");
        }
    }
    codeact::run(std::env::args_os())
}
