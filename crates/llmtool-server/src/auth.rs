//! Who is calling, and what they may do: a Bearer token (shown once when made, stored as its
//! SHA-256) names a caller with a role, and so does the studio's session cookie, which stands
//! for a token; reading may be public. A write made with the cookie must carry the session's
//! CSRF token in `X-CSRF-Token`.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header::{AUTHORIZATION, COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method};
use llmtool_mcp::transport::{Connection, bearer_token};
use llmtool_registry::{Actor, Holder, Role, Store, StoreError, Visibility, Workspace};
use rand::{RngCore as _, SeedableRng as _};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use crate::{Problem, ServerState};

/// The studio's session cookie.
pub(crate) const SESSION_COOKIE: &str = "llmtool_session";

/// Its name over HTTPS: the `__Host-` prefix makes browsers refuse it from any other host,
/// a sibling subdomain included.
pub(crate) const SECURE_SESSION_COOKIE: &str = "__Host-llmtool_session";

/// The header a write made with the session cookie carries the session's CSRF token in.
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";

/// Who may read without a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Anyone may read (`--public-read`); writing always needs a token.
    pub public_read: bool,
}

/// A new token: `llmt_` and 64 hex digits from the operating system's random source.
pub fn new_token() -> String {
    format!("llmt_{}", random_hex())
}

/// 256 bits from the operating system's random source, in hex.
pub(crate) fn random_hex() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::StdRng::from_os_rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// What the library keeps of a token: its SHA-256, in hex.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The caller of a request: the name and role of its token, and what it sees; or nobody.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) name: Option<String>,
    pub(crate) role: Option<Role>,
    /// The tools the caller sees (the rule: [`Visibility`]); any other is not found.
    pub(crate) visibility: Visibility,
    /// The caller's member's e-mail (`""` for nobody).
    pub(crate) member: String,
    /// The caller's member's id (`""` for nobody): what owns their conversations.
    pub(crate) member_id: String,
    /// The caller's member's teams.
    pub(crate) teams: Vec<String>,
    /// The CSRF token of the session, when the caller came with the session cookie.
    pub(crate) csrf: Option<String>,
    /// The rate limiter's bucket of this caller (its token's, else its address's), for work
    /// that costs more than a request.
    pub(crate) limit_key: String,
    /// Where the request came from, as the audit log records it ([`client_address`]).
    pub(crate) address: Option<String>,
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

    /// The library, recording each change made through it as this caller's (in the audit log,
    /// with their address). Every route that changes the library writes through this.
    pub(crate) fn acting(&self, state: &ServerState) -> Arc<dyn Store> {
        let name = self.name.clone().unwrap_or_else(|| "anonymous".to_owned());
        state.store.acting_as(Actor { name, address: self.address.clone() })
    }

    /// Whom a run by this caller is for (it has a token: see [`Caller::require_token`]).
    pub(crate) fn run_for(&self) -> crate::runs::RunFor {
        crate::runs::RunFor {
            member: self.member.clone(),
            role: self.role.unwrap_or(Role::Viewer),
            teams: self.teams.clone(),
            visibility: self.visibility.clone(),
            by: self.name.clone(),
            depth: 0,
        }
    }

    /// The same, with no public access: for what runs on the server's models.
    pub(crate) fn require_token(&self, role: Role) -> Result<(), Problem> {
        self.require(role, Access { public_read: false })
    }

    /// Whether the caller sees the tool `slug`, which carries `tags`: a tool they do not see
    /// is answered exactly as a missing one (404), on every path.
    pub(crate) fn sees(&self, slug: &str, tags: &[String]) -> Result<(), Problem> {
        if self.visibility.sees(tags) {
            Ok(())
        } else {
            Err(StoreError::NoSuchTool(slug.to_owned()).into())
        }
    }
}

impl FromRequestParts<ServerState> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &ServerState) -> Result<Self, Problem> {
        let peer = parts.extensions.get::<ConnectInfo<Connection>>().map(|c| c.0.peer.ip());
        // Behind a trusted proxy, the client is the one it forwarded.
        let address = client_ip(state, peer, &parts.headers);
        // Failed sign-ins spend their address's allowance before any token is looked up: a
        // made-up token gets 401 until it is spent, then 429 (it would be 401 forever).
        let failures =
            format!("failed:{}", address.map_or_else(|| "unknown".into(), |a| a.to_string()));
        let has_credentials = parts.headers.contains_key(AUTHORIZATION)
            || session_cookie(state, &parts.headers).is_some();
        if has_credentials && let Some(wait) = state.limiter.wait(&failures).await {
            return Err(Problem::too_many(wait));
        }
        let caller = match Self::identify(parts, state).await {
            Ok(caller) => caller,
            Err(refused) if refused.status == 401 => {
                return Err(match state.limiter.take(&failures).await {
                    Ok(()) => refused,
                    Err(wait) => Problem::too_many(wait),
                });
            }
            Err(problem) => return Err(problem),
        };
        if let Some(csrf) = &caller.csrf {
            let safe = matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS);
            let sent =
                parts.headers.get(CSRF_HEADER).map(HeaderValue::as_bytes).unwrap_or_default();
            if !safe && !bool::from(sent.ct_eq(csrf.as_bytes())) {
                return Err(Problem::forbidden_because(
                    "a write made with the session cookie needs its CSRF token in X-CSRF-Token",
                ));
            }
        }
        // Each token has its own allowance; requests without one share their address's.
        let key = match (&caller.name, address) {
            (Some(name), _) => format!("token:{name}"),
            (None, Some(address)) => format!("address:{address}"),
            (None, None) => "anonymous".to_owned(),
        };
        if let Err(wait) = state.limiter.take(&key).await {
            return Err(Problem::too_many(wait));
        }
        let address = client_address(state, peer, &parts.headers);
        Ok(Caller { limit_key: key, address, ..caller })
    }
}

impl Caller {
    /// The token's caller, the session's, or nobody.
    async fn identify(parts: &Parts, state: &ServerState) -> Result<Caller, Problem> {
        if !parts.headers.contains_key(AUTHORIZATION) {
            // A session that ended (expired, signed out, its member removed) is nobody: the
            // page offers to sign in again.
            let Some(cookie) = session_cookie(state, &parts.headers) else {
                return Caller::nobody(state).await;
            };
            return match state.store.session(&token_hash(cookie)).await? {
                Some(session) => Ok(Caller::of(session.holder, Some(session.csrf))),
                None => Caller::nobody(state).await,
            };
        }
        let token = bearer_token(&parts.headers).ok_or_else(Problem::unauthorized)?;
        // A token that is not the library's is refused, even where reading is public.
        match state.store.token(&token_hash(token)).await? {
            Some(holder) => Ok(Caller::of(holder, None)),
            None => Err(Problem::unauthorized()),
        }
    }

    fn of(holder: Holder, csrf: Option<String>) -> Caller {
        Caller {
            visibility: holder.visibility(),
            member: holder.member,
            member_id: holder.member_id,
            teams: holder.teams,
            role: Some(holder.role),
            name: Some(holder.name),
            csrf,
            limit_key: String::new(),
            address: None,
        }
    }

    /// A caller with no token and no session. Nobody reads anything unless reading is public:
    /// only then does the workspace's setting on the built-in tools matter to them.
    async fn nobody(state: &ServerState) -> Result<Caller, Problem> {
        let workspace =
            if state.access.public_read { workspace(state).await? } else { Workspace::default() };
        Ok(Caller {
            name: None,
            role: None,
            visibility: Visibility::anonymous(&workspace),
            member: String::new(),
            member_id: String::new(),
            teams: Vec::new(),
            csrf: None,
            limit_key: String::new(),
            address: None,
        })
    }
}

/// The workspace's settings, read once a generation: a change to them (here, or through another
/// server) starts a new one, as any change of the library does.
pub(crate) async fn workspace(state: &ServerState) -> Result<Workspace, Problem> {
    let cache = state.cache();
    if let Some(settings) = cache.workspace() {
        return Ok(settings);
    }
    let generation = cache.generation();
    let settings = state.store.workspace().await?;
    cache.keep_workspace(generation, settings);
    Ok(settings)
}

/// The client's address as the audit log keeps it: the peer's, or, when the peer is a proxy
/// the server trusts (`--trusted-proxy`) that names the client in `X-Forwarded-For`, the last
/// address it names, said to have come through it (`203.0.113.9 via 127.0.0.1`). Only that
/// last entry is the proxy's own word; the ones before it are the client's.
pub(crate) fn client_address(
    state: &ServerState,
    peer: Option<IpAddr>,
    headers: &HeaderMap,
) -> Option<String> {
    let peer = peer?;
    Some(match forwarded_client(state, peer, headers) {
        Some(client) => format!("{client} via {peer}"),
        None => peer.to_string(),
    })
}

/// The client's address: the one a trusted proxy forwarded, else the peer's. What rate limits
/// are kept by (behind a proxy, every peer would be the proxy).
pub(crate) fn client_ip(
    state: &ServerState,
    peer: Option<IpAddr>,
    headers: &HeaderMap,
) -> Option<IpAddr> {
    let peer = peer?;
    Some(forwarded_client(state, peer, headers).unwrap_or(peer))
}

/// The address a trusted proxy (`peer`) says it forwarded the request for: the last one in
/// `X-Forwarded-For`, which that proxy added. From any other peer the header is the client's
/// own word, and ignored: anyone could name any address in it.
fn forwarded_client(state: &ServerState, peer: IpAddr, headers: &HeaderMap) -> Option<IpAddr> {
    state
        .trusts_proxy(peer)
        .then(|| headers.get_all("x-forwarded-for").iter().next_back())
        .flatten()
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.rsplit(',').next())
        .and_then(|last| last.trim().parse::<IpAddr>().ok())
}

/// The value of the session cookie, if the request has exactly one. Two are refused: another
/// site under the same domain could have planted one. Over HTTPS only the `__Host-` one is
/// read, which no other host can set.
pub(crate) fn session_cookie<'a>(state: &ServerState, headers: &'a HeaderMap) -> Option<&'a str> {
    if state.https(headers) {
        only_cookie(headers, &[SECURE_SESSION_COOKIE])
    } else {
        only_cookie(headers, &[SESSION_COOKIE, SECURE_SESSION_COOKIE])
    }
}

/// The value of the cookie `name`, if the request has exactly one.
pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    only_cookie(headers, &[name])
}

/// The value of the one cookie named one of `names`, if there is exactly one. (A `Cookie`
/// header is a list of `name=value` pairs split by `;`: too little to take a crate for.)
fn only_cookie<'a>(headers: &'a HeaderMap, names: &[&str]) -> Option<&'a str> {
    let mut found = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(name, _)| names.contains(name))
        .map(|(_, value)| value.trim());
    let first = found.next()?;
    (found.next().is_none() && !first.is_empty()).then_some(first)
}
