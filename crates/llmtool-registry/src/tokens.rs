//! Personal tokens and the device flow that hands one to a terminal: what a token is when
//! listed, what making one takes, and the grants `llmtool login` waits on.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::model::Role;

/// How long a token made on the Tokens page or by `llmtool login` lives unless its maker says.
pub const DEFAULT_TOKEN_DAYS: u32 = 90;
/// The longest a member may ask a token to live.
pub const MAX_TOKEN_DAYS: u32 = 366;
/// The most live tokens a member may hold at once.
pub const MAX_TOKENS_PER_MEMBER: u32 = 100;
/// How long a terminal's device grant waits for a member to answer it.
pub const DEVICE_GRANT_MINUTES: u32 = 10;
/// The most device grants waiting at once, over the whole library: asking for one needs no
/// sign-in, so their number is bounded.
pub const MAX_WAITING_GRANTS: u32 = 200;

/// A token as listed: never the token itself, which is shown once and stored hashed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TokenInfo {
    pub name: String,
    pub role: Role,
    /// The e-mail of the member the token belongs to.
    pub member: Option<String>,
    pub created_at: String,
    /// When it stops working; `null`: never (the operator's tokens, made on the command line).
    #[serde(default)]
    pub expires_at: Option<String>,
    /// When it was last used, to the minute; `null`: never.
    #[serde(default)]
    pub last_used_at: Option<String>,
    pub revoked: bool,
}

/// A token to make: its name (unique in the library), its role, the SHA-256 of the token, the
/// member it belongs to (none: a member made for it, `NAME@tokens.invalid`), and how many days
/// it lives (none: until revoked).
#[derive(Debug, Clone, Copy)]
pub struct NewToken<'a> {
    pub name: &'a str,
    pub role: Role,
    pub token_hash: &'a str,
    pub member: Option<&'a str>,
    pub days: Option<u32>,
}

/// Whose tokens a listing or a revocation reaches: everyone's (an admin, the operator's
/// command line) or one member's (their e-mail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokensOf<'a> {
    Everyone,
    Member(&'a str),
}

/// A terminal's request to sign in, as the member asked to answer it sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DeviceGrant {
    /// The code the terminal shows, `XXXX-XXXX`.
    pub user_code: String,
    /// What the terminal calls itself (its host name).
    pub client: String,
    pub created_at: String,
    pub expires_at: String,
    /// `waiting`, `allowed` or `denied`.
    pub state: String,
}

/// What a terminal holding a device code gets when it asks again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redeemed {
    /// Nobody has answered yet.
    Waiting,
    /// The member said no; the grant is gone.
    Denied,
    /// No such grant, or it waited too long (gone too).
    Expired,
    /// The member allowed it: a new token of theirs, made now (the grant is gone).
    Issued(TokenInfo),
}
