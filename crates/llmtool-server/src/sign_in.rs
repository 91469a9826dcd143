//! How people sign in to the studio besides pasting a token: the studio's public address
//! (for the links of invites and the single sign-on's redirect), the mailer of the invites,
//! and the OpenID provider.

use std::sync::Arc;

use llmtool_config::ServerConfig;

use crate::mail::{MailError, Mailer};
use crate::sso::Sso;

/// Why the sign-in setup is refused.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("the public URL `{0}` is not an http or https address without a path")]
    PublicUrl(String),
    #[error(transparent)]
    Mail(#[from] MailError),
    #[error("the `[server.sso]` table: {0}")]
    Sso(String),
}

/// The server's ways of signing in besides pasting a token.
#[derive(Debug, Clone, Default)]
pub struct SignInSetup {
    /// The address people reach the studio at (`https://tools.example.com`), with no `/`
    /// at its end.
    pub public_url: Option<String>,
    /// What sends the invites.
    pub mailer: Option<Mailer>,
    /// The OpenID provider that people sign in with.
    pub sso: Option<Arc<Sso>>,
}

impl SignInSetup {
    /// The setup of a studio at `public_url` (else the config's) as the config's `[server]`
    /// table says; single sign-on needs the public URL, for its redirect.
    pub fn new(
        public_url: Option<String>,
        config: &ServerConfig,
    ) -> Result<SignInSetup, SetupError> {
        let public_url = public_url.or_else(|| config.public_url.clone());
        let public_url = public_url.map(|url| check_public_url(&url)).transpose()?;
        let mailer = config.smtp.as_ref().map(Mailer::new).transpose()?;
        let sso = match (&config.sso, &public_url) {
            (None, _) => None,
            (Some(sso), Some(url)) => Some(Arc::new(Sso::new(sso, url)?)),
            (Some(_), None) => {
                return Err(SetupError::Sso(
                    "single sign-on needs the studio's address for its redirect: `public_url` in `[server]`, or `--public-url`".into(),
                ));
            }
        };
        Ok(SignInSetup { public_url, mailer, sso })
    }
}

/// `url` as the studio's public address: http or https, a host, no query or fragment, and a
/// path of `/` at most (the studio is served at the root); without its final `/`.
fn check_public_url(url: &str) -> Result<String, SetupError> {
    let parsed = url::Url::parse(url).map_err(|_| SetupError::PublicUrl(url.to_owned()))?;
    let good = matches!(parsed.scheme(), "http" | "https")
        && parsed.host().is_some()
        && parsed.path() == "/"
        && parsed.query().is_none()
        && parsed.fragment().is_none()
        && parsed.username().is_empty();
    if !good {
        return Err(SetupError::PublicUrl(url.to_owned()));
    }
    Ok(parsed.as_str().trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_sign_on_needs_the_public_url() {
        let config = ServerConfig {
            sso: Some(llmtool_config::SsoConfig {
                issuer: "https://login.example.com".into(),
                client_id: "llmtool".into(),
                client_secret_env: None,
                client_secret_file: None,
                allowed_domains: vec![],
                default_role: None,
                ca_file: None,
                trust_unverified_email: false,
            }),
            ..ServerConfig::default()
        };
        let refused = SignInSetup::new(None, &config).unwrap_err();
        assert!(refused.to_string().contains("public_url"), "{refused}");
        assert!(SignInSetup::new(Some("https://tools.example.com".into()), &config).is_ok());
    }

    #[test]
    fn a_public_url_is_an_origin() {
        let none = ServerConfig::default();
        let setup = SignInSetup::new(Some("https://tools.example.com/".into()), &none).unwrap();
        assert_eq!(setup.public_url.as_deref(), Some("https://tools.example.com"));
        for bad in
            ["ftp://x.example", "https://x.example/studio", "x.example", "https://x.example/?a=1"]
        {
            assert!(SignInSetup::new(Some(bad.into()), &none).is_err(), "{bad}");
        }
    }
}
