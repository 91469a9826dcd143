//! [`People`] for [`SqlStore`]: members and teams, written once over `Db` as the rest of the
//! library is. Changes to people take turns ([`crate::db::Tx::lock_people`]), so that the
//! library always keeps an owner.

use async_trait::async_trait;

use crate::audit;
use crate::changes::SETTINGS;
use crate::control::Scope;
use crate::db::{Tx, statement};
use crate::model::Role;
use crate::people::{
    Member, MemberEdit, NewMember, People, SignIn, Team, Workspace, WorkspaceChange,
    check_member_name, check_team, email_key,
};
use crate::sql_store::{SqlStore, WORKSPACE};
use crate::store::{InviteProblem, StoreError, expiry, now};

/// A member's columns: e-mail, name, role, created at.
type MemberRow = (String, String, String, String);

const MEMBER_COLUMNS: &str = "email, name, role, created_at";

#[async_trait]
impl People for SqlStore {
    async fn add_members(&self, members: &[NewMember]) -> Result<(), StoreError> {
        // Every member is checked before any is written.
        let mut checked: Vec<(String, String, Role, Vec<String>)> = Vec::new();
        for member in members {
            let email = email_key(&member.email)?;
            if checked.iter().any(|(other, ..)| *other == email) {
                return Err(StoreError::MemberExists(email));
            }
            let name = check_member_name(&member.name)?;
            checked.push((email, name, member.role, teams_of(&member.teams)?));
        }
        let mut tx = self.db.begin_write().await?;
        tx.lock_people().await?;
        let now = now();
        for (email, name, role, teams) in &checked {
            let add = statement(
                "INSERT INTO members (email, name, role, created_at, id)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (email) DO NOTHING",
            );
            let add = add.bind(email).bind(name).bind(role.as_str()).bind(&now);
            if tx.execute(add.bind(new_member_id())).await? == 0 {
                return Err(StoreError::MemberExists(email.clone()));
            }
            set_teams(&mut tx, email, teams).await?;
            let after = serde_json::json!({"name": name, "role": role, "teams": teams});
            self.record(&mut tx, audit::Change::new("member.add", email).after(after)).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn members(&self) -> Result<Vec<Member>, StoreError> {
        let sql = format!("SELECT {MEMBER_COLUMNS} FROM members ORDER BY email COLLATE \"C\"");
        let rows: Vec<MemberRow> = self.db.all(statement(sql)).await?;
        let sql = "SELECT email, team FROM member_teams ORDER BY email, team COLLATE \"C\"";
        let places: Vec<(String, String)> = self.db.all(statement(sql)).await?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let teams = places.iter().filter(|(email, _)| *email == row.0);
                let teams = teams.map(|(_, team)| team.clone()).collect();
                member(row, teams)
            })
            .collect())
    }

    async fn member(&self, email: &str) -> Result<Member, StoreError> {
        let key = email_key(email)?;
        let sql = format!("SELECT {MEMBER_COLUMNS} FROM members WHERE email = $1");
        let Some(row) = self.db.optional::<MemberRow>(statement(sql).bind(&key)).await? else {
            return Err(StoreError::NoSuchMember(email.to_owned()));
        };
        let sql = "SELECT team FROM member_teams WHERE email = $1 ORDER BY team COLLATE \"C\"";
        let teams: Vec<(String,)> = self.db.all(statement(sql).bind(&key)).await?;
        Ok(member(row, teams.into_iter().map(|(team,)| team).collect()))
    }

    async fn member_id(&self, email: &str) -> Result<Option<String>, StoreError> {
        let key = email_key(email)?;
        let sql = statement("SELECT COALESCE(id, '') FROM members WHERE email = $1").bind(&key);
        let found: Option<(String,)> = self.db.optional(sql).await?;
        Ok(found.map(|(id,)| id).filter(|id| !id.is_empty()))
    }

    async fn edit_member(&self, email: &str, edit: &MemberEdit) -> Result<Member, StoreError> {
        let key = email_key(email)?;
        let name = edit.name.as_deref().map(check_member_name).transpose()?;
        let teams = edit.teams.as_deref().map(teams_of).transpose()?;
        let mut tx = self.db.begin_write().await?;
        tx.lock_people().await?;
        let before = member_in(&mut tx, &key).await?;
        if before.role == Role::Owner && edit.role.is_some_and(|new| new != Role::Owner) {
            keep_an_owner(&mut tx, &key).await?;
        }
        let change = statement(
            "UPDATE members SET name = COALESCE($1, name), role = COALESCE($2, role)
             WHERE email = $3",
        );
        let new_role = edit.role.map(Role::as_str);
        tx.execute(change.bind(name).bind(new_role).bind(&key)).await?;
        if let Some(teams) = teams {
            set_teams(&mut tx, &key, &teams).await?;
        }
        let after = member_in(&mut tx, &key).await?;
        if after != before {
            let change = audit::Change::new("member.edit", &key);
            let change = change.before(shown_member(&before)).after(shown_member(&after));
            self.record(&mut tx, change).await?;
        }
        tx.commit().await?;
        Ok(after)
    }

    async fn remove_member(&self, email: &str) -> Result<(), StoreError> {
        let key = email_key(email)?;
        let mut tx = self.db.begin_write().await?;
        tx.lock_people().await?;
        let before = member_in(&mut tx, &key).await?;
        if before.role == Role::Owner {
            keep_an_owner(&mut tx, &key).await?;
        }
        tx.execute(statement("DELETE FROM sessions WHERE member = $1").bind(&key)).await?;
        tx.execute(statement("DELETE FROM invites WHERE member = $1").bind(&key)).await?;
        let revoke =
            statement("UPDATE tokens SET revoked_at = $1 WHERE member = $2 AND revoked_at IS NULL");
        tx.execute(revoke.bind(now()).bind(&key)).await?;
        tx.execute(statement("DELETE FROM member_teams WHERE email = $1").bind(&key)).await?;
        // The conversations they collaborated on: theirs no more (the member's id is never
        // given again).
        let collaborating = statement(
            "DELETE FROM collaborators WHERE member_id = (SELECT id FROM members WHERE email = $1)",
        );
        tx.execute(collaborating.bind(&key)).await?;
        // And those they own are open to nobody any more: no link joins, no one goes on.
        let owned = "(SELECT id FROM conversations WHERE owner = (SELECT 'member:' || id FROM members WHERE email = $1))";
        let joined = format!("DELETE FROM collaborators WHERE conversation IN {owned}");
        tx.execute(statement(joined).bind(&key)).await?;
        let links = format!("UPDATE conversations SET collab_hash = NULL WHERE id IN {owned}");
        tx.execute(statement(links).bind(&key)).await?;
        // Their public snapshots go too: no one is left to revoke them.
        let published = format!("DELETE FROM snapshots WHERE conversation IN {owned}");
        let snapshots = tx.execute(statement(published).bind(&key)).await?;
        self.drop_budget(&mut tx, Scope::Member, &key).await?;
        tx.execute(statement("DELETE FROM members WHERE email = $1").bind(&key)).await?;
        let mut change = audit::Change::new("member.remove", &key).before(shown_member(&before));
        if snapshots > 0 {
            change = change.after(serde_json::json!({ "snapshots_revoked": snapshots }));
        }
        self.record(&mut tx, change).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn create_team(&self, name: &str, adopt_tagged: bool) -> Result<(), StoreError> {
        check_team(name)?;
        let create = statement(
            "INSERT INTO teams (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        );
        let mut tx = self.db.begin_write().await?;
        if tx.execute(create.bind(name).bind(now())).await? == 0 {
            return Err(StoreError::TeamExists(name.to_owned()));
        }
        if !adopt_tagged {
            tagged_ahead(&mut tx, name).await?;
        }
        self.record(&mut tx, audit::Change::new("team.create", name)).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn teams(&self) -> Result<Vec<Team>, StoreError> {
        let sql = "SELECT t.name, t.created_at,
                (SELECT COUNT(*) FROM member_teams p WHERE p.team = t.name),
                (SELECT COUNT(*) FROM tags g JOIN tools o ON o.id = g.tool_id
                 WHERE g.tag = t.name AND o.deleted_at IS NULL)
            FROM teams t ORDER BY t.name COLLATE \"C\"";
        let rows: Vec<(String, String, i64, i64)> = self.db.all(statement(sql)).await?;
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        Ok(rows
            .into_iter()
            .map(|(name, created_at, members, tools)| Team {
                name,
                members: count(members),
                tools: count(tools),
                created_at,
            })
            .collect())
    }

    async fn rename_team(&self, from: &str, to: &str) -> Result<(), StoreError> {
        check_team(to)?;
        let mut tx = self.db.begin_write().await?;
        tx.lock_people().await?;
        let found = statement("SELECT created_at FROM teams WHERE name = $1");
        let Some((created_at,)) = tx.optional::<(String,)>(found.bind(from)).await? else {
            return Err(StoreError::NoSuchTeam(from.to_owned()));
        };
        let add = statement(
            "INSERT INTO teams (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        );
        if tx.execute(add.bind(to).bind(created_at)).await? == 0 {
            return Err(StoreError::TeamExists(to.to_owned()));
        }
        // Tools tagged `to` ahead of the team would join it unseen by an admin.
        tagged_ahead(&mut tx, to).await?;
        let moved = statement("UPDATE member_teams SET team = $1 WHERE team = $2");
        tx.execute(moved.bind(to).bind(from)).await?;
        tx.execute(statement("DELETE FROM teams WHERE name = $1").bind(from)).await?;
        // The team's tag follows it, on every tool (deleted ones too, should they come back).
        let tagged = statement(
            "SELECT o.slug FROM tags g JOIN tools o ON o.id = g.tool_id WHERE g.tag = $1",
        );
        let slugs: Vec<(String,)> = tx.all(tagged.bind(from)).await?;
        let retag = statement(
            "UPDATE tags SET tag = $1 WHERE tag = $2 AND NOT EXISTS
               (SELECT 1 FROM tags other WHERE other.tool_id = tags.tool_id AND other.tag = $1)",
        );
        tx.execute(retag.bind(to).bind(from)).await?;
        tx.execute(statement("DELETE FROM tags WHERE tag = $1").bind(from)).await?;
        // Its integrations' models, its budget and its spend so far follow it too.
        let follow = [
            "UPDATE integration_teams SET team = $1 WHERE team = $2",
            "UPDATE budgets SET name = $1 WHERE scope = 'team' AND name = $2",
            "UPDATE runs SET team = $1 WHERE team = $2",
            "UPDATE reservations SET team = $1 WHERE team = $2",
        ];
        for sql in follow {
            tx.execute(statement(sql).bind(to).bind(from)).await?;
        }
        crate::sql_spend::move_team(&mut tx, from, to).await?;
        let slugs: Vec<String> = slugs.into_iter().map(|(slug,)| slug).collect();
        let change = audit::Change::new("team.rename", from)
            .before(serde_json::json!({"name": from}))
            .after(serde_json::json!({"name": to, "tools_retagged": slugs}));
        self.record(&mut tx, change).await?;
        tx.commit_changes(&slugs).await?;
        for slug in &slugs {
            self.changed(slug);
        }
        Ok(())
    }

    async fn remove_team(&self, name: &str) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        tx.lock_people().await?;
        let places = statement("SELECT email FROM member_teams WHERE team = $1 ORDER BY email");
        let members: Vec<(String,)> = tx.all(places.bind(name)).await?;
        // An integration open to this team alone would be open to every team without it.
        let naming = statement("SELECT integration FROM integration_teams WHERE team = $1");
        if let Some((integration,)) = tx.optional::<(String,)>(naming.bind(name)).await? {
            return Err(StoreError::TeamInUse { team: name.to_owned(), integration });
        }
        tx.execute(statement("DELETE FROM member_teams WHERE team = $1").bind(name)).await?;
        self.drop_budget(&mut tx, Scope::Team, name).await?;
        if tx.execute(statement("DELETE FROM teams WHERE name = $1").bind(name)).await? == 0 {
            return Err(StoreError::NoSuchTeam(name.to_owned()));
        }
        let members: Vec<String> = members.into_iter().map(|(email,)| email).collect();
        let before = serde_json::json!({"name": name, "members": members});
        self.record(&mut tx, audit::Change::new("team.remove", name).before(before)).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn has_been_active(&self, email: &str) -> Result<bool, StoreError> {
        let key = email_key(email)?;
        let active = statement(
            "SELECT 1::bigint WHERE EXISTS (SELECT 1 FROM sessions WHERE member = $1)
               OR EXISTS (SELECT 1 FROM tokens WHERE member = $1)
               OR EXISTS (SELECT 1 FROM invites WHERE member = $1 AND used_at IS NOT NULL)
               OR EXISTS (SELECT 1 FROM runs WHERE member = $1)",
        );
        Ok(self.db.optional::<(i64,)>(active.bind(key)).await?.is_some())
    }

    async fn create_invite(
        &self,
        email: &str,
        id_hash: &str,
        lifetime: std::time::Duration,
    ) -> Result<Member, StoreError> {
        let member = self.member(email).await?;
        let now = now();
        let mut tx = self.db.begin_write().await?;
        // Invites past their time go; a used one stays until then, so that its link says it
        // was used. A new invite voids the member's earlier links not used yet.
        tx.execute(statement("DELETE FROM invites WHERE expires_at <= $1").bind(&now)).await?;
        let earlier = statement("DELETE FROM invites WHERE member = $1 AND used_at IS NULL");
        tx.execute(earlier.bind(&member.email)).await?;
        let invite = statement(
            "INSERT INTO invites (id_hash, member, created_at, expires_at) VALUES ($1, $2, $3, $4)",
        );
        let expires_at = expiry(lifetime);
        tx.execute(invite.bind(id_hash).bind(&member.email).bind(&now).bind(&expires_at)).await?;
        let after = serde_json::json!({"expires_at": expires_at});
        self.record(&mut tx, audit::Change::new("member.invite", &member.email).after(after))
            .await?;
        tx.commit().await?;
        Ok(member)
    }

    async fn use_invite(&self, id_hash: &str) -> Result<String, StoreError> {
        let now = now();
        // Marked used by the statement that reads it: two clicks at once sign in once.
        let take = statement(
            "UPDATE invites SET used_at = $1
             WHERE id_hash = $2 AND used_at IS NULL AND expires_at > $1 RETURNING member",
        );
        let mut tx = self.db.begin_write().await?;
        let taken: Option<(String,)> = tx.optional(take.bind(&now).bind(id_hash)).await?;
        tx.commit().await?;
        if let Some((email,)) = taken {
            return Ok(email);
        }
        let sql = "SELECT used_at FROM invites WHERE id_hash = $1";
        let found: Option<(Option<String>,)> =
            self.db.optional(statement(sql).bind(id_hash)).await?;
        Err(StoreError::BadInvite(match found {
            None => InviteProblem::Unknown,
            Some((Some(_),)) => InviteProblem::Used,
            Some((None,)) => InviteProblem::Expired,
        }))
    }

    async fn begin_sign_in(
        &self,
        state_hash: &str,
        sign_in: &SignIn,
        lifetime: std::time::Duration,
    ) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        tx.execute(statement("DELETE FROM sign_ins WHERE expires_at <= $1").bind(now())).await?;
        let begin = statement(
            "INSERT INTO sign_ins (state_hash, nonce, verifier, next, expires_at)
             VALUES ($1, $2, $3, $4, $5)",
        );
        let begin = begin.bind(state_hash).bind(&sign_in.nonce).bind(&sign_in.verifier);
        tx.execute(begin.bind(&sign_in.next).bind(expiry(lifetime))).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn finish_sign_in(&self, state_hash: &str) -> Result<Option<SignIn>, StoreError> {
        let take = statement(
            "DELETE FROM sign_ins WHERE state_hash = $1 AND expires_at > $2
             RETURNING nonce, verifier, next",
        );
        let mut tx = self.db.begin_write().await?;
        let taken: Option<(String, String, String)> =
            tx.optional(take.bind(state_hash).bind(now())).await?;
        tx.commit().await?;
        Ok(taken.map(|(nonce, verifier, next)| SignIn { nonce, verifier, next }))
    }

    async fn workspace(&self) -> Result<Workspace, StoreError> {
        let settings = statement(format!("SELECT {WORKSPACE}"));
        let (built_ins, snapshots): (Option<String>, Option<String>) =
            self.db.optional(settings).await?.unwrap_or_default();
        Ok(Workspace::from_settings(built_ins.as_deref(), snapshots.as_deref()))
    }

    async fn change_workspace(&self, change: &WorkspaceChange) -> Result<Workspace, StoreError> {
        let set = statement(
            "INSERT INTO settings (name, value) VALUES ($1, $2)
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        );
        let on_off = |on: bool| if on { "on" } else { "off" };
        let mut tx = self.db.begin_write().await?;
        // Read in the transaction that writes, the settings' lock held: two admins' changes
        // of different settings both stay.
        tx.lock_people().await?;
        let (built_ins, snapshots): (Option<String>, Option<String>) =
            tx.optional(statement(format!("SELECT {WORKSPACE}"))).await?.unwrap_or_default();
        let before = Workspace::from_settings(built_ins.as_deref(), snapshots.as_deref());
        let after = before.changed(change);
        if before == after {
            return Ok(after);
        }
        let named =
            [("built_ins", change.built_ins), ("public_snapshots", change.public_snapshots)];
        for (name, on) in named {
            if let Some(on) = on {
                tx.execute(set.clone().bind(name).bind(on_off(on))).await?;
            }
        }
        let change = audit::Change::new("workspace.edit", "workspace")
            .before(serde_json::json!(before))
            .after(serde_json::json!(after));
        self.record(&mut tx, change).await?;
        // What members see may have changed for any tool: lists are made again everywhere
        // (the word index stays: it holds the tools, and applies the settings as it reads).
        tx.commit_changes(&[SETTINGS]).await?;
        self.changed(SETTINGS);
        Ok(after)
    }
}

impl SqlStore {
    /// Removes the budget of `name` (a team or member that goes), recorded as its removal.
    async fn drop_budget(&self, tx: &mut Tx, scope: Scope, name: &str) -> Result<(), StoreError> {
        let Some(before) = crate::sql_control::budget_in(tx, scope, name).await? else {
            return Ok(());
        };
        let remove = statement("DELETE FROM budgets WHERE scope = $1 AND name = $2");
        tx.execute(remove.bind(scope.as_str()).bind(name)).await?;
        let target = format!("{}:{name}", scope.as_str());
        let before = crate::sql_control::shown_budget(&before);
        self.record(tx, audit::Change::new("budget.remove", target).before(before)).await
    }
}

fn member((email, name, role, created_at): MemberRow, teams: Vec<String>) -> Member {
    Member { email, name, role: Role::parse(&role).unwrap_or(Role::Viewer), teams, created_at }
}

/// `teams` checked, in order, each once.
fn teams_of(teams: &[String]) -> Result<Vec<String>, StoreError> {
    let mut teams: Vec<String> = teams.iter().map(|team| team.trim().to_owned()).collect();
    teams.sort();
    teams.dedup();
    teams.iter().try_for_each(|team| check_team(team))?;
    Ok(teams)
}

/// The member `email` (kept as it is: see [`email_key`]), who must exist, as `tx` sees them.
async fn member_in(tx: &mut Tx, email: &str) -> Result<Member, StoreError> {
    let sql = format!("SELECT {MEMBER_COLUMNS} FROM members WHERE email = $1");
    let Some(row) = tx.optional::<MemberRow>(statement(sql).bind(email)).await? else {
        return Err(StoreError::NoSuchMember(email.to_owned()));
    };
    let sql = "SELECT team FROM member_teams WHERE email = $1 ORDER BY team COLLATE \"C\"";
    let teams: Vec<(String,)> = tx.all(statement(sql).bind(email)).await?;
    Ok(member(row, teams.into_iter().map(|(team,)| team).collect()))
}

/// What the audit log keeps of a member: all but when they were added.
fn shown_member(member: &Member) -> serde_json::Value {
    serde_json::json!({"name": member.name, "role": member.role, "teams": member.teams})
}

/// A new member's id: a ULID, unique and never reused (a member added again gets another).
pub(crate) fn new_member_id() -> String {
    ulid::Ulid::new().to_string().to_ascii_lowercase()
}

/// Refuses ([`StoreError::TaggedAhead`]) a team `team` while tools (deleted ones too, which a
/// publish brings back with their tags) carry its name as a tag already.
async fn tagged_ahead(tx: &mut Tx, team: &str) -> Result<(), StoreError> {
    let tagged = statement("SELECT COUNT(*) FROM tags WHERE tag = $1");
    let (tools,): (i64,) = tx.optional(tagged.bind(team)).await?.unwrap_or((0,));
    if tools > 0 {
        let tools = u64::try_from(tools).unwrap_or(0);
        return Err(StoreError::TaggedAhead { team: team.to_owned(), tools });
    }
    Ok(())
}

/// Refuses to let the owner `email` go, when no other owner is left.
async fn keep_an_owner(tx: &mut Tx, email: &str) -> Result<(), StoreError> {
    let others = statement("SELECT COUNT(*) FROM members WHERE role = 'owner' AND email <> $1");
    let (others,): (i64,) = tx.optional(others.bind(email)).await?.unwrap_or((0,));
    if others == 0 {
        return Err(StoreError::LastOwner(email.to_owned()));
    }
    Ok(())
}

/// Puts the member `email` in exactly `teams`, each of which must exist.
async fn set_teams(tx: &mut Tx, email: &str, teams: &[String]) -> Result<(), StoreError> {
    tx.execute(statement("DELETE FROM member_teams WHERE email = $1").bind(email)).await?;
    for team in teams {
        let join = statement(
            "INSERT INTO member_teams (email, team) SELECT $1, name FROM teams WHERE name = $2",
        );
        if tx.execute(join.bind(email).bind(team.as_str())).await? == 0 {
            return Err(StoreError::NoSuchTeam(team.clone()));
        }
    }
    Ok(())
}
