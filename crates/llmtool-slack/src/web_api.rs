//! The client of Slack's Web API (or of a stand-in at another base address): each method a
//! POST with the bot token, its answer's `ok` checked. A 429 is waited out as its
//! `Retry-After` says (a few times, each wait bounded); a token Slack no longer takes is
//! [`WebApiError::Revoked`], for the server to disable the integration.

use std::time::Duration;

use serde_json::{Value, json};

use crate::blocks::SlackMessage;

/// The Web API's address.
pub const SLACK_API: &str = "https://slack.com/api";
/// How many times one call waits out a 429 before it gives up.
const MOST_WAITS: u32 = 3;
/// The longest one wait (Slack asks for seconds, sometimes a minute).
const LONGEST_WAIT: Duration = Duration::from_mins(1);
/// The longest a call may take.
const CALL_TIME: Duration = Duration::from_secs(30);
/// The most bytes of an answer read.
const MOST_ANSWER_BYTES: usize = 4 << 20;

/// The errors of the Web API that mean the token is no good any more.
const REVOKED: &[&str] =
    &["token_revoked", "invalid_auth", "account_inactive", "token_expired", "not_authed"];

/// A Web API client with its bot token.
#[derive(Clone)]
pub struct WebApi {
    base: String,
    token: Option<String>,
    client: reqwest::Client,
}

impl std::fmt::Debug for WebApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("WebApi").field("base", &self.base).finish_non_exhaustive()
    }
}

/// Why a call gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebApiError {
    /// Slack no longer takes the token (revoked, the app uninstalled).
    #[error("Slack refused the bot token ({0}): the app must be added to Slack again")]
    Revoked(String),
    /// Slack answered `ok: false`.
    #[error("Slack's `{method}` answered {error}")]
    Refused { method: String, error: String },
    /// Still rate limited after waiting.
    #[error("Slack kept rate limiting `{0}`")]
    RateLimited(String),
    /// No answer (down, unreachable, an answer that is not JSON).
    #[error("Slack could not be reached: {0}")]
    Unreachable(String),
}

impl WebApiError {
    /// Whether the call may succeed later as it is (Slack down or busy), so that what was to
    /// be posted is kept and posted then.
    pub fn is_transient(&self) -> bool {
        match self {
            WebApiError::RateLimited(_) | WebApiError::Unreachable(_) => true,
            WebApiError::Refused { error, .. } => PASSING.contains(&error.as_str()),
            WebApiError::Revoked(_) => false,
        }
    }
}

/// The errors Slack answers with `ok: false` when the fault is its own and passes.
const PASSING: &[&str] =
    &["internal_error", "fatal_error", "service_unavailable", "request_timeout"];

/// The most channels [`WebApi::bot_channels`] lists.
pub const MOST_CHANNELS: usize = 1_000;

/// The most pages [`WebApi::bot_channels`] reads (a cursor that never ends stops there).
pub const MOST_PAGES: usize = 10;

/// A channel the bot is in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Channel {
    pub id: String,
    pub name: String,
}

/// Who the bot is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotIdentity {
    pub user_id: String,
    pub team_id: String,
}

/// What an install by OAuth gives: the bot's token, and whose workspace it is.
#[derive(Clone, PartialEq, Eq)]
pub struct Installed {
    pub bot_token: String,
    pub team_id: String,
    pub team_name: String,
    pub bot_user_id: String,
}

impl std::fmt::Debug for Installed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Installed")
            .field("team_id", &self.team_id)
            .field("bot_user_id", &self.bot_user_id)
            .finish_non_exhaustive()
    }
}

impl WebApi {
    /// A client of the Web API at `base` (`None`: Slack's), with `token` (none for
    /// `oauth.v2.access`, which takes the app's own credentials).
    pub fn new(base: Option<&str>, token: Option<String>) -> Result<WebApi, String> {
        let base = base.unwrap_or(SLACK_API).trim_end_matches('/').to_owned();
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Err(format!("`{base}` is not an http(s) address"));
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(CALL_TIME)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("llmtool/", env!("CARGO_PKG_VERSION"), " (Slack)"))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(WebApi { base, token, client })
    }

    /// The same client with another token.
    #[must_use]
    pub fn with_token(&self, token: String) -> WebApi {
        WebApi { token: Some(token), ..self.clone() }
    }

    /// Calls `method` with a JSON body; its answer, once `ok`.
    pub async fn call(&self, method: &str, body: &Value) -> Result<Value, WebApiError> {
        self.send(method, |request| request.json(body)).await
    }

    /// Calls `method` with a form body (the methods that read their arguments from one).
    pub async fn call_form(
        &self,
        method: &str,
        form: &[(&str, &str)],
    ) -> Result<Value, WebApiError> {
        let body = serde_urlencoded::to_string(form).map_err(|e| WebApiError::Refused {
            method: method.to_owned(),
            error: format!("a form that cannot be sent: {e}"),
        })?;
        self.send(method, |request| {
            request
                .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(body.clone())
        })
        .await
    }

    async fn send(
        &self,
        method: &str,
        body: impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> Result<Value, WebApiError> {
        let url = format!("{}/{method}", self.base);
        let unreachable = |e: reqwest::Error| WebApiError::Unreachable(e.without_url().to_string());
        let mut waits = 0;
        loop {
            let mut request = body(self.client.post(&url));
            if let Some(token) = &self.token {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.map_err(unreachable)?;
            if response.status() == reqwest::StatusCode::TOO_MANY_REQUESTS {
                if waits == MOST_WAITS {
                    return Err(WebApiError::RateLimited(method.to_owned()));
                }
                waits += 1;
                tokio::time::sleep(retry_after(&response)).await;
                continue;
            }
            let status = response.status();
            if status.is_server_error() {
                return Err(WebApiError::Unreachable(format!("`{method}` answered {status}")));
            }
            let bytes = response.bytes().await.map_err(unreachable)?;
            if bytes.len() > MOST_ANSWER_BYTES {
                return Err(WebApiError::Unreachable(format!("`{method}` answered too much")));
            }
            let answer: Value = serde_json::from_slice(&bytes).map_err(|_| {
                WebApiError::Unreachable(format!("`{method}` answered {status} without JSON"))
            })?;
            if answer["ok"] == true {
                return Ok(answer);
            }
            let error = answer["error"].as_str().unwrap_or("an error").to_owned();
            return Err(if REVOKED.contains(&error.as_str()) {
                WebApiError::Revoked(error)
            } else {
                WebApiError::Refused { method: method.to_owned(), error }
            });
        }
    }

    /// Posts `message` in `channel` (in the thread of `thread_ts`, if given); the posted
    /// message's time stamp (its id).
    pub async fn post_message(
        &self,
        channel: &str,
        thread_ts: Option<&str>,
        message: &SlackMessage,
    ) -> Result<String, WebApiError> {
        let mut body = json!({
            "channel": channel,
            "text": message.text,
            "blocks": message.blocks,
            "unfurl_links": false,
        });
        if let Some(thread) = thread_ts {
            body["thread_ts"] = json!(thread);
        }
        let answer = self.call("chat.postMessage", &body).await?;
        match answer["ts"].as_str() {
            Some(ts) if !ts.is_empty() => Ok(ts.to_owned()),
            // Without it, no thread could be found again: an answer Slack should not give.
            _ => Err(WebApiError::Unreachable("`chat.postMessage` answered no `ts`".into())),
        }
    }

    /// Who the bot is (`auth.test`): its user id (how its mentions are written, `<@ID>`) and
    /// its workspace's id.
    pub async fn bot_identity(&self) -> Result<BotIdentity, WebApiError> {
        let answer = self.call("auth.test", &json!({})).await?;
        let text = |key: &str| answer[key].as_str().map(str::to_owned);
        match (text("user_id"), text("team_id")) {
            (Some(user_id), Some(team_id)) => Ok(BotIdentity { user_id, team_id }),
            _ => Err(WebApiError::Refused {
                method: "auth.test".into(),
                error: "no user or team id in the answer".into(),
            }),
        }
    }

    /// Shows `text` to `user` alone, in `channel`.
    pub async fn post_ephemeral(
        &self,
        channel: &str,
        user: &str,
        text: &str,
    ) -> Result<(), WebApiError> {
        let body = json!({"channel": channel, "user": user, "text": text});
        self.call("chat.postEphemeral", &body).await.map(drop)
    }

    /// Opens `view` (a modal) for the command or action that gave `trigger_id`.
    pub async fn open_view(&self, trigger_id: &str, view: &Value) -> Result<(), WebApiError> {
        let body = json!({"trigger_id": trigger_id, "view": view});
        self.call("views.open", &body).await.map(drop)
    }

    /// The e-mail of the Slack user `user` (`users.info`), when Slack says it confirmed it and
    /// the user is a person of the workspace `team` (not a bot, not deleted, not someone of
    /// another workspace in a shared channel).
    pub async fn user_email(&self, user: &str, team: &str) -> Result<Option<String>, WebApiError> {
        let answer = self.call_form("users.info", &[("user", user)]).await?;
        let user = &answer["user"];
        let a_person_here = user["is_email_confirmed"] == true
            && user["deleted"] != true
            && user["is_bot"] != true
            && user["team_id"] == team;
        let email = user["profile"]["email"].as_str().filter(|e| e.contains('@'));
        Ok(email.filter(|_| a_person_here).map(str::to_lowercase))
    }

    /// The public channels the bot is in (`users.conversations`, not archived), by name; at
    /// most [`MOST_CHANNELS`], read in at most [`MOST_PAGES`] pages. Private channels are left
    /// out: the members who could connect a conversation there may not be in them.
    pub async fn bot_channels(&self) -> Result<Vec<Channel>, WebApiError> {
        let mut channels = Vec::new();
        let mut cursor = String::new();
        for _ in 0..MOST_PAGES {
            let form = [
                ("types", "public_channel"),
                ("exclude_archived", "true"),
                ("limit", "200"),
                ("cursor", cursor.as_str()),
            ];
            let answer = self.call_form("users.conversations", &form).await?;
            for channel in answer["channels"].as_array().into_iter().flatten() {
                if let (Some(id), Some(name)) = (channel["id"].as_str(), channel["name"].as_str()) {
                    channels.push(Channel { id: id.to_owned(), name: name.to_owned() });
                }
            }
            answer["response_metadata"]["next_cursor"]
                .as_str()
                .unwrap_or("")
                .clone_into(&mut cursor);
            if cursor.is_empty() || channels.len() >= MOST_CHANNELS {
                break;
            }
        }
        channels.truncate(MOST_CHANNELS);
        channels.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(channels)
    }

    /// Trades an OAuth `code` for the bot's token (`oauth.v2.access`).
    pub async fn oauth_access(
        &self,
        client_id: &str,
        client_secret: &str,
        code: &str,
        redirect_uri: &str,
    ) -> Result<Installed, WebApiError> {
        let form = [
            ("client_id", client_id),
            ("client_secret", client_secret),
            ("code", code),
            ("redirect_uri", redirect_uri),
        ];
        let answer = self.call_form("oauth.v2.access", &form).await?;
        let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
        let installed = Installed {
            bot_token: text(&answer["access_token"]),
            team_id: text(&answer["team"]["id"]),
            team_name: text(&answer["team"]["name"]),
            bot_user_id: text(&answer["bot_user_id"]),
        };
        if installed.bot_token.is_empty() {
            return Err(WebApiError::Refused {
                method: "oauth.v2.access".into(),
                error: "no bot token in the answer".into(),
            });
        }
        Ok(installed)
    }

    /// Uploads `bytes` as the file `name` into `channel`'s thread `thread_ts`: an upload
    /// address from `files.getUploadURLExternal`, the bytes sent there, then
    /// `files.completeUploadExternal`. The upload address must be https, or on this client's
    /// own host (a stand-in's).
    pub async fn upload_file(
        &self,
        channel: &str,
        thread_ts: Option<&str>,
        name: &str,
        bytes: Vec<u8>,
    ) -> Result<(), WebApiError> {
        let length = bytes.len().to_string();
        let asked = self
            .call_form("files.getUploadURLExternal", &[("filename", name), ("length", &length)])
            .await?;
        let (Some(upload_url), Some(file_id)) =
            (asked["upload_url"].as_str(), asked["file_id"].as_str())
        else {
            return Err(WebApiError::Refused {
                method: "files.getUploadURLExternal".into(),
                error: "no upload address".into(),
            });
        };
        if !(upload_url.starts_with("https://") || same_origin(upload_url, &self.base)) {
            return Err(WebApiError::Refused {
                method: "files.getUploadURLExternal".into(),
                error: "an upload address that is not https".into(),
            });
        }
        let sent = self
            .client
            .post(upload_url)
            .body(bytes)
            .send()
            .await
            .map_err(|e| WebApiError::Unreachable(e.without_url().to_string()))?;
        if !sent.status().is_success() {
            return Err(WebApiError::Unreachable(format!("the upload answered {}", sent.status())));
        }
        let mut body = json!({"files": [{"id": file_id, "title": name}], "channel_id": channel});
        if let Some(thread) = thread_ts {
            body["thread_ts"] = json!(thread);
        }
        self.call("files.completeUploadExternal", &body).await.map(drop)
    }
}

/// How long a 429 asks to wait (`Retry-After`, in seconds; one when it does not say).
fn retry_after(response: &reqwest::Response) -> Duration {
    let seconds = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok())
        .unwrap_or(1);
    Duration::from_secs(seconds).min(LONGEST_WAIT)
}

/// Whether `url` is on the scheme, host and port of `base`.
fn same_origin(url: &str, base: &str) -> bool {
    let origin = |address: &str| {
        let (scheme, rest) = address.split_once("://")?;
        Some((scheme.to_owned(), rest.split('/').next()?.to_owned()))
    };
    origin(url).is_some() && origin(url) == origin(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upload_address_is_https_or_the_stand_ins_own() {
        assert!(same_origin("http://127.0.0.1:9/upload/1", "http://127.0.0.1:9/api"));
        assert!(!same_origin("http://127.0.0.1:10/upload/1", "http://127.0.0.1:9/api"));
        assert!(!same_origin("http://169.254.169.254/x", "http://127.0.0.1:9/api"));
    }

    #[test]
    fn the_token_never_shows_in_debug() {
        let api =
            WebApi::new(Some("http://127.0.0.1:9/api"), Some("xoxb-secret-1".into())).unwrap();
        assert!(!format!("{api:?}").contains("xoxb"));
        assert!(WebApi::new(Some("ftp://x"), None).is_err());
    }
}
