//! The `/api/v1/members`, `/api/v1/teams` and `/api/v1/workspace` routes: the library's
//! people and its settings, managed by its owners and admins (only an owner makes, unmakes
//! or removes an owner).

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use llmtool_registry::people_csv::check_import;
use llmtool_registry::{Member, MemberEdit, NewMember, Role, Team, Workspace, WorkspaceChange};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::invites::{Invite, InviteError, make_invite, send_invite};

use crate::auth::Caller;
use crate::{Problem, ServerState};

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/members", get(members).post(add_member))
        .route("/members/{email}", get(member).patch(edit_member).delete(remove_member))
        .route("/teams", get(teams).post(create_team))
        .route("/teams/{name}", axum::routing::patch(rename_team).delete(remove_team))
        .route("/members/{email}/invite", axum::routing::post(invite))
        .route("/members/import", axum::routing::post(import))
        .route("/workspace", get(workspace).put(set_workspace))
}

type Answer<T> = Result<T, Problem>;

/// The people routes need an admin's role; owners' roles are an owner's to give or take.
fn require_admin(caller: &Caller) -> Answer<()> {
    caller.require_token(Role::Admin)
}

fn require_owner_for(caller: &Caller, roles: &[Option<Role>]) -> Answer<()> {
    if roles.contains(&Some(Role::Owner)) {
        caller.require_token(Role::Owner)?;
    }
    Ok(())
}

/// Every member, by e-mail.
#[utoipa::path(get, path = "/members", security(("bearer" = [])),
    responses((status = 200, body = Vec<Member>), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn members(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<Vec<Member>>> {
    require_admin(&caller)?;
    Ok(Json(state.store.members().await?))
}

/// One member.
#[utoipa::path(get, path = "/members/{email}", params(("email" = String, Path, description = "The member's e-mail, in any case")), security(("bearer" = [])),
    responses((status = 200, body = Member), (status = 404, description = "No such member", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn member(
    State(state): State<ServerState>,
    caller: Caller,
    Path(email): Path<String>,
) -> Answer<Json<Member>> {
    require_admin(&caller)?;
    Ok(Json(state.store.member(&email).await?))
}

/// Add a member (an owner only by an owner).
#[utoipa::path(post, path = "/members", request_body = NewMember, security(("bearer" = [])),
    responses((status = 201, body = Member), (status = 409, description = "The member exists", body = Problem), (status = 404, description = "A team that does not exist", body = Problem),
        (status = 400, description = "Not an e-mail address, a name or a team's name", body = Problem), (status = 403, description = "Not an admin, or an owner added by an admin", body = Problem)))]
pub(crate) async fn add_member(
    State(state): State<ServerState>,
    caller: Caller,
    Json(body): Json<NewMember>,
) -> Answer<(StatusCode, Json<Member>)> {
    require_admin(&caller)?;
    require_owner_for(&caller, &[Some(body.role)])?;
    caller.acting(&state).add_members(std::slice::from_ref(&body)).await?;
    Ok((StatusCode::CREATED, Json(state.store.member(&body.email).await?)))
}

/// Change a member's name, role or teams (owners' roles only by an owner; the last owner stays).
#[utoipa::path(patch, path = "/members/{email}", params(("email" = String, Path, description = "The member's e-mail, in any case")), request_body = MemberEdit, security(("bearer" = [])),
    responses((status = 200, body = Member), (status = 404, description = "No such member, or team", body = Problem), (status = 409, description = "The library's last owner", body = Problem),
        (status = 403, description = "Not an admin, or an owner's role changed by an admin", body = Problem)))]
pub(crate) async fn edit_member(
    State(state): State<ServerState>,
    caller: Caller,
    Path(email): Path<String>,
    Json(edit): Json<MemberEdit>,
) -> Answer<Json<Member>> {
    require_admin(&caller)?;
    if edit.role.is_some() {
        let now = state.store.member(&email).await?.role;
        require_owner_for(&caller, &[Some(now), edit.role])?;
    }
    Ok(Json(caller.acting(&state).edit_member(&email, &edit).await?))
}

/// Remove a member: their tokens are revoked and their sessions end (an owner only by an
/// owner; the last owner stays).
#[utoipa::path(delete, path = "/members/{email}", params(("email" = String, Path, description = "The member's e-mail, in any case")), security(("bearer" = [])),
    responses((status = 204, description = "Removed"), (status = 404, description = "No such member", body = Problem), (status = 409, description = "The library's last owner", body = Problem),
        (status = 403, description = "Not an admin, or an owner removed by an admin", body = Problem)))]
pub(crate) async fn remove_member(
    State(state): State<ServerState>,
    caller: Caller,
    Path(email): Path<String>,
) -> Answer<StatusCode> {
    require_admin(&caller)?;
    require_owner_for(&caller, &[Some(state.store.member(&email).await?.role)])?;
    caller.acting(&state).remove_member(&email).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A team's name, in a request's body.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct TeamName {
    name: String,
    /// When making a team: make it even though tools carry its name as a tag already (put on
    /// before it existed), and so show them to its members. Without it, that is refused (409).
    #[serde(default)]
    adopt_tagged: bool,
}

/// Every team, with its members and tools.
#[utoipa::path(get, path = "/teams", security(("bearer" = [])),
    responses((status = 200, body = Vec<Team>), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn teams(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<Vec<Team>>> {
    require_admin(&caller)?;
    Ok(Json(state.store.teams().await?))
}

/// Make a team.
#[utoipa::path(post, path = "/teams", request_body = TeamName, security(("bearer" = [])),
    responses((status = 201, description = "Made"), (status = 409, description = "The team exists, or tools carry its name as a tag already (without `adopt_tagged`)", body = Problem), (status = 400, description = "Not a team's name (or `all`)", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn create_team(
    State(state): State<ServerState>,
    caller: Caller,
    Json(body): Json<TeamName>,
) -> Answer<StatusCode> {
    require_admin(&caller)?;
    caller.acting(&state).create_team(&body.name, body.adopt_tagged).await?;
    Ok(StatusCode::CREATED)
}

/// Rename a team: its members and its tag on every tool follow.
#[utoipa::path(patch, path = "/teams/{name}", params(("name" = String, Path, description = "The team's name now")), request_body = TeamName, security(("bearer" = [])),
    responses((status = 204, description = "Renamed"), (status = 404, description = "No such team", body = Problem), (status = 409, description = "A team of the new name exists", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn rename_team(
    State(state): State<ServerState>,
    caller: Caller,
    Path(name): Path<String>,
    Json(body): Json<TeamName>,
) -> Answer<StatusCode> {
    require_admin(&caller)?;
    caller.acting(&state).rename_team(&name, &body.name).await?;
    state.tools_changed();
    Ok(StatusCode::NO_CONTENT)
}

/// Remove a team (its tools keep the tag).
#[utoipa::path(delete, path = "/teams/{name}", params(("name" = String, Path, description = "The team's name")), security(("bearer" = [])),
    responses((status = 204, description = "Removed"), (status = 404, description = "No such team", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn remove_team(
    State(state): State<ServerState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Answer<StatusCode> {
    require_admin(&caller)?;
    caller.acting(&state).remove_team(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Send a member an invite: a one-time sign-in link, valid for 72 hours, by mail. On a server
/// that sends no mail, the link itself is the answer (`path`, to join to the studio's
/// address), for a member who has never been here: one who has could be signed in as by it.
#[utoipa::path(post, path = "/members/{email}/invite", params(("email" = String, Path, description = "The member's e-mail, in any case")), security(("bearer" = [])),
    responses((status = 202, description = "Sent by mail", body = Invite),
        (status = 201, description = "Made, not sent: this server sends no mail; `path` is the link, to hand over", body = Invite),
        (status = 404, description = "No such member", body = Problem),
        (status = 409, description = "The member has no mailbox, or this server sends no mail and the member has been here before", body = Problem),
        (status = 502, description = "The SMTP server refused the message", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn invite(
    State(state): State<ServerState>,
    caller: Caller,
    Path(email): Path<String>,
) -> Answer<(StatusCode, Json<Invite>)> {
    require_admin(&caller)?;
    let sign_in = state.sign_in();
    let conflict = |detail: String| Problem::new(StatusCode::CONFLICT, "Conflict", detail);
    let outcome = match (&sign_in.mailer, &sign_in.public_url) {
        (Some(mailer), Some(public_url)) => {
            send_invite(caller.acting(&state).as_ref(), mailer, public_url, &email)
                .await
                .map(|invite| (StatusCode::ACCEPTED, invite))
        }
        _ => {
            if state.store.has_been_active(&email).await? {
                return Err(conflict(format!(
                    "this server sends no mail, and {email} has signed in or run tools here before: a sign-in link is for them alone. Ask the server's operator to set up mail, or for the link"
                )));
            }
            make_invite(caller.acting(&state).as_ref(), "", &email).await.map(|(invite, _)| {
                let path = Some(invite.link.clone());
                (StatusCode::CREATED, Invite { path, ..invite })
            })
        }
    };
    match outcome {
        Ok((status, invite)) => Ok((status, Json(invite))),
        Err(InviteError::Store(error)) => Err(error.into()),
        Err(error @ InviteError::NoMailbox(_)) => Err(conflict(error.to_string())),
        Err(InviteError::Mail(error)) => {
            tracing::warn!("an invite was not sent: {error}");
            Err(Problem::new(StatusCode::BAD_GATEWAY, "Bad Gateway", error.to_string()))
        }
    }
}

/// `POST /members/import`: whether only to check the file.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ImportParams {
    /// Check every row, add nobody.
    #[serde(default)]
    dry_run: bool,
}

/// What an import did.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Imported {
    /// How many members were added (with `dry_run`: would be).
    members: usize,
    dry_run: bool,
}

/// Add the members of a CSV file (columns `email`, `name`, `role`, `teams`): all of them, or
/// none and every bad row with its line.
#[utoipa::path(post, path = "/members/import", params(ImportParams), security(("bearer" = [])),
    request_body(content = String, description = "A CSV file", content_type = "text/csv"),
    responses((status = 200, body = Imported),
        (status = 422, description = "Nothing imported: each bad row's `line` and `message` are in `diagnostics`", body = Problem),
        (status = 403, description = "Not an admin, or an owner added by an admin", body = Problem)))]
pub(crate) async fn import(
    State(state): State<ServerState>,
    caller: Caller,
    axum::extract::Query(params): axum::extract::Query<ImportParams>,
    body: String,
) -> Answer<Json<Imported>> {
    require_admin(&caller)?;
    let members = match check_import(state.store.as_ref(), &body).await? {
        Ok(members) => members,
        Err(problems) => {
            let count = problems.len();
            let rows = problems.into_iter().map(|row| serde_json::json!(row)).collect();
            return Err(Problem {
                diagnostics: Some(rows),
                ..Problem::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Unprocessable Content",
                    format!(
                        "nothing imported: {count} bad row{}",
                        if count == 1 { "" } else { "s" }
                    ),
                )
            });
        }
    };
    let roles: Vec<Option<Role>> = members.iter().map(|member| Some(member.role)).collect();
    require_owner_for(&caller, &roles)?;
    if !params.dry_run {
        caller.acting(&state).add_members(&members).await?;
    }
    Ok(Json(Imported { members: members.len(), dry_run: params.dry_run }))
}

/// The workspace's settings.
#[utoipa::path(get, path = "/workspace", security(("bearer" = [])),
    responses((status = 200, body = Workspace), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn workspace(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<Workspace>> {
    require_admin(&caller)?;
    Ok(Json(state.store.workspace().await?))
}

/// Change the workspace's settings; those left out stay as they are. `built_ins` false hides
/// the built-in tools from every member below admin, on every path; `public_snapshots` true
/// lets members publish conversations for anyone to read without signing in.
#[utoipa::path(put, path = "/workspace", request_body = WorkspaceChange, security(("bearer" = [])),
    responses((status = 200, description = "The settings now", body = Workspace), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn set_workspace(
    State(state): State<ServerState>,
    caller: Caller,
    Json(change): Json<WorkspaceChange>,
) -> Answer<Json<Workspace>> {
    require_admin(&caller)?;
    let now = caller.acting(&state).change_workspace(&change).await?;
    state.cache().invalidate();
    Ok(Json(now))
}
