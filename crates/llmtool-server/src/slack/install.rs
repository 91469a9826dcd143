//! Adding Slack from the Control Center: an admin gives the app's client id, client secret and
//! signing secret (sealed at once with the integration keys, never shown again), then "Add to
//! Slack" runs Slack's OAuth v2 flow: a state made for that admin (kept hashed, used once,
//! within ten minutes), Slack's page, back to [`CALLBACK_PATH`] and on to [`FINISH_PATH`] (in
//! the admin's session), where the code is traded for the bot token (`oauth.v2.access`),
//! which is sealed and kept. Every change is in the audit log.

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse as _, Redirect, Response};
use axum::routing::{get, post};
use llmtool_registry::{Role, SlackApp};
use llmtool_slack::manifest::BOT_SCOPES;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use utoipa::ToSchema;

use super::app::{reload, secret_context};
use crate::auth::{Caller, random_hex};
use crate::{Mail, Problem, ServerState};

/// Where Slack sends the admin back to after "Add to Slack".
pub(crate) const CALLBACK_PATH: &str = llmtool_slack::manifest::OAUTH_PATH;

/// The longest secret taken.
const MAX_SECRET: usize = 512;

type Answer<T> = Result<T, Problem>;

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/control/slack", get(show).put(set).delete(remove))
        .route("/control/slack/install", post(install))
}

/// The Slack app as the Control Center shows it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SlackSetup {
    /// `files` (the server's own, from `serve`'s options: not changed here), `library` (an
    /// admin's, below) or `none`.
    source: &'static str,
    /// The library's app (never a secret).
    app: Option<SlackApp>,
    /// Whether the server answers Slack now.
    answering: bool,
    /// Where Slack must send admins back after "Add to Slack" (the app's redirect URL).
    redirect_url: Option<String>,
}

/// `PUT /control/slack`: the app's credentials, from its page on Slack's site ("Basic
/// Information"). The secrets are sealed at once; left out, the ones kept stay.
#[derive(Deserialize, ToSchema)]
pub(crate) struct SlackCredentials {
    client_id: String,
    client_secret: Option<String>,
    signing_secret: Option<String>,
}

/// Never a secret.
impl std::fmt::Debug for SlackCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlackCredentials")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// `POST /control/slack/install`: where to send the admin's browser.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SlackInstall {
    /// Slack's "Add to Slack" page for this app, with a state for this admin.
    url: String,
}

/// The Control Center cannot change the app `serve`'s files give.
fn files_app() -> Problem {
    Problem::new(
        StatusCode::CONFLICT,
        "Conflict",
        "this server's Slack app is set by its --slack-signing-secret-file: change it there",
    )
}

fn public_url(state: &ServerState) -> Answer<&str> {
    state.sign_in.public_url.as_deref().ok_or_else(|| {
        Problem::new(
            StatusCode::CONFLICT,
            "Conflict",
            "Slack needs the server's public address: set `public_url` in `[server]` (or --public-url)",
        )
    })
}

/// The Slack app: whose it is, the library's (never a secret), and whether it answers now.
#[utoipa::path(get, path = "/control/slack", security(("bearer" = [])),
    responses((status = 200, body = SlackSetup), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn show(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<SlackSetup>> {
    caller.require_token(Role::Admin)?;
    let holder = state.slack_holder();
    let app = state.store.slack_app().await?;
    let source = match (holder.set_by_files(), &app) {
        (true, _) => "files",
        (false, Some(_)) => "library",
        (false, None) => "none",
    };
    let redirect_url = state.sign_in.public_url.as_ref().map(|url| format!("{url}{CALLBACK_PATH}"));
    Ok(Json(SlackSetup { source, app, answering: state.slack().is_some(), redirect_url }))
}

/// A secret as given: some text on one line, not too long.
fn secret(value: &str) -> Answer<&str> {
    let value = value.trim();
    if value.is_empty() || value.len() > MAX_SECRET || value.contains(char::is_control) {
        return Err(Problem::bad_request("a Slack secret is some text on one line"));
    }
    Ok(value)
}

/// Set the library's Slack app: its client id, and its client and signing secrets (sealed at
/// once, never returned). Changing the client id takes the app off until it is added to Slack
/// again.
#[utoipa::path(put, path = "/control/slack", request_body = SlackCredentials, security(("bearer" = [])),
    responses((status = 200, body = SlackSetup),
        (status = 400, description = "A value that is not one", body = Problem),
        (status = 409, description = "The server has no integration keys, or its Slack app is its own", body = Problem),
        (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn set(
    State(state): State<ServerState>,
    caller: Caller,
    Json(credentials): Json<SlackCredentials>,
) -> Answer<Json<SlackSetup>> {
    caller.require_token(Role::Admin)?;
    if state.slack_holder().set_by_files() {
        return Err(files_app());
    }
    let keyring = state.keyring().ok_or_else(crate::control_api::no_keyring)?;
    let client_id = credentials.client_id.trim();
    if client_id.is_empty()
        || client_id.len() > 64
        || !client_id.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    {
        return Err(Problem::bad_request("`client_id` is the app's client id, digits and dots"));
    }
    let before = state.store.slack_app().await?;
    let seal = |given: Option<&String>, kept: Option<&String>, name: &str| -> Answer<String> {
        match (given, kept) {
            (Some(given), _) => Ok(keyring.seal(secret(given)?, &secret_context(name))),
            (None, Some(kept)) => Ok(kept.clone()),
            (None, None) => Err(Problem::bad_request(format!("`{name}` is needed the first time"))),
        }
    };
    let client_secret = seal(
        credentials.client_secret.as_ref(),
        before.as_ref().map(|app| &app.sealed_client_secret),
        "client_secret",
    )?;
    let signing_secret = seal(
        credentials.signing_secret.as_ref(),
        before.as_ref().map(|app| &app.sealed_signing_secret),
        "signing_secret",
    )?;
    let same_app = before.as_ref().is_some_and(|app| app.client_id == client_id);
    let app = match before.filter(|_| same_app) {
        Some(app) => SlackApp {
            sealed_client_secret: client_secret,
            sealed_signing_secret: signing_secret,
            ..app
        },
        None => SlackApp {
            client_id: client_id.to_owned(),
            sealed_client_secret: client_secret,
            sealed_signing_secret: signing_secret,
            sealed_bot_token: None,
            team_id: None,
            team_name: None,
            bot_user_id: None,
            enabled: false,
            disabled_reason: Some("not added to Slack yet".into()),
            installed_by: None,
            installed_at: None,
            updated_at: String::new(),
        },
    };
    caller.acting(&state).put_slack_app(&app).await?;
    reload(&state).await;
    show(State(state), caller).await
}

/// Remove the library's Slack app: its secrets and token are deleted, and the server stops
/// answering Slack (connected conversations keep their place, for when it is added again).
#[utoipa::path(delete, path = "/control/slack", security(("bearer" = [])),
    responses((status = 204, description = "Removed (or there was none)"), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn remove(State(state): State<ServerState>, caller: Caller) -> Answer<StatusCode> {
    caller.require_token(Role::Admin)?;
    caller.acting(&state).remove_slack_app().await?;
    reload(&state).await;
    Ok(StatusCode::NO_CONTENT)
}

/// SHA-256 of a state, in hex: what the library keeps of it.
fn state_hash(state: &str) -> String {
    hex::encode(Sha256::digest(state.as_bytes()))
}

/// Slack's "Add to Slack" page (`oauth/v2/authorize`) next to the Web API's address.
fn authorize_base(state: &ServerState) -> String {
    let api = state.slack_holder().api_url().unwrap_or(llmtool_slack::web_api::SLACK_API);
    let site = api.trim_end_matches('/').trim_end_matches("/api");
    format!("{site}/oauth/v2/authorize")
}

/// Start "Add to Slack": the address of Slack's page for this app, with a state made for the
/// calling admin (good once, for ten minutes). The studio sends the browser there; Slack
/// sends it back to `/slack/oauth/callback`.
#[utoipa::path(post, path = "/control/slack/install", security(("bearer" = [])),
    responses((status = 200, body = SlackInstall),
        (status = 409, description = "No app set yet, or no public address", body = Problem),
        (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn install(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<SlackInstall>> {
    caller.require_token(Role::Admin)?;
    if state.slack_holder().set_by_files() {
        return Err(files_app());
    }
    let app = state.store.slack_app().await?.ok_or_else(|| {
        Problem::new(StatusCode::CONFLICT, "Conflict", "set the app's client id and secrets first")
    })?;
    let redirect = format!("{}{CALLBACK_PATH}", public_url(&state)?);
    let token = random_hex();
    state.store.add_slack_state(&state_hash(&token), &caller.member).await?;
    let query = serde_urlencoded::to_string([
        ("client_id", app.client_id.as_str()),
        ("scope", &BOT_SCOPES.join(",")),
        ("redirect_uri", &redirect),
        ("state", &token),
    ])
    .map_err(|e| Problem::bad_request(e.to_string()))?;
    Ok(Json(SlackInstall { url: format!("{}?{query}", authorize_base(&state)) }))
}

/// What Slack sends the browser back with.
#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// The journey's own ending, on the studio's site.
pub(crate) const FINISH_PATH: &str = "/slack/oauth/finish";

/// A page of the "Add to Slack" journey.
fn hop(status: StatusCode, message: &str, next: Option<&str>) -> Response {
    let back =
        crate::hop_page::Back { href: "/control/integrations", label: "Back to the integrations" };
    crate::hop_page::page("Slack", status, message, next, back)
}

/// `GET /slack/oauth/callback`, where Slack's page sends the browser back: a page that goes
/// on at once to [`FINISH_PATH`] with what Slack sent. The session cookie is `SameSite=Strict`,
/// so it does not come with Slack's (cross-site) redirect; it does with this page's own
/// navigation.
pub(crate) async fn callback(Query(back): Query<Callback>) -> Response {
    match serde_urlencoded::to_string(&back) {
        Ok(query) => {
            hop(StatusCode::OK, "Back from Slack…", Some(&format!("{FINISH_PATH}?{query}")))
        }
        Err(_) => hop(StatusCode::BAD_REQUEST, "Slack's answer does not read.", None),
    }
}

/// `GET /slack/oauth/finish`: the state checked (made for the admin this browser is signed in
/// as, unused, recent), the code traded for the bot token, which is sealed and kept; the
/// browser goes back to the Control Center, told how it went.
pub(crate) async fn finish(
    State(state): State<ServerState>,
    caller: Result<Caller, Problem>,
    Query(back): Query<Callback>,
) -> Response {
    let done = |outcome: &str| {
        Redirect::to(&format!("/control/integrations?slack={outcome}")).into_response()
    };
    let Some(token) = back.state.as_deref() else {
        return hop(StatusCode::BAD_REQUEST, "Slack's answer carries no state.", None);
    };
    // Taken first, so that a state is never good twice, whatever follows.
    let admin = match state.store.take_slack_state(&state_hash(token)).await {
        Ok(Some(admin)) => admin,
        Ok(None) => {
            return hop(
                StatusCode::FORBIDDEN,
                "This \u{201c}Add to Slack\u{201d} is unknown, used or too old: start it again from the Control Center.",
                None,
            );
        }
        Err(error) => {
            tracing::warn!("an \"Add to Slack\" state could not be read: {error}");
            return hop(
                StatusCode::SERVICE_UNAVAILABLE,
                "The library could not be read: try again.",
                None,
            );
        }
    };
    let caller = caller.ok().filter(|caller| {
        caller.member == admin && caller.role.is_some_and(|role| role >= Role::Admin)
    });
    let Some(caller) = caller else {
        return hop(
            StatusCode::FORBIDDEN,
            "\u{201c}Add to Slack\u{201d} ends in the browser of the admin who started it, signed in.",
            None,
        );
    };
    if back.error.is_some() {
        return done("cancelled");
    }
    let Some(code) = back.code.as_deref() else {
        return hop(StatusCode::BAD_REQUEST, "Slack's answer carries no code.", None);
    };
    match installed(&state, &caller, code).await {
        Ok(()) => done("installed"),
        Err(problem) => {
            tracing::warn!("\"Add to Slack\" failed: {}", problem.detail);
            done("failed")
        }
    }
}

/// Trades `code` for the bot token and keeps it, sealed, with the workspace it is for.
async fn installed(state: &ServerState, caller: &Caller, code: &str) -> Answer<()> {
    let keyring = state.keyring().ok_or_else(crate::control_api::no_keyring)?;
    let app =
        state.store.slack_app().await?.ok_or_else(|| Problem::bad_request("no app is set"))?;
    let client_secret = keyring
        .open(&app.sealed_client_secret, &secret_context("client_secret"))
        .map_err(|e| Problem::bad_request(e.to_string()))?;
    let redirect = format!("{}{CALLBACK_PATH}", public_url(state)?);
    let api = llmtool_slack::WebApi::new(state.slack_holder().api_url(), None)
        .map_err(Problem::bad_request)?;
    let got = api
        .oauth_access(&app.client_id, &client_secret, code, &redirect)
        .await
        .map_err(|e| Problem::new(StatusCode::BAD_GATEWAY, "Bad Gateway", e.to_string()))?;
    let app = SlackApp {
        sealed_bot_token: Some(keyring.seal(&got.bot_token, &secret_context("bot_token"))),
        team_id: Some(got.team_id),
        team_name: Some(got.team_name),
        bot_user_id: Some(got.bot_user_id),
        enabled: true,
        disabled_reason: None,
        installed_by: Some(caller.member.clone()),
        installed_at: Some(jiff::Timestamp::now().to_string()),
        ..app
    };
    caller.acting(state).put_slack_app(&app).await?;
    reload(state).await;
    Ok(())
}

/// Seals the library's Slack app's secrets again with the current integration key (a
/// rotation): whether there was anything to seal again.
pub(crate) async fn reseal(
    state: &ServerState,
    caller: &Caller,
    keyring: &crate::Keyring,
) -> Answer<bool> {
    let Some(before) = state.store.slack_app().await? else { return Ok(false) };
    let sealed = [
        Some(&before.sealed_client_secret),
        Some(&before.sealed_signing_secret),
        before.sealed_bot_token.as_ref(),
    ];
    if sealed.into_iter().flatten().all(|sealed| keyring.is_current(sealed)) {
        return Ok(false);
    }
    let again = |sealed: &str, name: &str| -> Answer<String> {
        let context = secret_context(name);
        let secret = keyring.open(sealed, &context).map_err(|error| {
            Problem::new(StatusCode::CONFLICT, "Conflict", format!("Slack's {name}: {error}"))
        })?;
        Ok(keyring.seal(&secret, &context))
    };
    let after = SlackApp {
        sealed_client_secret: again(&before.sealed_client_secret, "client_secret")?,
        sealed_signing_secret: again(&before.sealed_signing_secret, "signing_secret")?,
        sealed_bot_token: match &before.sealed_bot_token {
            Some(sealed) => Some(again(sealed, "bot_token")?),
            None => None,
        },
        ..before.clone()
    };
    caller.acting(state).reseal_slack_app(&before, &after).await?;
    Ok(true)
}

/// Mails `what` to the library's admins, when the server sends mail; it is in the log and the
/// Control Center in any case.
pub(crate) async fn tell_admins(state: &ServerState, what: &str) {
    let Some(mailer) = &state.sign_in.mailer else { return };
    let members = match state.store.members().await {
        Ok(members) => members,
        Err(error) => return tracing::warn!("the admins could not be told: {error}"),
    };
    for admin in members.iter().filter(|member| member.role >= Role::Admin) {
        let mail = Mail {
            to: admin.email.clone(),
            to_name: admin.name.clone(),
            subject: "llmtool: Slack is off".into(),
            text: format!("{what}.\n\nThe Control Center's integrations page adds it again.\n"),
        };
        if let Err(error) = mailer.send(&mail).await {
            tracing::warn!("an admin could not be told that Slack is off: {error}");
        }
    }
}
