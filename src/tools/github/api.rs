//! The `github_api` tool: its signature, and one call of the REST API, through `gh api` or over
//! HTTPS with a token, as [`super::Access`] says.

use std::process::Command;
use std::time::Duration;

use super::Access;
use crate::tools::args::Args;
use crate::tools::context::ToolContext;
use crate::tools::error::{ErrorKind, ToolError};
use crate::tools::handler::Builtin;
use crate::tools::process::{self, Timeout};
use crate::tools::spec::{Kind, Param, ParamDefault, ToolSpec};
use crate::tools::value::Value;

/// Bytes of a response kept at most.
const MAX_RESPONSE: usize = 10 * 1024 * 1024;

/// Longest one call may take (also cut to the run's remaining time).
const CALL_TIMEOUT: Duration = Duration::from_mins(1);

pub(crate) static GITHUB_API: Builtin = Builtin {
    spec: ToolSpec {
        name: "github_api",
        description: "Call the GitHub REST API, e.g. `repos/OWNER/REPO/issues`; returns the parsed JSON.",
        params: &[
            Param::required("endpoint", Kind::Str, "API path such as repos/OWNER/REPO/pulls"),
            Param::new("method", Kind::Str, ParamDefault::Str("GET"), "HTTP method"),
            Param::optional("body", Kind::Any, "JSON request body"),
        ],
        returns: "Any",
        risk: None,
    },
    handler: github_api,
};

fn github_api(ctx: &mut ToolContext, args: &Args<'_>) -> Result<Value, ToolError> {
    let endpoint = args.str("endpoint")?.trim_start_matches('/');
    if endpoint.is_empty() || endpoint.starts_with('-') || endpoint.contains("://") || endpoint.contains("..") {
        return Err(ToolError::value(format!(
            "github_api() endpoint {endpoint:?} must be an API path such as repos/OWNER/REPO"
        )));
    }
    let method = args.str("method")?.to_ascii_uppercase();
    if !["GET", "POST", "PATCH", "PUT", "DELETE"].contains(&method.as_str()) {
        return Err(ToolError::value(format!(
            "github_api() method {method:?} is not one of GET, POST, PATCH, PUT, DELETE"
        )));
    }
    let body = match args.get("body") {
        Value::None => None,
        other => Some(other.to_json().to_string()),
    };
    let timeout = Timeout::within(CALL_TIMEOUT, ctx.remaining());
    let text = match &ctx.github {
        Some(Access::Gh(gh)) => via_gh(Command::new(gh), endpoint, &method, body.as_deref(), timeout)?,
        Some(Access::Token(token)) => via_https(token, endpoint, &method, body, timeout.limit)?,
        None => return Err(ToolError::runtime("github_api() needs `gh` on PATH or GITHUB_TOKEN in the environment")),
    };
    if text.trim().is_empty() {
        return Ok(Value::None);
    }
    serde_json::from_str::<serde_json::Value>(&text)
        .map(|json| Value::from_json(&json))
        .map_err(|e| ToolError::runtime(format!("github_api() answer is not JSON: {e}")))
}

fn via_gh(
    mut command: Command,
    endpoint: &str,
    method: &str,
    body: Option<&str>,
    timeout: Timeout,
) -> Result<String, ToolError> {
    command.args(["api", "--method", method]);
    if body.is_some() {
        command.args(["--input", "-"]);
    }
    command.arg("--").arg(endpoint);
    let finished = process::run_for_tool("github_api", command, body.unwrap_or_default().as_bytes(), timeout)?;
    if !finished.status.success() {
        return Err(ToolError::new(
            ErrorKind::Os,
            format!("github_api() {method} {endpoint} failed: {}", finished.stderr.trim()),
        ));
    }
    Ok(finished.stdout)
}

fn via_https(
    token: &str,
    endpoint: &str,
    method: &str,
    body: Option<String>,
    timeout: Duration,
) -> Result<String, ToolError> {
    let url = format!("https://api.github.com/{endpoint}");
    let runtime = process::runtime("github_api")?;
    runtime.block_on(async {
        crate::tls::install_provider();
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .user_agent(concat!("codeact/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ToolError::runtime(format!("github_api() could not build a client: {e}")))?;
        let method =
            reqwest::Method::from_bytes(method.as_bytes()).map_err(|_| ToolError::value("github_api() bad method"))?;
        let mut request = client
            .request(method.clone(), &url)
            .bearer_auth(token)
            .header("accept", "application/vnd.github+json")
            .header("x-github-api-version", "2022-11-28");
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body);
        }
        // The error text of a failed request never includes the token.
        let response = request
            .send()
            .await
            .map_err(|e| ToolError::new(ErrorKind::Os, format!("github_api() {method} {endpoint} failed: {e}")))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| ToolError::new(ErrorKind::Os, format!("github_api() reading {endpoint}: {e}")))?;
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_RESPONSE)]).into_owned();
        if status.as_u16() >= 400 {
            return Err(ToolError::new(
                ErrorKind::Os,
                format!("github_api() HTTP {status} for {endpoint}: {}", text.chars().take(500).collect::<String>()),
            ));
        }
        Ok(text)
    })
}
