//! The `web_fetch` tool: fetching a URL under the network policy ([`fetch`]), and turning an
//! HTML page into readable text ([`html`]).

mod fetch;
mod html;

pub(crate) use fetch::WEB_FETCH;
