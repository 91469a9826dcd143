//! Tokens for [`SqlStore`]: made (by the operator, a member for themself, or a terminal's
//! device grant), listed, revoked and looked up, each never above its member's role, with an
//! expiry and the time it was last used; and the device grants `llmtool login` waits on.

use std::time::Duration;

use crate::audit;
use crate::db::{Tx, statement};
use crate::model::Role;
use crate::people::{TOKENS_DOMAIN, email_key};
use crate::rows::{self, TokenRow};
use crate::sql_store::{HolderRow, SqlStore, WORKSPACE};
use crate::store::{StoreError, ago, expiry, now};
use crate::tokens::{
    DEFAULT_TOKEN_DAYS, DEVICE_GRANT_MINUTES, DeviceGrant, MAX_TOKEN_DAYS, MAX_TOKENS_PER_MEMBER,
    MAX_WAITING_GRANTS, NewToken, Redeemed, TokenInfo, TokensOf,
};

/// A token's last use is written at most this often, so that a busy token does not make
/// every request a write.
const LAST_USE_STEP: Duration = Duration::from_mins(1);

/// A token's columns, in [`TokenRow`]'s order.
const TOKEN_COLUMNS: &str = "name, role, created_at, revoked_at, member, expires_at, last_used_at";

/// A device grant's columns, in [`DeviceGrant`]'s order.
const GRANT_COLUMNS: &str = "user_code, client, created_at, expires_at, state";

type GrantRow = (String, String, String, String, String);

/// A live token's row: its holder's ([`HolderRow`]) and when it was last used.
type LiveRow =
    (String, String, String, String, String, Option<String>, Option<String>, Option<String>);

/// A device grant's state, who answered, when it expires, and the terminal's name.
type GrantState = (String, Option<String>, String, String);

impl SqlStore {
    pub(crate) async fn issue(&self, token: &NewToken<'_>) -> Result<TokenInfo, StoreError> {
        let mut tx = self.db.begin_write().await?;
        tx.lock_people().await?;
        let member = match token.member {
            Some(email) => member_for(&mut tx, email, token.role).await?,
            None => own_member(&mut tx, token.name, token.role).await?,
        };
        let info = self.insert_token(&mut tx, token, &member, serde_json::json!({})).await?;
        tx.commit().await?;
        Ok(info)
    }

    pub(crate) async fn listed_tokens(
        &self,
        of: TokensOf<'_>,
    ) -> Result<Vec<TokenInfo>, StoreError> {
        let order = "ORDER BY name COLLATE \"C\"";
        let list = match of {
            TokensOf::Everyone => statement(format!("SELECT {TOKEN_COLUMNS} FROM tokens {order}")),
            TokensOf::Member(email) => {
                statement(format!("SELECT {TOKEN_COLUMNS} FROM tokens WHERE member = $1 {order}"))
                    .bind(email_key(email)?)
            }
        };
        let found: Vec<TokenRow> = self.db.all(list).await?;
        Ok(found.into_iter().map(rows::token_info).collect())
    }

    pub(crate) async fn revoke_named(
        &self,
        name: &str,
        of: TokensOf<'_>,
    ) -> Result<(), StoreError> {
        let revoke = "UPDATE tokens SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL";
        let revoke = match of {
            TokensOf::Everyone => statement(revoke).bind(now()).bind(name),
            TokensOf::Member(email) => statement(format!("{revoke} AND member = $3"))
                .bind(now())
                .bind(name)
                .bind(email_key(email)?),
        };
        let mut tx = self.db.begin_write().await?;
        if tx.execute(revoke).await? == 0 {
            return Err(StoreError::NoSuchToken(name.to_owned()));
        }
        self.record(&mut tx, audit::Change::new("token.revoke", name)).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The live token whose hash is `token_hash`, as a holder's row; its use is written down
    /// when the last one written is older than [`LAST_USE_STEP`].
    pub(crate) async fn live_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<HolderRow>, StoreError> {
        let sql = format!(
            "SELECT t.name, t.role, m.role, m.email, COALESCE(m.id, ''), {WORKSPACE},
                    t.last_used_at
               FROM tokens t JOIN members m ON m.email = t.member
             WHERE t.token_hash = $1 AND t.revoked_at IS NULL
               AND (t.expires_at IS NULL OR t.expires_at > $2)"
        );
        let at = now();
        let found: Option<LiveRow> =
            self.db.optional(statement(sql).bind(token_hash).bind(&at)).await?;
        let Some((name, role, member_role, email, id, built_ins, snapshots, used)) = found else {
            return Ok(None);
        };
        if used.is_none_or(|used| used < ago(LAST_USE_STEP)) {
            let touch = statement("UPDATE tokens SET last_used_at = $1 WHERE name = $2");
            self.db.execute(touch.bind(&at).bind(&name)).await?;
        }
        Ok(Some((name, role, member_role, email, id, built_ins, snapshots)))
    }

    pub(crate) async fn open_grant(
        &self,
        device_hash: &str,
        user_code: &str,
        client: &str,
    ) -> Result<DeviceGrant, StoreError> {
        let at = now();
        let mut tx = self.db.begin_write().await?;
        tx.execute(statement("DELETE FROM device_grants WHERE expires_at <= $1").bind(&at)).await?;
        let count = statement("SELECT COUNT(*) FROM device_grants");
        let (waiting,): (i64,) = tx.optional(count).await?.unwrap_or((0,));
        if waiting >= i64::from(MAX_WAITING_GRANTS) {
            return Err(StoreError::GrantsFull);
        }
        let expires_at = expiry(Duration::from_secs(u64::from(DEVICE_GRANT_MINUTES) * 60));
        let open = statement(
            "INSERT INTO device_grants (device_hash, user_code, client, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        );
        let open = open.bind(device_hash).bind(user_code).bind(client).bind(&at);
        if tx.execute(open.bind(&expires_at)).await? == 0 {
            return Err(StoreError::GrantCodeTaken);
        }
        tx.commit().await?;
        let grant = (user_code.to_owned(), client.to_owned(), at, expires_at, "waiting".to_owned());
        Ok(device_grant(grant))
    }

    pub(crate) async fn grant(&self, user_code: &str) -> Result<Option<DeviceGrant>, StoreError> {
        let find = statement(format!(
            "SELECT {GRANT_COLUMNS} FROM device_grants WHERE user_code = $1 AND expires_at > $2"
        ));
        let found: Option<GrantRow> = self.db.optional(find.bind(user_code).bind(now())).await?;
        Ok(found.map(device_grant))
    }

    pub(crate) async fn answer_grant(
        &self,
        user_code: &str,
        member: &str,
        allow: bool,
    ) -> Result<(), StoreError> {
        let state = if allow { "allowed" } else { "denied" };
        let answer = statement(
            "UPDATE device_grants SET state = $1, answered_by = $2
             WHERE user_code = $3 AND state = 'waiting' AND expires_at > $4",
        );
        let answer = answer.bind(state).bind(email_key(member)?).bind(user_code).bind(now());
        let mut tx = self.db.begin_write().await?;
        if tx.execute(answer).await? == 0 {
            return Err(StoreError::NoSuchGrant(user_code.to_owned()));
        }
        let change = audit::Change::new("device.answer", user_code).after(serde_json::json!({
            "allowed": allow,
        }));
        self.record(&mut tx, change).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn redeem_grant(
        &self,
        device_hash: &str,
        name: &str,
        token_hash: &str,
    ) -> Result<Redeemed, StoreError> {
        let mut tx = self.db.begin_write().await?;
        tx.lock_people().await?;
        let find = statement(
            "SELECT state, answered_by, expires_at, client FROM device_grants WHERE device_hash = $1",
        );
        let Some((state, answered_by, expires_at, client)) =
            tx.optional::<GrantState>(find.bind(device_hash)).await?
        else {
            return Ok(Redeemed::Expired);
        };
        let waiting = state == "waiting" && expires_at > now();
        if waiting {
            return Ok(Redeemed::Waiting);
        }
        let forget = statement("DELETE FROM device_grants WHERE device_hash = $1");
        tx.execute(forget.bind(device_hash)).await?;
        let member_role = match (state.as_str(), &answered_by) {
            ("allowed", Some(email)) if expires_at > now() => {
                let role = statement("SELECT role FROM members WHERE email = $1").bind(email);
                tx.optional::<(String,)>(role).await?.and_then(|(role,)| Role::parse(&role))
            }
            _ => None,
        };
        let (Some(role), Some(member)) = (member_role, answered_by) else {
            tx.commit().await?;
            return Ok(if state == "denied" { Redeemed::Denied } else { Redeemed::Expired });
        };
        let token =
            NewToken { name, role, token_hash, member: None, days: Some(DEFAULT_TOKEN_DAYS) };
        let how = serde_json::json!({"via": "login", "client": client});
        let info = self.insert_token(&mut tx, &token, &member, how).await?;
        tx.commit().await?;
        Ok(Redeemed::Issued(info))
    }

    /// Keeps `token` for `member` (an e-mail as stored), under the member's cap on live
    /// tokens, and records it in the audit log with `how` it was made.
    async fn insert_token(
        &self,
        tx: &mut Tx,
        token: &NewToken<'_>,
        member: &str,
        how: serde_json::Value,
    ) -> Result<TokenInfo, StoreError> {
        if let Some(days) = token.days
            && !(1..=MAX_TOKEN_DAYS).contains(&days)
        {
            return Err(StoreError::BadTokenDays(days));
        }
        let created_at = now();
        let live = statement(
            "SELECT COUNT(*) FROM tokens WHERE member = $1 AND revoked_at IS NULL
               AND (expires_at IS NULL OR expires_at > $2)",
        );
        let (live,): (i64,) =
            tx.optional(live.bind(member).bind(&created_at)).await?.unwrap_or((0,));
        if live >= i64::from(MAX_TOKENS_PER_MEMBER) {
            return Err(StoreError::TokensFull(member.to_owned()));
        }
        let expires_at =
            token.days.map(|days| expiry(Duration::from_secs(u64::from(days) * 24 * 3600)));
        let create = statement(
            "INSERT INTO tokens (name, role, token_hash, created_at, member, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
        );
        let create = create.bind(token.name).bind(token.role.as_str()).bind(token.token_hash);
        let create = create.bind(&created_at).bind(member).bind(&expires_at);
        if tx.execute(create).await? == 0 {
            return Err(StoreError::TokenExists(token.name.to_owned()));
        }
        let mut after =
            serde_json::json!({"role": token.role, "member": member, "expires_at": expires_at});
        if let (Some(after), serde_json::Value::Object(how)) = (after.as_object_mut(), how) {
            after.extend(how);
        }
        self.record(tx, audit::Change::new("token.create", token.name).after(after)).await?;
        Ok(TokenInfo {
            name: token.name.to_owned(),
            role: token.role,
            member: Some(member.to_owned()),
            created_at,
            expires_at,
            last_used_at: None,
            revoked: false,
        })
    }
}

/// The member `email` names, whose role a token of `role` may not pass.
async fn member_for(tx: &mut Tx, email: &str, role: Role) -> Result<String, StoreError> {
    let key = email_key(email)?;
    let found = statement("SELECT role FROM members WHERE email = $1").bind(&key);
    let Some((theirs,)) = tx.optional::<(String,)>(found).await? else {
        return Err(StoreError::NoSuchMember(email.to_owned()));
    };
    if Role::parse(&theirs).is_none_or(|theirs| theirs < role) {
        return Err(StoreError::TokenAboveMember { member: key, role: role.as_str() });
    }
    Ok(key)
}

/// The member made for a token given to nobody in particular: `NAME@tokens.invalid`, with the
/// token's role.
async fn own_member(tx: &mut Tx, name: &str, role: Role) -> Result<String, StoreError> {
    let key = format!("{}@{TOKENS_DOMAIN}", name.to_lowercase());
    // The member is the token's own: a token whose name differs only in case would share it
    // (its conversations, its spend), so it is refused.
    let holder = statement("SELECT name FROM tokens WHERE member = $1").bind(&key);
    if let Some((other,)) = tx.optional::<(String,)>(holder).await? {
        return Err(if other == name {
            StoreError::TokenExists(other)
        } else {
            StoreError::TokenNameClash { name: name.to_owned(), other }
        });
    }
    let made = statement(
        "INSERT INTO members (email, name, role, created_at, id)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (email) DO NOTHING",
    );
    let made = made.bind(&key).bind(name).bind(role.as_str()).bind(now());
    tx.execute(made.bind(crate::sql_people::new_member_id())).await?;
    Ok(key)
}

fn device_grant(row: GrantRow) -> DeviceGrant {
    let (user_code, client, created_at, expires_at, state) = row;
    DeviceGrant { user_code, client, created_at, expires_at, state }
}
