//! Mail from the library: the invites, sent through the SMTP server of the config's
//! `[server.smtp]` table (`lettre`), over TLS or STARTTLS and with authentication where the
//! table says so. Plain text is allowed only to a server on this machine.

use std::time::Duration;

use lettre::message::{Mailbox, header::ContentType};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport as _, Message, Tokio1Executor};
use llmtool_config::{SmtpConfig, SmtpSecurity, read_secret};

/// How long one message may take to be handed over.
const SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// Why mail could not be set up or sent.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("the `[server.smtp]` table: {0}")]
    Config(String),
    #[error("the SMTP server refused or failed: {0}")]
    Send(String),
}

/// One message: to whom, its subject and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    pub to: String,
    pub to_name: String,
    pub subject: String,
    pub text: String,
}

/// A connection setup to the SMTP server, and the sender.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The transport holds the password: only the sender is shown.
        f.debug_struct("Mailer").field("from", &self.from.to_string()).finish_non_exhaustive()
    }
}

impl Mailer {
    /// The mailer that `config` describes (its password read now, from its file or variable).
    pub fn new(config: &SmtpConfig) -> Result<Mailer, MailError> {
        // rustls needs a process-wide crypto provider; installing it twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let bad = |message: String| MailError::Config(message);
        let from: Mailbox =
            config.from.parse().map_err(|e| bad(format!("`from` = `{}`: {e}", config.from)))?;
        let tls = || -> Result<TlsParameters, MailError> {
            let mut parameters = TlsParameters::builder(config.host.clone());
            if let Some(file) = &config.ca_file {
                let pem =
                    std::fs::read(file).map_err(|e| bad(format!("`ca_file` `{file}`: {e}")))?;
                let certificate = Certificate::from_pem(&pem)
                    .map_err(|e| bad(format!("`ca_file` `{file}`: {e}")))?;
                parameters = parameters.add_root_certificate(certificate);
            }
            parameters.build_rustls().map_err(|e| bad(e.to_string()))
        };
        let (tls, port) = match config.security {
            SmtpSecurity::Tls => (Tls::Wrapper(tls()?), 465),
            SmtpSecurity::Starttls => (Tls::Required(tls()?), 587),
            SmtpSecurity::None => {
                if !is_this_machine(&config.host) {
                    return Err(bad(format!(
                        "`security = \"none\"` would send passwords and sign-in links in plain text to `{}`: use `tls` or `starttls`, or a server on this machine",
                        config.host
                    )));
                }
                (Tls::None, 25)
            }
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&config.host)
            .port(config.port.unwrap_or(port))
            .tls(tls)
            .timeout(Some(SEND_TIMEOUT));
        let password = read_secret(
            config.password_env.as_deref(),
            config.password_file.as_deref(),
            "SMTP password",
        )
        .map_err(|e| bad(e.0))?;
        match (&config.username, password) {
            (Some(user), Some(password)) => {
                builder = builder.credentials(Credentials::new(user.clone(), password));
            }
            (Some(_), None) => {
                return Err(bad(
                    "`username` is given without `password_env` or `password_file`".into()
                ));
            }
            (None, Some(_)) => return Err(bad("a password is given without `username`".into())),
            (None, None) => {}
        }
        Ok(Mailer { transport: builder.build(), from })
    }

    /// Sends `mail`.
    pub async fn send(&self, mail: &Mail) -> Result<(), MailError> {
        let to = Mailbox::new(
            Some(mail.to_name.clone()),
            mail.to.parse().map_err(|e| MailError::Send(format!("`{}`: {e}", mail.to)))?,
        );
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(&mail.subject)
            .header(ContentType::TEXT_PLAIN)
            .body(mail.text.clone())
            .map_err(|e| MailError::Send(e.to_string()))?;
        self.transport.send(message).await.map_err(|e| MailError::Send(e.to_string()))?;
        Ok(())
    }
}

/// Whether `host` names this machine.
fn is_this_machine(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|address| address.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn smtp(security: SmtpSecurity, host: &str) -> SmtpConfig {
        SmtpConfig {
            host: host.into(),
            port: None,
            security,
            username: None,
            password_env: None,
            password_file: None,
            from: "llmtool <tools@example.com>".into(),
            ca_file: None,
        }
    }

    #[test]
    fn plain_text_goes_only_to_this_machine() {
        assert!(Mailer::new(&smtp(SmtpSecurity::None, "127.0.0.1")).is_ok());
        let refused = Mailer::new(&smtp(SmtpSecurity::None, "mail.example.com")).unwrap_err();
        assert!(refused.to_string().contains("plain text"), "{refused}");
        assert!(Mailer::new(&smtp(SmtpSecurity::Starttls, "mail.example.com")).is_ok());
    }

    #[test]
    fn a_user_needs_a_password_and_a_sender_an_address() {
        let mut config = smtp(SmtpSecurity::Tls, "mail.example.com");
        config.username = Some("tools".into());
        assert!(Mailer::new(&config).unwrap_err().to_string().contains("without `password_env`"));
        let mut config = smtp(SmtpSecurity::Tls, "mail.example.com");
        config.from = "not an address".into();
        assert!(Mailer::new(&config).unwrap_err().to_string().contains("`from`"));
    }
}
