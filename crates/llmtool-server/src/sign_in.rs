//! How people sign in to the studio besides pasting a token: the studio's public address
//! (for the links of invites and the single sign-on's redirect), the mailer of the invites,
//! and the OpenID provider.

use llmtool_providers::config::SmtpConfig;

use crate::mail::{MailError, Mailer};

/// Why the sign-in setup is refused.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("the public URL `{0}` is not an http or https address without a path")]
    PublicUrl(String),
    #[error(transparent)]
    Mail(#[from] MailError),
}

/// The server's ways of signing in besides pasting a token.
#[derive(Debug, Clone, Default)]
pub struct SignInSetup {
    /// The address people reach the studio at (`https://tools.example.com`), with no `/`
    /// at its end.
    pub public_url: Option<String>,
    /// What sends the invites.
    pub mailer: Option<Mailer>,
}

impl SignInSetup {
    /// The setup of a studio at `public_url` that sends mail through `smtp`.
    pub fn new(
        public_url: Option<String>,
        smtp: Option<&SmtpConfig>,
    ) -> Result<SignInSetup, SetupError> {
        let public_url = public_url.map(|url| check_public_url(&url)).transpose()?;
        let mailer = smtp.map(Mailer::new).transpose()?;
        Ok(SignInSetup { public_url, mailer })
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
    fn a_public_url_is_an_origin() {
        let setup = SignInSetup::new(Some("https://tools.example.com/".into()), None).unwrap();
        assert_eq!(setup.public_url.as_deref(), Some("https://tools.example.com"));
        for bad in
            ["ftp://x.example", "https://x.example/studio", "x.example", "https://x.example/?a=1"]
        {
            assert!(SignInSetup::new(Some(bad.into()), None).is_err(), "{bad}");
        }
    }
}
