//! Who is calling, and what they may do: a Bearer token (shown once when made, stored as its
//! SHA-256) names a caller with a role; reading may be public.

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use llmtool_mcp::transport::Connection;
use llmtool_registry::Role;
use rand::{RngCore as _, SeedableRng as _};
use sha2::{Digest as _, Sha256};

use crate::{Problem, ServerState};

/// Who may read without a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Anyone may read (`--public-read`); writing always needs a token.
    pub public_read: bool,
}

/// A new token: `llmt_` and 64 hex digits from the operating system's random source.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::StdRng::from_os_rng().fill_bytes(&mut bytes);
    format!("llmt_{}", hex::encode(bytes))
}

/// What the library keeps of a token: its SHA-256, in hex.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The caller of a request: the name and role of its token, or nobody.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) name: Option<String>,
    role: Option<Role>,
}

impl Caller {
    /// Whether the caller may do what needs `role` (reading needs `Viewer`, which public
    /// reading grants to everyone).
    pub(crate) fn require(&self, role: Role, access: Access) -> Result<(), Problem> {
        if role == Role::Viewer && access.public_read {
            return Ok(());
        }
        match self.role {
            None => Err(Problem::unauthorized()),
            Some(held) if held >= role => Ok(()),
            Some(_) => Err(Problem::forbidden(role.as_str())),
        }
    }

    /// The same, with no public access: for what runs on the server's models.
    pub(crate) fn require_token(&self, role: Role) -> Result<(), Problem> {
        self.require(role, Access { public_read: false })
    }
}

impl FromRequestParts<ServerState> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &ServerState) -> Result<Self, Problem> {
        let caller = Self::identify(parts, state).await?;
        // Each token has its own allowance; requests without one share their address's.
        let key = match (&caller.name, parts.extensions.get::<ConnectInfo<Connection>>()) {
            (Some(name), _) => format!("token:{name}"),
            (None, Some(ConnectInfo(connection))) => format!("address:{}", connection.peer.ip()),
            (None, None) => "anonymous".to_owned(),
        };
        if let Err(wait) = state.limiter.take(&key) {
            let seconds = wait.as_secs() + 1;
            return Err(Problem {
                retry_after: Some(seconds),
                ..Problem::new(
                    axum::http::StatusCode::TOO_MANY_REQUESTS,
                    "Too Many Requests",
                    format!("over this caller's rate limit: try again in {seconds} s"),
                )
            });
        }
        Ok(caller)
    }
}

impl Caller {
    /// The token's caller, or nobody when there is no token.
    async fn identify(parts: &Parts, state: &ServerState) -> Result<Caller, Problem> {
        let Some(header) = parts.headers.get(AUTHORIZATION) else {
            return Ok(Caller { name: None, role: None });
        };
        let token = header
            .to_str()
            .ok()
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(Problem::unauthorized)?;
        // A token that is not the library's is refused, even where reading is public.
        match state.store.token(&token_hash(token)).await? {
            Some((name, role)) => Ok(Caller { name: Some(name), role: Some(role) }),
            None => Err(Problem::unauthorized()),
        }
    }
}
