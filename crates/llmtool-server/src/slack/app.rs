//! Which Slack app the server answers for: `serve`'s own (its files), else the library's, as
//! an admin added it in the Control Center, its secrets opened with the integration keys.
//! Read again after every change made through this server, and every half minute for the
//! changes of other servers of the library; a token Slack revoked turns it off ([`revoked`]).

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use llmtool_registry::SlackApp;

use super::{Slack, SlackOptions};
use crate::ServerState;

/// How often the library's app is read again, for changes made through other servers.
pub(crate) const RELOAD_EVERY: Duration = Duration::from_secs(30);

/// What a sealed Slack secret is bound to: its name, so that one secret never opens as
/// another.
pub(crate) fn secret_context(name: &str) -> String {
    format!("slack\n{name}")
}

/// The server's Slack app, as it is now.
#[derive(Default)]
pub(crate) struct SlackHolder {
    /// `serve`'s own app (`--slack-signing-secret-file`): it wins over the library's.
    files: Option<SlackOptions>,
    /// The Web API's address for the library's app (`--slack-api-url`).
    api_url: Option<String>,
    current: RwLock<Option<Arc<Slack>>>,
}

impl SlackHolder {
    /// `options`' app, for good; else the library's, at `api_url`.
    pub(crate) fn new(
        options: Option<SlackOptions>,
        api_url: Option<String>,
    ) -> Result<SlackHolder, String> {
        let current = match &options {
            Some(options) => Some(Arc::new(Slack::new(options.clone())?)),
            // The address is checked now, not at the first request.
            None => llmtool_slack::WebApi::new(api_url.as_deref(), None).map(|_| None)?,
        };
        Ok(SlackHolder { files: options, api_url, current: RwLock::new(current) })
    }

    /// The app answered for now, if any.
    pub(crate) fn current(&self) -> Option<Arc<Slack>> {
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Whether the app is `serve`'s own, which the Control Center cannot change.
    pub(crate) fn set_by_files(&self) -> bool {
        self.files.is_some()
    }

    /// The Web API's address for the library's app.
    pub(crate) fn api_url(&self) -> Option<&str> {
        self.api_url.as_deref()
    }

    fn set(&self, slack: Option<Arc<Slack>>) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = slack;
    }

    /// Stops answering as `slack`, if it is still the app answered for (not a newer one).
    fn drop_if(&self, slack: &Slack) {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if current.as_ref().is_some_and(|now| now.fingerprint == slack.fingerprint) {
            *current = None;
        }
    }
}

/// Reads the library's app again (unless `serve`'s own is used); what cannot be opened is
/// said in the log, and leaves no app.
pub(crate) async fn reload(state: &ServerState) {
    let holder = state.slack_holder();
    if holder.set_by_files() {
        return;
    }
    let app = match state.store.slack_app().await {
        Ok(app) => app,
        Err(error) => return tracing::warn!("the library's Slack app could not be read: {error}"),
    };
    let slack = match app.filter(|app| app.enabled) {
        None => None,
        Some(app) => match library_app(state, &app) {
            Ok(slack) => Some(Arc::new(slack)),
            Err(problem) => {
                tracing::warn!("the library's Slack app cannot be used: {problem}");
                None
            }
        },
    };
    // The same app again keeps its caches (who the bot is, who each user is).
    let same = match (&holder.current(), &slack) {
        (Some(now), Some(new)) => now.fingerprint == new.fingerprint,
        (None, None) => true,
        _ => false,
    };
    if !same {
        holder.set(slack);
    }
}

/// The Slack app `app` describes, its secrets opened.
fn library_app(state: &ServerState, app: &SlackApp) -> Result<Slack, String> {
    let keyring =
        state.keyring().ok_or("the server has no integration keys to open its secrets")?;
    let open = |sealed: &str, name: &str| {
        let opened = keyring.open(sealed, &secret_context(name));
        opened.map(|secret| secret.as_str().to_owned()).map_err(|e| format!("its {name}: {e}"))
    };
    let signing_secret = open(&app.sealed_signing_secret, "signing_secret")?;
    let bot_token = match &app.sealed_bot_token {
        Some(sealed) => Some(open(sealed, "bot_token")?),
        None => None,
    };
    let slack = Slack::new(SlackOptions {
        signing_secret,
        bot_token,
        api_url: state.slack_holder().api_url().map(str::to_owned),
    })?;
    Ok(Slack { sealed_token: app.sealed_bot_token.clone(), ..slack })
}

/// Slack no longer takes `slack`'s bot token (`reason`, what it answered): that installation
/// of the library's app is turned off, with an entry in the audit log and a mail to the admins
/// (once, whichever server meets it first; never a newer installation); `serve`'s own app is
/// dropped until the server starts again.
pub(crate) async fn revoked(state: &ServerState, slack: &Slack, reason: &str) {
    let holder = state.slack_holder();
    tracing::error!(
        "Slack revoked the app's bot token ({reason}): Slack is off until it is added again"
    );
    holder.drop_if(slack);
    let Some(sealed_token) = &slack.sealed_token else { return };
    let why = format!("Slack revoked the bot token ({reason}): add the app to Slack again");
    match state.store.disable_slack_app(&why, sealed_token).await {
        Ok(true) => super::install::tell_admins(state, &why).await,
        Ok(false) => {}
        Err(error) => tracing::warn!("the Slack app could not be turned off: {error}"),
    }
}

/// Slack says the app's tokens were revoked or the app uninstalled: whether the token still
/// works is asked (the event may be about an older installation), and a token Slack refuses
/// turns the app off.
pub(crate) async fn check_token(state: &ServerState, slack: &Slack) {
    match slack.api.bot_identity().await {
        Err(llmtool_slack::WebApiError::Revoked(reason)) => revoked(state, slack, &reason).await,
        Err(error) => tracing::warn!("Slack's token could not be checked: {error}"),
        Ok(_) => tracing::info!("Slack told of a revoked token; the app's own still works"),
    }
}
