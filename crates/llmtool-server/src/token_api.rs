//! Personal tokens, self-service: a member lists, makes and revokes their own tokens (an admin
//! everyone's), each with a name, an expiry (90 days unless asked) and a role no higher than
//! theirs; and the device flow (RFC 8628) by which `llmtool login URL` gets one: the terminal
//! asks for a grant, the member allows it on the studio's `/device` page, and the terminal
//! collects a new token of theirs, once.

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse as _, Response};
use axum::routing::{delete, get, post};
use llmtool_registry::wire::{GrantOpened, MadeToken};
use llmtool_registry::{
    DEFAULT_TOKEN_DAYS, DEVICE_GRANT_MINUTES, DeviceGrant, NewToken, Redeemed, Role, StoreError,
    TokenInfo, TokensOf,
};
use rand::{Rng as _, SeedableRng as _};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use crate::auth::{Caller, new_token, random_hex, token_hash};
use crate::{Problem, ServerState};

type Answer<T> = Result<T, Problem>;

/// How often a terminal asks whether its grant was answered, in seconds.
const POLL_SECONDS: u64 = 2;
/// The letters of a user code: consonants only (no vowels, so no words; none that reads as a
/// digit), as RFC 8628 suggests; 20 letters, 8 of them: 2.56e10 codes.
const CODE_LETTERS: &[u8] = b"BCDFGHJKLMNPQRSTVWXZ";
/// The longest token name, and the longest client name a terminal may give.
const MAX_NAME: usize = 64;

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/tokens", get(list_tokens).post(make_token))
        .route("/tokens/{name}", delete(revoke_token))
        .route("/device", post(open_grant))
        .route("/device/token", post(redeem_grant))
        .route("/device/{code}", get(show_grant).post(answer_grant))
}

/// Whose tokens to list.
#[derive(Debug, Deserialize, IntoParams)]
pub(crate) struct TokensQuery {
    /// `true`: everyone's (admins only); else the caller's own.
    #[serde(default)]
    all: bool,
}

/// A token to make for oneself.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct TokenRequest {
    /// Its name, unique in the library: letters, digits, `.`, `_` and `-`, at most 64.
    name: String,
    /// How many days it works, 1 to 366 (default 90).
    #[serde(default)]
    days: Option<u32>,
    /// Its role, no higher than the caller's (default: the caller's).
    #[serde(default)]
    role: Option<Role>,
}

/// The caller's own tokens, or with `all=true` everyone's (admins). Never the tokens
/// themselves.
#[utoipa::path(get, path = "/tokens", params(TokensQuery), security(("bearer" = [])),
    responses((status = 200, body = Vec<TokenInfo>),
        (status = 401, description = "Nobody is signed in", body = Problem),
        (status = 403, description = "`all=true` from someone who is not an admin", body = Problem)))]
pub(crate) async fn list_tokens(
    State(state): State<ServerState>,
    caller: Caller,
    Query(query): Query<TokensQuery>,
) -> Answer<Json<Vec<TokenInfo>>> {
    caller.require_token(Role::Viewer)?;
    let of = if query.all {
        caller.require_token(Role::Admin)?;
        TokensOf::Everyone
    } else {
        TokensOf::Member(&caller.member)
    };
    Ok(Json(state.store.tokens(of).await?))
}

/// Make a personal token: the caller's, with a role no higher than theirs, for 90 days unless
/// asked. The token is in this answer only.
#[utoipa::path(post, path = "/tokens", request_body = TokenRequest, security(("bearer" = [])),
    responses((status = 201, body = MadeToken),
        (status = 400, description = "A bad name, a role above the caller's, or days out of 1 to 366", body = Problem),
        (status = 401, description = "Nobody is signed in", body = Problem),
        (status = 409, description = "A token of that name exists", body = Problem),
        (status = 422, description = "The member holds 100 live tokens already", body = Problem)))]
pub(crate) async fn make_token(
    State(state): State<ServerState>,
    caller: Caller,
    Json(body): Json<TokenRequest>,
) -> Answer<Response> {
    caller.require_token(Role::Viewer)?;
    let held = caller.role.unwrap_or(Role::Viewer);
    let role = body.role.unwrap_or(held);
    if role > held {
        return Err(Problem::bad_request(format!(
            "a token's role may not be above yours ({})",
            held.as_str()
        )));
    }
    let name = body.name.trim();
    check_token_name(name)?;
    let token = new_token();
    let made = NewToken {
        name,
        role,
        token_hash: &token_hash(&token),
        member: Some(&caller.member),
        days: Some(body.days.unwrap_or(DEFAULT_TOKEN_DAYS)),
    };
    let info = caller.acting(&state).issue_token(&made).await?;
    Ok((StatusCode::CREATED, Json(MadeToken { token, info })).into_response())
}

/// Revoke a token: the caller's own, or anyone's for an admin. It stops working at once, and
/// the studio sessions opened with it end.
#[utoipa::path(delete, path = "/tokens/{name}", params(("name" = String, Path, description = "The token's name")), security(("bearer" = [])),
    responses((status = 204, description = "Revoked"),
        (status = 401, description = "Nobody is signed in", body = Problem),
        (status = 404, description = "No such live token, or not the caller's", body = Problem)))]
pub(crate) async fn revoke_token(
    State(state): State<ServerState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Answer<StatusCode> {
    caller.require_token(Role::Viewer)?;
    let of = if caller.role >= Some(Role::Admin) {
        TokensOf::Everyone
    } else {
        TokensOf::Member(&caller.member)
    };
    caller.acting(&state).revoke_token(&name, of).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// What a terminal says about itself when it asks to sign in.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct GrantRequest {
    /// What to call the terminal to the member asked (its host name), at most 64 characters.
    #[serde(default)]
    client: String,
}

/// Ask to sign a terminal in (`llmtool login URL`): a grant a signed-in member then allows on
/// the studio's `/device` page. Needs no sign-in; at most 200 wait at once.
#[utoipa::path(post, path = "/device", request_body = GrantRequest,
    responses((status = 200, body = GrantOpened),
        (status = 429, description = "Too many requests from this address", body = Problem),
        (status = 503, description = "Too many grants are waiting", body = Problem)))]
pub(crate) async fn open_grant(
    State(state): State<ServerState>,
    _caller: Caller,
    Json(body): Json<GrantRequest>,
) -> Answer<Json<GrantOpened>> {
    let client: String =
        body.client.trim().chars().filter(|c| !c.is_control()).take(MAX_NAME).collect();
    let client = if client.is_empty() { "a terminal".to_owned() } else { client };
    let device_code = random_hex();
    // A clash of user codes is rare (2.56e10 of them, 200 at most in use): another is drawn.
    for _ in 0..4 {
        let user_code = new_user_code();
        match state.store.open_device_grant(&token_hash(&device_code), &user_code, &client).await {
            Ok(grant) => {
                return Ok(Json(GrantOpened {
                    device_code,
                    verification_uri_complete: format!("/device?code={}", grant.user_code),
                    user_code: grant.user_code,
                    verification_uri: "/device".to_owned(),
                    expires_in: u64::from(DEVICE_GRANT_MINUTES) * 60,
                    interval: POLL_SECONDS,
                }));
            }
            Err(StoreError::GrantCodeTaken) => {}
            Err(other) => return Err(other.into()),
        }
    }
    Err(StoreError::GrantCodeTaken.into())
}

/// The grant a member is asked about: which terminal, and until when.
#[utoipa::path(get, path = "/device/{code}", params(("code" = String, Path, description = "The user code, `XXXX-XXXX` (case and dashes do not matter)")), security(("bearer" = [])),
    responses((status = 200, body = DeviceGrant),
        (status = 401, description = "Nobody is signed in", body = Problem),
        (status = 404, description = "No such grant waiting", body = Problem)))]
pub(crate) async fn show_grant(
    State(state): State<ServerState>,
    caller: Caller,
    Path(code): Path<String>,
) -> Answer<Json<DeviceGrant>> {
    caller.require_token(Role::Viewer)?;
    let code = user_code(&code)?;
    match state.store.device_grant(&code).await? {
        Some(grant) if grant.state == "waiting" => Ok(Json(grant)),
        _ => Err(StoreError::NoSuchGrant(code).into()),
    }
}

/// Allowing or denying a grant.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct GrantAnswer {
    allow: bool,
}

/// Allow (or deny) a terminal's sign-in: once allowed, the terminal gets a new token of the
/// caller's, with the caller's role, for 90 days.
#[utoipa::path(post, path = "/device/{code}", params(("code" = String, Path, description = "The user code")), request_body = GrantAnswer, security(("bearer" = [])),
    responses((status = 204, description = "Answered"),
        (status = 401, description = "Nobody is signed in", body = Problem),
        (status = 404, description = "No such grant waiting", body = Problem)))]
pub(crate) async fn answer_grant(
    State(state): State<ServerState>,
    caller: Caller,
    Path(code): Path<String>,
    Json(body): Json<GrantAnswer>,
) -> Answer<StatusCode> {
    caller.require_token(Role::Viewer)?;
    let code = user_code(&code)?;
    caller.acting(&state).answer_device_grant(&code, &caller.member, body.allow).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A terminal's ask for its token.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct GrantRedeem {
    device_code: String,
}

/// Collect the token of an allowed grant. Until the member answers: 400 with
/// `authorization_pending` as its title; denied: `access_denied`; gone or too old:
/// `expired_token` (RFC 8628's words).
#[utoipa::path(post, path = "/device/token", request_body = GrantRedeem,
    responses((status = 200, body = MadeToken),
        (status = 400, description = "`authorization_pending`, `access_denied` or `expired_token`", body = Problem)))]
pub(crate) async fn redeem_grant(
    State(state): State<ServerState>,
    _caller: Caller,
    Json(body): Json<GrantRedeem>,
) -> Answer<Json<MadeToken>> {
    let token = new_token();
    let name = format!("login-{}", &random_hex()[..8]);
    let device_hash = token_hash(body.device_code.trim());
    let pending = |title: &'static str, detail: &str| {
        Problem::new(StatusCode::BAD_REQUEST, title, detail.to_owned())
    };
    match state.store.redeem_device_grant(&device_hash, &name, &token_hash(&token)).await? {
        Redeemed::Issued(info) => Ok(Json(MadeToken { token, info })),
        Redeemed::Waiting => {
            Err(pending("authorization_pending", "nobody has allowed this sign-in yet"))
        }
        Redeemed::Denied => Err(pending("access_denied", "the sign-in was denied")),
        Redeemed::Expired => Err(pending(
            "expired_token",
            "this sign-in expired or was used: start again with `llmtool login`",
        )),
    }
}

/// A token's name: 1 to 64 letters, digits, `.`, `_` or `-`.
fn check_token_name(name: &str) -> Answer<()> {
    let good = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(good) {
        return Err(Problem::bad_request(format!(
            "`{name}` cannot name a token: 1 to 64 letters, digits, `.`, `_` or `-`"
        )));
    }
    Ok(())
}

/// A fresh user code, `XXXX-XXXX`.
fn new_user_code() -> String {
    let mut random = rand::rngs::StdRng::from_os_rng();
    let mut code = String::with_capacity(9);
    for at in 0..8 {
        if at == 4 {
            code.push('-');
        }
        code.push(char::from(CODE_LETTERS[random.random_range(0..CODE_LETTERS.len())]));
    }
    code
}

/// A user code as typed (any case, with or without its dash or spaces), as stored.
fn user_code(typed: &str) -> Answer<String> {
    let letters: String =
        typed.chars().filter(|c| !matches!(c, '-' | ' ')).map(|c| c.to_ascii_uppercase()).collect();
    if letters.len() != 8 || !letters.bytes().all(|b| CODE_LETTERS.contains(&b)) {
        return Err(Problem::bad_request(format!("`{typed}` is not a sign-in code (XXXX-XXXX)")));
    }
    Ok(format!("{}-{}", &letters[..4], &letters[4..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_codes_read_as_typed() {
        let code = new_user_code();
        assert_eq!(user_code(&code).unwrap(), code);
        assert_eq!(user_code(&code.to_lowercase().replace('-', " ")).unwrap(), code);
        assert!(user_code("AEIO-UBCD").is_err());
        assert!(user_code("BCDF-GHJ").is_err());
    }

    #[test]
    fn token_names_are_plain() {
        assert!(check_token_name("sam-laptop.2").is_ok());
        for bad in ["", "a b", "ümlaut", &"x".repeat(65)] {
            assert!(check_token_name(bad).is_err(), "{bad}");
        }
    }
}
