//! `web_fetch`: HTTP(S) in-process, under the network policy. Loopback, private, link-local,
//! unique-local and cloud-metadata addresses are refused unless the configuration allows them.
//! The check runs on the addresses a name resolves to, and the connection is pinned to the
//! checked address, so DNS cannot be used to slip past it; every redirect (at most 5) is
//! checked the same way. Bodies are capped, HTML becomes readable text.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use reqwest::redirect::Policy;
use reqwest::{Method, Url};

use super::args::Args;
use super::context::ToolContext;
use super::error::{ErrorKind, ToolError};
use super::spec::{Default, Kind, Param, ToolSpec};
use super::value::Value;
use crate::config::NetworkPolicy;

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// Bytes of a response body read at most.
pub const MAX_BODY: usize = 10 * 1024 * 1024;

/// Longest a single request may take (also cut to the run's remaining time).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

pub static WEB_FETCH: ToolSpec = ToolSpec {
    name: "web_fetch",
    description: "An http(s) page as text (HTML converted), cut to `max_length`; HTTP errors raise `OSError`; private addresses are refused.",
    params: &[
        Param { name: "url", kind: Kind::Str, default: Default::Required, doc: "http:// or https:// URL" },
        Param { name: "method", kind: Kind::Str, default: Default::Str("GET"), doc: "HTTP method" },
        Param { name: "headers", kind: Kind::StrDict, default: Default::None, doc: "Request headers" },
        Param { name: "data", kind: Kind::Str, default: Default::None, doc: "Request body" },
        Param {
            name: "max_length",
            kind: Kind::Int,
            default: Default::Int(20_000),
            doc: "Characters of text returned at most",
        },
    ],
    returns: "str",
    risk: None,
    handler: web_fetch,
};

fn web_fetch(ctx: &mut ToolContext, args: &Args) -> Result<Value, ToolError> {
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
    let request = Request { url: url.to_owned(), method, headers, data, timeout, policy: ctx.network.clone() };
    let runtime = super::process::runtime("web_fetch")?;
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
        html2text::from_read(&body[..], 100).unwrap_or_else(|_| String::from_utf8_lossy(&body).into_owned())
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

struct Request {
    url: String,
    method: Method,
    headers: Vec<(String, String)>,
    data: Option<String>,
    timeout: Duration,
    policy: NetworkPolicy,
}

impl Request {
    async fn send(self) -> Result<(String, Vec<u8>), ToolError> {
        let mut url = Url::parse(&self.url)
            .map_err(|e| ToolError::value(format!("web_fetch() invalid URL {:?}: {e}", self.url)))?;
        let mut method = self.method.clone();
        let mut data = self.data.clone();
        for hop in 0..=MAX_REDIRECTS {
            let address = self.checked_address(&url).await?;
            let host = url.host_str().unwrap_or_default().to_owned();
            let mut builder = reqwest::Client::builder().redirect(Policy::none()).timeout(self.timeout).no_proxy();
            if url.host().is_some_and(|h| matches!(h, url::Host::Domain(_))) {
                builder = builder.resolve(&host, address);
            }
            let client = builder
                .build()
                .map_err(|e| ToolError::runtime(format!("web_fetch() could not build a client: {e}")))?;
            let mut request = client.request(method.clone(), url.clone());
            for (name, value) in &self.headers {
                request = request.header(name, value);
            }
            if let Some(body) = &data {
                request = request.body(body.clone());
            }
            let mut response = request.send().await.map_err(|e| {
                ToolError::new(ErrorKind::Os, format!("web_fetch() {url} failed: {}", strip_url(&e.to_string())))
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

    /// The address to connect to for `url`, after the scheme and policy checks.
    async fn checked_address(&self, url: &Url) -> Result<SocketAddr, ToolError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::value(format!(
                "web_fetch() only fetches http and https URLs, not {}:",
                url.scheme()
            )));
        }
        let host = url.host_str().ok_or_else(|| ToolError::value(format!("web_fetch() URL {url} has no host")))?;
        let port = url.port_or_known_default().unwrap_or(80);
        let addresses: Vec<SocketAddr> = match url.host() {
            Some(url::Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
            Some(url::Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
            _ => tokio::net::lookup_host((host, port))
                .await
                .map_err(|e| ToolError::new(ErrorKind::Os, format!("web_fetch() cannot resolve {host}: {e}")))?
                .collect(),
        };
        let first = *addresses
            .first()
            .ok_or_else(|| ToolError::new(ErrorKind::Os, format!("web_fetch() {host} has no address")))?;
        for address in &addresses {
            check(&self.policy, host, address.ip())?;
        }
        Ok(first)
    }
}

/// Refuses an address the policy does not allow, saying which setting would allow it.
pub fn check(policy: &NetworkPolicy, host: &str, ip: IpAddr) -> Result<(), ToolError> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if policy.allowed_hosts.iter().any(|allowed| allowed.eq_ignore_ascii_case(host) || *allowed == ip.to_string()) {
        return Ok(());
    }
    let Some(kind) = restricted(ip) else { return Ok(()) };
    if policy.allow_private && kind != "cloud metadata" {
        return Ok(());
    }
    let setting = if kind == "cloud metadata" {
        "network.allowed_hosts"
    } else {
        "network.allow_private or network.allowed_hosts"
    };
    Err(ToolError::permission(format!(
        "web_fetch() refused {host}: it resolves to {ip}, a {kind} address (allow it with {setting} in config.json)"
    )))
}

/// What kind of non-public address `ip` is, if it is one.
#[must_use]
pub fn restricted(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => restricted_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return restricted_v4(v4);
            }
            let first = v6.segments()[0];
            if v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
                Some("cloud metadata")
            } else if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if first & 0xfe00 == 0xfc00 {
                Some("unique-local")
            } else if first & 0xffc0 == 0xfe80 {
                Some("link-local")
            } else {
                None
            }
        }
    }
}

fn restricted_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) {
        Some("cloud metadata")
    } else if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared (carrier-grade NAT)")
    } else if ip.is_unspecified() || a == 0 || ip.is_broadcast() || ip.is_multicast() {
        Some("reserved")
    } else {
        None
    }
}

/// reqwest's messages repeat the URL; the caller already names it.
fn strip_url(message: &str) -> String {
    message.split(" for url (").next().unwrap_or(message).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_public_addresses_are_recognised() {
        for (ip, kind) in [
            ("127.0.0.1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "cloud metadata"),
            ("169.254.1.1", "link-local"),
            ("100.64.0.1", "shared (carrier-grade NAT)"),
            ("0.0.0.0", "reserved"),
            ("::1", "loopback"),
            ("fd00:ec2::254", "cloud metadata"),
            ("fc00::1", "unique-local"),
            ("fe80::1", "link-local"),
            ("::ffff:10.0.0.1", "private"),
        ] {
            assert_eq!(restricted(ip.parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))), Some(kind), "{ip}");
        }
        assert_eq!(restricted("93.184.216.34".parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))), None);
    }

    #[test]
    fn policy_allows_private_addresses_and_listed_hosts_but_never_metadata_by_default() {
        let loopback: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let metadata: IpAddr = IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254));
        let strict = NetworkPolicy::default();
        assert!(check(&strict, "localhost", loopback).is_err());
        let private = NetworkPolicy { allow_private: true, allowed_hosts: Vec::new() };
        assert!(check(&private, "localhost", loopback).is_ok());
        assert!(check(&private, "metadata", metadata).is_err());
        let listed = NetworkPolicy { allow_private: false, allowed_hosts: vec!["127.0.0.1".into()] };
        assert!(check(&listed, "127.0.0.1", loopback).is_ok());
        assert!(check(&listed, "10.0.0.1", "10.0.0.1".parse().unwrap_or(loopback)).is_err());
    }

    #[test]
    fn long_text_is_cut_with_a_marker() {
        assert_eq!(cut("abcdef".into(), 10), "abcdef");
        assert_eq!(
            cut("abcdef".into(), 2),
            "ab\n[… 4 more characters not shown; pass a larger max_length to read them …]"
        );
    }
}
