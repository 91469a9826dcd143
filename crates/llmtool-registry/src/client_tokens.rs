//! [`LibraryClient`]'s calls for tokens: the device flow `llmtool login` signs in by, and a
//! member's own tokens (listed, made, revoked).

use reqwest::Method;

use crate::client::{ClientError, LibraryClient};
use crate::tokens::TokenInfo;
use crate::wire::{GrantOpened, MadeToken};

/// Where a device grant stands when the terminal asks.
#[derive(Debug)]
pub enum GrantAnswer {
    /// Nobody has answered yet: ask again after the interval.
    Waiting,
    /// Allowed: the new token.
    Allowed(Box<MadeToken>),
    /// Denied, expired or used: the library's words.
    Refused(String),
}

impl LibraryClient {
    /// Asks the library for a device grant for the terminal called `client`.
    pub async fn open_device_grant(&self, client: &str) -> Result<GrantOpened, ClientError> {
        let body = serde_json::json!({ "client": client });
        self.send(self.request(Method::POST, "/device").json(&body)).await
    }

    /// Asks whether the grant of `device_code` was answered; once allowed, its token.
    pub async fn redeem_device_grant(&self, device_code: &str) -> Result<GrantAnswer, ClientError> {
        let body = serde_json::json!({ "device_code": device_code });
        match self.send::<MadeToken>(self.request(Method::POST, "/device/token").json(&body)).await
        {
            Ok(made) => Ok(GrantAnswer::Allowed(Box::new(made))),
            Err(ClientError::Refused { status: 400, title, .. })
                if title == "authorization_pending" =>
            {
                Ok(GrantAnswer::Waiting)
            }
            Err(ClientError::Refused { status: 400, detail, .. }) => {
                Ok(GrantAnswer::Refused(detail))
            }
            Err(other) => Err(other),
        }
    }

    /// The caller's own tokens, or everyone's (`all`, for an admin).
    pub async fn tokens(&self, all: bool) -> Result<Vec<TokenInfo>, ClientError> {
        let path = if all { "/tokens?all=true" } else { "/tokens" };
        self.send(self.request(Method::GET, path)).await
    }

    /// Makes a token of the caller's called `name`, for `days` (the library's default: 90).
    pub async fn make_token(
        &self,
        name: &str,
        days: Option<u32>,
    ) -> Result<MadeToken, ClientError> {
        let body = serde_json::json!({ "name": name, "days": days });
        self.send(self.request(Method::POST, "/tokens").json(&body)).await
    }

    /// Revokes the token `name` (the caller's own; anyone's for an admin).
    pub async fn revoke_token(&self, name: &str) -> Result<(), ClientError> {
        let path = format!("/tokens/{}", urlencoding(name));
        self.send::<serde_json::Value>(self.request(Method::DELETE, &path)).await.map(drop)
    }
}

/// A token's name as a path segment (names are letters, digits, `.`, `_` and `-`; anything
/// else is escaped, so that an odd name from an old library cannot reach another route).
fn urlencoding(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-' => {
                char::from(b).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}
