//! TLS for every HTTPS client codeact builds (`web_fetch`, `github_api`, MCP servers over HTTP,
//! the guest's download): rustls, with ring's cryptography as the process's provider.
//!
//! The provider is installed on first use, not at start: ring looks at the CPU only when it
//! first encrypts, so a process that makes no HTTPS request (a hook, most runs) pays nothing.

use std::sync::Once;

/// Makes ring the process's rustls provider, once; call it before building a client.
pub(crate) fn install_provider() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // Fails only when a provider is installed already, which then serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
