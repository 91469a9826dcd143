//! Slack, where the team talks (docs/slack.md): Slack's requests arrive at `/slack/events`,
//! `/slack/commands` and `/slack/interactivity`, each taken only with a valid signature; the
//! `/llmtool` command lists the tools a member sees and opens a tool's modal; a submitted
//! modal runs the tool as that member, and its answer is posted in the channel as a thread; a
//! mention of the app in that thread is a turn of its conversation.
//!
//! A Slack user is the member whose e-mail Slack has verified for them (`users.info`); the
//! rule of who sees which tool, budgets, data-loss prevention and spend are the studio's.
//!
//! The app is `serve`'s (`--slack-signing-secret-file`), else the one an admin added in the
//! Control Center ([`install`]); [`SlackHolder`] keeps the current one. Conversations connected
//! to a channel are posted by [`poster`], turn by turn, whatever Slack's state.

mod app;
mod command;
mod events;
pub(crate) mod install;
mod interaction;
mod mention;
mod people;
pub(crate) mod poster;
pub(crate) mod sync_api;

pub(crate) use app::SlackHolder;

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse as _, Response};
use axum::routing::post;
use llmtool_slack::signature::{SIGNATURE_HEADER, TIMESTAMP_HEADER};
use llmtool_slack::{Verifier, WebApi};

use crate::ServerState;

/// How the server reaches Slack: the app's signing secret, its bot token and the Web API's
/// address (`None`: Slack's own; a test gives its stand-in's).
#[derive(Clone, Default)]
pub struct SlackOptions {
    pub signing_secret: String,
    pub bot_token: Option<String>,
    pub api_url: Option<String>,
}

impl std::fmt::Debug for SlackOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret or the token.
        f.debug_struct("SlackOptions").field("api_url", &self.api_url).finish_non_exhaustive()
    }
}

/// The server's side of its Slack app.
pub(crate) struct Slack {
    verifier: Verifier,
    api: WebApi,
    people: people::People,
    /// Who the bot is, asked of Slack once: how its mentions are written, and its workspace.
    bot: tokio::sync::OnceCell<llmtool_slack::web_api::BotIdentity>,
    /// Turns of the work done after Slack is answered (runs, posts): at most [`JOBS`] at once.
    jobs: Arc<tokio::sync::Semaphore>,
    /// SHA-256 of what the app was made from (secret, token, address): the same app read
    /// again is kept with its caches.
    fingerprint: [u8; 32],
    /// The library's sealed bot token this app was opened from (none for `serve`'s own): a
    /// revocation met with it turns off that installation, never a newer one.
    sealed_token: Option<String>,
}

/// The most Slack jobs (a modal's run, a mention's turn) at once; past it, what Slack sent is
/// dropped with a warning in the log, as an overloaded server should.
const JOBS: usize = 64;

impl Slack {
    pub(crate) fn new(options: SlackOptions) -> Result<Slack, String> {
        if options.signing_secret.trim().is_empty() {
            return Err("the Slack app's signing secret is empty".to_owned());
        }
        let mut hasher = <sha2::Sha256 as sha2::Digest>::new();
        for part in [
            &options.signing_secret,
            options.bot_token.as_deref().unwrap_or_default(),
            options.api_url.as_deref().unwrap_or_default(),
        ] {
            sha2::Digest::update(&mut hasher, part.as_bytes());
            sha2::Digest::update(&mut hasher, [0u8]);
        }
        let fingerprint = sha2::Digest::finalize(hasher).into();
        let api = WebApi::new(options.api_url.as_deref(), options.bot_token)?;
        Ok(Slack {
            fingerprint,
            verifier: Verifier::new(&options.signing_secret),
            api,
            people: people::People::new(),
            bot: tokio::sync::OnceCell::new(),
            jobs: Arc::new(tokio::sync::Semaphore::new(JOBS)),
            sealed_token: None,
        })
    }

    /// Who the bot is (`auth.test`, asked once).
    async fn bot(
        &self,
    ) -> Result<&llmtool_slack::web_api::BotIdentity, llmtool_slack::WebApiError> {
        self.bot.get_or_try_init(|| self.api.bot_identity()).await
    }

    /// Who the Slack user `user` is to the library.
    async fn asker(
        &self,
        state: &ServerState,
        user: &str,
    ) -> Result<people::Asker, people::AskerError> {
        let bot = self.bot().await.map_err(people::AskerError::Slack)?;
        self.people.asker(state, &self.api, &bot.team_id, user).await
    }

    /// Shows `text` to `user` alone, in `channel`.
    async fn tell(&self, channel: &str, user: &str, text: &str) {
        if let Err(error) = self.api.post_ephemeral(channel, user, text).await {
            tracing::warn!("Slack did not show a user why nothing was run: {error}");
        }
    }

    /// Runs `job` after Slack is answered, when a turn is free; else drops it, saying so.
    fn spawn(&self, what: &str, job: impl std::future::Future<Output = ()> + Send + 'static) {
        match Arc::clone(&self.jobs).try_acquire_owned() {
            Ok(turn) => {
                tokio::spawn(async move {
                    job.await;
                    drop(turn);
                });
            }
            Err(_) => tracing::warn!("{JOBS} Slack jobs are under way: {what} was dropped"),
        }
    }
}

/// The routes Slack posts to.
pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route(llmtool_slack::manifest::EVENTS_PATH, post(events::events))
        .route(llmtool_slack::manifest::COMMANDS_PATH, post(command::command))
        .route(llmtool_slack::manifest::INTERACTIVITY_PATH, post(interaction::interaction))
        .route(install::CALLBACK_PATH, axum::routing::get(install::callback))
        .route(install::FINISH_PATH, axum::routing::get(install::finish))
}

/// The server's Slack app, when the request carries Slack's valid signature; else the status
/// to answer (404 when this server has no Slack app, 401 otherwise, logged without the body).
fn verified(
    state: &ServerState,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Arc<Slack>, StatusCode> {
    let Some(slack) = state.slack() else {
        return Err(StatusCode::NOT_FOUND);
    };
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let now = jiff::Timestamp::now().as_second();
    match slack.verifier.verify(header(TIMESTAMP_HEADER), header(SIGNATURE_HEADER), body, now) {
        Ok(()) => Ok(slack),
        Err(refusal) => {
            tracing::warn!(
                bytes = body.len(),
                "a request to Slack's routes was refused: {refusal}"
            );
            Err(StatusCode::UNAUTHORIZED)
        }
    }
}

/// A message only the command's user sees, as the answer to a slash command.
fn ephemeral(text: &str) -> Response {
    axum::Json(serde_json::json!({"response_type": "ephemeral", "text": text})).into_response()
}

/// What Slack sent, read by `read` once its signature is checked, with the server's app;
/// else the status to answer: [`verified`]'s, or 400 for a body that is not what Slack sends.
fn received<T>(
    state: &ServerState,
    headers: &HeaderMap,
    body: &Bytes,
    read: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Result<(Arc<Slack>, T), StatusCode> {
    let slack = verified(state, headers, body)?;
    let payload = read(body).map_err(|problem| {
        tracing::warn!("a signed request from Slack does not read: {problem}");
        StatusCode::BAD_REQUEST
    })?;
    Ok((slack, payload))
}
