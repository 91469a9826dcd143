//! Invites: a one-time, expiring link that signs a member in to the studio, sent to them by
//! mail (`llmtool member invite`, `POST /members/{email}/invite`). The link carries a secret
//! after `#`, which browsers never send to a server, nor in a `Referer`; the page it opens
//! asks for a click before it spends the invite, so that a mail scanner that opens links
//! does not. Only the secret's SHA-256 is kept.

use std::time::Duration;

use llmtool_registry::{Member, Store, StoreError, TOKENS_DOMAIN};
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::{random_hex, token_hash};
use crate::mail::{Mail, MailError, Mailer};

/// How long an invite's link signs in.
pub const INVITE_LIFETIME: Duration = Duration::from_hours(72);

/// The studio's page that an invite's link opens.
const INVITE_PAGE: &str = "/signin/invite";

/// An invite made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Invite {
    /// The member's e-mail.
    pub email: String,
    /// When the link stops signing in (RFC 3339, UTC).
    pub expires_at: String,
    /// The link itself: sent by mail, shown to nobody else.
    #[serde(skip)]
    pub link: String,
    /// Where the link opens the studio (`/signin/invite#SECRET`), when it is handed to the
    /// admin who asked, on a server that sends no mail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Why an invite was not sent.
#[derive(Debug, thiserror::Error)]
pub enum InviteError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Mail(#[from] MailError),
    #[error("`{0}` was made for a token, and no mail reaches it: add the person as a member")]
    NoMailbox(String),
}

/// Makes an invite for the member `email`, whose link opens the studio at `public_url`.
pub async fn make_invite(
    store: &dyn Store,
    public_url: &str,
    email: &str,
) -> Result<(Invite, Member), InviteError> {
    if email.trim().to_lowercase().ends_with(&format!("@{TOKENS_DOMAIN}")) {
        return Err(InviteError::NoMailbox(email.to_owned()));
    }
    let secret = random_hex();
    let expires_at = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::try_from(INVITE_LIFETIME).unwrap_or_default())
        .unwrap_or_else(|_| jiff::Timestamp::now())
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let member = store.create_invite(email, &token_hash(&secret), INVITE_LIFETIME).await?;
    let link = format!("{}{INVITE_PAGE}#{secret}", public_url.trim_end_matches('/'));
    Ok((Invite { email: member.email.clone(), expires_at, link, path: None }, member))
}

/// Makes an invite for the member `email` and sends it to them through `mailer`.
pub async fn send_invite(
    store: &dyn Store,
    mailer: &Mailer,
    public_url: &str,
    email: &str,
) -> Result<Invite, InviteError> {
    let (invite, member) = make_invite(store, public_url, email).await?;
    mailer.send(&invite_mail(&member, &invite, public_url)).await?;
    Ok(invite)
}

/// The message of an invite.
fn invite_mail(member: &Member, invite: &Invite, public_url: &str) -> Mail {
    let text = format!(
        "Hello {name},\n\n\
         you are invited to the tool library at {public_url}, as {role}.\n\n\
         Open this link to sign in (it works once, until {expires} UTC):\n\n\
         {link}\n\n\
         If you did not expect this message, you can ignore it: nothing happens until the link \
         is opened and the button on its page is pressed.\n",
        name = member.name,
        role = member.role.as_str(),
        expires = invite.expires_at.trim_end_matches('Z').replace('T', " "),
        link = invite.link,
        public_url = public_url.trim_end_matches('/'),
    );
    Mail {
        to: member.email.clone(),
        to_name: member.name.clone(),
        subject: "Your sign-in link to the llmtool library".into(),
        text,
    }
}
