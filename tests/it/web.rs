//! `web_fetch` against a local HTTP server the test starts on 127.0.0.1, under the network
//! policy. Addresses the policy refuses are refused before any connection is made.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

use pretty_assertions::assert_eq;

use crate::support::TestEnv;

/// Serves a few fixed routes on a free loopback port; returns the base URL.
pub(crate) fn server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                reader.read_line(&mut first).unwrap_or_default();
                let mut headers = BTreeMap::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
                    }
                }
                let length = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let mut parts = first.split_whitespace();
                let method = parts.next().unwrap_or_default().to_owned();
                let path = parts.next().unwrap_or_default().to_owned();
                let (status, kind, text, location) = route(&method, &path, &headers, &String::from_utf8_lossy(&body));
                let mut response = stream;
                let location = location.map(|l| format!("location: {l}\r\n")).unwrap_or_default();
                let _ = write!(
                    response,
                    "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n{location}connection: close\r\n\r\n{text}",
                    text.len()
                );
            });
        }
    });
    base
}

/// What the server answers: (status, content type, body, redirect location).
fn route(
    method: &str,
    path: &str,
    headers: &BTreeMap<String, String>,
    body: &str,
) -> (&'static str, &'static str, String, Option<String>) {
    let ok = "200 OK";
    let header = headers.get("x-test").cloned().unwrap_or_default();
    if let Some(depth) = path.strip_prefix("/deep/").and_then(|n| n.parse::<usize>().ok()) {
        return (ok, "text/html", format!("<html><body>{}deep text</body></html>", "<div>".repeat(depth)), None);
    }
    if let Some(target) = path.strip_prefix("/to/") {
        return ("302 Found", "text/plain", String::new(), Some(target.to_owned()));
    }
    if path == "/credentials" {
        let shown = ["authorization", "cookie", "proxy-authorization", "x-test"]
            .iter()
            .map(|name| format!("{name}={}", headers.get(*name).map_or("-", String::as_str)))
            .collect::<Vec<_>>()
            .join(" ");
        return (ok, "text/plain", shown, None);
    }
    match path {
        "/page" => (ok, "text/html; charset=utf-8", "<html><head><title>T</title><script>var hidden = 1;</script></head><body><h1>Hello</h1><p>World of <b>codeact</b></p></body></html>".into(), None),
        "/long" => (ok, "text/plain", "a".repeat(50_000), None),
        "/echo" => (ok, "text/plain", format!("{method} {header} {body}"), None),
        "/to-private" => ("302 Found", "text/plain", String::new(), Some("http://10.255.255.1/secret".into())),
        "/to-metadata" => ("302 Found", "text/plain", String::new(), Some("http://169.254.169.254/latest/meta-data/".into())),
        _ => match path.strip_prefix("/redirect/").and_then(|n| n.parse::<u32>().ok()) {
            Some(0) => (ok, "text/plain", "arrived".into(), None),
            Some(n) => ("302 Found", "text/plain", String::new(), Some(format!("/redirect/{}", n - 1))),
            None => ("404 Not Found", "text/plain", "no such page".into(), None),
        },
    }
}

/// A workspace whose (trusted) configuration lets `web_fetch` reach the local server.
pub(crate) fn allowed() -> TestEnv {
    TestEnv::new().project_config(r#"{"network": {"allowed_hosts": ["127.0.0.1"]}}"#).trusted()
}

#[test]
fn html_becomes_readable_text() {
    let base = server();
    let out = allowed().stdout_of(&format!("print(web_fetch(url='{base}/page'))"));
    assert_eq!(out, "# Hello\n\nWorld of **codeact**\n\n");
}

#[test]
fn long_bodies_are_cut_with_a_marker() {
    let base = server();
    let out = allowed().stdout_of(&format!("print(web_fetch(url='{base}/long', max_length=10))"));
    assert_eq!(out, "aaaaaaaaaa\n[… 49990 more characters not shown; pass a larger max_length to read them …]\n");
}

#[test]
fn http_errors_raise_os_error_with_the_status() {
    let base = server();
    let (kind, message) = allowed().error_of(&format!("web_fetch(url='{base}/missing')"));
    assert_eq!((kind.as_str(), message), ("OSError", format!("web_fetch() HTTP 404 Not Found for {base}/missing")));
}

#[test]
fn redirects_are_followed_five_times_at_most() {
    let base = server();
    let env = allowed();
    assert_eq!(env.stdout_of(&format!("print(web_fetch(url='{base}/redirect/5'))")), "arrived\n");
    let (kind, message) = env.error_of(&format!("web_fetch(url='{base}/redirect/6')"));
    assert_eq!(
        (kind.as_str(), message),
        ("OSError", format!("web_fetch() {base}/redirect/6 followed more than 5 redirects"))
    );
}

#[test]
fn a_redirect_to_a_private_or_metadata_address_is_refused() {
    let base = server();
    let env = allowed();
    let (kind, message) = env.error_of(&format!("web_fetch(url='{base}/to-private')"));
    assert_eq!(kind, "PermissionError");
    assert_eq!(
        message,
        "web_fetch() refused 10.255.255.1: it resolves to 10.255.255.1, a private address (allow it with \
         network.allow_private or network.allowed_hosts in your config.json)"
    );
    let env = TestEnv::new().project_config(r#"{"network": {"allow_private": true}}"#).trusted();
    let (kind, message) = env.error_of(&format!("web_fetch(url='{base}/to-metadata')"));
    assert_eq!(kind, "PermissionError");
    assert!(message.contains("a cloud metadata address"), "{message}");
}

#[test]
fn loopback_is_refused_by_default() {
    let base = server();
    let (kind, message) = TestEnv::new().error_of(&format!("web_fetch(url='{base}/page')"));
    assert_eq!(kind, "PermissionError");
    assert!(
        message.starts_with("web_fetch() refused 127.0.0.1: it resolves to 127.0.0.1, a loopback address"),
        "{message}"
    );
    let (kind, _) = TestEnv::new().error_of("web_fetch(url='http://localhost:9/')");
    assert_eq!(kind, "PermissionError");
}

#[test]
fn only_http_and_https_urls_are_fetched() {
    let env = allowed();
    for url in ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/"] {
        let (kind, message) = env.error_of(&format!("web_fetch(url='{url}')"));
        assert_eq!(kind, "ValueError", "{url}");
        assert!(message.starts_with("web_fetch() only fetches http and https URLs"), "{message}");
    }
}

#[test]
fn method_headers_and_data_are_sent() {
    let base = server();
    let program =
        format!("print(web_fetch(url='{base}/echo', method='post', headers={{'X-Test': 'yes'}}, data='payload'))");
    assert_eq!(allowed().stdout_of(&program), "POST yes payload\n");
}

#[test]
fn credentials_are_dropped_on_a_redirect_to_another_origin_and_kept_on_the_same_one() {
    let (first, second) = (server(), server());
    let env = allowed();
    let headers = "{'Authorization': 'Bearer SECRET-TOKEN', 'Cookie': 'session=abc', \
                   'Proxy-Authorization': 'Basic eDp5', 'X-Test': 'kept'}";
    let fetch = |url: &str| env.stdout_of(&format!("print(web_fetch(url='{url}', headers={headers}))"));
    // Another port is another origin: the credentials stay behind, other headers go on.
    assert_eq!(
        fetch(&format!("{first}/to/{second}/credentials")),
        "authorization=- cookie=- proxy-authorization=- x-test=kept\n"
    );
    // Away and back again: once the chain has left the origin, they are not sent again.
    assert_eq!(
        fetch(&format!("{first}/to/{second}/to/{first}/credentials")),
        "authorization=- cookie=- proxy-authorization=- x-test=kept\n"
    );
    assert_eq!(
        fetch(&format!("{first}/to/{first}/credentials")),
        "authorization=Bearer SECRET-TOKEN cookie=session=abc proxy-authorization=Basic eDp5 x-test=kept\n"
    );
}

/// An HTTPS server's certificate is checked: one that no authority signed (self-signed, for
/// `localhost` and 127.0.0.1) is refused, whichever name reaches it, before a request is sent.
#[test]
fn a_certificate_no_authority_signed_is_refused() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let dir = crate::support::fixtures().join("tls");
    let cert = CertificateDer::from_pem_file(dir.join("self-signed.crt")).unwrap();
    let key = PrivateKeyDer::from_pem_file(dir.join("self-signed.key")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (config, counted) = (config.clone(), counted.clone());
            std::thread::spawn(move || {
                let connection = rustls::ServerConnection::new(config).unwrap();
                let mut tls = rustls::StreamOwned::new(connection, stream);
                let mut byte = [0; 1];
                if tls.read(&mut byte).is_ok_and(|n| n > 0) {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    let env = TestEnv::new().project_config(r#"{"network": {"allowed_hosts": ["127.0.0.1", "localhost"]}}"#).trusted();
    for host in ["127.0.0.1", "localhost"] {
        let (kind, message) = env.error_of(&format!("web_fetch(url='https://{host}:{port}/page')"));
        assert_eq!(kind, "OSError", "{message}");
        assert!(message.contains("certificate"), "{message}");
    }
    assert_eq!(requests.load(Ordering::SeqCst), 0, "a request reached the server");
}
