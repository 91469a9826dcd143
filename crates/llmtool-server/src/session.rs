//! Signing in to the studio: `POST /session` exchanges a library token for a session cookie
//! (`HttpOnly`, `SameSite=Strict`) and a CSRF token the page sends back with every write;
//! `POST /session/invite` does the same for an invite's secret, once; `GET /session` says who
//! is signed in; `DELETE /session` signs out. Single sign-on (`sso.rs`) opens its sessions
//! here too.

use std::time::Duration;

use axum::Extension;
use axum::Json;
use axum::extract::{ConnectInfo, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse as _, Response};
use llmtool_mcp::transport::Connection;
use llmtool_registry::wire::Signed;
use llmtool_registry::{Role, SessionFor};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::{
    Caller, SECURE_SESSION_COOKIE, SESSION_COOKIE, random_hex, session_cookie, token_hash,
};
use crate::{Problem, ServerState};

/// How long a session lasts: a working day.
const LIFETIME: Duration = Duration::from_hours(12);

/// `POST /session`: the token to sign in with.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct SignIn {
    token: String,
}

/// `POST /session/invite`: the secret of an invite's link (what follows its `#`).
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct InviteSignIn {
    secret: String,
}

/// Sign in with a library token: a session cookie for the studio.
#[utoipa::path(post, path = "/session", request_body = SignIn,
    responses((status = 200, description = "Signed in; the `llmtool_session` cookie is set", body = Signed),
        (status = 401, description = "Not a live token of the library's", body = Problem), (status = 429, description = "Too many attempts from this address", body = Problem)))]
pub(crate) async fn sign_in(
    State(state): State<ServerState>,
    connection: Option<Extension<ConnectInfo<Connection>>>,
    headers: HeaderMap,
    Json(body): Json<SignIn>,
) -> Result<Response, Problem> {
    take_attempt(&state, connection.as_ref(), &headers).await?;
    let Some(holder) = state.store.token(&token_hash(body.token.trim())).await? else {
        return Err(Problem::unauthorized());
    };
    let opened = open_session(&state, &headers, SessionFor::Token(&holder.name)).await?;
    let who =
        Who { name: holder.name, role: holder.role, member: holder.member, teams: holder.teams };
    let signed = signed(&state, who, Some(opened.csrf)).await?;
    Ok(([(SET_COOKIE, opened.set_cookie)], Json(signed)).into_response())
}

/// Sign in with an invite's link: once, before it expires.
#[utoipa::path(post, path = "/session/invite", request_body = InviteSignIn,
    responses((status = 200, description = "Signed in; the `llmtool_session` cookie is set", body = Signed),
        (status = 400, description = "The link is unknown, used or expired", body = Problem), (status = 429, description = "Too many attempts from this address", body = Problem)))]
pub(crate) async fn sign_in_by_invite(
    State(state): State<ServerState>,
    connection: Option<Extension<ConnectInfo<Connection>>>,
    headers: HeaderMap,
    Json(body): Json<InviteSignIn>,
) -> Result<Response, Problem> {
    take_attempt(&state, connection.as_ref(), &headers).await?;
    let email = state.store.use_invite(&token_hash(body.secret.trim())).await?;
    let member = state.store.member(&email).await?;
    let opened = open_session(&state, &headers, SessionFor::Member(&member.email)).await?;
    let who = Who {
        name: member.email.clone(),
        role: member.role,
        member: member.email,
        teams: member.teams,
    };
    let signed = signed(&state, who, Some(opened.csrf)).await?;
    Ok(([(SET_COOKIE, opened.set_cookie)], Json(signed)).into_response())
}

/// Each sign-in spends its client's allowance: secrets are not for guessing.
pub(crate) async fn take_attempt(
    state: &ServerState,
    connection: Option<&Extension<ConnectInfo<Connection>>>,
    headers: &HeaderMap,
) -> Result<(), Problem> {
    let client = crate::auth::client_ip(state, connection.map(|c| c.0.0.peer.ip()), headers);
    let address = client.map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
    state.limiter.take(&format!("sign-in:{address}")).await.map_err(Problem::too_many)
}

/// A session opened: its cookie, to be set on the answer, and its CSRF token.
pub(crate) struct Opened {
    /// The `Set-Cookie` value that carries the session.
    pub(crate) set_cookie: String,
    csrf: String,
}

/// Who is signed in (`name`, of `role`), with the session's CSRF token and what the
/// workspace lets them do.
/// Who signed in: the token's name (or the member's e-mail), the role, the member and their
/// teams.
struct Who {
    name: String,
    role: Role,
    member: String,
    teams: Vec<String>,
}

async fn signed(state: &ServerState, who: Who, csrf: Option<String>) -> Result<Signed, Problem> {
    let workspace = crate::auth::workspace(state).await?;
    Ok(Signed {
        name: who.name,
        role: who.role.as_str().to_owned(),
        csrf,
        public_snapshots: workspace.public_snapshots,
        member: who.member,
        teams: who.teams,
        slack: state.slack().is_some(),
    })
}

/// Opens a session for `opened_for`, whichever way they signed in.
pub(crate) async fn open_session(
    state: &ServerState,
    headers: &HeaderMap,
    opened_for: SessionFor<'_>,
) -> Result<Opened, Problem> {
    let (cookie, csrf) = (random_hex(), random_hex());
    state.store.create_session(&token_hash(&cookie), opened_for, &csrf, LIFETIME).await?;
    let set_cookie = if state.https(headers) {
        format!(
            "{SECURE_SESSION_COOKIE}={cookie}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}; Secure",
            LIFETIME.as_secs()
        )
    } else {
        format!(
            "{SESSION_COOKIE}={cookie}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}",
            LIFETIME.as_secs()
        )
    };
    Ok(Opened { set_cookie, csrf })
}

/// The ways of signing in this server offers besides a token.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SignInMethods {
    /// Single sign-on, at `/signin/sso`.
    sso: bool,
}

/// How one may sign in here.
#[utoipa::path(get, path = "/session/methods", responses((status = 200, body = SignInMethods)))]
pub(crate) async fn methods(State(state): State<ServerState>) -> Json<SignInMethods> {
    Json(SignInMethods { sso: state.sign_in().sso.is_some() })
}

/// Who is signed in (by the session cookie or a Bearer token).
#[utoipa::path(get, path = "/session",
    responses((status = 200, body = Signed), (status = 401, description = "Nobody is signed in", body = Problem)))]
pub(crate) async fn who(
    State(state): State<ServerState>,
    caller: Caller,
) -> Result<Json<Signed>, Problem> {
    match (caller.name, caller.role) {
        (Some(name), Some(role)) => {
            let who = Who { name, role, member: caller.member, teams: caller.teams };
            Ok(Json(signed(&state, who, caller.csrf).await?))
        }
        _ => Err(Problem::unauthorized()),
    }
}

/// Sign out: the session ends, and its cookie is cleared.
#[utoipa::path(delete, path = "/session",
    responses((status = 204, description = "Signed out"), (status = 403, description = "The CSRF token is missing or wrong", body = Problem)))]
pub(crate) async fn sign_out(
    State(state): State<ServerState>,
    _caller: Caller,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    // `Caller` has checked the CSRF token of a session's request.
    if let Some(cookie) = session_cookie(&state, &headers) {
        state.store.delete_session(&token_hash(cookie)).await?;
    }
    let clear = format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    let clear_secure =
        format!("{SECURE_SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure");
    Ok((StatusCode::NO_CONTENT, [(SET_COOKIE, clear), (SET_COOKIE, clear_secure)]).into_response())
}
