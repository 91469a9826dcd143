//! The Slack app's manifest, made from the server's public address: its bot user, the
//! `/llmtool` command, the events it listens to, its interactivity URL, the OAuth redirect
//! and the scopes it needs. An admin pastes it into Slack's "Create an app from a manifest".

use serde_json::{Value, json};

/// Where Slack posts events, commands and interactions, and where OAuth returns, under the
/// server's public address.
pub const EVENTS_PATH: &str = "/slack/events";
pub const COMMANDS_PATH: &str = "/slack/commands";
pub const INTERACTIVITY_PATH: &str = "/slack/interactivity";
pub const OAUTH_PATH: &str = "/slack/oauth/callback";

/// The bot's scopes: to be mentioned and answer, to take the command, to list the public
/// channels it is in (where a conversation may be connected), to know a user's verified
/// e-mail (how a Slack user is mapped to a member), and to upload pictures.
pub const BOT_SCOPES: &[&str] = &[
    "app_mentions:read",
    "channels:read",
    "chat:write",
    "commands",
    "files:write",
    "users:read",
    "users:read.email",
];

/// The manifest of the app served at `public_url` (`https://tools.example.com`), named `name`.
/// A URL that is not http(s) is refused; Slack itself refuses plain http, so it is allowed
/// only for a test's stand-in.
pub fn manifest(public_url: &str, name: &str) -> Result<Value, String> {
    let base = public_url.trim().trim_end_matches('/');
    let scheme_ok = base.starts_with("https://") || base.starts_with("http://");
    if !scheme_ok || base.len() <= "https://".len() {
        return Err(format!(
            "`{public_url}` is not the server's public address (https://HOST, as Slack reaches it)"
        ));
    }
    let at = |path: &str| format!("{base}{path}");
    Ok(json!({
        "display_information": {
            "name": name,
            "description": "Runs your team's tools from llmtool's library, and keeps conversations in step with their channels.",
        },
        "features": {
            "bot_user": { "display_name": name, "always_online": true },
            "slash_commands": [{
                "command": "/llmtool",
                "url": at(COMMANDS_PATH),
                "description": "List the tools you can run, or run one",
                "usage_hint": "[tool]",
                "should_escape": false,
            }],
        },
        "oauth_config": {
            "redirect_urls": [at(OAUTH_PATH)],
            "scopes": { "bot": BOT_SCOPES },
        },
        "settings": {
            "event_subscriptions": {
                "request_url": at(EVENTS_PATH),
                "bot_events": ["app_mention", "app_uninstalled", "tokens_revoked"],
            },
            "interactivity": { "is_enabled": true, "request_url": at(INTERACTIVITY_PATH) },
            "org_deploy_enabled": false,
            "socket_mode_enabled": false,
            "token_rotation_enabled": false,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_url_is_under_the_public_address() {
        let made = manifest("https://tools.example.com/", "llmtool").unwrap();
        assert_eq!(
            made["settings"]["event_subscriptions"]["request_url"],
            "https://tools.example.com/slack/events"
        );
        assert_eq!(
            made["features"]["slash_commands"][0]["url"],
            "https://tools.example.com/slack/commands"
        );
        assert_eq!(
            made["settings"]["interactivity"]["request_url"],
            "https://tools.example.com/slack/interactivity"
        );
        assert_eq!(
            made["oauth_config"]["redirect_urls"][0],
            "https://tools.example.com/slack/oauth/callback"
        );
        assert!(manifest("tools.example.com", "llmtool").is_err());
        assert!(manifest("https://", "llmtool").is_err());
    }
}
