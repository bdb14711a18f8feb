//! The HTTP side of MCP's streamable HTTP transport: the client, pinned to checked addresses
//! for a workspace's server, and the configured headers.

use std::collections::{BTreeMap, HashMap};

use reqwest::header::{HeaderName, HeaderValue};

use crate::tools::network::{self, NetworkPolicy};

/// The HTTP client for a server at `url`. With a `policy` (a workspace's server), the host must
/// resolve only to addresses the policy allows, and the connection goes to the address checked,
/// so DNS cannot change it afterwards; redirects are not followed.
pub(super) async fn client(url: &str, policy: Option<&NetworkPolicy>) -> Result<reqwest::Client, String> {
    crate::tls::install_provider();
    let builder = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).no_proxy();
    let Some(policy) = policy else {
        return builder.build().map_err(|e| format!("could not build an HTTP client: {e}"));
    };
    let parsed = reqwest::Url::parse(url).map_err(|_| "the URL is not valid".to_owned())?;
    let first = network::checked_address(policy, "the MCP connection", &parsed).await.map_err(|err| err.message)?;
    let host = parsed.host_str().unwrap_or_default();
    let builder =
        if matches!(parsed.host(), Some(url::Host::Domain(_))) { builder.resolve(host, first) } else { builder };
    builder.build().map_err(|e| format!("could not build an HTTP client: {e}"))
}

pub(super) fn header_map(headers: &BTreeMap<String, String>) -> Result<HashMap<HeaderName, HeaderValue>, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = HeaderName::try_from(name.as_str()).map_err(|_| format!("invalid header name `{name}`"))?;
            // The value may be a secret: never echo it.
            let value =
                HeaderValue::try_from(value.as_str()).map_err(|_| format!("invalid value for header `{name}`"))?;
            Ok((name, value))
        })
        .collect()
}
