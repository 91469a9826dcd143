//! What every HTTP request passes before it reaches the MCP endpoint: the `Host` it names, the
//! browser `Origin` it comes from, the bearer token, the body size, and a body that is JSON
//! (malformed JSON is a 400 with a JSON-RPC parse error, as the spec says, not rmcp's 415).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

/// The rules of [`check`].
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    /// `Host` values accepted besides the loopback ones (`name` or `name:port`).
    pub(crate) allowed_hosts: Vec<String>,
    /// `Origin` values accepted besides the loopback ones (`scheme://host[:port]`).
    pub(crate) allowed_origins: Vec<String>,
    /// The bearer token every request must carry, if any.
    pub(crate) token: Option<String>,
    pub(crate) max_body_bytes: usize,
}

/// Where a connection came from and arrived at, as the listener saw it (a server that mounts
/// [`crate::transport::router`] provides it as `ConnectInfo<Connection>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connection {
    pub peer: SocketAddr,
    pub local: SocketAddr,
}

/// Whether a request naming `host`, on `connection`, may be answered (DNS rebinding): `host` is
/// in `allowed_hosts` (`name` or `name:port`); or it is a loopback name and the client is on
/// this machine; or it is the IP address the connection arrived at (an address, unlike a name,
/// cannot be rebound to another server by DNS). The one rule of every server llmtool runs.
pub fn host_allowed(allowed_hosts: &[String], host: &str, connection: Option<Connection>) -> bool {
    let host = host.trim().to_ascii_lowercase();
    let (name, _) = split_authority(&host);
    if allowed_hosts.iter().any(|allowed| {
        let allowed = allowed.to_ascii_lowercase();
        allowed == host || allowed == name
    }) {
        return true;
    }
    let Some(connection) = connection else { return false };
    // A dual-stack listener sees IPv4 clients as `::ffff:a.b.c.d`.
    let (peer, local) = (connection.peer.ip().to_canonical(), connection.local.ip().to_canonical());
    if is_loopback_name(name) {
        return peer.is_loopback();
    }
    name.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .is_ok_and(|ip| ip.to_canonical() == local)
}

/// The token of an `Authorization: Bearer TOKEN` header, the scheme in any case (RFC 7235);
/// `None` without one, or with another scheme.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .trim()
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .filter(|token| !token.is_empty())
}

/// Runs the checks, then the endpoint; rewrites rmcp's answer to a body that is not a
/// JSON-RPC message.
pub(crate) async fn check(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    let connection = request.extensions().get::<ConnectInfo<Connection>>().map(|c| c.0);
    if let Err(refusal) = guard.admit(request.headers(), connection) {
        return refusal;
    }
    let is_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';').next().unwrap_or_default().trim().eq_ignore_ascii_case("application/json")
        });
    if !is_json {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, guard.max_body_bytes).await else {
        let message = format!("the request body is larger than {} bytes", guard.max_body_bytes);
        return jsonrpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, &message);
    };
    let response = next.run(Request::from_parts(parts, Body::from(bytes.clone()))).await;
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return not_a_message(&bytes);
    }
    response
}

/// rmcp answers 415 to a JSON body it cannot read: say whether it is not JSON at all (-32700)
/// or JSON that is not a JSON-RPC message (-32600).
fn not_a_message(bytes: &Bytes) -> Response {
    match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        Err(error) => {
            jsonrpc_error(StatusCode::BAD_REQUEST, -32700, &format!("parse error: {error}"))
        }
        Ok(_) => jsonrpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "invalid request: the body is not a JSON-RPC request, notification or response",
        ),
    }
}

fn jsonrpc_error(status: StatusCode, code: i32, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message }
    });
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

fn refuse(status: StatusCode, message: &str) -> Response {
    let mut response = jsonrpc_error(status, -32600, message);
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, "Bearer".parse().expect("valid"));
    }
    response
}

impl Guard {
    /// Checks `Host`, `Origin` and the token of a request on `connection` (unknown when the
    /// router is mounted without connection info: then only an allowed host passes).
    #[allow(clippy::result_large_err, reason = "the refusal is the response itself")]
    fn admit(&self, headers: &HeaderMap, connection: Option<Connection>) -> Result<(), Response> {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
        if !self.host_allowed(host, connection) {
            tracing::debug!("refused Host `{host}` from {connection:?}");
            return Err(refuse(StatusCode::FORBIDDEN, "forbidden: this Host is not allowed"));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            if !self.origin_allowed(origin) {
                tracing::debug!("refused Origin `{origin}`");
                return Err(refuse(StatusCode::FORBIDDEN, "forbidden: this Origin is not allowed"));
            }
        }
        if let Some(token) = &self.token {
            let given = bearer_token(headers).unwrap_or_default();
            // Digests of equal length, compared in constant time: neither the token nor its
            // length can be learnt from how long a refusal takes.
            let (given, expected) = (Sha256::digest(given), Sha256::digest(token));
            if !bool::from(given.as_slice().ct_eq(expected.as_slice())) {
                return Err(refuse(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized: a bearer token is required",
                ));
            }
        }
        Ok(())
    }

    fn host_allowed(&self, host: &str, connection: Option<Connection>) -> bool {
        host_allowed(&self.allowed_hosts, host, connection)
    }

    /// An `Origin` passes if it is a loopback origin (any port) or listed.
    fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim().to_ascii_lowercase();
        if self
            .allowed_origins
            .iter()
            .any(|allowed| allowed.to_ascii_lowercase().trim_end_matches('/') == origin)
        {
            return true;
        }
        let Some(authority) =
            origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        is_loopback_name(split_authority(authority).0)
    }
}

/// `(host, port)` of `host[:port]`, with IPv6 literals in brackets kept whole.
fn split_authority(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => (&authority[..=end], authority[end + 1..].strip_prefix(':')),
            None => (authority, None),
        };
    }
    match authority.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (authority, None),
    }
}

fn is_loopback_name(name: &str) -> bool {
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    name == "localhost" || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

    use super::*;

    fn guard() -> Guard {
        Guard {
            allowed_hosts: vec!["mcp.example.org".into()],
            allowed_origins: vec!["https://app.example.org".into()],
            token: None,
            max_body_bytes: 1024,
        }
    }

    fn connection(peer: &str, local: &str) -> Connection {
        Connection { peer: peer.parse().unwrap(), local: local.parse().unwrap() }
    }

    #[test]
    fn loopback_names_pass_only_for_clients_on_this_machine() {
        let guard = guard();
        let local = Some(connection("127.0.0.1:5000", "127.0.0.1:8765"));
        let remote = Some(connection("192.0.2.7:5000", "192.0.2.1:8765"));
        for host in ["localhost:8765", "127.0.0.1:8765", "[::1]:8765", "localhost"] {
            assert!(guard.host_allowed(host, local), "{host}");
            assert!(!guard.host_allowed(host, remote), "{host} from another machine");
        }
        assert!(guard.host_allowed("192.0.2.1:8765", remote), "the address it arrived at");
        assert!(!guard.host_allowed("192.0.2.9:8765", remote));
        assert!(!guard.host_allowed("evil.example:8765", local), "a rebound name");
        assert!(guard.host_allowed("MCP.example.org:443", remote), "an allowed name");
        assert!(!guard.host_allowed("localhost:8765", None));
        let mapped = Some(connection("[::ffff:127.0.0.1]:5000", "[::ffff:127.0.0.1]:8765"));
        assert!(guard.host_allowed("localhost:8765", mapped), "IPv4 on a dual-stack listener");
        let mapped_remote = Some(connection("[::ffff:192.0.2.7]:5000", "[::ffff:192.0.2.1]:8765"));
        assert!(!guard.host_allowed("localhost:8765", mapped_remote));
        assert!(guard.host_allowed("192.0.2.1:8765", mapped_remote));
        assert!(!guard.host_allowed("", local));
    }

    #[test]
    fn only_loopback_and_listed_origins_pass() {
        let guard = guard();
        for origin in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:9",
            "https://app.example.org",
        ] {
            assert!(guard.origin_allowed(origin), "{origin}");
        }
        for origin in [
            "https://evil.example",
            "null",
            "http://localhost.evil.example",
            "file://",
            "https://app.example.org.evil",
        ] {
            assert!(!guard.origin_allowed(origin), "{origin}");
        }
    }
}
