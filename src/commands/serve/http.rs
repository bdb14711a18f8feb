//! `codeact mcp serve --http ADDR`: the server over streamable HTTP, at `/mcp`.
//!
//! A server on loopback is still reachable from a web page the user opens, through DNS
//! rebinding: the page's host name resolves to 127.0.0.1 and its requests carry that name. So
//! every request's `Host` must be a loopback name or address (or the bound address, or one the
//! user allowed with `--allow-host`), and a request with an `Origin` must come from one of those
//! hosts; rmcp refuses the others with 403. An address other than loopback needs
//! `--allow-remote`, and every request must then carry `Authorization: Bearer` with the token in
//! `CODEACT_MCP_TOKEN` or `--token-file`; on loopback the token is checked whenever it is set.
//!
//! No token is checked before a request's headers are in, so what a client can hold without
//! one is bounded: the connections that wait for a request ([`Waiting`]), the time its headers
//! and its body may take. A call whose client is gone before its answer's end is told so
//! ([`ClientGone`]), and its program stopped.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::{Context as _, Result};
use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited, combinators::BoxBody};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest as _, Sha256};
use tokio::net::TcpListener;
use tokio_util::sync::{CancellationToken, DropGuard};
use tower_service::Service as _;

use super::server::CodeactServer;
use super::waiting::{Connection, InRequest, Waiting};
use crate::cli::ServeArgs;
use crate::env;
use crate::exit::UsageError;
use crate::hint::Hint;
use crate::output;

/// The path the server answers at; every other is 404.
const PATH: &str = "/mcp";

/// How long a session may go without an event before it is closed: a day, the longest
/// timeout a run may have, and the time the server gives an overdue run.
const SESSION_IDLE: Duration = Duration::from_mins(24 * 60 + 10);

/// How long a client may take to send a request's headers, or leave its connection idle
/// between requests.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client may take to send a request's body (at most 4 MiB).
const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The shortest token accepted for a server other than on loopback.
const MIN_TOKEN: usize = 32;

/// The bearer token requests must carry, when there is one (from `--token-file`, else
/// `CODEACT_MCP_TOKEN`); refuses a remote address without `--allow-remote` or without a long
/// enough token.
pub(super) fn token(args: &ServeArgs) -> Result<Option<String>> {
    let Some(addr) = args.http else { return Ok(None) };
    let token = match &args.token_file {
        Some(path) => Some(read_token(path)?),
        None => env::var(env::MCP_TOKEN),
    };
    if args.token_file.is_none() && token.is_some() && !cfg!(target_os = "linux") {
        // Only Linux lets the server keep its environment from the user's other processes,
        // among them a program's `bash`.
        crate::output::warning(&format!(
            "on this system every process of yours can read the server's environment (`ps -E`), {} included: \
             pass the token with `--token-file` instead",
            env::MCP_TOKEN
        ));
    }
    if addr.ip().is_loopback() {
        return Ok(token);
    }
    if !args.allow_remote {
        return Err(UsageError {
            message: format!("`{addr}` is not a loopback address: the server would be reachable from other machines"),
            hint: Some(Hint::new(format!(
                "serve on 127.0.0.1:{}, or pass --allow-remote and set {} to a secret of {MIN_TOKEN}+ characters",
                addr.port(),
                env::MCP_TOKEN
            ))),
        }
        .into());
    }
    match token {
        Some(token) if token.chars().count() >= MIN_TOKEN => Ok(Some(token)),
        _ => Err(UsageError {
            message: format!(
                "--allow-remote needs {} set to a secret of at least {MIN_TOKEN} characters, or --token-file naming one",
                env::MCP_TOKEN
            ),
            hint: Some(Hint::new(format!("{}=$(openssl rand -hex 32)", env::MCP_TOKEN))),
        }
        .into()),
    }
}

/// The token in the first line of `path`, without its line ending and surrounding blanks.
/// Read once, at the start: a file given as `<(command)` is then gone.
fn read_token(path: &Path) -> Result<String> {
    let text = std::fs::read(path).with_context(|| format!("failed to read the token file `{}`", path.display()))?;
    let first = text.split(|byte| *byte == b'\n').next().unwrap_or_default();
    let token = std::str::from_utf8(first).ok().map(str::trim).unwrap_or_default();
    if token.is_empty() {
        return Err(UsageError {
            message: format!("the token file `{}` holds no token on its first line", path.display()),
            hint: None,
        }
        .into());
    }
    Ok(token.to_owned())
}

/// The `Host` values accepted: loopback names and addresses, the bound address, and those the
/// user allowed. An unspecified bind address (`0.0.0.0`) is no name a client uses: it needs
/// `--allow-host`.
fn allowed_hosts(addr: SocketAddr, extra: &[String]) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"].map(str::to_owned).to_vec();
    if !addr.ip().is_unspecified() {
        hosts.push(host_text(addr.ip()));
    }
    hosts.extend(extra.iter().cloned());
    hosts
}

/// An address as it appears in a `Host` header.
fn host_text(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// The `Origin` values accepted: `http` and `https` on any port of an accepted host.
fn allowed_origins(hosts: &[String]) -> Vec<String> {
    let mut origins = Vec::new();
    for host in hosts {
        // `::1` is spelled `[::1]` in an origin; the bare form is only a Host spelling.
        if host.contains(':') && !host.starts_with('[') {
            continue;
        }
        for scheme in ["http", "https"] {
            origins.push(format!("{scheme}://{host}:*"));
        }
    }
    origins
}

/// Serves `server` at `http://addr/mcp` until the process is stopped.
pub(super) async fn serve(
    server: CodeactServer,
    addr: SocketAddr,
    args: &ServeArgs,
    token: Option<String>,
) -> Result<()> {
    let listener = TcpListener::bind(addr).await.with_context(|| format!("failed to listen on {addr}"))?;
    let bound = listener.local_addr().context("failed to read the bound address")?;
    let hosts = allowed_hosts(bound, &args.allow_hosts);
    // No priming event opens an SSE stream: its `data:` is empty, which clients that parse every
    // event as JSON (the TypeScript SDK in Gemini CLI) take for a broken connection. Events keep
    // their ids, so a client may still resume a stream with `Last-Event-ID`.
    let config = StreamableHttpServerConfig::default()
        .with_allowed_origins(allowed_origins(&hosts))
        .enforce_origin_validation()
        .with_allowed_hosts(hosts)
        .with_sse_retry(None);
    let max_body = config.max_request_body_bytes;
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.sse_retry = None;
    // A session closes after this long without an event. A call that asked for no progress
    // sends none while its program runs, so the default 5 minutes would cancel a longer run;
    // this outlasts the longest run the server allows.
    sessions.session_config.keep_alive = Some(SESSION_IDLE);
    let service = StreamableHttpService::new(move || Ok(server.with_new_session()), Arc::new(sessions), config);
    let token = token.map(|token| Arc::new(Sha256::digest(format!("Bearer {token}").as_bytes())));
    let waiting = Arc::new(Waiting::new(usize::from(args.max_waiting_connections)));
    announce(&format!("http://{bound}{PATH}"));
    loop {
        // Out of file descriptors, or a connection reset before it was accepted: the next one
        // may do.
        let Ok((stream, peer)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        // Answers are small writes: without this, Nagle's algorithm holds each back until the
        // client's delayed acknowledgement, some 40 ms.
        let _ = stream.set_nodelay(true);
        let connection = Connection::accepted(Arc::clone(&waiting), peer.ip().to_canonical());
        let service = service.clone();
        let token = token.clone();
        let on_request = Arc::clone(&connection);
        let handle = hyper::service::service_fn(move |request: Request<Incoming>| {
            let mut service = service.clone();
            let token = token.clone();
            let in_request = on_request.request();
            async move {
                if let Some(refused) = refuse(&request, token.as_deref()) {
                    return Ok::<_, Infallible>(refused.map(|body| Answer::new(body, in_request, None)));
                }
                let (parts, body) = request.into_parts();
                let body = match read_body(body, max_body).await {
                    Ok(body) => body,
                    Err((status, why)) => return Ok(plain(status, why).map(|body| Answer::new(body, in_request, None))),
                };
                let mut request = Request::from_parts(parts, body);
                // The run of a call whose client is gone is stopped (after a grace): the
                // answer's stream, or this future, dropped before its end.
                let gone = CancellationToken::new();
                request.extensions_mut().insert(ClientGone(gone.clone()));
                let unless_answered = gone.drop_guard();
                let ending = request.method() == http::Method::DELETE;
                let mut response = service.call(request).await?;
                // A session ended is answered 200, as the SDKs' servers answer it and their
                // clients expect (they warn of a 202).
                if ending && response.status() == StatusCode::ACCEPTED {
                    *response.status_mut() = StatusCode::OK;
                }
                Ok(response.map(|body| Answer::new(body, in_request, Some(unless_answered))))
            }
        });
        tokio::spawn(async move {
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), handle);
            tokio::select! {
                _ = served => {}
                () = connection.close.cancelled() => {}
            }
            connection.closed();
        });
    }
}

/// Set on every request that reaches the MCP service: cancelled when its client is gone before
/// the answer's end.
#[derive(Debug, Clone)]
pub(super) struct ClientGone(pub(super) CancellationToken);

/// A request's body, read whole within [`BODY_TIMEOUT`] and `max` bytes; or why not, as the
/// status and text of the answer that refuses it.
async fn read_body(body: Incoming, max: usize) -> Result<Full<Bytes>, (StatusCode, String)> {
    match tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, max).collect()).await {
        Ok(Ok(collected)) => Ok(Full::new(collected.to_bytes())),
        Ok(Err(err)) if err.is::<LengthLimitError>() => {
            Err((StatusCode::PAYLOAD_TOO_LARGE, format!("a request's body is at most {max} bytes")))
        }
        Ok(Err(_)) => Err((StatusCode::BAD_REQUEST, "the request's body could not be read".to_owned())),
        Err(_) => Err((
            StatusCode::REQUEST_TIMEOUT,
            format!("a request's body must arrive within {} s", BODY_TIMEOUT.as_secs()),
        )),
    }
}

/// An answer's body, holding its request's place on the connection until it is dropped, and
/// telling [`ClientGone`] unless it was sent to its end.
struct Answer {
    body: BoxBody<Bytes, Infallible>,
    _request: InRequest,
    unless_answered: Option<DropGuard>,
}

impl Answer {
    fn new(body: BoxBody<Bytes, Infallible>, request: InRequest, unless_answered: Option<DropGuard>) -> Self {
        Self { body, _request: request, unless_answered }
    }
}

impl Body for Answer {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if (matches!(polled, Poll::Ready(None)) || self.body.is_end_stream())
            && let Some(guard) = self.unless_answered.take()
        {
            guard.disarm();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The answer to a request that does not reach the server: another path, or a missing or
/// wrong token.
fn refuse<B>(
    request: &Request<B>,
    token: Option<&sha2::digest::Output<Sha256>>,
) -> Option<Response<BoxBody<Bytes, Infallible>>> {
    if request.uri().path() != PATH {
        return Some(plain(StatusCode::NOT_FOUND, format!("codeact serves MCP at {PATH}")));
    }
    let expected = token?;
    let given = request.headers().get(header::AUTHORIZATION).map(|value| Sha256::digest(value.as_bytes()));
    // Comparing digests keeps the comparison's time from telling how much of the token matched.
    if given.as_ref() == Some(expected) {
        return None;
    }
    let mut response = plain(StatusCode::UNAUTHORIZED, "a bearer token is required".to_owned());
    response.headers_mut().insert(header::WWW_AUTHENTICATE, http::HeaderValue::from_static("Bearer"));
    Some(response)
}

fn plain(status: StatusCode, text: String) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, http::HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// Says where the HTTP server listens, for the people and tests that start it.
fn announce(url: &str) {
    output::diagnostic(&format!("codeact: serving MCP at {url}"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_and_their_origins_are_accepted_and_nothing_else() {
        let hosts = allowed_hosts("127.0.0.1:0".parse().unwrap(), &[]);
        assert_eq!(hosts, ["localhost", "127.0.0.1", "::1", "[::1]", "127.0.0.1"]);
        let origins = allowed_origins(&hosts);
        assert!(origins.contains(&"http://localhost:*".to_owned()));
        assert!(origins.contains(&"https://[::1]:*".to_owned()));
        assert!(!origins.iter().any(|origin| origin.contains("://::1")));
    }

    #[test]
    fn requests_elsewhere_or_without_the_token_are_refused() {
        let expected = Sha256::digest(b"Bearer s3cret");
        let request = |path: &str, auth: Option<&str>| {
            let mut builder = Request::builder().uri(path);
            if let Some(auth) = auth {
                builder = builder.header(header::AUTHORIZATION, auth);
            }
            builder.body(()).unwrap()
        };
        assert_eq!(refuse(&request("/other", None), None).unwrap().status(), StatusCode::NOT_FOUND);
        assert!(refuse(&request("/mcp", None), None).is_none());
        assert_eq!(refuse(&request("/mcp", None), Some(&expected)).unwrap().status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            refuse(&request("/mcp", Some("Bearer nope")), Some(&expected)).unwrap().status(),
            StatusCode::UNAUTHORIZED
        );
        assert!(refuse(&request("/mcp", Some("Bearer s3cret")), Some(&expected)).is_none());
    }
}
