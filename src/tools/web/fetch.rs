//! `web_fetch`: HTTP(S) in-process, under the network policy ([`crate::tools::network`]). The policy
//! is checked on the addresses a name resolves to, and the connection is pinned to the checked
//! address, so DNS cannot be used to slip past it; every redirect (at most 5) is checked the
//! same way. A redirect to another origin (scheme, host or port) drops the credentials the
//! program sent (`Authorization`, `Cookie`, `Proxy-Authorization`), as curl and browsers do.
//! Bodies are capped, and HTML becomes readable text within the run's time limit ([`super::html`]).

use std::time::Duration;

use reqwest::redirect::Policy;
use reqwest::{Method, Url};

use super::html;
use crate::tools::args::Args;
use crate::tools::context::ToolContext;
use crate::tools::error::{ErrorKind, ToolError};
use crate::tools::handler::Builtin;
use crate::tools::network::{NetworkPolicy, checked_address};
use crate::tools::spec::{Kind, Param, ParamDefault, ToolSpec};
use crate::tools::value::Value;

/// Redirects followed before giving up.
const MAX_REDIRECTS: usize = 5;

/// Bytes of a response body read at most.
const MAX_BODY: usize = 10 * 1024 * 1024;

/// Longest a single request may take (also cut to the run's remaining time).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Request headers that carry credentials: sent only to the origin the program named.
const CREDENTIALS: [&str; 3] = ["authorization", "cookie", "proxy-authorization"];

pub(crate) static WEB_FETCH: Builtin = Builtin {
    spec: ToolSpec {
        name: "web_fetch",
        description: "An http(s) page as text (HTML converted), cut to `max_length`; HTTP errors raise `OSError`; private addresses are refused.",
        params: &[
            Param::required("url", Kind::Str, "http:// or https:// URL"),
            Param::new("method", Kind::Str, ParamDefault::Str("GET"), "HTTP method"),
            Param::optional("headers", Kind::StrDict, "Request headers"),
            Param::optional("data", Kind::Str, "Request body"),
            Param::new("max_length", Kind::Int, ParamDefault::Int(20_000), "Characters of text returned at most"),
        ],
        returns: "str",
        risk: None,
    },
    handler: web_fetch,
};

fn web_fetch(ctx: &mut ToolContext, args: &Args<'_>) -> Result<Value, ToolError> {
    let url = args.str("url")?;
    let method = Method::from_bytes(args.str("method")?.to_ascii_uppercase().as_bytes()).map_err(|_| {
        ToolError::value(format!(
            "web_fetch() method {:?} is not an HTTP method",
            args.str("method").unwrap_or_default()
        ))
    })?;
    let max_length = usize::try_from(args.int("max_length")?)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| ToolError::value("web_fetch() max_length must be >= 1"))?;
    let headers: Vec<(String, String)> = match args.get("headers") {
        Value::Dict(pairs) => pairs
            .iter()
            .filter_map(|(k, v)| match (k, v) {
                (Value::Str(k), Value::Str(v)) => Some((k.clone(), v.clone())),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let data = args.opt_str("data")?.map(str::to_owned);
    let timeout = REQUEST_TIMEOUT.min(ctx.remaining());
    if timeout.is_zero() {
        return Err(ToolError::new(ErrorKind::Timeout, "web_fetch() stopped: the run's time limit was reached"));
    }
    let request = FetchRequest { url: url.to_owned(), method, headers, data, timeout, policy: ctx.network.clone() };
    let runtime = crate::tools::process::runtime("web_fetch")?;
    let fetched = runtime.block_on(async { tokio::time::timeout(timeout, request.send()).await });
    let (content_type, body) = match fetched {
        Ok(result) => result?,
        Err(_) => {
            return Err(ToolError::new(
                ErrorKind::Timeout,
                format!("web_fetch() {url} did not answer within {}s", timeout.as_secs_f64()),
            ));
        }
    };
    let text = if content_type.contains("html") {
        html::to_text(&body, ctx.deadline)?
    } else {
        String::from_utf8_lossy(&body).into_owned()
    };
    Ok(Value::Str(cut(text, max_length)))
}

/// Keeps the first `max_length` characters, saying how many were left out.
fn cut(text: String, max_length: usize) -> String {
    let total = text.chars().count();
    match text.char_indices().nth(max_length) {
        None => text,
        Some((at, _)) => format!(
            "{}\n[… {} more characters not shown; pass a larger max_length to read them …]",
            &text[..at],
            total - max_length
        ),
    }
}

struct FetchRequest {
    url: String,
    method: Method,
    headers: Vec<(String, String)>,
    data: Option<String>,
    timeout: Duration,
    policy: NetworkPolicy,
}

impl FetchRequest {
    async fn send(self) -> Result<(String, Vec<u8>), ToolError> {
        let mut url = Url::parse(&self.url)
            .map_err(|e| ToolError::value(format!("web_fetch() invalid URL {:?}: {e}", self.url)))?;
        let mut method = self.method.clone();
        let mut data = self.data.clone();
        let origin = url.origin();
        // Once a redirect has left the origin, credentials stay off for the rest of the chain.
        let mut left_origin = false;
        for hop in 0..=MAX_REDIRECTS {
            left_origin = left_origin || url.origin() != origin;
            let address = checked_address(&self.policy, "web_fetch()", &url).await?;
            let host = url.host_str().unwrap_or_default().to_owned();
            crate::tls::install_provider();
            let mut builder = reqwest::Client::builder().redirect(Policy::none()).timeout(self.timeout).no_proxy();
            if url.host().is_some_and(|h| matches!(h, url::Host::Domain(_))) {
                builder = builder.resolve(&host, address);
            }
            let client = builder
                .build()
                .map_err(|e| ToolError::runtime(format!("web_fetch() could not build a client: {e}")))?;
            let mut request = client.request(method.clone(), url.clone());
            for (name, value) in &self.headers {
                if left_origin && CREDENTIALS.iter().any(|credential| name.eq_ignore_ascii_case(credential)) {
                    continue;
                }
                request = request.header(name, value);
            }
            if let Some(body) = &data {
                request = request.body(body.clone());
            }
            let mut response = request.send().await.map_err(|e| {
                ToolError::new(ErrorKind::Os, format!("web_fetch() {url} failed: {}", request_error(&e)))
            })?;
            let status = response.status();
            if status.is_redirection() {
                let location = response.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or_default();
                if hop == MAX_REDIRECTS {
                    return Err(ToolError::new(
                        ErrorKind::Os,
                        format!("web_fetch() {} followed more than {MAX_REDIRECTS} redirects", self.url),
                    ));
                }
                url = url
                    .join(location)
                    .map_err(|e| ToolError::value(format!("web_fetch() bad redirect {location:?}: {e}")))?;
                if matches!(status.as_u16(), 301..=303) {
                    method = Method::GET;
                    data = None;
                }
                continue;
            }
            if status.as_u16() >= 400 {
                return Err(ToolError::new(ErrorKind::Os, format!("web_fetch() HTTP {status} for {url}")));
            }
            let content_type = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_ascii_lowercase();
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| ToolError::new(ErrorKind::Os, format!("web_fetch() reading {url}: {e}")))?
            {
                let room = MAX_BODY.saturating_sub(body.len());
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if body.len() >= MAX_BODY {
                    break;
                }
            }
            return Ok((content_type, body));
        }
        Err(ToolError::new(
            ErrorKind::Os,
            format!("web_fetch() {} followed more than {MAX_REDIRECTS} redirects", self.url),
        ))
    }
}

/// reqwest's messages repeat the URL; the caller already names it.
/// What went wrong with a request, ending with its deepest cause (a certificate refused, a
/// connection reset), which reqwest's own message leaves out.
fn request_error(err: &reqwest::Error) -> String {
    let mut text = strip_url(&err.to_string());
    let mut cause = std::error::Error::source(err);
    while let Some(inner) = cause.and_then(std::error::Error::source) {
        cause = Some(inner);
    }
    if let Some(cause) = cause.map(ToString::to_string)
        && !text.contains(&cause)
    {
        text = format!("{text}: {cause}");
    }
    text
}

fn strip_url(message: &str) -> String {
    message.split(" for url (").next().unwrap_or(message).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_with_a_marker() {
        assert_eq!(cut("abcdef".into(), 10), "abcdef");
        assert_eq!(
            cut("abcdef".into(), 2),
            "ab\n[… 4 more characters not shown; pass a larger max_length to read them …]"
        );
    }
}
